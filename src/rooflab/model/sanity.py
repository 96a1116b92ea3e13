"""Sanity checks: the classic mistakes of seed 000 §6 (and seed 004 "常见误区"), in numbers.

Each check looks at one kernel's points and returns Findings that say what looks wrong, the
likely causes, and how to check. Pure: no I/O.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..units import fmt_ai, fmt_rate, fmt_seconds, si
from .analysis import REAL_TRAFFIC, Analysis, Point, counter_bytes
from .ceiling import Ceiling, Roof, _unit_of_part, kernel_ceiling
from .kernel import Kernel
from .machine import Machine

# The op-kind vocabulary lived here before model/opkind.py: its names stay importable here.
from .opkind import (  # noqa: F401
    ELEMENTWISE_OPS,
    STREAMING_KINDS,
    is_streaming,
    kernel_kind,
    kind_from_name,
    name_words,
    op_kind,
)

# A point more than this fraction above its attainable roof is "above the roof".
ABOVE_TOLERANCE = 0.05
# Timings whose raw samples span more than this, (max - min) / median, are too noisy to trust.
NOISY_SPREAD = 0.20
# A measured per-call time below this is dominated by timer resolution and launch jitter
# (seed 000 §6.1, problem one: repeat the kernel and take the stable value).
TOO_SHORT_S = 10e-6
# The most AI a correctly counted streaming op (opkind.is_streaming) reaches, so above it
# the counts are wrong (check_ai_high). An elementwise op, a norm or a softmax reads and
# writes each element once for a few FLOP: y = x + 1 in fp16 is 0.25, an fp16 layernorm
# (7 FLOP per 2 + 2 bytes) 1.75, an fp8 one 3.5. The highest is a GEMV of int4 weights
# (weight-only W4A16 decode): 2 FLOP per 0.5-byte weight = 4, 3.88 with GPTQ's fp16 scale
# per 128 weights (seed 004's W4A16 lm_head: 3.876). A 2- or 3-bit GEMV (llama.cpp Q2_K,
# Q3_K: ~2.6 and ~3.4 bits a weight, AI ~6 and ~4.7) passes it and is flagged wrongly.
STREAMING_MAX_AI = 4.0


@dataclass(frozen=True)
class Finding:
    """One sanity finding for one kernel (at one level when it is about a point)."""

    kernel: str
    check: str        # ai_high | ai_low | above_roof | noisy | too_short | precision_fallback
    #                   | below_launch_floor | cache_resident | write_allocate | threads
    severity: str     # warning | info
    message: str      # what was seen, in numbers
    causes: tuple[str, ...] = ()
    fix: str = ""
    level: str | None = None


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
# it (probe.md "Which bytes: counted vs. counters"). The words the probe's and likwid-bench
# import's methods use for that byte model:
WRITE_ALLOCATE_RATIO = 32 / 24
_STREAM_COUNTED = re.compile(r"no write-allocate|write-allocate not counted")


def _stream_counted(roof: Roof | None, level: str) -> bool:
    """Whether the roof's ceiling at `level` counts bytes STREAM's way (its method says)."""
    c = roof.find_memory(level) if roof is not None else None
    return c is not None and bool(_STREAM_COUNTED.search(c.method))


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
    over_peak = (p.achieved_flop_per_s is not None
                 and p.achieved_flop_per_s > p.peak_flop_per_s * (1 + ABOVE_TOLERANCE))
    # the 4/3 limit gets the relative tolerance every above-roof test gets at 1x: a loop at
    # the real roof reads 4/3 +/- timing noise and the counts' rounding (review 17a N7: a
    # triad exactly at it read 1.33333335 from MiB figures rounded to 3 decimals, outside
    # the 1e-9 tolerance this had, and was called above the roof)
    if over_peak or not (1 + ABOVE_TOLERANCE < ratio
                         <= WRITE_ALLOCATE_RATIO * (1 + ABOVE_TOLERANCE)):
        return None
    return Finding(
        kernel=p.kernel, check="write_allocate", severity="info", level=p.level,
        message=(f"{p.kernel} at DRAM moves {si(p.bytes / p.seconds, 'B/s')}, {ratio:.0%} of "
                 f"the STREAM-counted DRAM roof ({si(p.bytes_per_s, 'B/s')}): its bytes were "
                 f"measured by hardware counters, and counters include the write-allocate "
                 f"read the STREAM-counted roof leaves out (a store moves 8 B more at the "
                 f"memory controller than STREAM counts: up to 32/24 = 1.33x above it)"),
        causes=("the roof counts explicit loads + stores only (STREAM/likwid-bench "
                "convention); the counters see real traffic",),
        fix=("re-probe with `rooflab probe -o profile.json`: the profile then has a "
             f"'{REAL_TRAFFIC}' ceiling that counter bytes are judged against; until then "
             f"read this kernel against {WRITE_ALLOCATE_RATIO:.3g}x the DRAM roof"))


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
    over_peak = p.achieved_flop_per_s > p.peak_flop_per_s * (1 + ABOVE_TOLERANCE)
    over_slope = bytes_per_s > p.bytes_per_s * (1 + ABOVE_TOLERANCE)
    if not (over_peak or over_slope):
        return None
    causes: list[str] = []
    if roof_kind == "measured":
        # A probe disturbed by other load measures ceilings below what the machine gives.
        causes.append("the measured roof is too low: the probe ran while other work shared "
                      "the machine (compare it with the nominal roof; re-probe on a quiet "
                      "machine)")
    if over_slope:
        causes += [
            f"wrong memory level: {si(bytes_per_s, 'B/s')} through {p.level} exceeds its "
            f"{si(p.bytes_per_s, 'B/s')}, so the data was served from a faster level "
            f"(judge it against the L2/L1 roof, or take {p.level} bytes from the profiler)",
            "cache effects: the working set fits in a cache, so counted (compulsory) bytes "
            "never reached DRAM; use a working set > 4x the last-level cache",
            f"the {p.level} roof is too low (a nominal or badly measured bandwidth)",
        ]
    if over_peak:
        causes += [
            f"roof of the wrong precision or unit: the kernel is held to {p.precision}"
            f"{' ' + p.unit if p.unit else ''} at {fmt_rate(p.peak_flop_per_s, p.precision)}"
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
    causes.append("a timing that is too short or missed part of the work")
    if p.percent_of_roof is None:
        # zero FLOP (a copy): no FLOP/s to compare, only the bandwidth it moved
        message = (f"{p.kernel} at {p.level} sits above its roof: moves "
                   f"{si(bytes_per_s, 'B/s')} > {p.level} bandwidth "
                   f"{si(p.bytes_per_s, 'B/s')} ({100 * bytes_per_s / p.bytes_per_s:.0f} % of it)")
    else:
        message = (f"{p.kernel} at {p.level} sits above its roof: achieved "
                   f"{fmt_rate(p.achieved_flop_per_s, p.precision)} > attainable "
                   f"{fmt_rate(p.attainable_flop_per_s, p.precision)} at AI {fmt_ai(p.ai)} "
                   f"({p.percent_of_roof:.0f} % of roof)")
    return Finding(
        kernel=p.kernel, check="above_roof", severity="warning", level=p.level,
        message=message,
        causes=tuple(causes),
        fix="check which memory level the bytes belong to and which precision/unit the "
            "kernel really uses; re-time with more repetitions",
    )


def check_ai_high(kernel: Kernel, points: tuple[Point, ...]) -> Finding | None:
    """AI too high for what the kernel is: bytes missing (writes) or FLOP overcounted. The
    kind is meta's, else the one its name says (kernel_kind, as the advice reads it: seed
    000's own table names its kernels elementwise_add, softmax; review 12a #3)."""
    kind, guessed = kernel_kind(kernel)
    if not is_streaming(kind):
        return None
    worst = max((p for p in points if p.ai == p.ai), key=lambda p: p.ai, default=None)
    if worst is None or worst.ai <= STREAMING_MAX_AI:
        return None
    return Finding(
        kernel=kernel.name, check="ai_high", severity="warning", level=worst.level,
        message=(f"AI {fmt_ai(worst.ai)} FLOP/B at {worst.level} is abnormally high for "
                 f"{_article(kind)} {kind} op ("
                 + (f"kind read off the name '{kernel.name}'; " if guessed else "")
                 + "it reads and writes each element about once: AI <~ 1; "
                   "y = x + 1 in fp16 is 0.25)"),
        causes=("bytes missing: the writes were not counted (seed 004: y = x + 1 moves "
                "4n bytes, not 2n; leaving out writes doubles AI)",
                "FLOP overcounted: an FMA counted as 2 and then doubled again, or "
                "index/address arithmetic counted as FLOP"),
        fix="count reads + writes of every input and output; count one multiply-add as 2 FLOP, "
            "once (check the SASS: fadd + fmul + 2 x ffma)",
    )


def _article(word: str) -> str:
    """'an' before a vowel sound ('an elementwise op', 'an rmsnorm op'), else 'a'."""
    return "an" if word[:1] in "aeiou" or word.startswith("rms") else "a"


# Where DRAM and cache bytes come from, by machine kind (ncu metrics on a GPU; the memory
# controller's counters on a CPU: perf's uncore IMC events, likwid's MEM group).
COUNTERS = {
    "gpu": ("take DRAM bytes from dram__bytes.sum (read + write) and L2 from lts__t_bytes.sum",
            "distinguish DRAM (dram__bytes) from L2 (lts__t_bytes) metrics",
            "L2 traffic counted as DRAM (lts__t_bytes taken for dram__bytes)"),
    "cpu": ("take DRAM bytes from the memory controller's counters (perf stat uncore_imc "
            "cas_count_read/write, or likwid-perfctr -g MEM) and cache traffic from the "
            "L2/L3 miss counters",
            "distinguish DRAM bytes (memory-controller counters) from cache traffic (L2/L3 "
            "fills)",
            "cache traffic counted as DRAM (L2/L3 fills taken for memory-controller bytes)"),
}
COUNTERS[""] = COUNTERS["gpu"]
COUNTERS["accelerator"] = COUNTERS["gpu"]
# How to get a stable timing, by machine kind (seed 000 §6.3).
STEADY = {
    "gpu": "lock clocks, warm up, take the median of many runs (seed 000 §6.3)",
    "cpu": "pin threads (taskset / numactl), use the performance governor, keep the machine "
           "quiet, warm up, take the median of many runs (seed 000 §6.3)",
}
REPEAT = {
    "gpu": "time many calls in a loop (or ncu --launch-count N) and divide",
    "cpu": "time many calls in a loop (timeit, or a larger problem) and divide",
}


def _kind(machine: Machine | None) -> str:
    return machine.kind if machine is not None and machine.kind == "cpu" else "gpu"


def check_ai_low(kernel: Kernel, points: tuple[Point, ...],
                 machine: Machine | None = None) -> Finding | None:
    """AI too low: more DRAM bytes than L2 traffic, or bytes moving faster than DRAM can."""
    fix_split, fix_level, cause = COUNTERS.get(machine.kind if machine else "", COUNTERS[""])
    dram = kernel.bytes.get("DRAM")
    l2 = kernel.bytes.get("L2")
    if dram and l2 and dram > l2 * (1 + ABOVE_TOLERANCE):
        return Finding(
            kernel=kernel.name, check="ai_low", severity="warning", level="DRAM",
            message=(f"{si(dram, 'B')} counted as DRAM but only {si(l2, 'B')} as L2: every "
                     f"DRAM byte passes through L2, so DRAM AI "
                     f"{fmt_ai(kernel.total_flop / dram)} is abnormally low"),
            causes=(cause, "an FMA counted once (AI halves: 2 FLOP per multiply-add)"),
            fix=fix_split,
        )
    for p in points:
        if p.level == "DRAM" and p.seconds and p.bytes / p.seconds > p.bytes_per_s * 1.5:
            return Finding(
                kernel=kernel.name, check="ai_low", severity="warning", level="DRAM",
                message=(f"{si(p.bytes, 'B')} in {fmt_seconds(p.seconds)} is "
                         f"{si(p.bytes / p.seconds, 'B/s')}, "
                         f"{p.bytes / p.seconds / p.bytes_per_s:.1f}x the DRAM bandwidth: "
                         f"the DRAM bytes are too many, so AI {fmt_ai(p.ai)} is too low"),
                causes=("L2 traffic counted as DRAM (cache hits counted as memory traffic)",
                        "an FMA counted once (AI halves)"),
                fix=fix_level,
            )
    return None


# The share of the last-level cache a working set may fill and still count as staying
# there between calls (report's finding and bench's flag share it). Not all of it: the LLC
# also holds code, stacks, page tables and other processes' lines, and a loop sweeping a
# set as large as an LRU-like cache evicts each line before it comes round again, so a set
# the whole LLC's size (sort_fp64's 2 x 8 B x 2^21 = 32 MiB on a 32 MiB L3) is not
# cache-resident and its DRAM floor stands. Three quarters, not half: a user's 24 MB numpy
# add (72 % of a 32 MiB Zen 4 L3) was measured at 0.17x its DRAM floor, i.e. served from
# the L3 (tests/test_measure_byte_levels.py).
LLC_RESIDENT_SHARE = 0.75
# A kernel's own timing noise (interquartile range / median) above this is flagged noisy
# (`rooflab bench` and `demo`) and makes its advice uncertain (advice_compute._quiet_advice).
NOISY_IQR = 0.05


def working_set_of(kernel: Kernel, p: Point) -> float:
    """One call's working set: the kernel's meta 'working_set_bytes' when it states one, else
    at a DRAM point its bytes per call (compulsory traffic: each byte read once, written
    once, so at least the working set; a rooflab.measure kernel's count)."""
    stated = float(kernel.meta.get("working_set_bytes", 0.0) or 0.0)
    if stated or p.level != "DRAM" or p.calls <= 0:
        return stated
    return p.bytes / p.calls


def cache_resident(p: Point, working_set: float, llc: float | None) -> bool:
    """Whether a DRAM point's working set fits in the last-level cache, so repeated calls
    reuse it there and the DRAM floor does not bind. Only where the DRAM slope binds: a
    compute-bound kernel's floor ignores bytes anyway (`rooflab bench`'s cache-resident
    flag and report's finding share this rule)."""
    return (bool(llc) and p.level == "DRAM" and p.memory_bound_side
            and 0 < working_set <= float(llc))


def last_level_cache(machine: Machine | None) -> tuple[str, float] | None:
    """The largest cache level the host (or catalog) gave, and its size; None when unknown."""
    caches = {lv: float(v) for lv, v in (machine.caches if machine else {}).items() if v}
    if not caches:
        return None
    level = max(caches, key=lambda lv: caches[lv])
    return level, caches[level]


def check_cache_resident(kernel: Kernel, p: Point,
                         machine: Machine | None = None) -> Finding | None:
    """A timed CPU kernel whose DRAM bytes per call fit in the last-level cache: repeated
    calls are served from L2/L3, so its DRAM point sits at or above the roof (a 2.4 MB
    triad at 105-200 % of a Zen 4's DRAM roof) and no DRAM lever applies. A profiler's
    counted DRAM bytes are real traffic, and a GPU's DRAM counts come from its profiler or
    from compulsory counts of a whole model (`rooflab llm`), so only CPU roofs are judged."""
    if (p.seconds is None or _kind(machine) != "cpu"
            or kernel.provenance.get("bytes") == "counted"):
        return None
    llc = last_level_cache(machine)
    ws = working_set_of(kernel, p)
    if llc is None or not cache_resident(p, ws, llc[1] * LLC_RESIDENT_SHARE):
        return None
    at = f" ({p.percent_of_roof:.0f} % of the DRAM roof)" if p.percent_of_roof else ""
    return Finding(
        kernel=kernel.name, check="cache_resident", severity="warning", level=p.level,
        message=(f"cache-resident: {si(ws, 'B')} per call fits in the {llc[0]} "
                 f"({si(llc[1], 'B')} on this host, {LLC_RESIDENT_SHARE:.0%} of which a "
                 f"working set keeps between calls), so repeated calls are served from the "
                 f"caches and the DRAM floor does not bind{at}"),
        causes=("the timing loop calls the kernel again and again on the same data, which "
                "stays in cache after the first call",),
        fix=("give bytes at L2/L3 (the level the data is served from) or a larger size "
             "(a working set > 4x the last-level cache)"))


def applicable_launch_s(p: Point) -> float:
    """calls x the roof's launch floor where it applies to the point's time: 0 when the
    measured time is below it. A GPU-side duration (Nsight Compute, the torch profiler's
    CUDA time) never contains the CPU launch cost, and asynchronous launches overlap: 1000
    calls timed at 1 ms hold no 5 ms of 5 us launches, so the class, the gain and the advice
    leave the floor out (check_launch_floor says so). Untimed: the floor, as the model adds."""
    floor = p.overhead_floor_s or 0.0
    if p.seconds is not None and p.seconds < floor:
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
    cpu = _kind(machine) == "cpu"
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
# The words of the input notes that say the kernels' thread count against the roof
# already (cli/inputs.py, hardware/resolve.py roofs_for_kernel_threads: "(their
# 'threads')"), so check_threads does not say it a second time.
_THREADS_SAID = re.compile(r"'threads'|ran on different thread counts")


def roof_threads(roof: Roof) -> int | None:
    """The thread count a probed roof was measured with (its name says it); None for a
    roof that does not say (a catalog entry: the whole chip)."""
    m = _ROOF_THREADS.search(roof.name)
    return int(m.group(1)) if m else None


def _threads_words(n: int) -> str:
    return f"{n} thread" if n == 1 else f"{n} threads"


def check_threads(kernel: Kernel, roof: Roof, notes: Sequence[str] = ()) -> Finding | None:
    """A kernel that ran on fewer threads (meta 'threads': rooflab.measure's record, a
    kernel file's field) than the probed roof judging it was measured with: its % of roof
    is of every thread's bandwidth and peak, so a one-thread loop reads 1/threads of what
    it reaches (review 16b #13). None when the roof is the row of its count, says no count,
    or the input notes (`notes`: the analysis's) say it already."""
    n = kernel.meta.get("threads")
    t = roof_threads(roof)
    if (not isinstance(n, int) or isinstance(n, bool) or n < 1 or t is None or n >= t
            or any(_THREADS_SAID.search(x) for x in notes)):
        return None
    return Finding(
        kernel=kernel.name, check="threads", severity="warning",
        message=(f"ran on {_threads_words(n)}; judged by the {t}-thread roof: use --on "
                 f"PROFILE@{n}t (or a profile from `rooflab probe --threads {n},all`)"),
        causes=(f"the roof's ceilings were measured with {_threads_words(t)}, so its % of "
                f"roof and its distance below the roof count the threads it did not use",),
        fix=(f"judge it on a {n}-thread roof: `rooflab probe --threads {n},all -o "
             f"me.json`, then --on me.json@{n}t; or run it on {_threads_words(t)}"))


def _iqr_rel(s: tuple[float, ...], med: float) -> float | None:
    """Interquartile range / median, from 4 samples up (fewer have no quartiles to speak of)."""
    if len(s) < 4 or med <= 0:
        return None
    q = statistics.quantiles(s, n=4)
    return (q[2] - q[0]) / med


# Why timing samples spread (check_timing), in the order named without other evidence.
CLOCK_CAUSE = "clock changes (boost, thermal throttling)"
LOAD_CAUSE = "other load on the machine"
COLD_CAUSE = "cold caches in the first runs"


def load_evidence(kernel: Kernel, machine: Machine | None = None) -> str:
    """What says the machine was shared, in words: the kernel's own record (meta
    'machine_load' in the shape of a profile's extras.machine_load, {"notes": [...]}, or
    meta 'load_notes'), else the roof's probe (Machine.load_notes: the profile's
    extras.machine_load, or the measured roof's notes); '' when nothing does."""
    own = kernel.meta.get("machine_load")
    notes = own.get("notes") if isinstance(own, Mapping) else kernel.meta.get("load_notes")
    notes = [notes] if isinstance(notes, str) else list(notes or ())
    said = [str(n) for n in notes if n]
    if said:
        return f"the kernel's record: {said[0].split(': ')[0]}"
    if machine is not None and machine.load_notes:
        return f"the roof's probe: {machine.load_notes[0].split(': ')[0]}"
    return ""


def noise_causes(kernel: Kernel, machine: Machine | None = None) -> tuple[str, ...]:
    """The causes of noisy timing samples, the likeliest first (the terminal prints only
    the first): other load first where a load note says the machine was shared (review
    16b #9: a roof probed with 88 % other load named clock changes first), else clock
    changes."""
    load = load_evidence(kernel, machine)
    if load:
        return (f"{LOAD_CAUSE} ({load})", CLOCK_CAUSE, COLD_CAUSE)
    return (CLOCK_CAUSE, LOAD_CAUSE, COLD_CAUSE)


def counting_finding(kernel: Kernel) -> Finding | None:
    """A finding for a kernel whose time includes rooflab's counting
    (meta["timing_includes_counting"]: a single run timed under the counter), None
    otherwise: its latency / 'spread over every core' reading would be of rooflab's
    dispatch mode, not of the code (review 17b N6: 0.39 % of roof for a step at 27 %)."""
    if not kernel.meta.get("timing_includes_counting"):
        return None
    ops = kernel.meta.get("ops") or {}
    calls = int(sum(row.get("calls", 0) for row in ops.values() if isinstance(row, Mapping)))
    per_op = (f"; {fmt_seconds(kernel.seconds / calls)} per counted op at most"
              if calls and kernel.seconds else "")
    return Finding(
        kernel=kernel.name, check="timing_includes_counting", severity="warning",
        message=(f"the time includes rooflab's counting of its {calls} dispatched op"
                 f"{'s' if calls != 1 else ''} (a single run timed under the counter"
                 f"{per_op}): its % of roof and bound are not the code's own"),
        causes=("a `with rooflab.measure()` block or a decorated function's first call "
                "with these argument shapes counted the ops it timed",),
        fix=("pass flop= and bytes= (the time is then the code's alone), call the decorated "
             "function again with the same shapes (later calls are timed uncounted), or "
             "benchmark it with rooflab.measure(fn, *args) / fn.bench(*args)"))


def timer_reading(kernel: Kernel) -> float | None:
    """The time one timer reading spanned, as the kernel's own timing says it was taken;
    too_short judges this, not the time per call (review 17a N13d: a C loop timed in one
    0.3 s interval over 1e6 calls was told its 300 ns per call drowned in timer noise).

    - meta calls_per_sample n (rooflab's timer: each sample n calls in one reading):
      n x the time per call;
    - per-call samples (a profiler's launches, single runs), or one call: the time per
      call, each call timed alone;
    - seconds over `calls` with no per-call samples (a kernel file's "seconds": 0.3,
      "calls": 1000000): timed in aggregate, one reading of them all, the seconds.
    None without a time."""
    per_call = kernel.seconds_per_call
    if per_call is None:
        return None
    n = kernel.meta.get("calls_per_sample")
    if isinstance(n, int) and not isinstance(n, bool) and n >= 1:
        return per_call * n
    if kernel.samples or kernel.calls <= 1:
        return per_call
    return kernel.seconds


def check_timing(kernel: Kernel, machine: Machine | None = None) -> list[Finding]:
    """Timings too noisy (spread of raw samples) or too short to trust.

    When the range is wide but the middle half of the samples is tight (IQR / median within
    the limit), the spread is a few outliers (preemption, page faults, a cold first run): the
    median stands, and the finding is information, not a warning."""
    out: list[Finding] = []
    s = kernel.samples
    kind = _kind(machine)
    if len(s) >= 2:
        med = statistics.median(s)
        spread = (max(s) - min(s)) / med if med > 0 else 0.0
        iqr = _iqr_rel(s, med)
        outliers = iqr is not None and iqr <= NOISY_SPREAD
        if spread > NOISY_SPREAD:
            out.append(Finding(
                kernel=kernel.name, check="noisy", severity="info" if outliers else "warning",
                message=(f"{len(s)} timing samples spread {spread:.0%} ((max - min) / median; "
                         f"min {fmt_seconds(min(s))}, median {fmt_seconds(med)}, max "
                         f"{fmt_seconds(max(s))}) > {NOISY_SPREAD:.0%}"
                         + ("" if iqr is None else
                            f"; the middle half spans {iqr:.0%} (IQR / median)")
                         + ("; a few outliers, the median stands" if outliers else "")),
                causes=noise_causes(kernel, machine),
                fix=STEADY[kind],
            ))
    per_call = kernel.seconds_per_call
    reading = timer_reading(kernel)
    measured = kernel.provenance.get("seconds", "measured") == "measured"
    if per_call is not None and reading is not None and measured and reading < TOO_SHORT_S:
        # a reading of several calls: rooflab's calls_per_sample, or a kernel file's calls
        # timed in one interval
        n = kernel.meta.get("calls_per_sample", kernel.calls)
        many = (f" ({fmt_seconds(reading)} per timer reading of {n} calls)"
                if reading != per_call else "")
        out.append(Finding(
            kernel=kernel.name, check="too_short", severity="warning",
            message=(f"{fmt_seconds(per_call)} per call{many} is shorter than "
                     f"{fmt_seconds(TOO_SHORT_S)}: timer resolution and launch jitter are "
                     f"a large part of it"),
            causes=("the kernel is tiny; one call is within timer and launch noise",),
            fix=REPEAT[kind],
        ))
    counted = counting_finding(kernel)
    return out + ([counted] if counted is not None else [])


def check_kernel(analysis: Analysis, kernel: Kernel,
                 machine: Machine | None = None) -> tuple[Finding, ...]:
    """Every check for one kernel of an analysis (`machine` words the fixes for a CPU/GPU)."""
    points = analysis.points_of(kernel)
    found: list[Finding] = []
    for p in points:
        f = check_above_roof(p, analysis.roof.kind, machine, analysis.roof, kernel)
        if f is not None:
            found.append(f)
    for f in (check_ai_high(kernel, points), check_ai_low(kernel, points, machine)):
        if f is not None:
            found.append(f)
    found += check_timing(kernel, machine)
    for p in points:
        cached = check_cache_resident(kernel, p, machine)
        if cached is not None:
            found.append(cached)
    below = check_launch_floor(kernel, analysis.roof, machine)
    if below is not None:
        found.append(below)
    fewer = check_threads(kernel, analysis.roof, analysis.notes)
    if fewer is not None:
        found.append(fewer)
    if any(p.note for p in points):
        for note, precision, used in stand_ins(analysis.roof, kernel, points):
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
    return tuple(found)


def stand_ins(roof: Roof, kernel: Kernel, points: tuple[Point, ...] = ()
              ) -> list[tuple[str, str, Ceiling]]:
    """(note, precision, ceiling used) for each precision of the kernel its roof holds to
    a stand-in ceiling. One precision: the points' notes, against the kernel's precision
    and Roof.compute_for's ceiling. Several: ceiling.kernel_ceiling's notes, each against
    the part it is about: an fp16 tensor kernel's fp64 part on a roof without fp64 runs on
    fp32 vector, narrower than fp64, though the fp16 part's own ceiling is exact (the
    dominant precision alone called that 'info' and asked for an fp16 ceiling)."""
    if not kernel.mixed:
        used, _ = roof.compute_for(kernel.precision, kernel.unit)
        return [(n, kernel.precision, used) for n in sorted({p.note for p in points if p.note})]
    held = kernel_ceiling(roof, kernel.flop, kernel.unit, kernel.precision)
    out: dict[str, tuple[str, str, Ceiling]] = {}
    for precision, v in kernel.flop.items():
        if v <= 0:
            continue
        used, note = roof.compute_for(
            precision, _unit_of_part(precision, kernel.precision, kernel.unit))
        if note in held.notes:
            out.setdefault(note, (note, precision, used))
    return [out[n] for n in held.notes if n in out]


def _narrower(used: str, wanted: str) -> bool:
    """True when `used` stores fewer bytes per element than `wanted` (int4 for fp64)."""
    from ..units import DTYPE_BYTES

    a, b = DTYPE_BYTES.get(used), DTYPE_BYTES.get(wanted)
    return a is not None and b is not None and a < b


def check_analysis(analysis: Analysis, machine: Machine | None = None) -> tuple[Finding, ...]:
    """Every check for every kernel."""
    out: list[Finding] = []
    for k in analysis.kernels:
        out += check_kernel(analysis, k, machine)
    return tuple(out)
