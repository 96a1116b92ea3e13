"""Hardware choice (seed 002): rank machines for a kernel set by predicted time at the roof.

On each candidate roof every kernel takes at least max(FLOP / P, bytes / B) over the memory
levels the roof has (its work floor); summed over the kernels that is the work floor
(`rooflab llm`'s TPOT floor for a decode step). "With launches": each kernel at least
max(work floor, calls x overhead_s), summed, the same figure llm and whatif give; the
devices are ranked by it (what binds the work as counted, eager launches and all), equal
times by the work floor (what the device does once CUDA graphs remove the launches). Both
are lower bounds, computed alike for every candidate, so the ranking says which roof suits
this work. The ceiling that binds most of the time is
named, and FLOP per joule (perf per watt) at TDP over the time with launches is given where
the TDP is known. Pure: no I/O.

A device that is no real choice ranks after every device that is (seed 002: capacity and
the work's precision come before speed): one whose roof has no ceiling for a kernel's
precision nor a stated stand-in for it (fp64 work on a TPU or an Apple GPU, held to bf16 or
fp32 math it cannot replace), and one the model does not fit in (`needs_bytes` above
its `memory_bytes`). Their times are still given, marked.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..errors import InputError
from . import dies
from .ceiling import PRECISION_FALLBACK, Roof
from .display import pretty
from .display_results import choice_text
from .held_unit import held_ceiling
from .kernel import Kernel

# Kernels that stand for a whole step whose parts sit beside them in the same file.
WHOLE_STEP_OPS = frozenset({"decode_step", "prefill_step"})   # --tpot-ms, --ttft-ms

# One name, one definition, in llm, whatif and choose (docs/llm.md "Two floors"): the work
# floor is max(FLOP / P, bytes / B) per kernel, summed; "with launches" holds each kernel
# to at least its calls x the per-launch floor as well.
WITH_LAUNCHES = "with launches"


def with_launches_s(work_s: float, calls: int, per_launch_s: float | None) -> float:
    """One kernel's time with its launches: max(work floor, calls x one launch). The host
    issues a launch while the device runs the previous kernel, so a kernel costs the
    longer of the two, not their sum: a kernel longer than its launches hides them, a
    short one waits for them (eager PyTorch at batch 1, seed 004); CUDA graphs remove the
    launches and leave the work floor."""
    return max(work_s, calls * (per_launch_s or 0.0))


@dataclass(frozen=True)
class KernelTime:
    kernel: str
    seconds: float      # with launches: max(work floor, calls x launch floor)
    binding: str        # "DRAM", "fp16 tensor", "launch"
    missing: str | None = None   # the kernel's precision when the roof has no math for it
    work_s: float | None = None  # the work floor alone, max(FLOP / P, bytes / B)

    @property
    def work_floor_s(self) -> float:
        return self.seconds if self.work_s is None else self.work_s


@dataclass(frozen=True)
class Choice:
    name: str
    roof: Roof
    seconds: float                      # the work floor: per kernel max(FLOP/P, bytes/B), summed
    binding: str                        # the ceiling binding the largest share of time
    binding_share: float
    per_kernel: tuple[KernelTime, ...]
    tdp_w: float | None = None
    notes: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()       # precisions of the work this roof has no math for
    fits: bool | None = None            # the model fits in its memory (None: not known)
    with_launches_s: float | None = None  # per kernel max(work, calls x launch), summed
    link_s: float | None = None   # an llm --tp document's all-reduces + gather on its link
    tp: int = 1   # an llm document's --tp: the kernels are one of tp ranks' shards
    pp: int = 1   # its --pp: the kernels are every stage in turn, each on its own GPUs
    # the row's own work FLOP where its kernels are not the file's (a train --zero/--tp
    # file's rank recomputed for a device of other ranks: cli/choose_train_own)
    work_flop: float | None = None

    @property
    def gpus(self) -> int:
        """How many GPUs the row stands for (an llm --tp/--pp document's tp x pp)."""
        return self.tp * self.pp

    @property
    def ranked_s(self) -> float:
        """What rank() sorts on: the time with launches plus the TP link time where the
        work is a --tp shard (review W4: a shard alone ranked an H100 NVL, 4.92 ms of
        PCIe per step, ahead of an H100 SXM, 0.69 ms of NVLink)."""
        return self.step_s + (self.link_s or 0.0)

    @property
    def floor_s(self) -> float:
        """The work floor plus the TP link time: `rooflab llm --on`'s TPOT floor."""
        return self.seconds + (self.link_s or 0.0)

    # a notebook shows the CLI's row, not every field (display_results)
    _repr_pretty_ = pretty(choice_text)

    @property
    def viable(self) -> bool:
        """The device can run the work as counted: it has math for every precision and
        the model fits (or its fit is unknown)."""
        return not self.missing and self.fits is not False

    @property
    def step_s(self) -> float:
        """The time the work takes at least: with launches where known, else the work
        floor (ranked_s adds the TP link: energy and FLOP/J are priced at that)."""
        return self.with_launches_s if self.with_launches_s is not None else self.seconds

    @property
    def energy_j(self) -> float | None:
        """Energy at TDP of the work on every GPU the row stands for: gpus x TDP x the time
        it ranks by (ranked_s: with launches + the TP link; a GPU is powered while it
        waits on a launch, the all-reduces or another stage). Not a bound either way: the
        time is a lower bound, TDP an upper one on the power. Priced at the work floor it
        read 2.7x low for an H100 held by launches (review 12a #12); without the link and
        the other GPUs, an llm --tp 8 shard read 8x low (the CLI priced it, the library
        did not: review W2)."""
        return self.gpus * self.tdp_w * self.ranked_s if self.tdp_w else None

    @property
    def work_floor_energy_j(self) -> float | None:
        """gpus x TDP x the work floor + the TP link (floor_s): the energy were the
        launches gone (CUDA graphs; they do not remove the link)."""
        return self.gpus * self.tdp_w * self.floor_s if self.tdp_w else None


def kernel_time(roof: Roof, k: Kernel) -> tuple[KernelTime, str]:
    """A kernel's least time on a roof, what binds it, and a note when a ceiling is missing.
    (Used by tests as an oracle.)"""
    kt, notes = _kernel_time(roof, k)
    return kt, "; ".join(notes)


def _kernel_time(roof: Roof, k: Kernel) -> tuple[KernelTime, list[str]]:
    # analysis pulls in numpy (placement, roofline): not at import, where whatif's and
    # llm's --help take WITH_LAUNCHES from here
    from .analysis import memory_ceiling

    # the ceiling `rooflab report` holds the kernel to: its dominant precision's, or for a
    # kernel whose FLOP span precisions the time-weighted peak of its parts (A100 9e9 fp16
    # tensor + 1e9 fp32: 124.8 TFLOP/s, not 312), so every verb ranks the same kernel alike
    held = held_ceiling(roof, k)
    compute, notes = held.ceiling, list(held.notes)
    # A stand-in listed in PRECISION_FALLBACK (bf16 work on fp16 math) is a port the user
    # can make; anything else (the slowest float ceiling for fp64 work) is no such port.
    missing = (k.precision if k.total_flop > 0 and compute.precision != k.precision
               and compute.precision not in PRECISION_FALLBACK.get(k.precision, ("fp32",))
               else None)
    best = (k.total_flop / compute.value, held.label)
    levels = [lv for lv in k.bytes if roof.find_memory(lv) is not None]
    if not levels and k.bytes:
        if roof.find_memory("DRAM") is None:
            raise InputError(f"roof '{roof.name}' has none of the memory levels of kernel "
                             f"'{k.name}' ({', '.join(k.bytes)})")
        notes.append(f"judged against DRAM (the roof has no {'/'.join(k.bytes)} ceiling)")
        levels = []
        dram = memory_ceiling(roof, k, "DRAM")[0]
        best = max(best, (max(k.bytes.values()) / dram.value, dram.level))
    for lv in levels:
        # the ceiling `report` judges the level's bytes against (analysis.memory_ceiling:
        # counter-measured DRAM bytes on the real-traffic ceiling where the roof has one),
        # so choose and report give a perf or likwid kernel one floor
        c = memory_ceiling(roof, k, lv)[0]
        best = max(best, (k.bytes[lv] / c.value, c.level))
    work = best[0]
    launched = with_launches_s(work, k.calls, roof.overhead_s)
    if launched > work:
        best = (launched, "launch")
    return KernelTime(k.name, best[0], best[1], missing, work), notes


def _names(names: Sequence[str], most: int = 6) -> str:
    shown = ", ".join(names[:most])
    return shown + (f" and {len(names) - most} more" if len(names) > most else "")


def split_whole_steps(kernels: Sequence[Kernel]) -> tuple[tuple[Kernel, ...], tuple[Kernel, ...]]:
    """(work, whole steps) of one file's kernels.

    A `rooflab llm --tpot-ms` document holds the step's kernels and, beside them, the
    whole measured decode step (meta op 'decode_step'; `--ttft-ms`: the prefill,
    'prefill_step'): the same FLOP, bytes and launches again. The per-kernel rows are the
    work; the step is the comparison point. It counts as work only when the file holds
    nothing else.
    """
    kernels = tuple(kernels)
    steps = tuple(k for k in kernels if k.meta.get("op") in WHOLE_STEP_OPS)
    work = tuple(k for k in kernels if k.meta.get("op") not in WHOLE_STEP_OPS)
    return (work, steps) if work else (kernels, ())


def own_steps(work: Sequence[Kernel], steps: Sequence[Kernel]
              ) -> tuple[tuple[Kernel, ...], tuple[Kernel, ...]]:
    """(the whole steps that time `work` itself, the others). A `rooflab llm` file holds
    one phase's kernels (the decode step's, or the prefill's under --phase prefill) and
    each measured step, --tpot-ms's decode and --ttft-ms's prefill, whatever the phase: a
    step is the work's when its FLOP are the work's (the same kernels, summed); another
    phase's step is a point of its own, no measure of these kernels (s35 E)."""
    total = sum(k.total_flop for k in work)
    same = tuple(k for k in steps if math.isclose(k.total_flop, total, rel_tol=1e-6))
    return same, tuple(k for k in steps if all(k is not o for o in same))


def timed_total(kernels: Sequence[Kernel]) -> float:
    """The measured seconds a file's timed rows add up to, another phase's whole step left
    out where the rest has a time (a decode step's 9 ms and a prefill's 120 ms are no
    129 ms of anything); that step's own where it is the only time."""
    work, steps = split_whole_steps(kernels)
    other = own_steps(work, steps)[1]
    own = sum(k.seconds for k in kernels if k.seconds and all(k is not o for o in other))
    return own or sum(k.seconds for k in other if k.seconds)


def count_text(kernels: Sequence[Kernel]) -> str:
    """'15 kernel(s)', or '15 kernel(s) and the measured whole step "decode step b=1
    (measured)" (the same work, timed as one)' when a file holds both (split_whole_steps);
    another phase's measured step is named beside them with its time (own_steps)."""
    from ..units import fmt_seconds

    work, steps = split_whole_steps(kernels)
    if not steps:
        return f"{len(work)} kernel(s)"
    same, other = own_steps(work, steps)
    out = f"{len(work)} kernel(s)"
    if same:
        names = ", ".join(f"'{k.name}'" for k in same)
        out += (f" and the measured whole step {names} (the same work timed as one; its "
                f"kernels are the counted rows)")
    for k in other:
        took = f" {fmt_seconds(k.seconds)}" if k.seconds else ""
        out += (f", beside them '{k.name}'{took} (another phase timed whole: a point of "
                f"its own, its kernels not in this file)")
    return out


def rank(kernels: Sequence[Kernel], candidates: Sequence[tuple[str, Roof, float | None]],
         *, needs_bytes: float | None = None,
         memory_bytes: Mapping[str, float | None] | None = None,
         link_s: Mapping[str, float] | None = None,
         tp: int = 1, pp: int = 1) -> tuple[Choice, ...]:
    """Candidates (name, roof, TDP in W or None), fastest predicted total first, the
    devices that are no real choice (`Choice.viable`) after the others.

    needs_bytes: what one device must hold (an llm document's footprint); memory_bytes:
    each candidate's memory by name (a name missing or None: not known, not held
    against it); link_s: each candidate's TP link time per step by name (an llm --tp
    document's all-reduces and logits gather), added to the time it ranks on; tp, pp: the
    llm document's split (each row stands for tp x pp GPUs, which its energy counts).

    A catalog package that is several devices to software (the MI250X's roof, by its
    note: model/dies.py) is ranked as one of its dies, what one process sees: its ceilings
    and the TDP given / the dies (memory_bytes is the caller's: the CLI's is one die's)."""
    kernels = tuple(kernels)
    if not kernels:
        raise InputError("no kernels to place; pass a kernel file")
    idle = [k.name for k in kernels
            if k.total_flop <= 0 and all(b <= 0 for b in k.bytes.values())]
    if len(idle) == len(kernels):   # review r3 F4: ranked on launches alone, rc 0
        raise InputError(f"no kernel has work: {_names(idle)} "
                         f"{'has' if len(idle) == 1 else 'have'} 0 FLOP and 0 bytes, so "
                         f"no AI and no time at any roof to rank the devices by; give "
                         f"their counts (flop=..., bytes=...)")
    out = []
    for name, roof, tdp in candidates:
        n = dies.software_devices(roof)
        if n > 1:
            roof, tdp = dies.one_die(roof, tdp, n)
        times, by_note = [], {}
        for k in kernels:
            kt, knotes = _kernel_time(roof, k)
            times.append(kt)
            for n in knotes:
                # the choice names its device: drop the roof name so one fallback reads
                # the same on every device (the CLI groups them)
                by_note.setdefault(n.replace(f"roof '{roof.name}' has ", ""), []).append(k.name)
        notes = [f"{n} (for {_names(list(dict.fromkeys(ks)))})" for n, ks in by_note.items()]
        # the work floor (llm's TPOT floor) and the time with launches, which ranks
        total = sum(t.work_floor_s for t in times)
        launched = sum(t.seconds for t in times)
        by: dict[str, float] = {}
        for t in times:
            by[t.binding] = by.get(t.binding, 0.0) + t.seconds
        binding = max(by, key=by.get) if by else "-"
        mem = (memory_bytes or {}).get(name)
        fits = None if needs_bytes is None or not mem else needs_bytes <= mem
        missing = tuple(dict.fromkeys(t.missing for t in times if t.missing))
        out.append(Choice(name, roof, total, binding,
                          by.get(binding, 0.0) / launched if launched > 0 else 0.0,
                          tuple(times), tdp, tuple(notes), missing, fits, launched,
                          (link_s or {}).get(name), tp, pp))
    # by the time with launches, what binds as counted (eager launches included): ranked on
    # the work floor, every GPU launch-bound on a 1.1B decode step ranked 1.67x apart at
    # 0.7 % (review r1 F2); equal times (all held by launches alike) by the work floor,
    # the device faster once the launches are gone (CUDA graphs); a --tp shard's link
    # time added to both (Choice.ranked_s, floor_s)
    return tuple(sorted(out, key=_rank_key))


def ranked(choices: Sequence[Choice]) -> tuple[Choice, ...]:
    """Choices ranked apart (each on its own work) in rank()'s order."""
    return tuple(sorted(choices, key=_rank_key))


def _rank_key(c: Choice) -> tuple[bool, float, float]:
    return (not c.viable, c.ranked_s, c.floor_s)


def standings(choices: Sequence[Choice]) -> list[int]:
    """Each ranked choice's place, equal places for equal rank() keys (competition ranking,
    1, 2, 2, 4): an H100 SXM and an H800 SXM at the same 915 us read #10 and #11, as if the
    second were slower (review s23 r2 F7). Ties keep the candidates' order in the list."""
    out: list[int] = []
    for i, c in enumerate(choices):
        same = i > 0 and _rank_key(c) == _rank_key(choices[i - 1])
        out.append(out[-1] if same else i + 1)
    return out


def flop_per_joule(c: Choice, kernels: Sequence[Kernel], work_floor: bool = False
                   ) -> float | None:
    """Useful FLOP per joule at TDP: the FLOP of the row's GPUs / Choice.energy_j, the
    time it ranks by (with launches + the TP link), as the row's own column: at the work
    floor an H100 held by launches read 4.96 GFLOP/J for a step it takes 1.71 ms over
    (1.80), and the energy order of the devices flipped (review 12a #12). Under --tp the
    kernels are one rank's shard and each of the tp ranks runs its own, so the FLOP is
    theirs x tp (per GPU and on all of them the same figure); under --pp every stage is
    counted once, on tp x pp powered GPUs. work_floor: at the work floor + link (the
    launches gone: CUDA graphs)."""
    energy = c.work_floor_energy_j if work_floor else c.energy_j
    if not energy or energy <= 0:
        return None
    flop = c.work_flop if c.work_flop is not None else sum(k.total_flop for k in kernels)
    return flop * c.tp / energy


@dataclass(frozen=True)
class StepComparison:
    """A measured whole step set against the predicted floor of the device it ran on."""
    step: Kernel
    device: str | None          # the roof named in the step's file
    floor_s: float | None       # the ranking's predicted time on that device, if ranked

    @property
    def vs_floor(self) -> float | None:
        """Measured / predicted: >= 1 (the prediction is a lower bound)."""
        if self.floor_s and self.step.seconds:
            return self.step.seconds / self.floor_s
        return None


def compare_steps(steps: Sequence[tuple[Kernel, str | None]], choices: Sequence[Choice]
                  ) -> tuple[StepComparison, ...]:
    """Each (whole step, roof name of its file) against the choice of the same name: its
    floor with launches (a measured step's time holds its launches)."""
    by_name = {c.name: c.with_launches_s if c.with_launches_s is not None else c.seconds
               for c in choices}
    return tuple(StepComparison(k, dev, by_name.get(dev) if dev else None)
                 for k, dev in steps)


def best_times(choices: Sequence[Choice]) -> tuple[float | None, float | None]:
    """(least work floor, least time with launches), each with its TP link time where
    the choice has one (Choice.floor_s, ranked_s), among the devices that can run the
    work (all of them where none can): what each row's `relative` and
    `relative_with_launches` divide by, 1.0 on the best of each measure."""
    pool = [c for c in choices if c.viable] or list(choices)
    if not pool:
        return None, None
    return min(c.floor_s for c in pool), min(c.ranked_s for c in pool)


def no_ratio(c: Choice, choices: Sequence[Choice]) -> bool:
    """Whether the row gets no ratio to the best (`vs best` '-', `relative` null): a
    device that cannot run the work beside ones that can (review s20 r5 F4: a 'does not
    fit' B200 read 0.71x under a 1.00x MI300X). Where none can, each is still set against
    the fastest of them (best_times)."""
    return not c.viable and any(o.viable for o in choices)


def choices_to_dict(choices: Sequence[Choice], kernels: Sequence[Kernel],
                    steps: Sequence[StepComparison] = ()) -> list[dict]:
    fastest, launched = best_times(choices)
    places = standings(choices)
    out = [{"rank": places[i], "name": c.name, "seconds": c.seconds,
            "work_floor_s": c.seconds, "with_launches_s": c.with_launches_s,
            "relative": (c.floor_s / fastest if fastest and not no_ratio(c, choices)
                         else None),
            # the rank's measure (rank() sorts by it): the time with launches (+ the TP
            # link where the work is a --tp shard) vs the best
            "relative_with_launches": (c.ranked_s / launched
                                       if launched and not no_ratio(c, choices) else None),
            "ranked_s": c.ranked_s,
            "binding": c.binding,
            "binding_share": c.binding_share, "tdp_w": c.tdp_w,
            "flop_per_joule": flop_per_joule(c, kernels), "energy_j": c.energy_j,
            # the same at the work floor (the launches gone: CUDA graphs)
            "work_floor_flop_per_joule": flop_per_joule(c, kernels, work_floor=True),
            "work_floor_energy_j": c.work_floor_energy_j,
            "viable": c.viable, "missing_precisions": list(c.missing),
            "kernels": [{"kernel": t.kernel, "seconds": t.seconds, "binding": t.binding,
                         "work_floor_s": t.work_floor_s, "with_launches_s": t.seconds}
                        for t in c.per_kernel],
            "notes": list(c.notes)} for i, c in enumerate(choices)]
    for s in steps:
        for d in out:
            if d["name"] == s.device:
                d.setdefault("measured", []).append(
                    {"kernel": s.step.name, "seconds": s.step.seconds, "vs_floor": s.vs_floor})
    return out
