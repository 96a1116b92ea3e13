"""Which of a decorated function's timed calls `aggregate` (measure_runs) leaves out, and
what it says about them: a call timed under the counter when a clean one did the same
work, a call during which numba compiled (numba's own event, measure_jit: exact, whichever
call it was), and, without that evidence, a first call far slower than the later ones."""

from __future__ import annotations

from bisect import bisect_left
from typing import Any

from .measure_checks import SINGLE_RUN_MIN_S
from .measure_overlap import beside_counted
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
    was kept under the ratio rule) and "first"
    (the first call, over SLOW_RUN_RATIO x the median of the later calls kept). A later
    call that slow is flagged, not left out: the user called it, and one slow call in the
    middle may be the code's own (a GC, a re-plan). `first_call` False: runs[0] is not the
    function's first call, so it is such a later call (unless numba says it compiled)."""
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
        if first_call and kept and kept[0] == 0 and _too_slow(runs, 0, kept[1:]):
            out[0] = "first"
            kept = kept[1:]
        slow += _slow_among(runs, kept)
    return out, sorted(slow)


def _slow_among(runs: list[Kernel], kept: list[int]) -> list[int]:
    """The runs of `kept` over SLOW_RUN_RATIO x the median of the others (as _too_slow
    judges each against the rest), with one sort: leaving out one time of the sorted list
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
        if t > SLOW_RUN_RATIO * median and t - median >= SINGLE_RUN_MIN_S:
            out.append(i)
    return out


def _too_slow(runs: list[Kernel], i: int, others: list[int]) -> bool:
    if not others:
        return False
    xs = sorted(runs[j].seconds or 0.0 for j in others)
    n = len(xs)
    median = xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2
    t = runs[i].seconds or 0.0
    return t > SLOW_RUN_RATIO * median and t - median >= SINGLE_RUN_MIN_S


def _said(runs: list[Kernel], i: int, why: str | None) -> str:
    """One call in the note: its time and what became of it."""
    head = f"call {i + 1} {fmt_seconds(runs[i].seconds or 0.0)}"
    if why == "compile":
        return (f"{head} (held a numba compile of {fmt_seconds(compiled_in(runs[i]))}: "
                f"a warm-up, left out)")
    if why == "first":
        return f"{head} (the first call: a warm-up, left out)"
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
    if why.get(0) in ("first", "compile"):
        meta["first_calls_left_out"] = 1
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
    if (first_call and runs and 0 not in why
            and not any(_work(k) == _work(runs[0]) for k in runs[1:])):
        meta["first_call_kept"] = ("the first call is timed (no later call did the same "
                                   "work): it may include one-off costs such as a JIT "
                                   "compile; call the function again, or benchmark it with "
                                   "rooflab.measure(fn, *args)")
    return meta
