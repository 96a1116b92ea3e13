"""When a decorated function's calls ran at the same time in several threads (a
ThreadPoolExecutor, a threaded server): each call's own clock then runs while the others
run too, so its time is a latency under contention, and the plain sum of the calls' times
counts the shared wall time once per thread (review s25 r2 F1: 45 s summed for a 6.6 s
run of 8 threads). Each run keeps when it started and in which thread (measure_runs puts
RUN_KEYS in its meta); `aggregate` gives, when calls overlapped, the time at least one call
was running (the union of their intervals: total work over busy time is the throughput the
machine delivered, what its roof is compared with) and says so. Without overlap the union
is the sum, and nothing changes.

A call that ran while another thread's call was being counted (the counter, its
gc.collect and its first-use import hold the interpreter: review s25 r2 F3, 135-560 ms
calls of a 0.2 ms kernel) is left out like a warm-up (measure_warmup.left_out)."""

from __future__ import annotations

from bisect import bisect_left
from typing import Any

from .model.kernel import Kernel
from .units import fmt_seconds

# Per run, not per kernel: aggregate drops them from the summed kernel's meta. started_s
# and thread_ident: the clock reading at the timed block's start, threading.get_ident();
# counting_*: the whole counted call, its counter's setup and gc.collect outside the clock
# included (perf_counter readings; only when the run was counted on the default clock);
# first_in_thread: the function's first call in that thread (measure_warmup.FIRST_KEY).
RUN_KEYS = ("started_s", "thread_ident", "counting_started_s", "counting_ended_s",
            "first_in_thread")

Span = tuple[float, float, int]   # (start, end, thread ident)


def span(k: Kernel) -> Span | None:
    """The run's (start, end, thread), or None when it carries no start (a Kernel built
    elsewhere, or recorded before this was kept)."""
    start, thread = k.meta.get("started_s"), k.meta.get("thread_ident")
    if not isinstance(start, (int, float)) or thread is None:
        return None
    return float(start), float(start) + float(k.seconds or 0.0), thread


def counting_span(k: Kernel) -> Span | None:
    """A counted run's whole call (its counting set-up outside the clock included) when
    recorded, else its timed span."""
    s = span(k)
    a, b = k.meta.get("counting_started_s"), k.meta.get("counting_ended_s")
    if s is None or not isinstance(a, (int, float)) or not isinstance(b, (int, float)):
        return s
    return float(a), float(b), s[2]


def overlaps_other_thread(queries: list[Span | None], spans: list[Span]) -> list[bool]:
    """For each query, whether one of `spans` from another thread overlaps it (open
    intervals: a call that starts as another ends does not). O((n + m) log m): spans sorted
    by start; for each prefix, the largest end of the two threads that reach furthest, so a
    query asks "does another thread's span that started before my end end after my start"."""
    spans = sorted(spans)
    starts = [s for s, _, _ in spans]
    best: list[tuple[float, Any, float, Any]] = []   # (end1, thread1, end2, thread2)
    e1, t1, e2, t2 = float("-inf"), None, float("-inf"), None
    for _, e, t in spans:
        if t == t1:
            e1 = max(e1, e)
        elif e > e1:
            e1, t1, e2, t2 = e, t, e1, t1
        elif e > e2:
            e2, t2 = e, t
        best.append((e1, t1, e2, t2))
    out = []
    for q in queries:
        if q is None:
            out.append(False)
            continue
        start, end, thread = q
        p = bisect_left(starts, end)   # spans that start before this one ends
        if p == 0:
            out.append(False)
            continue
        b1, th1, b2, _ = best[p - 1]
        reach = b1 if th1 != thread else b2
        out.append(reach > start)
    return out


def union_seconds(spans: list[Span]) -> float:
    """The time at least one of the spans was running."""
    total, end = 0.0, float("-inf")
    for s, e, _ in sorted(spans):
        if s >= end:
            total += e - s
            end = e
        elif e > end:
            total += e - end
            end = e
    return total


def beside_counted(runs: list[Kernel], idx: list[int]) -> set[int]:
    """Of runs `idx`, those not counted themselves that overlapped a counted run (any of
    `runs`) in another thread."""
    counted = [s for k in runs if k.meta.get("timing_includes_counting")
               and (s := counting_span(k)) is not None]
    if not counted:
        return set()
    hit = overlaps_other_thread([span(runs[i]) for i in idx], counted)
    return {i for i, h in zip(idx, hit, strict=True)
            if h and not runs[i].meta.get("timing_includes_counting")}


def overlap_meta(runs: list[Kernel], name: str
                 ) -> tuple[float | None, dict[str, Any], str]:
    """(the seconds to give: the union of the runs' intervals, the meta saying so, the
    warning) when some of `runs` (the kept ones) ran at the same time as a run of another
    thread; (None, {}, "") when none did, the sum then being the time."""
    spans = [span(k) for k in runs]
    if sum(1 for s in spans if s is not None) < 2:
        return None, {}, ""
    known = [s for s in spans if s is not None]
    k = sum(overlaps_other_thread(spans, known))
    if not k:
        return None, {}, ""
    wall = union_seconds(known)
    summed = sum(r.seconds or 0.0 for r in runs)
    # runs without a start (none today, from this module's caller) add their whole time
    wall += sum(r.seconds or 0.0 for r, s in zip(runs, spans, strict=True) if s is None)
    threads = len({s[2] for s in known})
    return wall, {"overlapped_calls": k, "calling_threads": threads,
                  "summed_call_s": summed, "wall_span_s": wall}, \
        overlap_words(name, k, len(runs), threads, wall, summed)


def overlap_words(name: str, k: int, n: int, threads: int, wall: float,
                  summed: float) -> str:
    """The warning for `k` of `n` calls that ran at once in `threads` threads."""
    return (f"'{name}': {k} of {n} calls ran at once in {threads} threads; each "
            f"call's own time includes waiting for the others, so the time given is the "
            f"span they were busy ({fmt_seconds(wall)}, not the summed "
            f"{fmt_seconds(summed)}) and the per-call samples are latencies under that "
            f"contention; time one call alone with rooflab.measure(fn, *args)")


def overlap_note(kernel: Kernel) -> str:
    """overlap_words from an aggregated kernel's meta (under its name as shown now:
    `bench --run` renames a second kernel of one name 'step#2'); '' when its calls did
    not overlap, or the meta is not what aggregate writes (a hand-edited file)."""
    m = kernel.meta
    k, threads = m.get("overlapped_calls"), m.get("calling_threads")
    wall, summed = m.get("wall_span_s"), m.get("summed_call_s")
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v <= 1e18
               for v in (k, threads, wall, summed)) or not k:   # NaN, inf: not aggregate's
        return ""
    return overlap_words(kernel.name, int(k), kernel.calls, int(threads), float(wall),
                         float(summed))
