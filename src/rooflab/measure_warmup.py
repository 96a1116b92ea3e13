"""Which of a decorated function's timed calls `aggregate` (measure_runs) leaves out, and
what it says about them: a call timed under the counter when a clean one did the same
work, a call during which numba compiled (numba's own event, measure_jit: exact, whichever
call it was), and, without that evidence, a first call far slower than the later ones.

"First" is per function and thread (review s26, decided in s27): the function's first call
in each thread that called it (measure_runs marks each run's meta FIRST_KEY). A JIT
compile is paid once per function, in whichever thread called first, and that call is
its thread's first too; a thread's own first call pays what it sets up for itself (a
cuBLAS handle and workspace, an OpenMP team, a thread-local allocator cache or buffer),
a warm-up of the same kind, which the per-function rule kept (a pool of 4 workers: 3
cold calls kept, and flagged slow). Each is left out only when over SLOW_RUN_RATIO x the
median of its own thread's later calls of its work (of the other calls, for a thread that
made one), so calls that are all cold (one call per thread) are all kept; and one that
ran while another thread's call did must be slower than every such later call, so first
calls of a busy pool that are no slower than its later calls are kept too (warm_ups)."""

from __future__ import annotations

from bisect import bisect_left
from typing import Any

from .measure_checks import SINGLE_RUN_MIN_S
from .measure_overlap import beside_counted, overlaps_other_thread, span
from .model.kernel import Kernel
from .units import fmt_seconds


def _work(k: Kernel) -> tuple:
    return tuple(sorted(k.flop.items())), tuple(sorted(k.bytes.items()))


# A first call this many times slower than the median of the later calls of the same
# work is a warm-up (a JIT compile, first touch of memory, a page-in), not the kernel's
# time: a numba kernel's first decorated call read 1.1 s against 12 ms for the next two
# (review r4 F6); a warm first call stays within 2-3x. It must also be longer by
# SINGLE_RUN_MIN_S: a 14 µs first call against 4 µs is clock overhead, not a compile.
# A call numba says compiled is left out whatever its ratio (compiled_in).
SLOW_RUN_RATIO = 5.0

# a decorated call's run meta: True when it was the function's first call in its thread
FIRST_KEY = "first_in_thread"


def compiled_in(k: Kernel) -> float:
    """The seconds of numba compile a run held (meta numba_compile_s, set by measure_runs
    from numba's events); 0.0 when none."""
    if not k.meta.get("numba_compiles"):
        return 0.0
    s = k.meta.get("numba_compile_s")
    return float(s) if isinstance(s, (int, float)) and not isinstance(s, bool) else 0.0


def left_out(runs: list[Kernel], first_call: bool = True) -> tuple[dict[int, str], list[int]]:
    """({index: why} for the runs `aggregate` leaves out, [later runs flagged slow]), per
    work (FLOP and bytes): "counted" (timed under the counter, when a run timed without it
    did the same work), "beside" (it ran while another thread's call was counted, when a
    call of its work did not: review s25 r2 F3, measure_overlap), "compile" (numba compiled
    during the call, when a call of that work did not: review r6 F1, a 4.4x compile call
    was kept under the ratio rule) and "first" (a first call in its thread, over
    SLOW_RUN_RATIO x its thread's later calls, and, under contention, slower than any
    later call: warm_ups).
    A later call that slow is flagged, not left out: the user called it, and one slow
    call in the middle may be the code's own (a GC, a re-plan). A run with no FIRST_KEY
    mark (a Kernel built elsewhere) is a first call when it is runs[0] and
    `first_call` is True (False: the function ran before runs[0], in a collect() block)."""
    groups: dict[tuple, list[int]] = {}
    for i, k in enumerate(runs):
        groups.setdefault(_work(k), []).append(i)
    out: dict[int, str] = {}
    slow: list[int] = []
    near_count = beside_counted(runs, list(range(len(runs))))
    for idx in groups.values():
        if any(not runs[i].meta.get("timing_includes_counting") for i in idx):
            out.update({i: "counted" for i in idx
                        if runs[i].meta.get("timing_includes_counting")})
        kept = [i for i in idx if i not in out]
        beside = [i for i in kept if i in near_count]
        if beside and len(beside) < len(kept):
            out.update({i: "beside" for i in beside})
            kept = [i for i in kept if i not in out]
        if any(not compiled_in(runs[i]) for i in kept):
            out.update({i: "compile" for i in kept if compiled_in(runs[i])})
            kept = [i for i in kept if i not in out]
        firsts = {i for i in kept if is_first(runs, i, first_call)}
        if firsts:
            out.update({i: "first" for i in warm_ups(runs, kept, firsts)})
            kept = [i for i in kept if i not in out]
        slow += _slow_among(runs, kept)
    return out, sorted(slow)


def is_first(runs: list[Kernel], i: int, first_call: bool = True) -> bool:
    """Whether runs[i] was the function's first call in its thread (its FIRST_KEY mark),
    or, unmarked, runs[0] of a function that had not run before (`first_call`)."""
    mark = runs[i].meta.get(FIRST_KEY)
    return bool(mark) if mark is not None else (i == 0 and first_call)


def warm_ups(runs: list[Kernel], kept: list[int], firsts: set[int]) -> list[int]:
    """The first calls of `firsts` (of one work's `kept` runs) that were warm-ups: over
    SLOW_RUN_RATIO x the median of their own thread's later calls (of all the other calls
    kept, for a thread with no later call); and, for a call that ran while another
    thread's did, slower than every later call that also did. Such a later call shows that
    the time comes without a warm-up: in a pool of 8 threads on 2 cores, a first call that
    waited for a core is as slow as the later calls that did, and leaving out only the
    first ones called contention a warm-up and read FLOP/s low (review s27 v2 F6)."""
    spans = [span(runs[j]) for j in kept]
    hits = overlaps_other_thread(spans, [s for s in spans if s is not None])
    contended = {j for j, hit in zip(kept, hits, strict=True) if hit}
    top = max((runs[j].seconds or 0.0 for j in contended if j not in firsts), default=0.0)
    by_thread: dict[Any, list[float]] = {}
    for j in kept:
        if j not in firsts:
            by_thread.setdefault(runs[j].meta.get("thread_ident"), []).append(
                runs[j].seconds or 0.0)
    medians = {t: _median(sorted(xs)) for t, xs in by_thread.items() if t is not None}
    among_all = set(_slow_among(runs, kept))
    out = []
    for i in sorted(firsts):
        t = runs[i].seconds or 0.0
        own = medians.get(runs[i].meta.get("thread_ident"))
        if (i not in contended or t > top) and (i in among_all if own is None
                                                else _over(t, own)):
            out.append(i)
    return out


def _median(xs: list[float]) -> float:
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def _over(t: float, median: float) -> bool:
    """A time far over a median: SLOW_RUN_RATIO x, and SINGLE_RUN_MIN_S longer."""
    return t > SLOW_RUN_RATIO * median and t - median >= SINGLE_RUN_MIN_S


def _slow_among(runs: list[Kernel], kept: list[int]) -> list[int]:
    """The runs of `kept` over SLOW_RUN_RATIO x the median of the others (each judged
    against the rest), with one sort: leaving out one time of the sorted list
    shifts the later ones down by one, so the median of the rest is one or two of its
    neighbours (review s25 r2 F9: a sort per call made `.kernel` O(n^2 log n), 122 s at
    20000 calls). Removing any copy of an equal time leaves the same list: same numbers."""
    if len(kept) < 2:
        return []
    xs = sorted(runs[j].seconds or 0.0 for j in kept)
    n = len(xs) - 1   # the others' count

    def rest(p: int, j: int) -> float:   # the j-th of xs with the p-th left out
        return xs[j] if j < p else xs[j + 1]

    out = []
    for i in kept:
        t = runs[i].seconds or 0.0
        p = bisect_left(xs, t)
        median = rest(p, n // 2) if n % 2 else (rest(p, n // 2 - 1) + rest(p, n // 2)) / 2
        if _over(t, median):
            out.append(i)
    return out


def _said(runs: list[Kernel], i: int, why: str | None) -> str:
    """One call in the note: its time and what became of it."""
    head = f"call {i + 1} {fmt_seconds(runs[i].seconds or 0.0)}"
    if why == "compile":
        return (f"{head} (held a numba compile of {fmt_seconds(compiled_in(runs[i]))}: "
                f"a warm-up, left out)")
    if why == "first":   # call 1 said as before; another thread's first call says so
        return f"{head} (the first call{'' if i == 0 else ' in its thread'}: a warm-up, left out)"
    if why == "beside":
        return f"{head} (left out)"
    held = compiled_in(runs[i])
    return f"{head} (kept{f'; it held a numba compile of {fmt_seconds(held)}' if held else ''})"


def left_out_meta(runs: list[Kernel], why: dict[int, str], slow: list[int],
                  first_call: bool = True) -> dict:
    """What `aggregate` says about the runs it left out or flagged: counts, a note with
    the times, and every run's time in meta["raw_samples"]; a first call with no later call
    of its work is named, since it may hold a one-off cost, and a kept call that numba
    says compiled (no call of its work without one) is named with its compile time."""
    meta: dict[str, Any] = {}
    n_counted = sum(1 for r in why.values() if r == "counted")
    if n_counted:
        meta["counted_runs_left_out"] = n_counted
    ratio = sorted([i for i, r in why.items() if r == "first"] + slow)
    beside = sorted(i for i, r in why.items() if r == "beside")
    if beside:
        meta["beside_count_runs_left_out"] = [i + 1 for i in beside]
    compiled = sorted(i for i, r in why.items() if r == "compile")
    kept_compiled = [i for i, k in enumerate(runs) if i not in why and compiled_in(k)]
    firsts = sum(1 for r in why.values() if r == "first") + (why.get(0) == "compile")
    if firsts:   # one per thread whose first call was a warm-up (module doc)
        meta["first_calls_left_out"] = firsts
    if compiled:
        meta["compile_runs_left_out"] = [i + 1 for i in compiled]
    if slow:
        meta["slow_runs"] = [i + 1 for i in slow]
    notes = []
    if compiled or kept_compiled:
        said = [_said(runs, i, why.get(i)) for i in sorted(compiled + kept_compiled)]
        notes.append(f"numba compiled during {', '.join(said)}; a compile is no part of "
                     f"the kernel's time")
    if beside:
        said = [_said(runs, i, "beside") for i in beside]
        notes.append(f"ran while another thread's call was counted: {', '.join(said)}; the "
                     f"counter and its gc.collect hold the interpreter, a wait no part of "
                     f"the kernel's time")
    said = [_said(runs, i, why.get(i)) for i in ratio if i not in kept_compiled]
    if said:
        notes.append(f"over {SLOW_RUN_RATIO:g}x the median of the other calls: "
                     f"{', '.join(said)}; a JIT compile, first touch of memory or a page-in "
                     f"is no part of the kernel's time")
    if notes:
        meta["slow_runs_note"] = "; ".join(notes) + "; meta['raw_samples'] has every call's time"
    if kept_compiled:
        meta["compile_runs_kept"] = [i + 1 for i in kept_compiled]
    if why:
        meta["raw_samples"] = tuple(s for k in runs for s in k.samples)
    if (runs and is_first(runs, 0, first_call) and 0 not in why
            and not any(_work(k) == _work(runs[0]) for k in runs[1:])):
        meta["first_call_kept"] = ("the first call is timed (no later call did the same "
                                   "work): it may include one-off costs such as a JIT "
                                   "compile; call the function again, or benchmark it with "
                                   "rooflab.measure(fn, *args)")
    return meta
