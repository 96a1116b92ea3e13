"""Which kernels the HTML chart names beside their markers, and on which side of each.

plotly does not move text out of the way: with fourteen kernels (a `rooflab llm --json`
document) every name sat "top right" of its marker, on top of its neighbours'. Here the
longest-running kernels are named first, each at the first of eight positions around its
marker whose text box is free of the names already placed, of every marker and of the
ceilings' and slopes' own names; a kernel with no free spot is left to its hover text.
Pure: boxes in a model of the plot area, in pixels, y up (no plotly here).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

# The plot area in pixels. The figure is 620 px high (plot about 440 px inside its
# margins) and as wide as the page (at most 1200 px, less the legend and margins: about
# 650 px of plot); a narrower model errs on the safe side, since names keep their size
# while the markers spread out on a wider plot.
PLOT_PX = (600.0, 440.0)
# plotly's default font (Open Sans) per pixel of font size: about 0.55 em per character,
# digits and capitals wider (0.58 errs wide), and 1.3 em per line.
CHAR_EM, LINE_EM = 0.58, 1.3
POINT_FONT_PX = 12.0
MARKER_RADIUS_PX = 5.5          # markers of size 11
# The most kernels named on the chart; the rest are named on hover.
MAX_NAMED = 8
# plotly's textposition values, in order of preference: below-right first, as the PNG.
POSITIONS = ("top right", "bottom right", "top left", "bottom left", "middle right",
             "middle left", "top center", "bottom center")

Box = tuple[float, float, float, float]   # left, bottom, right, top


@dataclass(frozen=True)
class Axes:
    """Log-log axes: their ranges as plotly writes them (log10 of the data limits)."""

    x_range: tuple[float, float]
    y_range: tuple[float, float]
    size: tuple[float, float] = PLOT_PX

    def px(self, x: float, y: float) -> tuple[float, float]:
        (x0, x1), (y0, y1) = self.x_range, self.y_range
        return (self.size[0] * (math.log10(x) - x0) / (x1 - x0),
                self.size[1] * (math.log10(y) - y0) / (y1 - y0))


@dataclass(frozen=True)
class Candidate:
    """A point that may be named: its position in data units, its name and its weight
    (seconds: the longest is named first)."""

    key: int
    x: float
    y: float
    text: str
    weight: float


def text_box(anchor: tuple[float, float], text: str, position: str,
             font_px: float = POINT_FONT_PX, gap: float = MARKER_RADIUS_PX) -> Box:
    """The box plotly draws `text` in at `position` of a marker at `anchor` (pixels):
    beside the marker's edge, `gap` away from its centre."""
    rows = text.split("<br>")
    w = CHAR_EM * font_px * max(len(r) for r in rows)
    h = LINE_EM * font_px * len(rows)
    vertical, horizontal = position.split()
    x, y = anchor
    left = x + gap if horizontal == "right" else x - gap - w if horizontal == "left" \
        else x - w / 2
    bottom = y + gap if vertical == "top" else y - gap - h if vertical == "bottom" \
        else y - h / 2
    return (left, bottom, left + w, bottom + h)


def overlap(a: Box, b: Box, tol: float = 0.5) -> bool:
    """Whether two boxes share more than a touch (`tol` pixels)."""
    return (min(a[2], b[2]) - max(a[0], b[0]) > tol
            and min(a[3], b[3]) - max(a[1], b[1]) > tol)


def marker_box(anchor: tuple[float, float], r: float = MARKER_RADIUS_PX) -> Box:
    return (anchor[0] - r, anchor[1] - r, anchor[0] + r, anchor[1] + r)


def _inside(box: Box, size: tuple[float, float]) -> bool:
    # plotly clips a scatter's text at the plot area: a name sticking out is cut off
    return box[0] >= 0 and box[1] >= 0 and box[2] <= size[0] and box[3] <= size[1]


def place_names(candidates: Sequence[Candidate], axes: Axes, obstacles: Sequence[Box] = (),
                limit: int = MAX_NAMED) -> dict[int, str]:
    """{key: textposition} for the candidates named: the heaviest first, each at the first
    position free of the others (deterministic: ties keep the order given)."""
    markers = {c.key: marker_box(axes.px(c.x, c.y)) for c in candidates}
    placed: list[Box] = list(obstacles)
    out: dict[int, str] = {}
    for c in sorted(candidates, key=lambda c: -c.weight):
        if len(out) == limit:
            break
        anchor = axes.px(c.x, c.y)
        others = [b for k, b in markers.items() if k != c.key]
        for position in POSITIONS:
            box = text_box(anchor, c.text, position)
            if _inside(box, axes.size) and not any(overlap(box, b) for b in placed + others):
                placed.append(box)
                out[c.key] = position
                break
    return out


def line_label_box(axes: Axes, x: float, y: float, text: str, position: str,
                   font_px: float) -> Box:
    """The box of a ceiling's or slope's name (a 'lines+text' trace's text at a vertex)."""
    return text_box(axes.px(x, y), text, position, font_px, gap=0.0)
