"""Where the HTML chart writes each flat roof's (ceiling's) name: on its line, clear of the rest.

A flat roof's name was written at a fixed end of its line (the judging roof's at the
right end, the others' at the left), whatever was there: with a measured and a nominal
roof "fp16 tensor 600 TFLOP/s" printed over "tf32 tensor 494 TFLOP/s (nominal)", and a
long name at a line's left end ran past the plot's right edge, where plotly cut it off.
A name now goes to the first spot along its line (the preferred end, the other end, above
the line then below, then spots between) that is inside the plot and clear of the
markers, the names already placed and the other lines. Pure: pixels of
html_label_model's plot, y up.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from . import boxes
from .box_grid import BoxGrid, box_grid
from .boxes import Box
from .html_label_model import CHAR_EM, LINE_MARGIN_PX, Axes, overlap, pixel_segments, text_box
from .html_text import shown_len

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


def flat_conflicts(box: Box, above: bool, size, obstacles: BoxGrid, segments: Sequence,
                   placed: Sequence[Box] = ()) -> tuple[int, int]:
    """What a name's box sits on: (cut off or covering a name or marker, weighted; lines
    through it). (0, 0): a free spot. obstacles: the markers and names there before
    (only those filed near the box can overlap it); placed: the ceilings' names so far."""
    n = 0 if boxes.inside(boxes.grown(box, -0.5), size) else OUTSIDE
    n += COVERS * (sum(overlap(box, b) for b in obstacles.nearby(box))
                   + sum(overlap(box, b) for b in placed))
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
    # each spot was tested against every marker: 20 000 of them took ~1 s (session 36)
    grid = box_grid(obstacles)
    placed: list[Box] = []
    out: dict[int, FlatName] = {}
    for f in flats:
        y = axes.px(1.0, f.value)[1]
        left = max(axes.px(f.x0, f.value)[0], LEFT_INDENT_PX)
        right = min(axes.px(f.x1, f.value)[0], axes.size[0])
        others = [(a, b) for key, a, b in segments if key != f.key
                  and not (a[1] == b[1] and abs(a[1] - y) <= LINE_MARGIN_PX + 0.5)]
        taken = (grid, placed)
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
               size, taken: tuple[BoxGrid, Sequence[Box]], others: Sequence) -> tuple:
    """(conflicts, lines crossed, vertex px, textposition, box, text) of the name's first
    free spot on its line, else of the first with the fewest conflicts. taken: the boxes
    there before (filed) and the names placed so far."""
    w = CHAR_EM * font_px * max(shown_len(r) for r in text.split("<br>"))
    best = None
    for px, position in _flat_candidates(left, right, w, prefer):
        box = text_box((px, y), text, position, font_px, gap=0.0)
        n, crossed = flat_conflicts(box, position.startswith("top"), size, taken[0], others,
                                    taken[1])
        if best is None or n < best[0]:
            best = (n, crossed, px, position, box, text)
        if n == crossed == 0:
            return (n, crossed, px, position, box, text)
    return best
