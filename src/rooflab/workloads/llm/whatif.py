"""What-ifs for decode: weight quantization, KV dtype, flash vs naive, another machine, and a
measured TPOT placed on the roof as a point (seed 004: 15 ms for TinyLlama on a T4).

Quantizing weights leaves the FLOP alone and divides the weight bytes, so the decode point
moves right along the slope (fp16 -> int4: AI 1 -> ~4, seed 004).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ...errors import InputError
from ...model.analysis import Point, analyze
from ...model.ceiling import Roof
from ...model.kernel import Kernel
from ...units import fmt_seconds
from .footprint import weight_bytes
from .kernels import Step, decode_step
from .model_config import ModelConfig
from .settings import Settings
from .stored_weights import uniform, weight_class
from .timing import fallback_notes, time_step


@dataclass(frozen=True)
class WhatIf:
    label: str
    settings: Settings
    roof: Roof
    ai: float
    tpot_s: float
    weights_bytes: float
    flop: float
    bytes: float
    launch_s: float = 0.0     # launches x the low per-launch cost on this roof (timing.py)
    with_launches_s: float = 0.0   # per kernel max(work, calls x launch), summed (timing.py)
    notes: tuple[str, ...] = ()   # ceiling stand-ins on this roof (timing.fallback_notes)

    @property
    def launch_bound(self) -> bool:
        """The launches alone take longer than the work floor: without CUDA graphs or
        fused kernels the TPOT cannot fall to tpot_s (seed 004)."""
        return self.launch_s > self.tpot_s


def evaluate(cfg: ModelConfig, s: Settings, roof: Roof, *, batch: int, context: int,
             label: str) -> WhatIf:
    step = decode_step(cfg, s, batch, context)
    t = time_step(step, roof)
    return WhatIf(label=label, settings=s, roof=roof, ai=step.ai, tpot_s=t.floor_s,
                  weights_bytes=weight_bytes(cfg, s), flop=step.flop, bytes=step.bytes,
                  launch_s=t.launch_s_range[0], with_launches_s=t.with_launches_s,
                  notes=fallback_notes(t))


# the llama.cpp types a what-if tries on llama.cpp weights, widest first
GGUF_LEVERS = ("Q8_0", "Q6_K", "Q4_K")


def standard_variants(base: Settings) -> dict[str, Settings]:
    """The usual levers, each changed alone from `base`."""
    out = {"as given": base}
    if base.stored is not None:
        # llama.cpp weights: its own types are the levers (a file's Q4_K_M against Q8_0,
        # Q6_K or a pure Q4_K; fp8/int8 rows would name formats llama.cpp does not run)
        for t in GGUF_LEVERS:
            if t.lower() != base.weight_format.lower():
                out[f"weights {t.lower()}"] = base.with_(weights=weight_class(t),
                                                         stored=uniform(t))
    for w in ("fp8", "int8", "int4") * (base.stored is None):
        if w != base.weights:
            out[f"weights {w}"] = base.with_(weights=w)
    if base.stored is not None:   # llama.cpp's cache types: -ctk/-ctv q8_0, not fp8
        if base.kv_format != "q8_0":
            out["KV q8_0"] = base.with_(kv="q8_0")
    elif base.kv != "fp8":
        out["KV fp8"] = base.with_(kv="fp8")
    other = "naive" if base.flash else "flash"
    out[f"{other} attention"] = base.with_(attn=other)
    return out


def compare_settings(cfg: ModelConfig, roof: Roof, variants: Mapping[str, Settings], *,
                     batch: int, context: int) -> tuple[WhatIf, ...]:
    return tuple(evaluate(cfg, s, roof, batch=batch, context=context, label=label)
                 for label, s in variants.items())


def compare_hardware(cfg: ModelConfig, s: Settings, roofs: Sequence[Roof], *, batch: int,
                     context: int) -> tuple[WhatIf, ...]:
    """The same decode step on other machines."""
    return tuple(evaluate(cfg, s, r, batch=batch, context=context, label=r.name) for r in roofs)


def launch_note(rows: Sequence[WhatIf]) -> str | None:
    """Rows whose launches alone outlast the work floor: their TPOT floor and speed-up
    hold only with CUDA graphs or fused kernels (seed 004: the gap below the slope)."""
    bound = [w for w in rows if w.launch_bound]
    if not bound:
        return None
    names = ", ".join(f"{w.label} ({fmt_seconds(w.launch_s)} > {fmt_seconds(w.tpot_s)})"
                      for w in bound)
    return (f"launch-bound: {names}: the kernel launches alone outlast the work floor, so "
            f"eager execution cannot reach these TPOTs; the speed-up needs CUDA graphs or "
            f"fused kernels")


@dataclass(frozen=True)
class MeasuredStep:
    """A measured TPOT placed as a point: the step's counted FLOP and bytes, measured time."""

    kernel: Kernel
    point: Point
    floor_s: float                 # the kernels' floor on one device (the compute floor)
    # --tp/--pp (study.run_study): the floor's link term (all-reduces, gathers, stage
    # transfers), what it is in words, the --tp shard count and the --pp stages in turn
    link_s: float = 0.0
    link_words: str = ""
    devices: int = 1
    stages: int = 1

    @property
    def parallel(self) -> bool:
        return self.devices > 1 or self.stages > 1

    @property
    def total_floor_s(self) -> float:
        """The floor the summary prints: the kernels' plus the link term (--tp, --pp)."""
        return self.floor_s + self.link_s

    @property
    def achieved_flop_per_s(self) -> float:
        return self.point.achieved_flop_per_s or 0.0

    @property
    def percent_of_roof(self) -> float:
        """Of one device's roof: the step's counted FLOP (one --tp shard's, every --pp
        stage's) over the whole measured time, link time included."""
        return self.point.percent_of_roof or 0.0

    @property
    def floor_ratio(self) -> float:
        """Measured time / the floor with the link term (total_floor_s: the printed TPOT
        or TTFT floor; >= 1 means the time is at or above it)."""
        return self.kernel.seconds / self.total_floor_s

    @property
    def compute_floor_ratio(self) -> float:
        """Measured time / the kernels' floor alone (floor_ratio without --tp/--pp)."""
        return self.kernel.seconds / self.floor_s

    @property
    def gap_s(self) -> float:
        """The measured time above the floor with the link term (seed 004's gap)."""
        return self.kernel.seconds - self.total_floor_s

    @property
    def achieved_bytes_per_s(self) -> float:
        """The step's counted bytes (weights, KV, activations) / the measured TPOT."""
        return self.point.bytes / self.kernel.seconds

    @property
    def mbu(self) -> float:
        """Model bandwidth utilization: achieved_bytes_per_s over the roof's memory
        bandwidth, as a fraction (Databricks' MBU: (weights + KV) / TPOT / peak bandwidth;
        here every counted byte). On a memory-bound step it is the percent of the roof
        (without --pp; see mfu)."""
        return self.achieved_bytes_per_s / self.point.bytes_per_s / self.stages

    @property
    def mfu(self) -> float:
        """Model FLOPs utilization: the step's counted FLOP / TPOT over the peak of the
        ceiling it runs on (fp16 tensor for fp16 weights), as a fraction. Both are per GPU
        as vLLM and TensorRT-LLM users read them: a --tp shard's bytes over one device's
        bandwidth; under --pp the stages' bytes over the stages' devices (one batch in
        flight: one stage works at a time)."""
        return self.achieved_flop_per_s / self.point.peak_flop_per_s / self.stages

    @property
    def mbu_at_floor(self) -> float:
        """The MBU a time at total_floor_s would give: the most the floor allows."""
        return self.mbu * self.kernel.seconds / self.total_floor_s

    @property
    def mfu_at_floor(self) -> float:
        return self.mfu * self.kernel.seconds / self.total_floor_s


def measured_point(step: Step, roof: Roof, tpot_s: float, *,
                   samples: Sequence[float] = (), name: str | None = None) -> MeasuredStep:
    """One whole decode step as a kernel with the measured time (seed 004: 2.2 GFLOP in
    15 ms at AI ~1 is 147 GFLOP/s, 46 % of a 320 GB/s roof), or a whole prefill with the
    measured TTFT (meta op 'prefill_step': `rooflab llm --ttft-ms`)."""
    prefill = step.phase == "prefill"
    if not tpot_s or tpot_s <= 0:
        raise InputError(f"--{'ttft' if prefill else 'tpot'}-ms must be a positive time; "
                         f"got {tpot_s!r}")
    default = (f"prefill b={step.batch} x {step.q_len} (measured)" if prefill
               else f"decode step b={step.batch} (measured)")
    k = Kernel(name=name or default,
               flop={max(_flop_by_precision(step).items(), key=lambda kv: kv[1])[0]: step.flop},
               # one call per kernel launch of the step (seed 004: ~15-25 per layer), so
               # the launch floor is calls x overhead, as in the decode table
               bytes={"DRAM": step.bytes}, seconds=tpot_s, calls=step.launches,
               provenance={"flop": "derived", "bytes": "derived", "seconds": "measured"},
               unit="tensor", samples=tuple(samples),
               # bytes_split and weight_dtype: `rooflab whatif --quantize` shrinks only
               # the weights of the step (not its KV cache and activations)
               meta={"op": f"{step.phase}_step", "batch": step.batch, "context": step.context,
                     "bytes_split": step.bytes_split,
                     **({"weight_dtype": step.weight_dtype} if step.weight_dtype else {})})
    point = analyze(roof, [k], levels=("DRAM",)).points[0]
    return MeasuredStep(kernel=k, point=point, floor_s=time_step(step, roof).floor_s)


def _flop_by_precision(step: Step) -> dict[str, float]:
    out: dict[str, float] = {}
    for o in step.ops:
        out[o.op.precision] = out.get(o.op.precision, 0.0) + o.flop
    return out
