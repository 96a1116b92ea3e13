"""How a roofline chart's marks look in matplotlib: line styles, label backings, side glyphs,
the rings round a point above its roof, each roof's colour and beads (chart_draw, chart_legend)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from .chart_parts import (
    COMPUTE_BOUND_COLOR,
    MEMORY_BOUND_COLOR,
    ROOF_COLORS,
    ROOF_MARKERS,
    RooflineDisplay,
    relative_luminance,
)
from .marker_size import POINT_SIZE

# dashdotdot: the real-traffic DRAM ceiling (chart_words.REAL_TRAFFIC_STYLE), unlike any other
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


# A point above its roof (chart_words.above_roof) gets a ring in Okabe-Ito vermillion, the red
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


# A weighted (mixed-precision) roof and a no-FMA ceiling (chart_nofma) are both thin lines
# in a kernel's colour, often close together: each its own dash (review s23 r6 F12: both
# were "--", with identical legend keys), in the colour's dark shade (the compute side's
# orange is 2.25:1 on white, under 1.4.11's 3:1 for marks that carry meaning).
MIXED_DASHES = {"mixed": (0, (6, 2)), "nofma": (0, (1, 1.5))}


def mixed_style(line) -> tuple[object, str]:
    """(line style, colour) of a mixed or no-FMA line, as drawn and in the legend."""
    return MIXED_DASHES.get(line.kind, (0, (6, 2))), text_color(line.color)


# Texts in a line's colour are written in a darker shade of its hue (review s23 r6 F2):
# 7-pt ceiling, slope and ridge labels in the lines' own colours were 2.3:1 (sky blue) to
# 3.9:1 (vermillion) on white, under WCAG 1.4.3's 4.5:1 for text. The lines keep their
# colours (3:1 is the mark for graphics); each shade keeps its colour's hue and reaches
# 4.5:1 on white. The first roof's #333 (12.6:1) and the memory side's blue (5.2:1) read
# as they are.
TEXT_SHADES = {"#8c8c8c": "#767676", "#009e73": "#008762", "#cc79a7": "#bc4f8b",
               "#d55e00": "#c35600", "#56b4e9": "#187cb5", "#e69f00": "#9c6c00"}


def text_color(color: str) -> str:
    """The colour to write a text in for marks drawn in `color` (TEXT_SHADES)."""
    return TEXT_SHADES.get(color.lower(), color)


# Each roof's bead as a character, written before its ceiling and slope labels (review
# s23 r6 F3: in grey, two roofs' labels and ridge diamonds were one grey: which roof a
# label named could not be read). DejaVu Sans, matplotlib's font, has every one.
BEAD_CHARS = {"x": "\u00d7", "o": "\u25cb", "s": "\u25a1", "+": "+", "^": "\u25b3"}


def bead_char(roof_labels, roof: str) -> str:
    """The bead character of `roof` among the chart's roofs; "" for the first."""
    i = roof_labels.index(roof) if roof in roof_labels else 0
    return BEAD_CHARS.get(ROOF_MARKERS[i % len(ROOF_MARKERS)], "")


def beaded(roof_labels, roof: str, text: str) -> str:
    """`text` (a label starting with a space) with its roof's bead in front: "\u25cb fp16
    vector 78 TFLOP/s"; as it is for the first roof, which has no beads. The layout
    (chart_layout_roofs) places the text so written."""
    bead = bead_char(roof_labels, roof)
    return f"{bead} {text.lstrip(' ')}" if bead else text


# An arrow's head at matplotlib's default size: "-|>" is 0.4 of the mutation scale long
# (the annotation's font size, 10 pt): 4 pt, plus the line's width.
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
