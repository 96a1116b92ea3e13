"""How a roofline chart's marks look in matplotlib: line styles, label backings, side glyphs,
the rings round a point above its roof, each roof's colour and beads (chart_draw, chart_legend)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from .chart_parts import (
    COMPUTE_BOUND_COLOR,
    MEMORY_BOUND_COLOR,
    POINT_SIZE,
    ROOF_COLORS,
    ROOF_MARKERS,
    RooflineDisplay,
    relative_luminance,
)

# dashdotdot: the real-traffic DRAM ceiling (chart.REAL_TRAFFIC_STYLE), unlike any other
_LINESTYLES = {"solid": "-", "dashed": "--", "dotted": ":",
               "dashdotdot": (0, (6, 2, 1.5, 2, 1.5, 2))}


# Ceiling, ridge and point labels sit on a light backing: where no spot is free of lines
# (two roofs with close peaks, a slope through a crowded corner), the line passing behind
# a label is faded there instead of striking the text through. A ceiling label is 1 pt
# off its own line, so its backing has no padding (it must not cut into that line); a
# slope label sits on its own line and has none.
LABEL_BOX = {"boxstyle": "square,pad=0.15", "facecolor": "white", "edgecolor": "none",
             "alpha": 0.65}


CEILING_BOX = {**LABEL_BOX, "boxstyle": "square,pad=0"}


def literal(text: str) -> str:
    """`text` as matplotlib draws it literally: each `$` escaped, so a pair of them in a
    name from a file (Rust's `$LT$`, Numba's `kernel$241`) is not read as mathtext, which
    garbled the label or, on an invalid expression, crashed the write (review s22 r1 F1).
    Every text drawn from a kernel's or a roof's name goes through here; matplotlib turns
    each `\\$` back into `$` where no unescaped pair is left."""
    return text.replace("$", "\\$")


def _side(p) -> str:
    """A point's side; one built by hand with only a colour gets the side of its colour."""
    return p.side or {MEMORY_BOUND_COLOR: "memory", COMPUTE_BOUND_COLOR: "compute"}.get(
        p.color, "")


def _glyph_marker(name: str):
    """The matplotlib marker of a side glyph: a short rising slope, or a flat bar."""
    from matplotlib.path import Path

    if name == "slope":
        return Path([(-1.0, -1.0), (1.0, 1.0)], [Path.MOVETO, Path.LINETO])
    return Path([(-1.0, 0.0), (1.0, 0.0)], [Path.MOVETO, Path.LINETO])


def glyph_color(fill: str, measured: bool) -> str:
    """The glyph's colour: the side's colour inside a hollow (predicted) marker, else black
    on a light fill and white on a dark one, so it shows in grey."""
    if not measured:
        return fill
    return "black" if relative_luminance(fill) > 0.18 else "white"


# The side glyph inside a marker, as a fraction of the marker's diameter (4.5 pt in 8 pt).
GLYPH_FRACTION = 4.5 / POINT_SIZE


def _lid_marker():
    """The legend's launch cap: a dash with a tick down at each end, as drawn."""
    from matplotlib.path import Path

    return Path([(-1.0, -0.6), (-1.0, 0.0), (1.0, 0.0), (1.0, -0.6)],
                [Path.MOVETO, Path.LINETO, Path.LINETO, Path.LINETO])


# A point above its roof (chart.above_roof) gets a ring in Okabe-Ito vermillion, the red
# of the palette, this many points wider than its marker, and a legend entry: 1202 % of
# roof printed as a plain label read as a result, not as a roof or a count gone wrong.
ABOVE_COLOR = "#D55E00"


ABOVE_RING_PT = 6.0


# The ring is vermillion edged in black: drawn over a black ring ABOVE_EDGE_PT wider, so
# a thin black line runs either side of it. Vermillion alone barely showed against an
# orange (compute-side, Okabe-Ito #E69F00) point; black reads against orange, blue and
# white alike, and the vermillion keeps it the palette's warning colour.
ABOVE_EDGE_COLOR = "black"


ABOVE_RING_MEW, ABOVE_EDGE_PT = 1.4, 1.4


def above_ring_styles(size: float) -> list[dict]:
    """The marker keywords of the two rings round a point of marker size `size` drawn
    above its roof, in drawing order: the black edge, then the vermillion over it."""
    ring = {"ls": "none", "marker": "o", "ms": size + ABOVE_RING_PT, "mfc": "none"}
    return [{**ring, "mec": ABOVE_EDGE_COLOR, "mew": ABOVE_RING_MEW + ABOVE_EDGE_PT},
            {**ring, "mec": ABOVE_COLOR, "mew": ABOVE_RING_MEW}]


def _roof_index(d: RooflineDisplay, label: str) -> int:
    return d.roof_labels.index(label) if label in d.roof_labels else 0


def _roof_color(d: RooflineDisplay, label: str) -> str:
    return ROOF_COLORS[_roof_index(d, label) % len(ROOF_COLORS)]


def roof_marker(d: RooflineDisplay, label: str) -> str:
    """The beads along a roof's lines: none on the first, one kind per roof after it."""
    return ROOF_MARKERS[_roof_index(d, label) % len(ROOF_MARKERS)]


# An arrow's head at matplotlib's default size: "-|>" is 0.4 of the mutation scale long
# (the annotation's font size, 10 pt): 4 pt, plus the line's width.
ARROW_HEAD_PT = 4.0
ARROW_SCALE = 10.0
ARROW_HEAD_FRACTION = 0.4
# Below this many points between two markers' edges no head fits: the arrow goes under
# the markers (the labels say before and after).
ARROW_MIN_GAP_PT = 1.5


@dataclass(frozen=True)
class ArrowFit:
    """How an arrow between two markers is drawn (points): shrunk to each marker's edge,
    its head scaled to fit the gap between them, over the markers only when it fits."""

    shrink_a: float
    shrink_b: float
    scale: float
    zorder: float


def arrow_fit(start_pt: tuple[float, float], end_pt: tuple[float, float],
              r_start: float, r_end: float) -> ArrowFit:
    """The arrow from a marker of radius r_start at start_pt to one of r_end at end_pt
    (points). Review s18 r5 F5: a short arrow (two points close together) kept its length
    and was drawn over its markers, so its head covered the "before" marker (kern_002,
    kern_011, kern_004 on a compare chart: grey blobs). Now it stops at each marker's edge,
    its head shrunk to the gap; with no gap it is drawn under both markers."""
    gap = math.dist(start_pt, end_pt) - r_start - r_end
    if gap < ARROW_MIN_GAP_PT:
        return ArrowFit(0.0, 0.0, ARROW_SCALE, 2.5)
    scale = min(ARROW_SCALE, gap / (ARROW_HEAD_FRACTION * 1.5))
    return ArrowFit(r_start, r_end, scale, 3 if scale == ARROW_SCALE else 6)
