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
# The most kernels named on the chart; the rest are named on hover.
MAX_NAMED = 8
# A line this close to a kernel's name (pixels) reads as running through it.
POINT_LINE_MARGIN_PX = 1.0
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

    def data(self, px: float, py: float) -> tuple[float, float]:
        """The data point at pixel (px, py): px's inverse."""
        (x0, x1), (y0, y1) = self.x_range, self.y_range
        return (10 ** (x0 + px / self.size[0] * (x1 - x0)),
                10 ** (y0 + py / self.size[1] * (y1 - y0)))


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
    return boxes.aligned_box(x, y, CHAR_EM * font_px * max(shown_len(r) for r in rows),
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
                limit: int = MAX_NAMED, segments: Sequence = (),
                leaders: dict | None = None) -> dict[int, str]:
    """{key: textposition} for the candidates named: the heaviest first, each at the first
    position free of the others (deterministic: ties keep the order given). segments:
    the lines drawn, in pixels ((a, b) pairs); of the free positions a name takes the
    first that the fewest of them cross (a line through a name is better than no name).
    leaders: where given, a candidate with no free spot beside its marker is written
    further out with a leader (html_leaders.place_leader), {key: Leader} put in it and
    counted in the limit (review s18 r5 F6: the one kernel of an ncu report, its level
    markers round it, went unnamed while lighter kernels got names)."""
    markers = {c.key: marker_box(axes.px(c.x, c.y)) for c in candidates}
    placed: list[Box] = list(obstacles)
    out: dict[int, str] = {}
    drawn: list = []        # the leaders' lines, for the next leader not to cross them
    for c in sorted(candidates, key=lambda c: -c.weight):
        if len(out) + len(leaders or {}) == limit:
            break
        anchor = axes.px(c.x, c.y)
        spots = [(p, text_box(anchor, c.text, p)) for p in POSITIONS]
        # only the boxes near its eight spots can block it: 20 000 markers against each
        # spot of each candidate took most of a big report's time (review 18 leftovers)
        reach = _union(box for _, box in spots)
        blockers = [b for b in (*placed, *(b for k, b in markers.items() if k != c.key))
                    if boxes.overlaps(b, reach)]
        free = [(p, box) for p, box in spots
                if _inside(box, axes.size) and not any(overlap(box, b) for b in blockers)]
        if free:
            # the fewest lines through it; ties keep POSITIONS' order (min keeps the first)
            position, box = min(free, key=lambda pb: boxes.lines_through(
                boxes.grown(pb[1], POINT_LINE_MARGIN_PX), segments))
            placed.append(box)
            out[c.key] = position
        elif leaders is not None:
            from .html_leaders import candidate_leader

            lead = candidate_leader(c, anchor, axes, placed, markers, segments, drawn)
            if lead is not None:
                placed.append(lead.box)
                drawn.append(lead.segment(anchor))
                leaders[c.key] = lead
    return out


def _union(bs) -> Box:
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


# --- the slopes' names -----------------------------------------------------------------
# plotly's scatter text is never turned, so a slope's name printed level beside its line
# and two close slopes (L2 234 and L3 194 GB/s: 9 px apart) printed theirs on top of each
# other. A name is now an annotation turned along its line, at the first spot along it
# (from the preferred one outwards, above the line, then below) that is inside the plot
# and clear of the markers, the kernels' and ceilings' names, the names already placed
# and every other line.
SLOPE_FONT_PX = 11.0
SLOPE_GAP_PX = 2.0       # between a slope and its name
# Another line keeps this far from a name: one closer reads as that line's name.
LINE_MARGIN_PX = 3.0
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


def _conflicts(poly, center, angle, w, h, axes, obstacles, segments, placed) -> int:
    """How many things a name turned at `angle` would sit on (0: a free spot)."""
    n = 0 if all(-0.5 <= x <= axes.size[0] + 0.5 and -0.5 <= y <= axes.size[1] + 0.5
                 for x, y in poly) else 100
    # only the boxes across its upright bounds can overlap it (those bounds are its shadow
    # on a box's own axes): 20 000 markers tested in full took seconds (review 18 leftovers)
    reach = _union((x, y, x, y) for x, y in poly)
    n += sum(boxes.polygons_overlap(poly, boxes.corners(b), 0.5) for b in obstacles
             if boxes.overlaps(b, reach))
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
                n = _conflicts(poly, center, angle, w, h, axes, obstacles, others, placed)
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


# --- the ceilings' names ---------------------------------------------------------------
# A flat roof's name was written at a fixed end of its line (the judging roof's at the
# right end, the others' at the left), whatever was there: with a measured and a nominal
# roof "fp16 tensor 600 TFLOP/s" printed over "tf32 tensor 494 TFLOP/s (nominal)", and a
# long name at a line's left end ran past the plot's right edge, where plotly cut it off.
# A name now goes to the first spot along its line (the preferred end, the other end, above
# the line then below, then spots between) that is inside the plot and clear of the
# markers, the names already placed and the other lines.
CEILING_FONT_PX = 11.0
CEILING_STEPS = 9        # spots tried between a line's two ends
# How far right of the plot's left edge a name there starts: at the edge it ran into the
# y axis' tick labels ("1T", "5").
LEFT_INDENT_PX = 8.0
# Conflict weights: outside the plot (cut off) is worse than covering a name or marker.
# Lines through a name only rule a spot out while a free one may follow: with none free,
# a name crossed at its preferred end beats one crossed by fewer lines midway (the model
# plot is narrower than the page's, so it sees more crossings at the ends than there are).
OUTSIDE, COVERS = 1000, 10


@dataclass(frozen=True)
class Flat:
    """A flat (compute) roof at `value` from x0 to x1 (data units), its name and the end
    of the line the name is best at ("left" or "right")."""

    key: int
    value: float
    x0: float
    x1: float
    text: str
    prefer: str = "right"
    font_px: float = CEILING_FONT_PX


@dataclass(frozen=True)
class FlatName:
    """Where a flat roof's name goes: the vertex it is written at (data x, on the line),
    plotly's textposition there and its box (pixels)."""

    x: float
    position: str
    box: Box
    text: str = ""      # the name as written: Flat.text, or it in two rows (_two_rows)


def _two_rows(text: str) -> str | None:
    """A ceiling's name in two rows, the ceiling over its value ('fp8 tensor<br>1.98
    PFLOP/s'), or None where no word starts with a digit to break before."""
    words = text.split(" ")
    at = next((i for i, w in enumerate(words) if i and w[:1].isdigit()), None)
    return None if at is None else " ".join(words[:at]) + "<br>" + " ".join(words[at:])


def flat_spots(left: float, right: float, w: float, prefer: str,
               steps: int = CEILING_STEPS) -> list[tuple[float, str]]:
    """(pixel x of the vertex, horizontal side of the text) for a name w pixels wide on a
    line visible from `left` to `right`: the preferred end first, then the other end,
    then spots between them from the preferred end. A line shorter than its name gets
    one spot: its right end, the name running left past the line's start (a vertex off
    the line would lengthen it)."""
    hi = right - w
    if hi < left:
        return [(right, "left")]
    ends = {"left": (left, "right"), "right": (right, "left")}
    order = [ends[prefer], ends["right" if prefer == "left" else "left"]]
    mids = [left + (hi - left) * (i + 1) / (steps + 1) for i in range(steps)]
    if prefer == "right":
        mids.reverse()
    return order + [(x, "right") for x in mids]


def _flat_candidates(left, right, w, prefer) -> list[tuple[float, str]]:
    """(vertex x, textposition) in the order tried: both ends above, both ends below,
    then the spots between, above then below."""
    spots = flat_spots(left, right, w, prefer)
    ends, mids = spots[:2], spots[2:]
    return ([(x, f"top {side}") for x, side in ends]
            + [(x, f"bottom {side}") for x, side in ends]
            + [(x, f"{v} {side}") for x, side in mids for v in ("top", "bottom")])


def line_frame(box: Box, above: bool, margin: float = LINE_MARGIN_PX) -> Box:
    """The box another line keeps out of: the name's, `margin` wider on every side but the
    one on its own line (a slope that ends on the ceiling from below is not in a name
    above it)."""
    left, bottom, right, top = boxes.grown(box, margin)
    return (left, box[1], right, top) if above else (left, bottom, right, box[3])


def flat_conflicts(box: Box, above: bool, size, obstacles: Sequence[Box],
                   segments: Sequence) -> tuple[int, int]:
    """What a name's box sits on: (cut off or covering a name or marker, weighted; lines
    through it). (0, 0): a free spot."""
    n = 0 if boxes.inside(boxes.grown(box, -0.5), size) else OUTSIDE
    n += COVERS * sum(overlap(box, b) for b in obstacles)
    return n, boxes.lines_through(line_frame(box, above), segments)


def place_ceiling_names(flats: Sequence[Flat], axes: Axes, obstacles: Sequence[Box] = (),
                        lines: Sequence[tuple[object, Sequence]] = ()) -> dict[int, FlatName]:
    """{key: FlatName} for every flat roof, in the order given (the judging roof's first),
    each at its first free spot, else at the first that is inside the plot and covers the
    fewest names and markers (a ceiling is always named: all are one colour). lines:
    (key, [(x, y), ...] in data units) of every line drawn; a name keeps clear of all but
    its own and those that run along it (two equal ceilings of two roofs: 235 and 236
    GFLOP/s are one line on the chart)."""
    segments = pixel_segments(axes, lines)
    placed: list[Box] = []
    out: dict[int, FlatName] = {}
    for f in flats:
        y = axes.px(1.0, f.value)[1]
        left = max(axes.px(f.x0, f.value)[0], LEFT_INDENT_PX)
        right = min(axes.px(f.x1, f.value)[0], axes.size[0])
        others = [(a, b) for key, a, b in segments if key != f.key
                  and not (a[1] == b[1] and abs(a[1] - y) <= LINE_MARGIN_PX + 0.5)]
        taken = [*obstacles, *placed]
        best = _best_spot(f.text, f.font_px, y, left, right, f.prefer, axes.size, taken,
                          others)
        rows = _two_rows(f.text) if best[0] > 0 else None
        if rows is not None:
            # the name in one row covers a marker or a name wherever it goes: a line
            # shorter than its name (H100's fp8 tensor, from its ridge to the plot's edge)
            # ran it back over its own ridge diamond; in two rows, half as wide, it may
            # fit beside it
            two = _best_spot(rows, f.font_px, y, left, right, f.prefer, axes.size, taken,
                             others)
            best = two if two[0] < best[0] else best
        *_, px, position, box, text = best
        placed.append(box)
        # an end of the line is its own vertex, not a float's width beside it
        ends = {axes.px(f.x0, f.value)[0]: f.x0, axes.px(f.x1, f.value)[0]: f.x1}
        out[f.key] = FlatName(ends.get(px, axes.data(px, y)[0]), position, box, text)
    return out


def _best_spot(text: str, font_px: float, y: float, left: float, right: float, prefer: str,
               size, taken: Sequence[Box], others: Sequence) -> tuple:
    """(conflicts, lines crossed, vertex px, textposition, box, text) of the name's first
    free spot on its line, else of the first with the fewest conflicts."""
    w = CHAR_EM * font_px * max(shown_len(r) for r in text.split("<br>"))
    best = None
    for px, position in _flat_candidates(left, right, w, prefer):
        box = text_box((px, y), text, position, font_px, gap=0.0)
        n, crossed = flat_conflicts(box, position.startswith("top"), size, taken, others)
        if best is None or n < best[0]:
            best = (n, crossed, px, position, box, text)
        if n == crossed == 0:
            return (n, crossed, px, position, box, text)
    return best
