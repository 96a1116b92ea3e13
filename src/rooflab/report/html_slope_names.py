"""Where the HTML chart writes each memory slope's name: along its line, clear of the rest.

plotly's scatter text is never turned, so a slope's name printed level beside its line
and two close slopes (L2 234 and L3 194 GB/s: 9 px apart) printed theirs on top of each
other. A name is now an annotation turned along its line, at the first spot along it
(from the preferred one outwards, above the line, then below) that is inside the plot
and clear of the markers, the kernels' and ceilings' names, the names already placed
and every other line. Pure: pixels of html_label_model's plot, y up.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from . import boxes
from .box_grid import BoxGrid, box_grid
from .boxes import Box
from .html_label_model import (
    CHAR_EM,
    LINE_EM,
    LINE_MARGIN_PX,
    Axes,
    pixel_segments,
    union,
)
from .html_text import shown_len

SLOPE_FONT_PX = 11.0
SLOPE_GAP_PX = 2.0       # between a slope and its name
SLOPE_STEPS = 19         # spots tried along a slope, 5 % of its visible length apart


@dataclass(frozen=True)
class Slope:
    """A memory slope (y = bandwidth * x) from x0 to x1 (data units), its name and where
    along its visible part the name is best (0 left end, 1 right end)."""

    key: int
    bandwidth: float
    x0: float
    x1: float
    text: str
    prefer: float = 0.35
    font_px: float = SLOPE_FONT_PX


@dataclass(frozen=True)
class SlopeName:
    """Where a slope's name goes: its anchor on the line (data units), how far off the
    line its centre is (pixels, across the line: + above, - below) and the line's angle
    on the model axes (radians, counter-clockwise)."""

    x: float
    y: float
    offset: float
    angle: float
    corners: tuple


def slope_angle(axes: Axes) -> float:
    """The angle on screen of a slope (y = b * x: rise 1 per decade of x, on log-log
    axes), in radians: the axes' pixels per decade of y over those of x."""
    (x0, x1), (y0, y1) = axes.x_range, axes.y_range
    return math.atan2(axes.size[1] / (y1 - y0), axes.size[0] / (x1 - x0))


def slope_name_size(text: str, font_px: float = SLOPE_FONT_PX) -> tuple[float, float]:
    """The text box of an annotation (its 1 px border pad on each side included)."""
    return CHAR_EM * font_px * shown_len(text) + 2.0, LINE_EM * font_px + 2.0


def _visible(p, q, size) -> tuple[float, float] | None:
    """The part of segment pq inside the plot, as fractions of it (Liang-Barsky)."""
    t0, t1 = 0.0, 1.0
    d = (q[0] - p[0], q[1] - p[1])
    for a, b in ((-d[0], p[0]), (d[0], size[0] - p[0]), (-d[1], p[1]), (d[1], size[1] - p[1])):
        if a == 0:
            if b < 0:
                return None
        elif a < 0:
            t0 = max(t0, b / a)
        else:
            t1 = min(t1, b / a)
    return (t0, t1) if t1 > t0 else None


def _spots(prefer: float, steps: int = SLOPE_STEPS) -> list[float]:
    """Fractions along a slope, the nearest to `prefer` first (ties: the left one)."""
    fs = [(i + 1) / (steps + 1) for i in range(steps)]
    return sorted(fs, key=lambda f: (round(abs(f - prefer), 9), f))


def _conflicts(poly, center, angle, w, h, axes, obstacles: BoxGrid, segments, placed) -> int:
    """How many things a name turned at `angle` would sit on (0: a free spot)."""
    n = 0 if all(-0.5 <= x <= axes.size[0] + 0.5 and -0.5 <= y <= axes.size[1] + 0.5
                 for x, y in poly) else 100
    # only the boxes across its upright bounds can overlap it (those bounds are its shadow
    # on a box's own axes), and only those filed near them (obstacles: a BoxGrid) need the
    # test: each spot against every one of 20 000 markers took ~2 s of a page (session 36);
    # those near are tested at once (polygon_overlaps_boxes: polygons_overlap's floats)
    reach = union((x, y, x, y) for x, y in poly)
    near = boxes.as_array(obstacles.nearby(reach))
    near = near[boxes.overlaps_many(near, reach)]
    n += int(boxes.polygon_overlaps_boxes(poly, near, 0.5).sum())
    n += sum(boxes.polygons_overlap(poly, other, 0.5) for other in placed)
    m = LINE_MARGIN_PX
    frame = (-w / 2 - m, -h / 2 - m, w / 2 + m, h / 2 + m)
    n += sum(boxes.hits(boxes.local(a, center, angle), boxes.local(b, center, angle), frame)
             for a, b in segments)
    return n


def place_slope_names(slopes: Sequence[Slope], axes: Axes, obstacles: Sequence[Box] = (),
                      lines: Sequence[tuple[object, Sequence]] = ()) -> dict[int, SlopeName]:
    """{key: SlopeName} for every slope with a visible part, in the order given (the
    judging roof's first). lines: (key, [(x, y), ...] in data units) of every line drawn;
    a slope's name keeps clear of all but its own. A slope with no free spot gets the one
    with the fewest conflicts (a slope is always named: its colour alone does not say
    which level it is)."""
    angle = slope_angle(axes)
    segments = pixel_segments(axes, lines)
    grid = box_grid(obstacles)
    placed: list = []
    out: dict[int, SlopeName] = {}
    for s in slopes:
        p, q = axes.px(s.x0, s.bandwidth * s.x0), axes.px(s.x1, s.bandwidth * s.x1)
        seen = _visible(p, q, axes.size)
        if seen is None:
            continue
        w, h = slope_name_size(s.text, s.font_px)
        others = [(a, b) for key, a, b in segments if key != s.key]
        best = None
        for f in _spots(s.prefer):
            t = seen[0] + f * (seen[1] - seen[0])
            at = (p[0] + t * (q[0] - p[0]), p[1] + t * (q[1] - p[1]))
            for side in (1, -1):
                offset = side * (h / 2 + SLOPE_GAP_PX)
                center = (at[0] - offset * math.sin(angle), at[1] + offset * math.cos(angle))
                poly = boxes.turned_corners(center, w, h, angle)
                n = _conflicts(poly, center, angle, w, h, axes, grid, others, placed)
                if best is None or n < best[0]:
                    best = (n, at, offset, poly)
                if n == 0:
                    break
            if best[0] == 0:
                break
        _, at, offset, poly = best
        x, _ = axes.data(*at)
        placed.append(poly)
        out[s.key] = SlopeName(x, s.bandwidth * x, offset, angle, poly)
    return out

