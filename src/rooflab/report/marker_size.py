"""A kernel's marker size on a roofline chart (the PNG's and the HTML's alike): its share
of the time, as plain numbers; no chart module, no matplotlib, imported here (`report`
parses --size-by with SIZE_BY without drawing a chart: review s24 h2 F1)."""

from __future__ import annotations

import math

# A kernel's marker size says its share of the time (review 14d G, Intel Advisor's "by dot
# size ... identify loops that take most of total program time"): its AREA is proportional
# to the share, SIZE_MAX points across at 100 %, so a kernel at a quarter of the time is
# half as wide; clamped to SIZE_MIN so a 0.01 % kernel stays visible (every share under
# (SIZE_MIN / SIZE_MAX)^2 = 4 % is drawn SIZE_MIN across). Sizes are marker diameters in
# points (matplotlib's markersize) and the same numbers in pixels in the HTML chart.
# POINT_SIZE: every marker when sizes are off (--size-by none) or a kernel has no time.
POINT_SIZE = 8.0
SIZE_MIN = 4.0
SIZE_MAX = 20.0
SIZE_BY = ("time", "none")
SIZE_LEGEND = "size: share of time"


def share_size(share: float | None) -> float:
    """The marker diameter (points) of a kernel taking `share` (0..1) of the timed total:
    area proportional to the share, SIZE_MAX at 1, clamped to [SIZE_MIN, SIZE_MAX];
    POINT_SIZE for no share (an untimed kernel)."""
    if share is None or not share >= 0:
        return POINT_SIZE
    return min(SIZE_MAX, max(SIZE_MIN, SIZE_MAX * math.sqrt(share)))
