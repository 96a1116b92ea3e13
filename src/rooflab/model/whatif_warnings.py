"""The "read with care" lines of a what-if: the moved kernels whose measured efficiency
means nothing (above their roof, cache-resident, flagged by bench), as `rooflab report`'s
sanity checks find them, and a fusion's capped speed-up. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..name_list import named
from .kernel import Kernel
from .retime import WhatIf, _primary, launch_left_out
from .retime_launch import band_line, launch_held_s

# The sanity findings (model/sanity.py's check_kernel, the checks `rooflab report` runs)
# and `rooflab bench` flags (meta flags, bench/check.py) that make a moved kernel's measured
# efficiency meaningless: each keeps its measured time-to-floor ratio (held_work_ratio,
# above 1 for a kernel above its roof), which holds only while the roof's error or the
# cache stays what it is now (review 16b #11, r8 F1).
DOUBTFUL_CHECKS = ("above_roof", "ai_high", "cache_resident", "timing_includes_counting")
DOUBTFUL_FLAGS = ("below-floor", "cache-resident")
# where the kernels past the first NAMED are (s23 r5 F4: 4,139 named at 10k kernels)
WHERE = "`--json` has every move; `rooflab report` checks each"


def _doubt(w: WhatIf, old: Kernel, machine) -> str:
    """'exp (1.61x above)', 'amax (2.28x above; cache-resident)' for a moved kernel that
    is above its roof, has an AI its op cannot have or is cache-resident (sanity checks),
    or that bench flagged; '' for one that is none of these."""
    from ..units import fmt_times
    from .sanity import check_kernel

    found = [f for f in check_kernel(w.before, old, machine)
             if f.check in DOUBTFUL_CHECKS and f.severity == "warning"]
    why = [f.check.replace("_", "-") for f in found if f.check != "above_roof"]
    flags = old.meta.get("flags")   # a list (model/meta_check); a number was iterated
    why += [f for f in (flags if isinstance(flags, (list, tuple)) else ())
            if f in DOUBTFUL_FLAGS]
    above = [p.achieved_flop_per_s / p.attainable_flop_per_s
             for f in found if f.check == "above_roof"
             for p in w.before.points_of(old) if p.level == f.level
             and p.achieved_flop_per_s and p.attainable_flop_per_s]
    if not above and not why:
        return ""
    parts = ([f"{fmt_times(max(above))} above"] if above else []) + list(dict.fromkeys(why))
    return f"{old.name} ({'; '.join(parts)})"


def move_warnings(w: WhatIf, machine=None) -> list[str]:
    """The "read with care" lines of a what-if, as `rooflab report` gives them for the same
    kernels: the moved kernels its sanity checks or bench's flags doubt (_doubt), and for a
    fusion whose members run above their roof together, that its speed-up is capped (the
    fused kernel is taken at 100 % of the roof, whatif.fuse). Empty when nothing is
    doubtful."""
    olds = list({id(old): old for old, _ in w.moves}.values())
    doubted = [d for d in (_doubt(w, old, machine) for old in olds) if d]
    below = _below_launch_floor(w, olds)
    if not doubted:
        return below
    out = [f"{len(doubted)} of the {len(olds)} kernel(s) moved run faster than the roof "
           f"allows or were flagged: {named(doubted, where=WHERE)}. The roof is too low "
           f"for them, their counts are wrong or their data stayed in cache (see `rooflab "
           f"report`'s sanity checks); each keeps the ratio of its measured time to its floor "
           f"(beating the new floor by the same factor where it beat the old), so their "
           f"predictions hold only if that error, or the cache, stays as it is."]
    capped = _fused_cap(w, olds)
    if capped:
        out.append(capped)
    return out + below


def _below_launch_floor(w: WhatIf, olds: Sequence[Kernel]) -> list[str]:
    """The line for moved kernels timed below calls x the launch floor (retime's
    launch_left_out): both times leave the floor out, as report's below_launch_floor says
    (the predicted time through retime_launch's launch_share, 0 for a time at or under
    half of calls x the floor), while the 'with launches' floor line still counts it."""
    from ..units import fmt_seconds

    floor = w.before.roof.overhead_s or 0.0
    # only the times that are below calls x the floor: a GPU-side time above it leaves the
    # floor out too (gpu_time), and "measured below calls x the 5 us launch floor" was said
    # of 25.6 ms over 10 calls in every torch-trace and ncu what-if (review s21 x2 F4)
    # at or under half of it: from there to 1.5x the launches held rise with the time
    # (retime_launch: no 9x jump at calls x the floor, review s26 r3 F1), said by band_line
    below = [k for k in olds if launch_left_out(w.before, k)
             and k.seconds is not None and k.seconds <= k.calls * floor / 2]
    band = band_line(w.moves, floor)
    if not below:
        return [band] if band else []
    names = ", ".join(f"{k.name} ({fmt_seconds(k.seconds)} over {k.calls} calls)"
                      for k in below[:3]) + (f" and {len(below) - 3} more" if len(below) > 3
                                             else "")
    return [f"{names}: measured at or below half of calls x the {fmt_seconds(floor)} launch "
            f"floor, so the time is GPU-side (a profiler's) or the launches overlap; the "
            f"launch floor is left out of the time before and after, as `rooflab report` "
            f"leaves it out (the 'with launches' floor still counts it).", *[band] * bool(band)]


def _fused_cap(w: WhatIf, members: Sequence[Kernel]) -> str:
    """For a fusion: the members' work floor over their measured work (fuse's combined
    efficiency) when it is above 1, and what that does to the fused speed-up; ''
    otherwise (no fusion, untimed members, or members within their roof together)."""
    from ..units import fmt_pct, fmt_seconds, fmt_times

    new = next((n for _, n in w.moves if n.meta.get("fused")), None)
    prim = _primary(w.before)
    if new is None or not new.seconds or not all(
            k.seconds and k.name in prim for k in members):
        return ""
    # the members' work as fuse splits their times (retime_launch, whatif._fused_split)
    work = sum(k.seconds - launch_held_s(prim[k.name], k) for k in members)
    floor = sum(prim[k.name].floor_s for k in members)
    if work <= 0 or floor <= work * (1 + 1e-9):
        return ""
    measured = sum(k.seconds for k in members)
    return (f"the fused members reach {fmt_pct(100 * floor / work)} of their roof together "
            f"(work floor {fmt_seconds(floor)} in {fmt_seconds(work)} of measured work): the fused "
            f"kernel is taken at 100 %, so its {fmt_times(measured / new.seconds)} "
            f"({fmt_seconds(measured)} -> {fmt_seconds(new.seconds)}) is capped, not "
            f"predicted.")
