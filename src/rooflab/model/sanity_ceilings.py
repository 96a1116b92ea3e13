"""Sanity checks against the roof's ceilings: a point above its roof (and the two ways a
correct count gets there: Zen's add pipes, write-allocate bytes a STREAM-counted roof leaves
out), a time below the launch floor, a roof measured on more threads than the kernel ran
on, and a precision the roof holds to a stand-in ceiling. Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..units import DTYPE_BYTES, fmt_ai, fmt_fraction, fmt_pct, fmt_rate, fmt_seconds, fmt_times, si
from .byte_convention import counter_bytes, stream_counted
from .ceiling import Ceiling, Roof, _unit_of_part
from .held_unit import held_ceiling, held_unit
from .kernel import Kernel
from .machine import Machine
from .placement import Point
from .real_traffic import REAL_TRAFFIC
from .sanity_counts import resident_cause
from .sanity_finding import ABOVE_TOLERANCE, Finding, kind_of

# Zen 2/3/4 add FP2/FP3 FADD pipes to the two FMA pipes a derived or probed peak counts
# (hardware.cpu_arch, AMD's optimisation guides): add-heavy code may pass that peak by up to
# 1.5x. Read from the roof's words ('... FMA pipes x 2 (Zen 4)', 'identified as Zen 3').
_ZEN_ADD_PIPES = re.compile(r"\bzen ?[234]\b")


def _zen_add_pipes(roof: Roof | None) -> str | None:
    """'Zen 4' when the roof names a Zen design with separate FADD pipes, else None."""
    if roof is None:
        return None
    text = " ".join([roof.name, roof.source, *roof.notes]
                    + [c.method for c in roof.compute]).lower()
    found = _ZEN_ADD_PIPES.search(text)
    return f"Zen {found.group(0)[-1]}" if found else None


# A STREAM-counted DRAM ceiling leaves the store's write-allocate read out: triad moves
# 32 B per element and counts 24, so real traffic (what counters see) reads up to 32/24 of
# it (probe.md "Which bytes: STREAM-counted vs. real traffic").
WRITE_ALLOCATE_RATIO = 32 / 24


def _stream_counted(roof: Roof | None, level: str) -> bool:
    """Whether the roof's ceiling at `level` counts bytes STREAM's way: the one rule
    byte_convention.stream_counted reads from its method, which memory_ceiling follows too."""
    c = roof.find_memory(level) if roof is not None else None
    return c is not None and stream_counted(c)


def _over_peak(p: Point) -> bool:
    """Whether a timed point's FLOP/s passes its compute peak by more than the tolerance
    (False untimed): the compute half of "above the roof"."""
    return (p.achieved_flop_per_s is not None
            and p.achieved_flop_per_s > p.peak_flop_per_s * (1 + ABOVE_TOLERANCE))


def check_write_allocate(p: Point, kernel: Kernel, roof: Roof | None) -> Finding | None:
    """A kernel whose DRAM bytes were measured by hardware counters, above a STREAM-counted
    DRAM roof by at most 4/3 x (1 + ABOVE_TOLERANCE) (a roof without a real-traffic
    ceiling: a profile of an older probe, a likwid-bench import): the counters include the
    write-allocate read the roof's count leaves out, so the counts are not wrong (review
    16a A)."""
    if (p.level != "DRAM" or p.seconds is None or not counter_bytes(kernel)
            or not _stream_counted(roof, "DRAM") or p.bytes_per_s != roof.bandwidth("DRAM").value):
        return None
    ratio = p.bytes / p.seconds / p.bytes_per_s
    over_peak = _over_peak(p)
    # the 4/3 limit gets the relative tolerance every above-roof test gets at 1x: a loop at
    # the real roof reads 4/3 +/- timing noise and the counts' rounding (review 17a N7: a
    # triad exactly at it read 1.33333335 from MiB figures rounded to 3 decimals, outside
    # the 1e-9 tolerance this had, and was called above the roof)
    if over_peak or not (1 + ABOVE_TOLERANCE < ratio
                         <= WRITE_ALLOCATE_RATIO * (1 + ABOVE_TOLERANCE)):
        return None
    return Finding(
        kernel=p.kernel, check="write_allocate", severity="info", level=p.level,
        message=(f"{p.kernel} at DRAM moves {si(p.bytes / p.seconds, 'B/s')}, "
                 f"{fmt_fraction(ratio)} of the STREAM-counted DRAM roof "
                 f"({si(p.bytes_per_s, 'B/s')}): its bytes were measured by hardware counters, "
                 f"and counters include the write-allocate read the STREAM-counted roof leaves "
                 f"out (a store moves 8 B more at the memory controller than STREAM counts: up "
                 f"to 32/24 = 1.33x above it)"),
        causes=("the roof counts explicit loads + stores only (STREAM/likwid-bench "
                "convention); the counters see real traffic",),
        fix=("re-probe with `rooflab probe -o profile.json`: the profile then has a "
             f"'{REAL_TRAFFIC}' ceiling that counter bytes are judged against; until then "
             f"read this kernel against {fmt_times(WRITE_ALLOCATE_RATIO)} the DRAM roof"))


def check_above_roof(p: Point, roof_kind: str = "",
                     machine: Machine | None = None, roof: Roof | None = None,
                     kernel: Kernel | None = None) -> Finding | None:
    """A point above its roof is impossible on a correct roof with correct counts, except
    above an FMA-only compute peak of a CPU with separate add pipes (`roof` names a Zen
    2/3/4), which the causes then name, and counter-measured DRAM bytes up to 4/3 above a
    STREAM-counted roof (check_write_allocate: `kernel` given)."""
    if p.achieved_flop_per_s is None or p.seconds is None:
        return None
    if kernel is not None:
        wa = check_write_allocate(p, kernel, roof)
        if wa is not None:
            return wa
    bytes_per_s = p.bytes / p.seconds
    over_peak = _over_peak(p)
    over_slope = bytes_per_s > p.bytes_per_s * (1 + ABOVE_TOLERANCE)
    if not (over_peak or over_slope):
        return None
    # a working set a cache holds leads: repeated calls are served from that level, so
    # the DRAM roof is not the low side (review s18 r2 F3: a 16 kB dot fits the L1)
    causes: list[str] = (list(resident_cause(kernel, p, machine, roof))
                         if over_slope and kernel is not None else [])
    if roof_kind == "measured":
        # A probe disturbed by other load measures ceilings below what the machine gives.
        causes.append("the measured roof is too low: the probe ran while other work shared "
                      "the machine (compare it with the nominal roof; re-probe on a quiet "
                      "machine)")
    if over_slope:
        causes += _over_slope_causes(p, bytes_per_s, roof_kind)
    if over_peak:
        causes += _over_peak_causes(p, machine, roof)
    causes.append("a timing that is too short or missed part of the work")
    return Finding(
        kernel=p.kernel, check="above_roof", severity="warning", level=p.level,
        message=_above_roof_message(p, bytes_per_s),
        causes=tuple(causes),
        fix="check which memory level the bytes belong to and which precision/unit the "
            "kernel really uses; re-time with more repetitions",
    )


def _over_slope_causes(p: Point, bytes_per_s: float, roof_kind: str = "") -> list[str]:
    """Why a point moves bytes faster than its level's roof allows. On a datasheet roof
    nothing was measured, so the roof is not the low side: cache reuse is (review s21 r3
    F4: hand-counted bytes 2.45x an A100's DRAM roof)."""
    causes = [
        f"wrong memory level: {si(bytes_per_s, 'B/s')} through {p.level} exceeds its "
        f"{si(p.bytes_per_s, 'B/s')}, so the data was served from a faster level "
        f"(judge it against the L2/L1 roof, or take {p.level} bytes from the profiler)"]
    if roof_kind == "nominal":
        return causes + [
            f"cache effects (reuse): the counted bytes are not {p.level} traffic, caches "
            f"served the rest; take dram__bytes.sum from Nsight Compute or give the "
            f"kernel's L2 bytes"]
    return causes + [
        "cache effects: the working set fits in a cache, so counted (compulsory) bytes "
        "never reached DRAM; use a working set > 4x the last-level cache",
        f"the {p.level} roof is too low (a nominal or badly measured bandwidth)",
    ]


def _over_peak_causes(p: Point, machine: Machine | None, roof: Roof | None) -> list[str]:
    """Why a point's FLOP/s pass its compute peak; a Zen CPU's add pipes among them where
    the roof names one (fp64/fp32 on a CPU or an unknown machine)."""
    # the ceiling's own precision: an fp4 kernel on a roof without fp4 is held to the fp8
    # stand-in, and "held to fp4 tensor at 1.98 PFLOP/s" named a ceiling H100 lacks
    held = p.ceiling_precision or p.precision
    instead = f" (standing in for {p.precision})" if held != p.precision else ""
    causes = [
        f"roof of the wrong precision or unit: the kernel is held to {held}"
        f"{' ' + p.unit if p.unit else ''}{instead} at {fmt_rate(p.peak_flop_per_s, held)}"
        + (f" ({p.note})" if p.note else "")
        + ("; AMX, VNNI or lower-precision math needs its own ceiling"
           if machine is not None and machine.kind == "cpu" else
           "; tensor-core or lower-precision math needs its own ceiling"),
        "a counting error: FLOP counted twice (an FMA counted as 2 and then doubled again)",
    ]
    cpu = machine is None or machine.kind in ("", "cpu")
    zen = _zen_add_pipes(roof) if cpu and p.precision in ("fp64", "fp32") else None
    if zen:
        causes.append(
            f"{zen}'s two FADD pipes beside its two FMA pipes: the {p.precision} peak "
            f"counts FMA pipes only, so code mixing adds with FMAs can reach up to 1.5x "
            f"it (24 vs 16 fp64 FLOP/cycle/core) without a counting error")
    return causes


def _above_roof_message(p: Point, bytes_per_s: float) -> str:
    """What was seen: FLOP/s against the attainable, or for zero FLOP (a copy: no FLOP/s
    to compare) the bandwidth it moved against its level's."""
    if p.percent_of_roof is None:
        share = fmt_pct(100 * bytes_per_s / p.bytes_per_s)
        return (f"{p.kernel} at {p.level} sits above its roof: moves "
                f"{si(bytes_per_s, 'B/s')} > {p.level} bandwidth "
                f"{si(p.bytes_per_s, 'B/s')} ({share} of it)")
    return (f"{p.kernel} at {p.level} sits above its roof: achieved "
            f"{fmt_rate(p.achieved_flop_per_s, p.precision)} > attainable "
            f"{fmt_rate(p.attainable_flop_per_s, p.precision)} at AI {fmt_ai(p.ai)} "
            # fmt_pct, as the position line beside it: '1.49e+06 %', not '1492537 %'
            f"({fmt_pct(p.percent_of_roof)} of roof)")


def applicable_launch_s(p: Point) -> float:
    """calls x the roof's launch floor where it applies to the point's time: 0 when the
    measured time is below it. A GPU-side duration (Nsight Compute, the torch profiler's
    CUDA time) never contains the CPU launch cost, and asynchronous launches overlap: 1000
    calls timed at 1 ms hold no 5 ms of 5 us launches, so the class, the gain and the advice
    leave the floor out (check_launch_floor says so). A GPU-side time (Point.gpu_side) leaves
    it out at every length: 200 ncu launches of 5.1 us held no 1 ms of CPU launch cost
    either (review s21 r3 F1). Untimed: the floor, as the model adds."""
    floor = p.overhead_floor_s or 0.0
    if p.gpu_side or (p.seconds is not None and p.seconds < floor):
        return 0.0
    return floor


def check_launch_floor(kernel: Kernel, roof: Roof,
                       machine: Machine | None = None) -> Finding | None:
    """A measured time below calls x the launch/dispatch floor: the floor is not in it."""
    if kernel.seconds is None or not roof.overhead_s:
        return None
    floor_s = kernel.calls * roof.overhead_s
    if kernel.seconds >= floor_s:
        return None
    cpu = kind_of(machine) == "cpu"
    what = "dispatch floor" if cpu else "launch floor"
    causes = (("a per-op time from a profiler, which leaves out the Python/framework "
               "dispatch around the op",
               "calls dispatched asynchronously, overlapping one another",
               "a dispatch floor measured on a slower call path than this kernel's")
              if cpu else
              ("GPU-side kernel durations (Nsight Compute, rocprof, the torch profiler's "
               "CUDA time) never contain the CPU launch cost",
               "asynchronous launches overlap one another and the kernels (the CPU queues "
               "work ahead of the GPU)",
               "the roof's launch floor (a nominal 5 us on a catalog GPU) is above this "
               "system's"))
    why = ("the time leaves the dispatch out or the calls overlap" if cpu else
           "the time is GPU-side (a profiler's) or the launches overlap")
    return Finding(
        kernel=kernel.name, check="below_launch_floor", severity="info",
        message=(f"measured {fmt_seconds(kernel.seconds)} over {kernel.calls} call(s) "
                 f"({fmt_seconds(kernel.seconds / kernel.calls)} per call) is below "
                 f"{kernel.calls} call(s) x the {fmt_seconds(roof.overhead_s)} {what} = "
                 f"{fmt_seconds(floor_s)}: {why}, so the {what} does not apply to this "
                 f"time and was left out of the class, the gain and the advice"),
        causes=causes,
        fix=("time the calls end to end on the host (a synchronised wall clock around the "
             "loop) to see what launches cost, or measure the floor with `rooflab probe`"),
    )


# A probed roof names the threads it was measured with: 'EPYC 9654 measured (2 threads)',
# a scaling row 'EPYC 9654 measured (1 thread)' (hardware/profile.py), a date after it.
_ROOF_THREADS = re.compile(r"\((\d+) threads?\)")
# The words of the CLI's input notes that say the kernels' thread count against the roof
# already (cli/inputs.py, hardware/thread_rows.py roofs_for_kernel_threads: "(their
# 'threads')"), with the profile's rows: where they are said, check_threads finds nothing
# and Analysis drops analyze()'s shorter note (threads_note.py).
THREADS_SAID = re.compile(r"'threads'|ran on different thread counts")


def roof_threads(roof: Roof) -> int | None:
    """The thread count a probed roof was measured with (its name says it); None for a
    roof that does not say (a catalog entry: the whole chip)."""
    m = _ROOF_THREADS.search(roof.name)
    return int(m.group(1)) if m else None


def threads_words(n: int) -> str:
    return f"{n} thread" if n == 1 else f"{n} threads"


def thread_gap(kernel: Kernel, roof: Roof) -> tuple[int, int] | None:
    """(the kernel's threads, the roof's) where a kernel (meta 'threads': rooflab.measure's
    record, a kernel file's field) ran on fewer threads than the probed roof was measured
    with; None when the roof is the row of its count or either says no count."""
    n = kernel.meta.get("threads")
    t = roof_threads(roof)
    if not isinstance(n, int) or isinstance(n, bool) or n < 1 or t is None or n >= t:
        return None
    return n, t


def threads_message(n: int, t: int) -> str:
    """'ran on 1 thread; judged by the 2-thread roof: ...': check_threads' finding, and
    analyze()'s note after the kernel's name (threads_note.py), word for word."""
    return (f"ran on {threads_words(n)}; judged by the {t}-thread roof: use --on "
            f"PROFILE@{n}t (or a profile from `rooflab probe --threads {n},all`)")


def check_threads(kernel: Kernel, roof: Roof, notes: Sequence[str] = ()) -> Finding | None:
    """A kernel that ran on fewer threads (meta 'threads': rooflab.measure's record, a
    kernel file's field) than the probed roof judging it was measured with: its % of roof
    is of every thread's bandwidth and peak, so a one-thread loop reads 1/threads of what
    it reaches (review 16b #13). None when the roof is the row of its count, says no count,
    or the input notes (`notes`: the analysis's) say it already."""
    gap = thread_gap(kernel, roof)
    if gap is None or any(THREADS_SAID.search(x) for x in notes):
        return None
    n, t = gap
    return Finding(
        kernel=kernel.name, check="threads", severity="warning",
        message=threads_message(n, t),
        causes=(f"the roof's ceilings were measured with {threads_words(t)}, so its % of "
                f"roof and its distance below the roof count the threads it did not use",),
        fix=(f"judge it on a {n}-thread roof: `rooflab probe --threads {n},all -o "
             f"me.json`, then --on me.json@{n}t; or run it on {threads_words(t)}"))


def stand_ins(roof: Roof, kernel: Kernel, points: tuple[Point, ...] = ()
              ) -> list[tuple[str, str, Ceiling]]:
    """(note, precision, ceiling used) for each precision of the kernel its roof holds to
    a stand-in ceiling. One precision: the points' notes, against the kernel's precision
    and Roof.compute_for's ceiling. Several: ceiling.kernel_ceiling's notes, each against
    the part it is about: an fp16 tensor kernel's fp64 part on a roof without fp64 runs on
    fp32 vector, narrower than fp64, though the fp16 part's own ceiling is exact (the
    dominant precision alone called that 'info' and asked for an fp16 ceiling)."""
    if not kernel.mixed:
        used, _ = roof.compute_for(kernel.precision, held_unit(roof, kernel))
        return [(n, kernel.precision, used) for n in sorted({p.note for p in points if p.note})]
    held = held_ceiling(roof, kernel)
    out: dict[str, tuple[str, str, Ceiling]] = {}
    for precision, v in kernel.flop.items():
        if v <= 0:
            continue
        used, note = roof.compute_for(
            precision, _unit_of_part(precision, kernel.precision, held_unit(roof, kernel)))
        if note in held.notes:
            out.setdefault(note, (note, precision, used))
    return [out[n] for n in held.notes if n in out]


def _narrower(used: str, wanted: str) -> bool:
    """True when `used` stores fewer bytes per element than `wanted` (int4 for fp64)."""
    a, b = DTYPE_BYTES.get(used), DTYPE_BYTES.get(wanted)
    return a is not None and b is not None and a < b



def check_precision_fallback(roof: Roof, kernel: Kernel,
                             points: tuple[Point, ...]) -> list[Finding]:
    """One finding per precision of the kernel that its roof holds to a stand-in ceiling
    (stand_ins): a warning where that ceiling is for narrower, faster math than the kernel
    does (its % of roof and class then mean nothing), information otherwise."""
    if not any(p.note for p in points):
        return []
    found = []
    for note, precision, used in stand_ins(roof, kernel, points):
        faster = _narrower(str(used.precision), precision)
        whose = "the kernel" if precision == kernel.precision and not kernel.mixed \
            else f"the kernel's {precision} part"
        found.append(Finding(
            kernel=kernel.name, check="precision_fallback",
            severity="warning" if faster else "info",
            message=note + (f"; that ceiling is for narrower, faster math than {whose} "
                            f"does, so its % of roof and bound class are not meaningful"
                            if faster else ""),
            causes=("the roof lacks a ceiling for the kernel's precision",),
            fix=f"use a roof with a {precision} ceiling (a profile, or a catalog "
                f"entry that lists it)"))
    return found
