"""Why a point sits above a roof that nothing measured. A datasheet (nominal) ceiling cannot
be "too low" the way a loaded probe's can: a point above a nominal bandwidth roof moved
fewer bytes through that level than were counted (hand-counted or algorithmic bytes the
caches served: cache reuse), and one above a nominal compute roof ran on a faster unit or
precision than it is held to, or its FLOP are miscounted (review s21 r3 F4: a stencil at
2.45x the A100's datasheet DRAM roof was blamed on "the measured DRAM roof is too low (a
loaded probe)"; seed 000 §6.1 问题二: data that hits L2 is judged against the L2 roof).
The sanity finding, the gain line, the below-roof distance and the read-with-care line
say these words. Pure: no I/O.
"""

from __future__ import annotations

from .placement import Point
from .provenance import NOMINAL


def nominal_binding(p: Point) -> bool:
    """Whether the ceiling that binds p (its memory level's left of the ridge, its compute
    ceiling right of it) is a datasheet number on a datasheet roof (Point.roof_kind); False
    where the point does not say (built outside analyze_point: its kinds are "")."""
    kind = p.memory_ceiling_kind if p.memory_bound_side else p.compute_ceiling_kind
    return kind == NOMINAL and p.roof_kind == NOMINAL


def nominal_memory(p: Point) -> bool:
    """Whether p's memory level's ceiling is a datasheet number on a datasheet roof."""
    return p.memory_ceiling_kind == NOMINAL and p.roof_kind == NOMINAL


def cache_reuse_cause(level: str, counters: str = "") -> str:
    """The cause a point above a nominal bandwidth roof has first. `counters`: where the
    machine's real bytes come from (sanity_counts.COUNTERS), '' for the generic words."""
    how = counters or ("take the bytes from the counters (ncu's dram__bytes.sum on a "
                       "GPU) or give the cache levels' bytes (L2) to judge them there")
    return (f"cache reuse: the counted bytes are not all {level} traffic (hand-counted or "
            f"algorithmic bytes the caches served); check the byte counts: {how}")


def above_nominal(p: Point) -> str:
    """Why p is above its nominal binding roof, in a clause ('' where the roof is not
    nominal: a measured roof may be too low, and the old words stand)."""
    if not nominal_binding(p):
        return ""
    if p.memory_bound_side:
        return (f"its {p.level} roof is a datasheet's, so not too low: {cache_reuse_cause(p.level)}"
                f"; the AI levers priced on these bytes mean little until then")
    return (f"its compute roof ({p.binding}) is a datasheet's, so not too low: it ran on a "
            f"faster unit or precision than it is held to (tensor cores, TF32) or its FLOP "
            f"are miscounted; check the FLOP count and the unit")
