"""Each rocprof dispatch's occupancy, not only its kernel's first: what aggregate._Group
records of every dispatch as it is read (record_dispatch), and the % each becomes once
the GPU is known (dispatch_occupancy), so a kernel whose dispatches differ in grid,
workgroup, LDS or registers gets the note ncu's launches get (_Group.occupancy_note:
"occupancy differs between its 2 launches (theoretical 25.0-100.0 %) ...").

Three figures per dispatch, each under its own key of _Group.occupancy:
  WAVES   SQ_ACCUM_PREV_HIRES / GRBM_GUI_ACTIVE (rocprof_achieved.busy_waves): achieved,
          in % once the GPU's XCDs and CUs are known;
  PCT     rocprofv3's own OccupancyPercent (rocprof_achieved.PCT_COUNTER), already a %:
          achieved where rooflab has no figure of its own;
  SHAPES  the resources HIP's calculator reads (rocprof_occupancy.dispatch_shape), one
          entry per distinct set (a 100,000-dispatch file of one shape keeps one): the
          theoretical % once the GPU's CU limits are known.
"""

from __future__ import annotations

from ..model.occupancy_cdna import CuLimits
from .rocprof_achieved import PCT_COUNTER, SHAPE, busy_waves, pct_of
from .rocprof_occupancy import dispatch_shape, shape_pct

WAVES = "rocprof_waves"
PCT = "rocprof_pct"
SHAPES = "rocprof_shapes"


def record_dispatch(m, occupancy: dict) -> None:
    """One dispatch's occupancy inputs into its group's `occupancy` lists; nothing for an
    ncu launch (three dict lookups, no more: a 100,000-launch file stays cheap)."""
    waves = busy_waves(m)
    if waves is not None:
        occupancy.setdefault(WAVES, []).append(waves)
    pct = m.get(PCT_COUNTER)
    if pct is not None and pct == pct:
        occupancy.setdefault(PCT, []).append(pct)
    shape = dispatch_shape(m)
    if shape is not None:
        # a dict as an ordered set: a dynamic-shape file has a grid a dispatch, and a list's
        # `in` made that quadratic
        occupancy.setdefault(SHAPES, {})[shape] = None


def dispatch_occupancy(groups, gpu: str | None, lim: CuLimits | None) -> None:
    """Each group's dispatches' achieved and theoretical occupancy in %, where ncu's
    launches leave theirs (_Group.occupancy "achieved", "theoretical"), so the one rule
    (_Group.occupancy_note) says when a kernel's dispatches differ: only the first's
    was read, and dispatches of one kernel at 16 % and 90 % went unsaid (s36 M), at a
    theoretical 25 % and 100 % (s37 D). Achieved: rooflab's own (rocprof_achieved) where
    the GPU is known, else rocprofv3's OccupancyPercent. Dropped where neither can be
    said (the notes say why). The groups are accumulators: changed in place, before
    group_kernel reads them."""
    for g in groups:
        occ = g.occupancy
        waves, pcts, shapes = occ.pop(WAVES, None), occ.pop(PCT, None), occ.pop(SHAPES, None)
        if waves and gpu in SHAPE and lim is not None:
            occ["achieved"] = [pct_of(w, gpu, lim) for w in waves]
        elif pcts:
            occ["achieved"] = pcts
        if shapes and lim is not None:
            got = [p for p in (shape_pct(s, lim) for s in shapes) if p is not None]
            if got:
                occ["theoretical"] = got


def theoretical_span(g) -> tuple[float, float] | None:
    """(lowest, highest) theoretical % of a group's dispatches (dispatch_occupancy), None
    where it has one shape or none: what the occupancy note prints for its kernel."""
    got = g.occupancy.get("theoretical") or ()
    return (min(got), max(got)) if len(got) > 1 and max(got) > min(got) else None
