"""Names written away from their marker, with a leader line to it, where no spot beside the
marker is free (the HTML chart's counterpart of the PNG's leaders).

Review s18 r5 F6: the one kernel of an Nsight Compute report had its three level markers
side by side (L1, L2, DRAM), which blocked every spot beside its named (DRAM) marker, so the
chart said "0 of 1 kernels named" where the PNG names it. A kernel, or a ridge's AI, with
no free spot beside its marker is now written further out, at the first spot (nearest
ring first, in html_labels.POSITIONS' order) that is inside the plot, clear of every box
already there and whose leader crosses no other marker; plotly draws the leader as an
annotation's arrow. Pure: pixels of html_labels' model plot, y up.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from . import boxes
from .boxes import Box
from .html_label_model import CHAR_EM, LINE_EM, POINT_FONT_PX
from .html_labels import POSITIONS, text_box
from .html_text import shown_len

# How far out (pixels, from the marker's centre to the text's nearest edge) a name with a
# leader is tried: a leader shorter than the first reads as no leader at all, one longer
# than the last as a line to somewhere else.
LEADER_GAPS_PX = (26.0, 40.0, 60.0)
LEADER_COLOR = "#555"


@dataclass(frozen=True)
class Leader:
    """A name written `dx`, `dy` pixels (its box's centre from its marker's centre, y up)
    from its marker, with a line back to it; box: the text's box (pixels)."""

    dx: float
    dy: float
    box: Box

    def segment(self, anchor: tuple[float, float]) -> tuple:
        """The leader's line (pixels): from the marker at `anchor` to the text's box."""
        return anchor, _nearest(self.box, anchor)


def place_leader(anchor: tuple[float, float], text: str, size: tuple[float, float],
                 taken: Sequence[Box], markers: Sequence[Box] = (), segments: Sequence = (),
                 font_px: float = POINT_FONT_PX, leaders: Sequence = ()) -> Leader | None:
    """Where `text` goes, with a leader, for a marker at `anchor` (pixels): the first spot
    free of `taken` whose leader (centre to the box's nearest edge) crosses none of
    `markers` (the other markers; the own one is left out by the caller) nor any of
    `leaders` (those drawn: (a, b) pixel pairs; two crossed leaders read as each other's),
    preferring, at each distance, the spot the fewest `segments` (lines drawn) cross.
    None: no such spot."""
    for gap in LEADER_GAPS_PX:
        free = []
        for position in POSITIONS:
            box = text_box(anchor, text, position, font_px, gap)
            if not boxes.inside(box, size) or any(boxes.overlaps(box, b, 0.5) for b in taken):
                continue
            end = _nearest(box, anchor)
            if (any(boxes.hits(anchor, end, m) for m in markers)
                    or any(boxes.crosses(anchor, end, a, b) for a, b in leaders)
                    or any(boxes.hits(a, b, box) for a, b in leaders)):
                continue
            free.append(box)
        if free:
            box = min(free, key=lambda b: boxes.lines_through(b, segments))
            cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
            return Leader(cx - anchor[0], cy - anchor[1], box)
    return None


def _nearest(box: Box, xy: tuple[float, float]) -> tuple[float, float]:
    """The point of `box` nearest `xy` (where the leader meets the text)."""
    return (min(max(xy[0], box[0]), box[2]), min(max(xy[1], box[1]), box[3]))


def leader_annotation(x: float, y: float, text: str, leader: Leader, standoff: float,
                      name: str, color: str = "#222", font_px: float = POINT_FONT_PX) -> dict:
    """The plotly annotation of a name with a leader to the data point (x, y): plotly puts
    the text's centre ax, ay pixels from the point (ay down) and draws the arrow from it,
    stopping `standoff` pixels short of the point (the marker's edge: a line into the
    marker would hide its shape)."""
    return {"x": math.log10(x), "y": math.log10(y), "xref": "x", "yref": "y",
            "text": text, "showarrow": True, "arrowhead": 0, "arrowwidth": 1,
            "arrowcolor": LEADER_COLOR, "standoff": standoff,
            "ax": leader.dx, "ay": -leader.dy, "name": name,
            "font": {"size": font_px, "color": color}}


def candidate_leader(c, anchor, axes, placed: list, markers: dict, segments,
                     drawn: list) -> Leader | None:
    """place_leader for html_labels.place_names' candidate c (its marker at `anchor`),
    against the boxes within its reach only (as place_names' spots: 20 000 markers each
    time took seconds); the leader crosses no marker nor name either."""
    far = (LEADER_GAPS_PX[-1] + CHAR_EM * POINT_FONT_PX * shown_len(c.text)
           + LINE_EM * POINT_FONT_PX)
    reach = boxes.grown((*anchor, *anchor), far)
    own = markers[c.key]
    near = [b for b in placed if boxes.overlaps(b, reach) and b != own]
    others = [b for k, b in markers.items() if k != c.key and boxes.overlaps(b, reach)]
    return place_leader(anchor, c.text, axes.size, [*near, *others], [*near, *others],
                        segments, leaders=drawn)
