"""Which kernels the HTML chart names beside their markers, and on which side of each.

plotly does not move text out of the way: with fourteen kernels (a `rooflab llm --json`
document) every name sat "top right" of its marker, on top of its neighbours'. Here the
longest-running kernels are named first, each at the first of eight positions around its
marker whose text box is free of the names already placed, of every marker and of the
ceilings' and slopes' own names; a kernel with no free spot is left to its hover text.
Pure: boxes in a model of the plot area, in pixels, y up (no plotly here).
The model of the plot area (axes in pixels, text boxes) is html_label_model's; the slopes'
names are html_slope_names', the ceilings' html_ceiling_names'.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from . import boxes
from .box_grid import box_grid
from .boxes import Box
from .html_label_model import Axes, marker_box, overlap, text_box, union

# The most kernels named on the chart; the rest are named on hover.
MAX_NAMED = 8
# A line this close to a kernel's name (pixels) reads as running through it.
POINT_LINE_MARGIN_PX = 1.0
# plotly's textposition values, in order of preference: below-right first, as the PNG.
POSITIONS = ("top right", "bottom right", "top left", "bottom left", "middle right",
             "middle left", "top center", "bottom center")


@dataclass(frozen=True)
class Candidate:
    """A point that may be named: its position in data units, its name and its weight
    (seconds: the longest is named first)."""

    key: int
    x: float
    y: float
    text: str
    weight: float


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
    # the boxes there before and the candidates' markers, filed by where they are: each
    # candidate reads the few near its spots, not every marker (session 36)
    before, keys = box_grid(obstacles), list(markers)
    marker_grid = box_grid(list(markers.values()))
    placed: list[Box] = list(obstacles)     # and the names placed here, after them
    out: dict[int, str] = {}
    drawn: list = []        # the leaders' lines, for the next leader not to cross them
    for c in sorted(candidates, key=lambda c: -c.weight):
        if len(out) + len(leaders or {}) == limit:
            break
        anchor = axes.px(c.x, c.y)
        spots = [(p, text_box(anchor, c.text, p)) for p in POSITIONS]
        # only the boxes near its eight spots can block it: 20 000 markers against each
        # spot of each candidate took most of a big report's time (review 18 leftovers)
        reach = union(box for _, box in spots)
        near = (*before.nearby(reach), *placed[len(obstacles):],
                *(marker_grid.boxes[i] for i in marker_grid.near(reach) if keys[i] != c.key))
        blockers = [b for b in near if boxes.overlaps(b, reach)]
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

