"""`aggregate`: a decorated function's timed runs as one Kernel (`fn.kernel`, and each
collect() block's slot for it). Which runs it leaves out is measure_warmup's; the counted
meta summed over the kept runs, measure_sums'; the calls that ran at once in several
threads, measure_overlap's."""

from __future__ import annotations

import warnings
from typing import Any

from .measure_checks import OverlapWarning, add_warning
from .measure_overlap import RUN_KEYS, overlap_meta
from .measure_sums import PER_CALL, summed_count_meta
from .measure_warmup import compiled_in, left_out, left_out_meta
from .model.kernel import Kernel, sum_counts
from .model.sample_groups import BUSY_SPAN, bimodal_words
from .units import fmt_seconds


def aggregate(runs: list[Kernel], first_call: bool = True, stacklevel: int = 3) -> Kernel:
    """Several timed runs of one kernel as one Kernel (FLOP, bytes, seconds summed).
    Left out (measure_warmup.left_out): a run timed under the counter when a run timed
    without it did the same counted work (its time is mostly counting;
    meta["counted_runs_left_out"]), a run during which numba compiled when one of its work
    did not (meta["compile_runs_left_out"], whichever call it was), and a first call (the
    function's first in its thread, its run's meta first_in_thread) over
    SLOW_RUN_RATIO x the median of its thread's later calls of its work and slower than
    any later call (a warm-up: a numba JIT compile, first touches, not a busy pool's
    contention: measure_warmup.warm_ups; meta["first_calls_left_out"]); a later
    call that slow is flagged (meta["slow_runs"]); meta["slow_runs_note"] says which, and
    meta["raw_samples"] keeps every run's time when any was left out. `first_call` False
    (for runs without that mark): runs[0] is not the function's first call in this
    process (it ran before a collect() block), so it is no warm-up: kept, and flagged when
    that slow (review r3 F1).
    Calls that ran at once in several threads (measure_overlap): the time is the span the
    kept calls were busy, not their sum (meta overlapped_calls, calling_threads,
    summed_call_s, wall_span_s; an OverlapWarning, `stacklevel` frames up, and
    meta["warning"] say so); a call that ran while another thread's call was counted is
    left out (beside_count_runs_left_out)."""
    why, slow = left_out(runs, first_call)
    dropped = left_out_meta(runs, why, slow, first_call)
    runs = [k for i, k in enumerate(runs) if i not in why]
    flop = sum_counts(k.flop for k in runs)
    nbytes = sum_counts(k.bytes for k in runs)
    first = runs[0]
    samples = tuple(s for k in runs for s in k.samples)
    meta: dict[str, Any] = {**dict(first.meta), "seconds_stat": "sum of single runs"}
    # a run's own compile is the runs' summed compile still in the time (or none)
    for key in ("numba_compiles", "numba_compile_s", *RUN_KEYS):
        meta.pop(key, None)
    held = sum(compiled_in(k) for k in runs)
    if held:
        meta["numba_compile_s"] = held
    if any("timing_includes_counting" in k.meta for k in runs):
        counted = [k for k in runs if k.meta.get("timing_includes_counting")]
        meta["timing_includes_counting"] = bool(counted)
        said = next((k.meta["warning"] for k in counted if "warning" in k.meta), None)
        if said and said not in meta.get("warning", ""):
            add_warning(meta, said)
    meta.update(dropped)
    seconds, overlap, said = overlap_meta(runs, first.name)
    # calls of two shapes (or under two clocks) summed into one kernel: its samples, which
    # compare's U test reads, mix the two (review s20 d2); calls that ran at once, with
    # the contention between them first (review s26)
    split = bimodal_words(first.name, samples, busy=overlap.get("overlapped_calls", 0),
                          threads=overlap.get("calling_threads"))
    if split and split not in meta.get("warning", ""):
        add_warning(meta, split)
    # the per-op rows, FLOP by unit, fused bytes, the unit: every kept call's, summed as
    # FLOP and bytes are, not the first call's copied (measure_sums)
    for key in PER_CALL:
        meta.pop(key, None)
    counted, unit = summed_count_meta(runs)
    meta.update(counted)
    if seconds is None:
        seconds = sum(k.seconds or 0.0 for k in runs)
    else:
        meta.update(overlap, seconds_stat=BUSY_SPAN)
        add_warning(meta, said)
        warnings.warn(said, OverlapWarning, stacklevel=stacklevel)
    return Kernel(name=first.name, flop=flop, bytes=nbytes, seconds=seconds, calls=len(runs),
                  provenance=dict(first.provenance), unit=unit, samples=samples,
                  meta=meta)


def kept_meta(kernel: Kernel, keep: int | None, calls: int, kept: int) -> Kernel:
    """A kernel of a function decorated with keep=N (measure_runs): `kept` of its `calls`
    so far are left, the earlier ones dropped to bound the memory (~1.5 kB a run).
    meta keep_last and calls_dropped say so (calls_dropped 0 while all are kept)."""
    if keep is None:
        return kernel
    return kernel.with_(meta={**kernel.meta, "keep_last": keep,
                              "calls_dropped": max(calls - kept, 0)})


def runs_repr(name: str, runs: list[Kernel], calls: int) -> str:
    """A decorated function's repr: its calls timed and their summed time (of the last
    ones kept, with keep=N, when earlier ones were dropped)."""
    if not runs:
        return f"<rooflab.measure'd function '{name}': no calls timed yet>"
    total = sum(k.seconds or 0.0 for k in runs)
    n = len(runs)
    held = (f"{calls} calls timed, the last {n} kept" if calls > n else
            f"{n} call{'s' if n != 1 else ''} timed")
    return (f"<rooflab.measure'd function '{name}': {held}, {fmt_seconds(total)} in "
            f"{'them' if calls > n else 'all'} (.kernel, .runs)>")
