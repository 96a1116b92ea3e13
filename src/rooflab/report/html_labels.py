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

from . import boxes
from .boxes import Box

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
    vertical, horizontal = position.split()
    x, y = anchor
    # plotly's "top right" is text above and right of the marker: matplotlib's left- and
    # bottom-aligned text at the marker's edge
    x, ha = {"right": (x + gap, "left"), "left": (x - gap, "right")}.get(horizontal,
                                                                         (x, "center"))
    y, va = {"top": (y + gap, "bottom"), "bottom": (y - gap, "top")}.get(vertical,
                                                                      (y, "center"))
    return boxes.aligned_box(x, y, CHAR_EM * font_px * max(len(r) for r in rows),
                             LINE_EM * font_px * len(rows), ha, va)


def overlap(a: Box, b: Box, tol: float = 0.5) -> bool:
    """Whether two boxes share more than a touch (`tol` pixels)."""
    return boxes.overlaps(a, b, tol)


def marker_box(anchor: tuple[float, float], r: float = MARKER_RADIUS_PX) -> Box:
    return boxes.marker_box(anchor, r)


def _inside(box: Box, size: tuple[float, float]) -> bool:
    # plotly clips a scatter's text at the plot area: a name sticking out is cut off
    return boxes.inside(box, size)


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
