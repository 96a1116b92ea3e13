"""Sanity checks on a kernel's timing: samples too noisy, a timer reading too short to
trust, and a time that includes rooflab's own counting. Pure: no I/O.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping

from ..units import fmt_fraction, fmt_seconds
from .kernel import Kernel
from .machine import Machine
from .sample_groups import ALONE, busy_calls, contention, kernel_groups, one_call, what_to_do
from .sample_groups import causes as split_causes
from .sample_spread import iqr_over_median
from .sanity_finding import Finding, kind_of

# Timings whose raw samples span more than this, (max - min) / median, are too noisy to trust.
NOISY_SPREAD = 0.20
# A measured per-call time below this is dominated by timer resolution and launch jitter
# (seed 000 §6.1, problem one: repeat the kernel and take the stable value).
TOO_SHORT_S = 10e-6
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


def _iqr_rel(s: tuple[float, ...], med: float) -> float | None:
    """Interquartile range / median, from 4 samples up (fewer have no quartiles to speak of)."""
    if len(s) < 4 or med <= 0:
        return None
    return iqr_over_median(s)   # its inclusive quartiles (review s20 r2 F1)


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


def compile_cause(kernel: Kernel) -> str:
    """The numba compile still inside the kernel's time (meta numba_compile_s, which
    rooflab.measure sets from numba's own compile events), in words; '' when none."""
    held = kernel.meta.get("numba_compile_s")
    if not isinstance(held, (int, float)) or isinstance(held, bool) or held <= 0:
        return ""
    return (f"a numba JIT compile of {fmt_seconds(held)} inside a timed call (numba's own "
            f"compile event said so): no part of the kernel")


def noise_causes(kernel: Kernel, machine: Machine | None = None) -> tuple[str, ...]:
    """The causes of noisy timing samples, the likeliest first (the terminal prints only
    the first): a numba compile kept in a sample first, since numba said so (review r6
    F1: a kept compile was blamed on other load); then contention when the calls ran at
    once in several threads (meta overlapped_calls: each sample holds waits for the
    others, review s26); then other load where a load note says the machine was shared
    (review 16b #9: a roof probed with 88 % other load named clock changes first), else
    clock changes."""
    compiled = compile_cause(kernel)
    if compiled:
        return (compiled, LOAD_CAUSE, CLOCK_CAUSE)
    busy = busy_calls(kernel)
    load = load_evidence(kernel, machine)
    if busy:
        return (contention(busy, kernel.meta.get("calling_threads")),
                f"{LOAD_CAUSE} ({load})" if load else LOAD_CAUSE, CLOCK_CAUSE)
    if load:
        return (f"{LOAD_CAUSE} ({load})", CLOCK_CAUSE, COLD_CAUSE)
    return (CLOCK_CAUSE, LOAD_CAUSE, COLD_CAUSE)


def busy_span_finding(kernel: Kernel) -> Finding | None:
    """Information: the kernel's time is the span its calls kept it busy, not their sum
    (a decorated function called from several threads at once: measure_overlap), said
    only in meta until now (review s26: the report read like any summed time)."""
    busy = busy_calls(kernel)
    if not busy:
        return None
    m = kernel.meta
    threads, summed = m.get("calling_threads"), m.get("summed_call_s")
    among = (f" in {threads} threads" if isinstance(threads, int)
             and not isinstance(threads, bool) else "")
    own = (f"; their own times sum to {fmt_seconds(summed)}"
           if isinstance(summed, (int, float)) and not isinstance(summed, bool) else "")
    span = f" ({fmt_seconds(kernel.seconds)})" if kernel.seconds is not None else ""
    which = "which" if busy >= kernel.calls else f"{busy} of which"
    return Finding(
        kernel=kernel.name, check="busy_span", severity="info",
        message=(f"the time{span} is the busy span of its {kernel.calls} calls, {which} "
                 f"ran at once{among} (the time at least one was running, not their "
                 f"sum){own}: it is the calls' throughput together, and each timing sample "
                 f"is one call's latency under contention, waits for the others included"),
        causes=(contention(busy, threads),),
        fix=ALONE)


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


def _listed(meta, key: str) -> tuple:
    """meta[key] as the list rooflab.measure writes, () for anything else (a number there
    was iterated: s23 r4 F6; the readers turn a file's into a list, model/meta_check)."""
    value = meta.get(key)
    return tuple(value) if isinstance(value, (list, tuple)) else ()


def slow_runs_finding(kernel: Kernel) -> Finding | None:
    """Information, not a warning: rooflab.measure's decorator left out a first call far
    slower than the rest (meta first_calls_left_out: a JIT compile, a first touch), or a
    later call numba says compiled (meta compile_runs_left_out), or kept later calls that
    slow or that compiled with no clean call of their work (meta slow_runs,
    compile_runs_kept), or rooflab.measure(fn) left out samples still warming up (meta
    warmup_samples_left_out); its meta slow_runs_note, with the times, was said nowhere a
    reader of the report or bench table looks."""
    note = kernel.meta.get("slow_runs_note")
    left_out = kernel.meta.get("first_calls_left_out") or 0
    later = [c for c in _listed(kernel.meta, "compile_runs_left_out") if c != 1]
    slow = _listed(kernel.meta, "slow_runs")
    kept = _listed(kernel.meta, "compile_runs_kept")
    # rooflab.measure(fn)'s samples that sped up (measure_trend): a warm-up left out
    warm = kernel.meta.get("warmup_samples_left_out") or 0
    if not isinstance(note, str) or not (left_out or later or slow or kept or warm):
        return None
    what = [f"{left_out} first call{'s' if left_out > 1 else ''} left out of the time"
            if left_out else "",
            f"{warm} first timing samples left out" if warm else "",
            f"call{'s' if len(later) > 1 else ''} {', '.join(map(str, later))} left out "
            f"(numba compiled in {'them' if len(later) > 1 else 'it'})" if later else "",
            f"call{'s' if len(slow) > 1 else ''} {', '.join(map(str, slow))} kept though "
            f"far slower" if slow else "",
            f"call{'s' if len(kept) > 1 else ''} {', '.join(map(str, kept))} kept though "
            f"numba compiled in {'them' if len(kept) > 1 else 'it'}" if kept else ""]
    return Finding(
        kernel=kernel.name, check="slow_runs", severity="info",
        message=f"{'; '.join(w for w in what if w)}: {note}",
        causes=("a one-off cost in a call: a JIT compile, a first touch of memory, a page-in",),
        fix=("nothing for a warm-up left out; for a slow later call, keep the machine quiet "
             "and time again" + ("; for a compile kept, call the function again with the "
                                 "same argument types" if kept else "")))


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
    """A time that is the busy span of calls that ran at once (busy_span_finding),
    timings too noisy (spread of raw samples) or too short to trust, and a time that
    includes rooflab's counting (counting_finding), and calls left out or flagged as
    far slower than the rest (slow_runs_finding)."""
    found = [busy_span_finding(kernel), check_noisy(kernel, machine), check_bimodal(kernel),
             check_too_short(kernel, machine), counting_finding(kernel),
             slow_runs_finding(kernel)]
    return [f for f in found if f is not None]


def check_noisy(kernel: Kernel, machine: Machine | None = None) -> Finding | None:
    """Raw samples that spread more than NOISY_SPREAD ((max - min) / median).

    When the range is wide but the middle half of the samples is tight (IQR / median within
    the limit), the spread is a few outliers (preemption, page faults, a cold first run): the
    median stands, and the finding is information, not a warning."""
    s = kernel.samples
    if len(s) < 2:
        return None
    med = statistics.median(s)
    spread = (max(s) - min(s)) / med if med > 0 else 0.0
    if not spread > NOISY_SPREAD:
        return None
    iqr = _iqr_rel(s, med)
    outliers = iqr is not None and iqr <= NOISY_SPREAD
    return Finding(
        kernel=kernel.name, check="noisy", severity="info" if outliers else "warning",
        message=(f"{len(s)} timing samples spread {fmt_fraction(spread)} ((max - min) / median; "
                 f"min {fmt_seconds(min(s))}, median {fmt_seconds(med)}, max "
                 f"{fmt_seconds(max(s))}) > {fmt_fraction(NOISY_SPREAD)}"
                 + ("" if iqr is None else
                    f"; the middle half spans {fmt_fraction(iqr)} (IQR / median)")
                 + ("; a few outliers, the median stands" if outliers else "")),
        causes=noise_causes(kernel, machine),
        fix=f"{ALONE}; {STEADY[kind_of(machine)]}" if busy_calls(kernel)
        else STEADY[kind_of(machine)],
    )


def check_bimodal(kernel: Kernel) -> Finding | None:
    """Samples that split into two well-separated groups (model.sample_groups.two_groups:
    two input shapes timed into one entry, a clock that changed mid-run, load that came and
    went): the median is one group's time or neither's, and check_noisy's spread test can
    pass two tight groups (5 samples at 1.00 ms and 4 at 1.15 ms spread 15 %, under its
    20 %). `rooflab bench` flags the same kernels 'bimodal', and measure() warns. Not for a
    profiler's launch group (sample_groups.launch_group: its time is the launches' sum, its
    median no time of its own; review s20 x1 F1)."""
    g = kernel_groups(kernel)
    if g is None:
        return None
    one = one_call(kernel)
    return Finding(
        kernel=kernel.name, check="bimodal", severity="warning",
        message=(f"{len(kernel.samples)} timing samples split into two groups, {g.words()}: "
                 f"the median ({fmt_seconds(statistics.median(kernel.samples))}) is one "
                 f"group's time or neither's"),
        causes=split_causes(one, busy_calls(kernel), kernel.meta.get("calling_threads")),
        fix=what_to_do(one, busy_calls(kernel)))


def check_too_short(kernel: Kernel, machine: Machine | None = None) -> Finding | None:
    """A measured timer reading (timer_reading) shorter than TOO_SHORT_S."""
    per_call = kernel.seconds_per_call
    reading = timer_reading(kernel)
    measured = kernel.provenance.get("seconds", "measured") == "measured"
    if per_call is None or reading is None or not measured or not reading < TOO_SHORT_S:
        return None
    # a reading of several calls: rooflab's calls_per_sample, or a kernel file's calls
    # timed in one interval
    n = kernel.meta.get("calls_per_sample", kernel.calls)
    many = (f" ({fmt_seconds(reading)} per timer reading of {n} calls)"
            if reading != per_call else "")
    return Finding(
        kernel=kernel.name, check="too_short", severity="warning",
        message=(f"{fmt_seconds(per_call)} per call{many} is shorter than "
                 f"{fmt_seconds(TOO_SHORT_S)}: timer resolution and launch jitter are "
                 f"a large part of it"),
        causes=("the kernel is tiny; one call is within timer and launch noise",),
        fix=REPEAT[kind_of(machine)],
    )
