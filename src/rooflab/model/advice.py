"""Advice by bound and op kind (seed 000 §5, seed 004 "三段距离"), each with a predicted point.

Every piece of advice changes the kernel's FLOP, bytes, ceiling or efficiency in one stated
way and predicts the new point under the roofline model:

    time = calls x overhead_s  +  max(FLOP / P, bytes / B) / efficiency

where `efficiency` is the fraction of the roof the kernel's work reaches now (its work
floor over its measured time minus the launch floor) unless the advice is about efficiency
itself. The speed-up is the old time over the predicted time. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from ..units import canonical_dtype, dtype_bytes, fmt_ai, fmt_pct, fmt_rate, fmt_seconds, si
from .analysis import Point
from .ceiling import KernelCeiling, Roof, _share, iqr_over_median, kernel_ceiling
from .kernel import Kernel, converted_flop
from .machine import Machine, machine_of, words
from .sanity import NOISY_IQR, applicable_launch_s, is_streaming, kernel_kind

# A well-tuned kernel reaches 70-80 % of the (measured) roof (seed 000 §6.4, tip four).
TARGET_EFFICIENCY = 0.8
# One step down in precision, when the roof has a ceiling for it.
LOWER_PRECISION = {"fp64": ("fp32",), "fp32": ("bf16", "fp16"), "tf32": ("bf16", "fp16"),
                   "fp16": ("fp8",), "bf16": ("fp8",), "fp8": ("int4",)}
# Without a matrix shape, tiling is assumed to raise AI this much (seed 000 §5.3: 5 -> 20+).
TILING_GAIN = 4.0
# L2 capacity assumed when the device's is unknown (H100: 50 MB).
L2_BYTES_DEFAULT = 50e6
# Requests batched per weight read in the batching advice (seed 004, Day 16 sweeps to 180).
BATCH_ADVICE = 8
# Calls shorter than this may be mostly launch/dispatch cost (a CUDA launch is ~5 us, a
# PyTorch eager op on a CPU ~10 us): say so when the roof has no floor to test it against.
SHORT_CALL_S = 100e-6
# Op kinds whose DRAM traffic is mostly weights (a linear layer / GEMV in decode).
WEIGHT_KINDS = ("gemv", "linear", "decode")
# Op kinds that use each weight once per request (a GEMV, a batch-1 decode step): tiling
# cannot raise their AI; batching requests per weight read is the lever (weight_advice).
NO_REUSE_KINDS = ("gemv", "mul_mat_vec", "decode")
# Fusion advice for a kernel whose bytes are mostly a matrix read once (weights, a KV
# cache) is dropped below this predicted speed-up: only its activations can stay on chip
# (a 4096x4096 fp64 GEMV: 32 kB of its 134 MB, 1.0002x).
FUSION_MIN_GAIN = 1.05
# Below this share of the measured time the launch floor is negligible, and the work's
# efficiency is the point's percent of roof (diagnose's "negligible" launch split).
NEGLIGIBLE_LAUNCH = 0.01
# Advice predicting at most this speed-up is dropped: a 1 % gain is within timing noise,
# and fusing a launch-bound kernel read 1.00x before its launches were counted (11b #6).
MIN_SPEEDUP = 1.01
# Op kinds whose work maps onto tensor cores / matrix units.
# Prefixes of matrix-shaped op kinds; PyTorch's addmm (nn.Linear), addbmm and baddbmm are
# matrix multiplies with a bias add (they must not read as the elementwise 'add').
MATRIX_KINDS = ("matmul", "gemm", "linear", "conv", "attention", "bmm", "mm", "addmm",
                "addbmm", "baddbmm")


@dataclass(frozen=True)
class Advice:
    """One thing to try, what it shrinks, and what the model predicts it gives."""

    kernel: str
    action: str           # short imperative: "fuse with neighbouring passes"
    detail: str           # why, in numbers
    shrinks: str          # which distance: "below roof" | "along slope" | "roof"
    new_ai: float
    new_flop_per_s: float
    new_seconds: float
    speedup: float
    assumption: str


@dataclass(frozen=True)
class Efficiency:
    """How a kernel's time splits into launch floor and work, and how well the work runs."""

    seconds: float        # measured (or, without a time, the floor)
    launch_s: float       # calls x overhead_s, capped at the measured time
    work_s: float         # the rest
    efficiency: float     # work floor / work time, at most 1
    # No measured time: `seconds` is the floor "with launches", max(work floor, calls x
    # launch floor), as llm/whatif/choose define it (launches overlap the work of the
    # kernels before them), and a prediction is max(new work, launches) too.
    untimed: bool = False


def pct(fraction: float) -> str:
    """A fraction as a percentage, rounded as the report's tables and chart round a
    point's percent of roof (units.fmt_pct): whole percents from 1 %, two
    figures under it so a small one is not '0%' (0.0012 -> '0.12%', 0.494999 -> '49%')."""
    return fmt_pct(100 * fraction)


def work_pct(p: Point, e: Efficiency) -> str:
    """The work's efficiency in words. With no launch floor in the time, or a negligible
    one, it is the point's percent of roof, the figure the report's table prints: the
    demo's triad at 49.4999 % of roof with 0.43 us of its 9 ms taken out as dispatch
    floor works at 49.5024 %, and '50%' beside a table's '49 %' read as two numbers."""
    if p.percent_of_roof is not None and e.launch_s < NEGLIGIBLE_LAUNCH * e.seconds:
        return pct(min(p.percent_of_roof / 100, e.efficiency))
    return pct(e.efficiency)


def efficiency_of(p: Point) -> Efficiency:
    """The launch floor that applies to the point's time (sanity.applicable_launch_s: none
    when the time is below calls x the floor), and the efficiency of the rest."""
    launch = applicable_launch_s(p)
    if p.seconds is None:
        return Efficiency(max(p.floor_s, launch), launch, p.floor_s, 1.0, untimed=True)
    launch = min(launch, p.seconds)
    work = p.seconds - launch
    eff = min(1.0, p.floor_s / work) if work > 0 and p.floor_s > 0 else 1.0
    return Efficiency(p.seconds, launch, work, eff)


def predict_seconds(flop: float, nbytes: float, peak: float, bw: float, launch_s: float,
                    efficiency: float, untimed: bool = False) -> float:
    """calls x overhead + max(FLOP / P, bytes / B) / efficiency (see the module docstring);
    for an untimed kernel the larger of the two ("with launches", Efficiency.untimed)."""
    work = max(flop / peak, nbytes / bw) / efficiency
    return max(work, launch_s) if untimed else launch_s + work


def _advice(p: Point, e: Efficiency, action: str, detail: str, shrinks: str, *, flop: float,
            nbytes: float, peak: float, bw: float, launch_s: float | None = None,
            efficiency: float | None = None, assumption: str) -> Advice:
    t = predict_seconds(flop, nbytes, peak, bw, e.launch_s if launch_s is None else launch_s,
                        e.efficiency if efficiency is None else efficiency, e.untimed)
    return Advice(kernel=p.kernel, action=action, detail=detail, shrinks=shrinks,
                  new_ai=flop / nbytes if nbytes > 0 else float("inf"),
                  new_flop_per_s=flop / t if t > 0 else 0.0, new_seconds=t,
                  speedup=e.seconds / t if t > 0 else 1.0, assumption=assumption)


def _lower(roof: Roof, precision: str, unit: str | None = None):
    """The lower precision a kernel may move to and the ceiling that would hold it. Vector
    work (elementwise, reductions) stays on vector units, as kernel_ceiling holds a mixed
    kernel's moved part: fp32 softmax -> fp16 is priced at the fastest lower-precision
    vector rate (A100: fp16 vector 78 TFLOP/s, not bf16 vector 39 or the tensor peak
    312); where the roof lists no lower-precision vector rate, Roof.compute_for's
    stand-in (the wider vector ceiling) holds it. Other kernels take the fastest unit."""
    alts = LOWER_PRECISION.get(precision, ())
    if unit == "vector":
        # the fastest vector rate among the alternatives; a tie keeps the first (bf16)
        own = [(a, c) for a in alts if (c := roof.find_compute(a, "vector"))]
        if own:
            return max(own, key=lambda ac: (ac[1].value, -alts.index(ac[0])))
        return (alts[0], roof.compute_for(alts[0], "vector")[0]) if alts and roof.compute \
            else None
    for alt in alts:
        c = roof.find_compute(alt, "tensor") or roof.find_compute(alt)
        if c is not None:
            return alt, c
    return None


def _unit_words(ceiling, machine: Machine | None) -> str:
    """Which hardware does this precision's math: ' on AMX tiles', ' (VNNI dot products)'."""
    m = machine or Machine()
    if m.kind == "cpu":
        if ceiling.unit == "tensor":
            return " on AMX tiles" if "amx" in m.features or not m.features else " on matrix units"
        if ceiling.precision == "bf16" and "avx512_bf16" in m.features:
            return " (AVX512-BF16 dot products)"
        if str(ceiling.precision).startswith("int") and "vnni" in m.features:
            return " (VNNI dot products)"
        return ""
    if m.kind == "gpu" and ceiling.unit == "tensor":
        return " on tensor cores"
    return ""


def _lower_precision(p: Point, e: Efficiency, roof: Roof, kind: str,
                     machine: Machine | None = None,
                     kernel: Kernel | None = None) -> Advice | None:
    if p.flop <= 0:
        return _narrower_storage(p, e, kernel)
    found = _lower(roof, p.precision, kernel.unit if kernel is not None else None)
    if found is None:
        return None
    alt, ceiling = found
    try:
        ratio = dtype_bytes(alt) / dtype_bytes(p.precision)
    except Exception:   # a precision with no storage size (int32 accumulators ...)
        return None
    nbytes = p.bytes * ratio
    if nbytes <= 0:
        return None   # no bytes to shrink (a kernel counted as pure math)
    held = (kernel_ceiling(roof, kernel.flop, kernel.unit, kernel.precision)
            if kernel is not None else None)
    if held is not None and len(held.parts) >= 2:
        return _lower_mixed(p, e, roof, machine, kernel, held, alt, nbytes)
    return _advice(
        p, e, f"use {alt} instead of {p.precision}{_unit_words(ceiling, machine)}",
        f"{dtype_bytes(p.precision):g} -> {dtype_bytes(alt):g} bytes per element moves AI "
        f"{fmt_ai(p.ai)} -> {fmt_ai(p.flop / nbytes)} and the ceiling to {ceiling.label} "
        f"{fmt_rate(ceiling.value, ceiling.precision)}",
        "along slope" if p.memory_bound_side else "roof",
        flop=p.flop, nbytes=nbytes, peak=ceiling.value, bw=p.bytes_per_s,
        assumption=f"every byte is {p.precision} element data and accuracy allows {alt}; "
                   f"the kernel keeps its current efficiency ({work_pct(p, e)} of roof)")


def _narrower_storage(p: Point, e: Efficiency, kernel: Kernel | None) -> Advice | None:
    """A kernel with no FLOP (a copy, a sort, a gather) has no math to move to other units
    or precisions: only its data can be stored narrower, which shrinks its bytes. Its
    element type is its FLOP's precision key ({"fp64": 0}) or meta dtype / shape dtype;
    without one it is the fp32 default, and the assumption says so."""
    meta = kernel.meta if kernel is not None else {}
    shape = meta.get("shape") if isinstance(meta.get("shape"), Mapping) else {}
    named = meta.get("dtype") or shape.get("dtype")
    dtype = (p.precision if kernel is not None and kernel.flop else
             str(named) if named else None)
    try:
        size = dtype_bytes(dtype or p.precision)
        alt = next((a for a in LOWER_PRECISION.get(canonical_dtype(dtype or p.precision), ())
                    if dtype_bytes(a) < size), None)
        new = dtype_bytes(alt) if alt else None
    except Exception:   # a dtype with no storage size: nothing to say about narrowing it
        return None
    if alt is None or not new or p.bytes <= 0:
        return None
    known = (f"every byte is {dtype} element data" if dtype else
             f"every byte is {p.precision} element data (assumed: the kernel names no FLOP "
             f"precision or dtype)")
    return _advice(
        p, e, "store the data in a narrower type",
        f"{size:g} -> {new:g} bytes per element ({dtype or p.precision} -> {alt} or another "
        f"{new:g}-byte type) moves {si(p.bytes * new / size, 'B')} instead of "
        f"{si(p.bytes, 'B')}; with no FLOP there is no math to move to other units",
        "along slope", flop=p.flop, nbytes=p.bytes * new / size, peak=p.peak_flop_per_s,
        bw=p.bytes_per_s,
        assumption=f"{known} and the data can be stored in {new:g} bytes; the kernel keeps "
                   f"its current efficiency ({work_pct(p, e)} of roof)")


def _lower_mixed(p: Point, e: Efficiency, roof: Roof, machine: Machine | None,
                 kernel: Kernel, held: KernelCeiling, alt: str, nbytes: float) -> Advice:
    """Lower precision for a kernel held to a weighted ceiling (9e9 fp16 tensor + 1e9 fp32
    vector): only the dominant part's FLOP move to `alt`; the others (epilogue, scaling,
    reductions) keep their precision and ceilings, and kernel_ceiling weighs the new mix as
    the roof weighs the kernel now. Pricing all the FLOP at the lower ceiling would let a
    slow fp32 part vanish (4.75x instead of 1.23x for that kernel on an H100). The bytes
    follow the single-precision rule: every byte is the dominant precision's element data
    (the other parts are math on it, not stored data)."""
    new = kernel_ceiling(roof, converted_flop(kernel, alt), kernel.unit,
                         alt)
    dest = new.parts[0].ceiling if new.parts else new.ceiling   # what now holds alt's FLOP
    moved = next(part for part in held.parts if part.precision == kernel.precision)
    total = sum(part.flop for part in held.parts)
    rest = [part.label for part in held.parts if part.precision != kernel.precision]
    others = ", ".join(rest) + (" part" if len(rest) == 1 else " parts")
    stays, is_, keep = (("stays", "is", "keeps its") if len(rest) == 1 else
                        ("stay", "are", "keep their"))
    old_p, new_p = p.peak_flop_per_s, new.ceiling.value
    return _advice(
        p, e, f"use {alt} instead of {p.precision}{_unit_words(dest, machine)}",
        f"{dtype_bytes(p.precision):g} -> {dtype_bytes(alt):g} bytes per element moves AI "
        f"{fmt_ai(p.ai)} -> {fmt_ai(p.flop / nbytes)}; the {moved.label} part "
        f"({_share(moved.flop / total)} of the FLOP) moves to {dest.label} "
        f"{fmt_rate(dest.value, dest.precision)} and the {others} {stays}, so the weighted ceiling "
        f"goes {si(old_p, 'FLOP/s', 4)} -> {si(new_p, 'FLOP/s', 4)} ({new_p / old_p:.2f}x)",
        "along slope" if p.memory_bound_side else "roof",
        flop=p.flop, nbytes=nbytes, peak=new_p, bw=p.bytes_per_s,
        assumption=f"every byte is {p.precision} element data (the {others} {is_} math "
                   f"on it, not stored data) and accuracy allows {alt} for the "
                   f"{p.precision} part; the {others} {keep} precision and ceiling "
                   f"(weighted as the roof holds the kernel now); the kernel keeps its "
                   f"current efficiency ({work_pct(p, e)} of roof)")


def _efficiency(p: Point, e: Efficiency, action: str, why: str) -> Advice | None:
    if e.efficiency >= TARGET_EFFICIENCY:
        return None
    return _advice(p, e, action, f"the work runs at {work_pct(p, e)} of the roof at its AI; "
                   + why, "below roof", flop=p.flop, nbytes=p.bytes, peak=p.peak_flop_per_s,
                   bw=p.bytes_per_s, efficiency=TARGET_EFFICIENCY,
                   assumption=f"the same FLOP and bytes reach {TARGET_EFFICIENCY:.0%} of the "
                              f"roof (what a well-tuned kernel reaches, seed 000 §6.4)")


def weight_advice(p: Point, e: Efficiency, kind: str = "") -> list[Advice]:
    """A weight-streaming op (a GEMV in decode, seed 004): batch requests, shrink weights."""
    out = []
    b = BATCH_ADVICE
    what = (f"batch {b} vectors per matrix read (GEMV -> GEMM)" if kind.startswith("gemv")
            else f"batch {b} requests per weight read")
    batched = _advice(
        p, e, what,
        f"weights are read once for the whole batch: AI {fmt_ai(p.ai)} -> {fmt_ai(b * p.ai)}; "
        f"the speed-up is per request (throughput)", "along slope", flop=b * p.flop,
        nbytes=p.bytes, peak=p.peak_flop_per_s, bw=p.bytes_per_s,
        assumption=(f"all bytes are the matrix (the vectors are small); {b} independent "
                    f"vectors are there to multiply by it" if kind.startswith("gemv") else
                    f"all bytes are weights (activations and KV cache small at batch {b}); "
                    f"{b} requests are there to batch"))
    out.append(replace(batched, speedup=b * batched.speedup))
    size = dtype_bytes(p.precision) if p.precision in ("fp32", "fp16", "bf16", "fp8") else None
    if size and size > 0.5:
        out.append(_advice(
            p, e, "store weights in int4 (dequantize on the fly)",
            f"{size:g} -> 0.5 byte per weight: AI {fmt_ai(p.ai)} -> "
            f"{fmt_ai(p.ai * size / 0.5)}", "along slope", flop=p.flop,
            nbytes=p.bytes * 0.5 / size, peak=p.peak_flop_per_s, bw=p.bytes_per_s,
            assumption="all bytes are weights; int4 accuracy is acceptable; the math stays "
                       f"in {p.precision}"))
    return out


def activation_share(kernel: Kernel | None, kind: str) -> float:
    """The share of a kernel's bytes that its neighbours make or take (activations), the
    bytes fusion can keep on chip. A matrix read once per call (a GEMV's matrix, a decode
    linear layer's weights) or a KV cache comes from memory whatever runs next to it.
    From meta 'bytes_split' (`rooflab llm`: weights / activations / kv) or 'weight_bytes',
    else for a GEMV / linear / decode kind everything but the vectors of meta shape m x n
    (all of it is matrix without a shape, as the batching advice assumes), else 1."""
    meta = kernel.meta if kernel is not None else {}
    split = meta.get("bytes_split")
    if isinstance(split, Mapping) and ("weights" in split or "activations" in split):
        total = sum(float(v) for v in split.values() if isinstance(v, (int, float)))
        act = split.get("activations", 0.0)
        if total > 0 and isinstance(act, (int, float)):
            return min(1.0, max(0.0, float(act) / total))
    nbytes = (kernel.bytes.get("DRAM") or sum(kernel.bytes.values())) if kernel else 0.0
    wb = meta.get("weight_bytes")
    if isinstance(wb, (int, float)) and nbytes > 0:
        return min(1.0, max(0.0, 1.0 - float(wb) / nbytes))
    if not any(kind.startswith(w) for w in WEIGHT_KINDS + ("mul_mat_vec",)):
        return 1.0
    matrix = _matrix_bytes(kernel) if kind.startswith(("gemv", "mul_mat_vec")) else None
    if matrix is None or nbytes <= 0:
        return 0.0
    return min(1.0, max(0.0, 1.0 - matrix / nbytes))


def _matrix_bytes(kernel: Kernel | None) -> float | None:
    """A GEMV's matrix bytes from meta shape m x n (ops.gemv's) in the shape's dtype, else
    the kernel's precision; None without a shape."""
    shape = kernel.meta.get("shape") if kernel is not None else None
    if not isinstance(shape, Mapping):
        return None
    m, n = shape.get("m"), shape.get("n")
    if not all(isinstance(v, (int, float)) and v > 0 for v in (m, n)):
        return None
    dtype = shape.get("dtype") or kernel.precision
    try:
        return float(m) * float(n) * dtype_bytes(str(dtype))
    except Exception:   # a dtype with no storage size: no matrix bytes to tell
        return None


def _fusion(p: Point, e: Efficiency, kind: str, machine: Machine | None,
            kernel: Kernel | None) -> Advice | None:
    """Fuse with a neighbour: half the bytes fusion can keep on chip stay there (all of an
    elementwise chain's; only the activations of a matrix-reading kernel, dropped when that
    gains under FUSION_MIN_GAIN)."""
    chip, unit = words(machine, "chip")
    share = activation_share(kernel, kind)
    if share >= 1.0:
        return _advice(
            p, e, "fuse with the neighbouring pass",
            "k elementwise passes fused move about 1/k of the bytes (the intermediate never "
            "reaches memory); fused with one neighbour: bytes / 2, AI x 2", "along slope",
            flop=p.flop, nbytes=p.bytes / 2, peak=p.peak_flop_per_s, bw=p.bytes_per_s,
            assumption=f"a neighbouring {unit} reads what this one writes (or writes what it "
                       f"reads), so half of these bytes stay {chip}; FLOP unchanged")
    act = share * p.bytes
    if act <= 0:
        return None
    out = _advice(
        p, e, "fuse with the neighbouring pass",
        f"only its activations ({si(act, 'B')} of the {si(p.bytes, 'B')}) can stay {chip}; "
        f"fused with one neighbour half of them do: bytes {si(p.bytes, 'B')} -> "
        f"{si(p.bytes - act / 2, 'B')}", "along slope",
        flop=p.flop, nbytes=p.bytes - act / 2, peak=p.peak_flop_per_s, bw=p.bytes_per_s,
        assumption=f"a neighbouring {unit} reads what this one writes (or writes what it "
                   f"reads), so half of its activation bytes stay {chip}; the other "
                   f"{si(p.bytes - act, 'B')} (weights, KV cache: read once per call) come "
                   f"from memory whatever runs next to it; FLOP unchanged")
    return out if out.speedup >= FUSION_MIN_GAIN else None


def reuses_data(kind: str) -> bool:
    """Whether tiling can raise the op's AI: not for a GEMV or a batch-1 decode step, whose
    every weight is used once per request (batching is their lever)."""
    return not any(kind.startswith(k) for k in NO_REUSE_KINDS)


def memory_advice(p: Point, e: Efficiency, roof: Roof, kind: str,
                  l2_bytes: float | None = None, machine: Machine | None = None,
                  kernel: Kernel | None = None) -> list[Advice]:
    out: list[Advice] = []
    streaming = is_streaming(kind)
    fused = _fusion(p, e, kind, machine, kernel)
    if fused is not None:
        out.append(fused)
    if not streaming and reuses_data(kind) and 0 < p.ai < p.ridge:
        matrix = any(kind.startswith(k) for k in MATRIX_KINDS)
        target = p.ridge if matrix else min(p.ridge, TILING_GAIN * p.ai)
        out.append(_advice(
            p, e, words(machine, "tile")[0],
            f"each byte is used {fmt_ai(p.ai)} times; reuse raises AI to {fmt_ai(target)} "
            f"({target / p.ai:.1f}x; the ridge {fmt_ai(p.ridge)} is where compute binds)",
            "along slope", flop=p.flop, nbytes=p.flop / target, peak=p.peak_flop_per_s,
            bw=p.bytes_per_s,
            assumption=("an upper bound: a matrix op has enough reuse for bytes to fall to "
                        "FLOP / ridge" if matrix else
                        f"larger tiles raise AI {TILING_GAIN:g}x (seed 000 §5.3: a conv from "
                        f"AI ~5 to 20+); only if the algorithm reuses data at all")))
    low = _lower_precision(p, e, roof, kind, machine, kernel)
    if low is not None:
        out.append(low)
    eff = _efficiency(p, e, *words(machine, "access"))
    if eff is not None:
        out.append(eff)
    if any(kind.startswith(w) for w in WEIGHT_KINDS):
        out += weight_advice(p, e, kind)
    per_call = p.bytes / p.calls
    if machine is not None and machine.kind == "cpu":
        # No "block the working set into L2/L3" on a CPU: one call's working set that fits a
        # cache level is served from it already when the kernel repeats (sanity's
        # cache_resident finding: the DRAM floor does not bind), so the level's bandwidth
        # is no gain to offer (review 11a F-G: 6.11x "into L3" for a 2.4 MB triad at 100 %
        # of roof); one that fits none needs tiles, which the tiling advice prices.
        return out
    if p.level != "L2" and per_call <= (l2_bytes or L2_BYTES_DEFAULT):
        l2 = roof.find_memory("L2")
        if l2 is not None and l2.value > p.bytes_per_s:
            out.append(_advice(
                p, e, "keep the working set in L2 (layout, kernel order, persistence)",
                f"served from L2 at {si(l2.value, 'B/s')} instead of {p.level} "
                f"{si(p.bytes_per_s, 'B/s')}", "along slope", flop=p.flop, nbytes=p.bytes,
                peak=p.peak_flop_per_s, bw=l2.value,
                assumption=f"the working set of one call ({si(per_call, 'B')}) fits in L2 "
                           f"({si(l2_bytes or L2_BYTES_DEFAULT, 'B')}"
                           f"{'' if l2_bytes else ', assumed: the largest L2s today'}) "
                           f"and is reused from there"))
    return out


def compute_advice(p: Point, e: Efficiency, roof: Roof, kind: str,
                   machine: Machine | None = None,
                   kernel: Kernel | None = None) -> list[Advice]:
    out: list[Advice] = []
    streaming = is_streaming(kind)
    matrix = any(kind.startswith(k) for k in MATRIX_KINDS)
    cpu = machine is not None and machine.kind == "cpu"
    if p.unit != "tensor" and not streaming and not cpu:
        alt = "tf32" if p.precision == "fp32" else p.precision
        tc = roof.find_compute(p.precision, "tensor") or roof.find_compute(alt, "tensor")
        if tc is not None and tc.value > p.peak_flop_per_s:
            out.append(_advice(
                p, e, f"use tensor cores / matrix units ({tc.label})",
                f"{tc.label} peaks at {fmt_rate(tc.value, tc.precision)}, "
                f"{tc.value / p.peak_flop_per_s:.1f}x the "
                f"{fmt_rate(p.peak_flop_per_s, p.precision)} "
                f"it is held to now", "roof", flop=p.flop, nbytes=p.bytes, peak=tc.value,
                bw=p.bytes_per_s,
                assumption="the work is matrix-shaped (matmul, conv, attention) with layouts "
                           "and sizes the tensor cores accept; efficiency unchanged"))
    low = _lower_precision(p, e, roof, kind, machine, kernel)
    if low is not None:
        out.append(low)
    eff = _efficiency(p, e, *words(machine, "issue_matrix" if cpu and matrix else "issue"))
    if eff is not None:
        out.append(eff)
    return out


def overhead_advice(p: Point, e: Efficiency, roof: Roof, kind: str,
                    machine: Machine | None = None,
                    kernel: Kernel | None = None) -> list[Advice]:
    per = roof.overhead_s or 0.0
    act = activation_share(kernel, kind) * p.bytes   # what a fused neighbour keeps on chip
    dispatch, why = words(machine, "dispatch")
    chip, unit = words(machine, "chip")
    out = [
        _advice(p, e, dispatch,
                f"{p.calls} launch(es) x {fmt_seconds(per)} = {fmt_seconds(e.launch_s)} of "
                f"the {fmt_seconds(e.seconds)} is launch/dispatch cost", "below roof",
                flop=p.flop, nbytes=p.bytes, peak=p.peak_flop_per_s, bw=p.bytes_per_s,
                launch_s=0.0, assumption=why),
        _advice(p, e, f"fuse into the neighbouring {unit}",
                f"its work floor is {fmt_seconds(p.floor_s)}; run inside a neighbour it pays "
                f"no launch of its own and its intermediate stays {chip}", "below roof",
                flop=p.flop, nbytes=p.bytes - act / 2, peak=p.peak_flop_per_s,
                bw=p.bytes_per_s, launch_s=0.0,
                assumption=f"the work moves into an adjacent {unit} (no launch of its own) and "
                           + (f"half its bytes stay {chip}" if act >= p.bytes else
                              f"half its activation bytes ({si(act, 'B')} of "
                              f"{si(p.bytes, 'B')}) stay {chip}")),
    ]
    if p.calls > 1:
        out.append(_advice(
            p, e, f"batch the {p.calls} calls into one launch",
            f"one launch instead of {p.calls}", "below roof", flop=p.flop, nbytes=p.bytes,
            peak=p.peak_flop_per_s, bw=p.bytes_per_s, launch_s=per,
            assumption=f"the calls are independent and fit one launch (a batched {unit})"))
    return out


def latency_advice(p: Point, e: Efficiency, roof: Roof, kind: str,
                   machine: Machine | None = None,
                   kernel: Kernel | None = None) -> list[Advice]:
    out = []
    action, why = words(machine, "parallel")
    per_call = p.seconds / p.calls if p.seconds else None
    if not roof.overhead_s and per_call is not None and per_call < SHORT_CALL_S:
        why += (f"; at {fmt_seconds(per_call)} per call, launch/dispatch cost may be most of "
                f"it, and this roof has no launch/dispatch floor to tell (`rooflab probe` "
                f"measures one)")
    eff = _efficiency(p, e, action, why)
    if eff is not None:
        out.append(eff)
    side = (memory_advice(p, e, roof, kind, machine=machine, kernel=kernel)
            if p.memory_bound_side else compute_advice(p, e, roof, kind, machine, kernel))
    return out + [a for a in side if a.shrinks != "below roof"]


def _part_targets(precision: str) -> tuple[str, ...]:
    """Where a slow part of a mixed kernel may move: its own precision on another unit, or
    one step down (LOWER_PRECISION; fp32 also to tf32, which tensor cores take as is). No
    further: an fp32 epilogue is not advised into fp8."""
    return (precision, *(("tf32",) if precision == "fp32" else ()),
            *LOWER_PRECISION.get(precision, ()))


def mixed_part_advice(p: Point, e: Efficiency, roof: Roof, held: KernelCeiling,
                      machine: Machine | None = None) -> Advice | None:
    """A kernel held to a weighted ceiling (ceiling.kernel_ceiling) whose slowest part, by
    time at the roof, is a minority of its FLOP (a GEMM's fp32 epilogue: 10 % of the FLOP,
    64 % of the time at an A100's roof): move that part to the fastest ceiling the roof has
    in its precision or one step lower (_part_targets), and predict the new weighted ceiling,
    the other parts unchanged, at the kernel's current efficiency. None when the bytes bind
    (memory side), or the slow part is the dominant one (the kernel's own precision, which
    the lower-precision and tensor-core advice speak to)."""
    if len(held.parts) < 2 or p.memory_bound_side:
        return None
    total = sum(part.flop for part in held.parts)
    at_roof = sum(part.seconds_at_peak for part in held.parts)
    slow = max(held.parts, key=lambda part: part.seconds_at_peak)
    # the dominant part (most FLOP, parts[0]) is the kernel's own precision even under
    # 50 % of a three-way mix: the lower-precision and tensor-core advice move it
    if total <= 0 or slow is held.parts[0]:
        return None
    targets = _part_targets(slow.precision)
    dominant = held.parts[0].precision
    faster = [c for c in roof.compute
              if c.precision in targets and c.value > slow.ceiling.value]
    if not faster:
        return None

    def rank(c):   # fastest; on a tie the kernel's own precision, then the nearest step
        return (c.value, c.precision == dominant, -targets.index(c.precision))

    # An epilogue's work is elementwise: it stays on its own units (vector) unless only
    # another unit is faster; the tensor figure needs it matrix-shaped or fused onto the
    # matrix units, so it is the aside, not the headline.
    own = [c for c in faster if c.unit == slow.ceiling.unit]
    dest = max(own or faster, key=rank)
    others_s = at_roof - slow.seconds_at_peak

    def weighted(c) -> float:
        return total / (others_s + slow.flop / c.value)

    old, new = p.peak_flop_per_s, weighted(dest)
    detail = (f"at the roof the {slow.label} part takes {fmt_seconds(slow.seconds_at_peak)}"
              f" of the {fmt_seconds(at_roof)}; on "
              f"{dest.label} ({fmt_rate(dest.value, dest.precision)}), the fastest "
              f"{slow.precision} or "
              f"one-step-lower ceiling on this roof, the weighted ceiling goes "
              f"{si(old, 'FLOP/s', 4)} -> {si(new, 'FLOP/s', 4)} ({new / old:.2f}x)")
    tensor = [c for c in faster if c.unit == "tensor" and c.value > dest.value]
    if dest.unit != "tensor" and tensor:
        t = max(tensor, key=rank)
        detail += (f"; on {t.label} ({fmt_rate(t.value, t.precision)}), if the work is "
                   f"matrix-shaped "
                   f"or fused onto the matrix units, {si(weighted(t), 'FLOP/s', 4)} "
                   f"({weighted(t) / old:.2f}x)")
    bytes_s = p.bytes / p.bytes_per_s
    if bytes_s > total / new:
        detail += (f"; at {si(new, 'FLOP/s', 4)} {p.level} binds instead "
                   f"({fmt_seconds(bytes_s)} of bytes at {si(p.bytes_per_s, 'B/s')}), "
                   f"which caps the predicted speed-up")
    how = (f"the {slow.precision} work can run on {dest.label} units (fused onto the "
           f"matrix accumulators as an epilogue, or matrix-shaped)" if dest.unit == "tensor"
           else f"the {slow.precision} work can run on {dest.label} units")
    if dest.precision != slow.precision:
        how += f" and accuracy allows {dest.precision} for it"
    return _advice(
        p, e, f"move the {slow.label} part ({_share(slow.flop / total)} of the FLOP, "
              f"{_share(slow.seconds_at_peak / at_roof)} of the time at the roof) to "
              f"{dest.label}", detail, "roof", flop=p.flop,
        nbytes=p.bytes, peak=new, bw=p.bytes_per_s,
        assumption=f"{how}; the other parts keep their ceilings; the kernel keeps its "
                   f"current efficiency ({work_pct(p, e)} of roof)")


RULES = {"memory": memory_advice, "compute": compute_advice, "overhead": overhead_advice,
         "latency": latency_advice}


def advise(p: Point, roof: Roof, kernel: Kernel, l2_bytes: float | None = None,
           machine: Machine | None = None) -> tuple[Advice, ...]:
    """Advice for one kernel's binding point, best predicted speed-up first.

    `machine` says whose levers to name (CPU or GPU); by default it is read off the roof
    (machine_of). The predicted gains do not depend on it, only the wording and which
    levers apply (tensor cores and L2 persistence on a GPU, cache blocking on a CPU).
    """
    e = efficiency_of(p)
    kind, guessed = kernel_kind(kernel)
    machine = machine if machine is not None else machine_of(roof)
    # The device's own L2 when the host or catalog gave it (a T4 has 4 MiB, not 50 MB).
    l2_bytes = l2_bytes or machine.caches.get("L2")
    if p.bound == "memory":
        items = memory_advice(p, e, roof, kind, l2_bytes, machine, kernel)
    elif p.bound == "overhead":
        items = overhead_advice(p, e, roof, kind, machine, kernel)
    else:   # the kernel's FLOP by precision: lower precision moves only its dominant part
        items = RULES[p.bound](p, e, roof, kind, machine, kernel=kernel)
    if p.bound in ("compute", "latency"):
        held = kernel_ceiling(roof, kernel.flop, kernel.unit, kernel.precision)
        mixed = mixed_part_advice(p, e, roof, held, machine)
        if mixed is not None:
            items.append(mixed)
    if kernel.provenance.get("bytes") == "derived":
        # rooflab's own counts (`ai`, `llm`) are compulsory traffic already: each byte
        # moves once, so better tiling cannot cut them (a decode GEMV reads each weight
        # once whatever the tiles); only a profiler's counted bytes hold reuse misses.
        tile = words(machine, "tile")[0]
        items = [a for a in items if a.action != tile]
    items = [a for a in items if a.speedup > MIN_SPEEDUP]
    if guessed:
        # The kind decides which levers apply (no tiling for an elementwise op, batching for
        # a GEMV): say where it came from, so a wrong guess is seen and can be overridden.
        why = (f"; op kind '{kind}' read off the name '{kernel.name}' (give meta.op, a CSV "
               f"'op' column or a JSON 'op' field to set it)")
        items = [replace(a, assumption=a.assumption + why) for a in items]
    items = sorted(items, key=lambda a: -a.speedup)
    quiet = _quiet_advice(p, e, kernel, machine)
    if quiet is None:
        return tuple(items)
    # re-timing leads; every other prediction rests on a time (or roof) it says is unsure
    doubt = f"; uncertain: {quiet.detail}"
    return (quiet, *(replace(a, assumption=a.assumption + doubt) for a in items))


def timing_noise(kernel: Kernel) -> float | None:
    """The kernel's own timing noise, IQR / median: meta 'iqr_rel' (measure, bench, demo),
    else from 4 or more raw samples; None when neither is there."""
    iqr = kernel.meta.get("iqr_rel")
    if isinstance(iqr, (int, float)) and not isinstance(iqr, bool):
        return float(iqr)
    return iqr_over_median(kernel.samples) if len(kernel.samples) >= 4 else None


def _quiet_advice(p: Point, e: Efficiency, kernel: Kernel,
                  machine: Machine | None) -> Advice | None:
    """'Re-time on a quiet machine' when a timed kernel's samples are noisy (its 'noisy'
    flag, or IQR / median over NOISY_IQR) or the roof's probe recorded other load on the
    machine: a numpy GEMM at 36 % of a roof probed with 54 % other CPU use was told to
    'run it as a tuned BLAS' (2.19x), though it is one (review 11a F-E). No speed-up is
    predicted for it (1.00x): it tells whether the others' gains are there at all."""
    if p.seconds is None:
        return None
    iqr = timing_noise(kernel)
    flags = kernel.meta.get("flags") or ()
    noisy = (iqr is not None and iqr > NOISY_IQR) or (
        isinstance(flags, (list, tuple)) and "noisy" in flags)
    load = machine.load_notes if machine is not None else ()
    if not noisy and not load:
        return None
    why = []
    if noisy:
        why.append(f"its timing samples spread {pct(iqr)} (IQR / median, over "
                   f"{pct(NOISY_IQR)})" if iqr is not None else
                   "its timing samples are flagged noisy")
    if load:
        share = machine.other_load if machine is not None else None
        why.append(f"the roof's probe shared the machine ({pct(share)} other load: "
                    f"{load[0]})" if share is not None else
                    f"the roof's probe shared the machine ({load[0]})")
    return Advice(
        kernel=p.kernel, action="re-time on a quiet machine (the advice below is uncertain)",
        detail="; ".join(why), shrinks="below roof", new_ai=p.ai,
        new_flop_per_s=p.achieved_flop_per_s or 0.0, new_seconds=e.seconds, speedup=1.0,
        assumption="no speed-up is predicted: other load slows the kernel and the probe "
                   "alike, so its % of roof and every gain below may be load, not the code; "
                   "time it (and probe the roof) with nothing else running")
