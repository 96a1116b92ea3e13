"""html_labels' model of the HTML chart's plot area: its log-log axes in pixels, the box
plotly draws a text in beside a point or a line's vertex, and the lines as pixel segments.
The kernels' names (html_labels), the slopes' (html_slope_names) and the ceilings'
(html_ceiling_names) are all placed on it. Pure: pixels, y up (no plotly here).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from . import boxes
from .boxes import Box
from .html_text import shown_len

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
# Another line keeps this far from a name: one closer reads as that line's name.
LINE_MARGIN_PX = 3.0


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

    def data(self, px: float, py: float) -> tuple[float, float]:
        """The data point at pixel (px, py): px's inverse."""
        (x0, x1), (y0, y1) = self.x_range, self.y_range
        return (10 ** (x0 + px / self.size[0] * (x1 - x0)),
                10 ** (y0 + py / self.size[1] * (y1 - y0)))


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
    return boxes.aligned_box(x, y, CHAR_EM * font_px * max(shown_len(r) for r in rows),
                             LINE_EM * font_px * len(rows), ha, va)


def overlap(a: Box, b: Box, tol: float = 0.5) -> bool:
    """Whether two boxes share more than a touch (`tol` pixels)."""
    return boxes.overlaps(a, b, tol)


def marker_box(anchor: tuple[float, float], r: float = MARKER_RADIUS_PX) -> Box:
    return boxes.marker_box(anchor, r)


def union(bs) -> Box:
    """The smallest box holding every one of bs."""
    x0, y0, x1, y1 = zip(*bs, strict=True)
    return (min(x0), min(y0), max(x1), max(y1))


def line_label_box(axes: Axes, x: float, y: float, text: str, position: str,
                   font_px: float) -> Box:
    """The box of a ceiling's or slope's name (a 'lines+text' trace's text at a vertex)."""
    return text_box(axes.px(x, y), text, position, font_px, gap=0.0)


def pixel_segments(axes: Axes, lines: Sequence[tuple[object, Sequence]]) -> list[tuple]:
    """(key, a, b) in pixels for each segment of the lines ((key, [(x, y), ...]) in data
    units), leaving out those with a vertex at or below 0 (not on log axes)."""
    return [(key, axes.px(*a), axes.px(*b)) for key, pts in lines
            for a, b in zip(pts, pts[1:], strict=False) if min(*a, *b) > 0]

