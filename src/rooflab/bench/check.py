"""The zoo as a check of the model: each kernel's measured time over its roofline floor.

The floor is max(FLOP / P, bytes / B) on the roof (rooflab.model.roofline.time_floor). A
measured time below the floor by more than the noise is impossible if the count and the
roof are right, so it is flagged: the count is too low, the roof too low (a conservative
triad roof under a copy kernel), or the data stayed in a cache that the DRAM floor ignores.
Flags are data on the kernel (meta["flags"]), shown in the table and kept in the JSON.
"""

from __future__ import annotations

from ..model.analysis import Point, analyze
from ..model.ceiling import Roof
from ..model.kernel import Kernel
from ..model.sample_groups import ONE_SHAPE_WHAT_TO_DO, two_groups
from ..model.sample_spread import NOISY_IQR
from ..model.sanity_counts import LLC_RESIDENT_SHARE, cache_resident, working_set_of

# The least relative tolerance before a kernel counts as faster than its floor: below 5 %
# the difference is within what clock changes and other load do to a measurement here.
MIN_TOLERANCE = 0.05
# The most: noise only slows a run (preemption, other load, a lower clock), so a median
# under half its floor is the count or the roof, never the spread. Uncapped, a few
# preempted samples (a demo under load: 4 of 15 at 100x, IQR 45x the median) made 1 - tol
# negative and switched the check off: gemm_fp64_256 at 0.24x its floor went unflagged.
MAX_TOLERANCE = 0.5

FLAG_TEXT = {
    "below-floor": "measured faster than its roofline floor: the count or the roof is wrong",
    "cache-resident": "working set fits in the last-level cache: repeated calls reuse it, "
                      "so the DRAM floor does not bind",
    "noisy": "timing samples spread more than 5 % (IQR/median): other load on the machine",
    "bimodal": "timing samples split into two well-separated groups (other load that came "
               "and went, or a clock that changed mid-run: a zoo kernel has one shape; "
               f"meta.warning names them): the median mixes them; {ONE_SHAPE_WHAT_TO_DO}",
    "warm-up-left-out": "a call far slower than the rest (a JIT compile, first touches) was "
                        "left out of the time as a warm-up, or kept and named: "
                        "meta.slow_runs_note",
}


def tolerance(kernel: Kernel) -> float:
    """The noise a floor comparison must exceed: 5 %, or the kernel's own timing noise
    (IQR / median) when larger, at most MAX_TOLERANCE (50 %). The roof's spread does not
    widen it: a ceiling's value is its best sample already, and a roof measured too low is
    one of the errors to flag."""
    noise = float(kernel.meta.get("iqr_rel", 0.0) or 0.0)
    return min(MAX_TOLERANCE, max(MIN_TOLERANCE, noise))


def floor_flags(kernel: Kernel, point: Point, tol: float, llc: int | None) -> tuple[str, ...]:
    flags = []
    if point.floor_ratio is not None and point.floor_ratio < 1.0 - tol:
        flags.append("below-floor")
    # the rule analyze/report share (model.sanity_counts.cache_resident): bytes per call, or the
    # kernel's stated working set, within LLC_RESIDENT_SHARE of the last-level cache at a
    # DRAM point
    usable = llc * LLC_RESIDENT_SHARE if llc else None
    if cache_resident(point, working_set_of(kernel, point), usable):
        flags.append("cache-resident")
    if float(kernel.meta.get("iqr_rel", 0.0) or 0.0) > NOISY_IQR:
        flags.append("noisy")
    if two_groups(kernel.samples) is not None:   # the spread test can pass two tight groups
        flags.append("bimodal")
    # rooflab.measure left a slow first call out (or kept a slow later one): the table
    # says so, as `report`'s slow_runs finding does (review r4 F6)
    if kernel.meta.get("slow_runs_note"):
        flags.append("warm-up-left-out")
    return tuple(flags)


def check_floors(roof: Roof, kernels: tuple[Kernel, ...], llc: int | None = None
                 ) -> tuple[Kernel, ...]:
    """Each kernel with meta floor_s, floor_ratio (median / floor), best_floor_ratio,
    floor_tolerance and flags, judged at its binding level on `roof`."""
    out = []
    for k in kernels:   # one at a time: kernels may share a name
        points = analyze(roof, [k]).primary() if k.seconds is not None else ()
        p = points[0] if points else None
        if p is None:
            out.append(k)
            continue
        tol = tolerance(k)
        best = k.meta.get("best_s")
        meta = {**dict(k.meta), "floor_s": p.floor_s, "floor_ratio": p.floor_ratio,
                "floor_level": p.level, "floor_binding": p.binding,
                "floor_tolerance": tol, "flags": list(floor_flags(k, p, tol, llc))}
        if best and p.floor_s > 0:
            meta["best_floor_ratio"] = best / p.floor_s
        out.append(k.with_(meta=meta))
    return tuple(out)
