"""The label layout's model of the figure and its costs: where a label's box falls, in
points on the model axes, and what a spot costs (overlaps, lines through it, leaders).

Part of the chart's label layout (chart_layout); no matplotlib here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .boxes import (
    aligned_box,
    as_array,
    as_points,
    crosses,
    crossings_matrix,
    hits,
    hits_matrix,
    marker_box,
    overlap_area,
    overlap_matrix,
    sums_in_order,
)

# Labels are placed in a model of the default 9 x 6 in figure (axes about 550 x 378 pt;
# 7 pt text is 3.7-4.5 pt per character, digits widest, and 8.6 pt per line, measured
# with matplotlib's Agg; 4.3 errs wide), so the layout is plain data the tests can check;
# on other axes sizes it is approximate.
AXES_PT = (550.0, 378.0)   # 550-557 wide, as the tick labels' width varies
CHAR_PT, LINE_PT = 4.3, 8.6


def _to_pt(x, y, xlim, ylim):
    return (AXES_PT[0] * math.log(x / xlim[0]) / math.log(xlim[1] / xlim[0]),
            AXES_PT[1] * math.log(y / ylim[0]) / math.log(ylim[1] / ylim[0]))


def _box(anchor, offset, ha, va, text):
    """The (left, bottom, right, top) box, in points, of a text placed like matplotlib."""
    rows = text.split("\n")
    return aligned_box(anchor[0] + offset[0], anchor[1] + offset[1],
                       CHAR_PT * max(len(r) for r in rows), LINE_PT * len(rows), ha, va)


# The shared helpers (report/boxes.py) under the names this module and its tests use.
_overlap = overlap_area
_crosses = crosses
_hits = hits


def _cost(box, placed, soft=()) -> float:
    inside = (max(box[0], 0), max(box[1], 0), min(box[2], AXES_PT[0]), min(box[3], AXES_PT[1]))
    area = (box[2] - box[0]) * (box[3] - box[1])
    outside = area - max(inside[2] - inside[0], 0) * max(inside[3] - inside[1], 0)
    # A line through a label is a lesser fault than two labels on top of each other.
    # Any overlap with a label or marker costs 200 on top of its area: a touch is a fault.
    hard = sum(200 + a for a in (_overlap(box, b) for b in placed) if a > 0)
    # A line through a label costs 8 (more than sliding the label one step along its own
    # line, 6, or dropping it below, 1) plus a little per point of overlap.
    lines = sum(_overlap(box, b) for b in soft)
    return 4 * outside + hard + (8 + 0.15 * lines if lines > 0 else 0.0)


@dataclass(frozen=True)
class _Scene:
    """What labels are scored against, as arrays built once for many candidates: the boxes
    placed (labels, markers), the lines' boxes, the walls (ceilings' labels) and the
    leaders drawn. Scoring candidates one by one against lists (_cost, _leader_cost) was
    most of the chart's time; here they are scored all at once, with the same float
    operations and the same sums in the same order, so to the last bit the same costs."""

    placed: np.ndarray
    soft: np.ndarray
    walls: np.ndarray
    starts: np.ndarray
    ends: np.ndarray

    @classmethod
    def of(cls, placed, soft=(), walls=(), leaders=()) -> _Scene:
        return cls(as_array(placed), as_array(soft), as_array(walls),
                   as_points([a for a, _ in leaders]), as_points([b for _, b in leaders]))

    def parts(self, boxes, anchors, ends) -> list[tuple]:
        """For each candidate (its box, its anchor, its leader's end): what _cost and
        _leader_cost add up against this scene, (4 x area outside, overlap sum, line
        overlap sum, leaders crossed, placed struck, walls struck, leaders through it).
        The leader's counts mean something only where the candidate has a leader."""
        return list(zip(*self.columns(boxes, anchors, ends), strict=True))

    def columns(self, boxes, anchors, ends) -> tuple[list, ...]:
        """parts, one list per part (each candidate's at its index)."""
        bx, an, en = as_array(boxes), as_points(anchors), as_points(ends)
        w = np.maximum(np.minimum(bx[:, 2], AXES_PT[0]) - np.maximum(bx[:, 0], 0), 0)
        h = np.maximum(np.minimum(bx[:, 3], AXES_PT[1]) - np.maximum(bx[:, 1], 0), 0)
        out4 = (4 * ((bx[:, 2] - bx[:, 0]) * (bx[:, 3] - bx[:, 1]) - w * h)).tolist()
        hard = sums_in_order(overlap_matrix(bx, self.placed), 200)
        lines = sums_in_order(overlap_matrix(bx, self.soft))
        # a leader is not struck through the marker it starts in (asked only of the
        # boxes it passes through: a few of hundreds)
        i, j = np.nonzero(hits_matrix(an, en, self.placed))
        p, x, y = self.placed[j], an[i, 0], an[i, 1]
        around = (p[:, 0] <= x) & (x <= p[:, 2]) & (p[:, 1] <= y) & (y <= p[:, 3])
        struck = np.bincount(i[~around], minlength=len(bx)).tolist()
        walls = hits_matrix(an, en, self.walls).sum(axis=1).tolist()
        crossed = crossings_matrix(an, en, self.starts, self.ends).sum(axis=1).tolist()
        through = hits_matrix(self.starts, self.ends, bx).sum(axis=0).tolist()
        return out4, hard, lines, crossed, struck, walls, through

    def alone(self, items) -> tuple[list[float], list[tuple]]:
        """(_arrangement_cost([item]) for each item, its parts): each scored as the only
        label placed against the scene, all at once."""
        geo = [_geometry(it) for it in items]
        cols = self.columns([g[0] for g in geo], [g[1] for g in geo], [g[2] for g in geo])
        out4, hard, lines, crossed, struck, walls, through = map(np.array, cols)
        far = np.array([g[3] for g in geo], dtype=bool)
        base = out4 + hard.astype(float) + np.where(lines > 0, 8 + 0.15 * lines, 0.0)
        lead = np.where(far, 20 * crossed + LEADER_THROUGH * struck
                        + LEADER_THROUGH_WALL * walls, 0.0) + LEADER_THROUGH * through
        dist = np.array([0.02 * math.dist(g[1], g[2]) if g[3] else 0.0 for g in geo])
        cost = (base + lead) + dist
        return cost.tolist(), list(zip(*cols, strict=True))

    @staticmethod
    def costs(parts, box, anchor, end, extra=(), extra_leaders=()) -> tuple[float, float]:
        """(_cost(box, placed + extra, soft), _leader_cost(anchor, end, box, placed +
        extra, leaders + extra_leaders, walls)) from the candidate's parts."""
        out4, hard, lines, crossed, struck, walls, through = parts
        for b in extra:
            a = _overlap(box, b)
            if a > 0:
                hard += 200 + a
        cost = out4 + hard + (8 + 0.15 * lines if lines > 0 else 0.0)
        lead = 0.0
        if end is not None:
            lead += 20 * (crossed + sum(_crosses(anchor, end, a, b) for a, b in extra_leaders))
            lead += LEADER_THROUGH * (struck + sum(
                _hits(anchor, end, b) for b in extra
                if not (b[0] <= anchor[0] <= b[2] and b[1] <= anchor[1] <= b[3])))
            lead += LEADER_THROUGH_WALL * walls
        lead += LEADER_THROUGH * (through + sum(_hits(a, b, box) for a, b in extra_leaders))
        return cost, lead


# A leader line through a label or a marker: drawn over the text it strikes it through, so
# it costs more than a roof line through a label (8) and than a label moved a few rows
# further up its column (2.5 a row), and less than two labels touching (200 and up).
LEADER_THROUGH = 60.0


# A leader through a ceiling's label costs as much as two labels touching: the ceiling
# label names the line the reader is comparing the point with, so a leader struck through
# it (gemm_fp32_2048 through 'fp32 vector 235 GFLOP/s' on the bench chart) hides the one
# thing the point is read against; a roomier spot further out is better.
LEADER_THROUGH_WALL = 200.0


def _leader_cost(anchor, end, box, placed, leaders, walls=()) -> float:
    """(The definition, one candidate at a time; the layout scores with _Scene, which
    tests/test_report_boxes.py holds to it.) Leaders struck through labels: this
    candidate's leader (anchor -> end; None when it has none) through the boxes placed
    so far (not the marker it starts in), and the leaders drawn so far through this
    candidate's box; through a wall (a ceiling's label) it costs more."""
    cost = 0.0
    if end is not None:
        cost += 20 * sum(_crosses(anchor, end, a, b) for a, b in leaders)
        cost += LEADER_THROUGH * sum(
            _hits(anchor, end, b) for b in placed
            if not (b[0] <= anchor[0] <= b[2] and b[1] <= anchor[1] <= b[3]))
        cost += LEADER_THROUGH_WALL * sum(_hits(anchor, end, b) for b in walls)
    cost += LEADER_THROUGH * sum(_hits(a, b, box) for a, b in leaders)
    return cost


def _place(anchor, text, candidates, placed, soft=(), leaders=None, walls=()):
    """The candidate (offset, ha, va, penalty) with the least cost: overlap with the labels
    and markers placed so far (and, less, with lines) plus the candidate's own penalty for
    straying from where the label belongs. Its box joins `placed`. Deterministic.
    leaders: the leader lines drawn so far, for labels placed away from their point; a
    leader that would cross one, or strike through a label or marker, costs (less than
    any overlap), and so does a label that an earlier leader would strike through.
    walls: boxes a leader must not pass through at all (the ceilings' labels)."""
    best = None
    ordered = sorted(candidates, key=lambda c: c[3])
    items = [(None, anchor, offset, ha, va, text) for offset, ha, va, _ in ordered]
    # Every candidate scored at once against what is placed so far (fixed while they run).
    scene = _Scene.of(placed, soft, walls, leaders or ())
    for (offset, ha, va, penalty), part in zip(ordered, _item_parts(scene, items),
                                               strict=True):
        if best is not None and penalty >= best[0]:
            break   # costs never go below the penalty: no later candidate can win
        box = _box(anchor, offset, ha, va, text)
        end = (anchor[0] + offset[0], anchor[1] + offset[1])
        base, lead = _Scene.costs(part, box, anchor, end if has_leader(offset) else None)
        cost = base + penalty
        if leaders is not None:
            cost += lead
        if best is None or cost < best[0]:
            best = (cost, offset, ha, va, box, end)
    placed.append(best[4])
    if leaders is not None and has_leader(best[1]):
        leaders.append((anchor, best[5]))
    return best[1], best[2], best[3]


def _marker_box(xy, r=4.5):
    return marker_box(xy, r)


def _line_boxes(lines, pt) -> list[tuple[float, float, float, float]]:
    """Thin boxes along the roof lines, so a label is not struck through by another line."""
    out = []
    for ln in lines:
        (x0, y0), (x1, y1) = pt(ln.xs[0], ln.ys[0]), pt(ln.xs[-1], ln.ys[-1])
        if ln.kind == "compute":
            out.append((x0, y0 - 0.6, x1, y0 + 0.6))
        elif ln.kind == "mixed":   # a mixed kernel's flat roof: its last two vertices
            x0, y0 = pt(ln.xs[-2], ln.ys[-2])
            out.append((x0, y0 - 0.6, x1, y0 + 0.6))
        elif ln.kind == "memory":
            n = max(int((x1 - x0) / 6), 1)
            out += [_marker_box((x0 + (x1 - x0) * i / n, y0 + (y1 - y0) * i / n), 1.0)
                    for i in range(n + 1)]
    return out


def _geometry(item):
    """(box, anchor, leader's end, whether it has a leader) of an item."""
    _, anchor, offset, ha, va, text = item
    return (_box(anchor, offset, ha, va, text), anchor,
            (anchor[0] + offset[0], anchor[1] + offset[1]), has_leader(offset))


# A label more than this many points from its point, across or along, is drawn with a
# leader line to it: the one rule the layout costs and chart_draw draws (review r1 F8).
LEADER_PT = 12


def has_leader(offset) -> bool:
    """Whether a label at this offset (points) from its point is drawn with a leader line."""
    return max(abs(offset[0]), abs(offset[1])) > LEADER_PT



def _item_parts(scene, items) -> list[tuple]:
    """scene.parts of each (index, anchor, offset, ha, va, text) item, all at once."""
    return scene.parts([_box(*it[1:]) for it in items], [it[1] for it in items],
                       [(it[1][0] + it[2][0], it[1][1] + it[2][1]) for it in items])


def _arrangement_cost(items, fixed, soft, walls=(), leaders=(), scene=None,
                      parts=None) -> float:
    """The cost of labels placed together: (index, anchor, offset, ha, va, text) each, scored
    as _place scores one label (overlaps, lines, leaders) against the fixed boxes and
    the ones before it, plus a little per point of leader, so a shorter layout wins.
    scene: _Scene.of(fixed, soft, walls, leaders), when the caller scores many; parts:
    _item_parts(scene, items), when the caller has them. Each item's terms for the items
    before it are taken as arrays, all at once (a column of 60 labels has 1,770 pairs)."""
    if not parts:   # (the scene is needed only for the parts)
        scene = scene or _Scene.of(fixed, soft, walls, leaders)
        parts = _item_parts(scene, items)
    n = len(items)
    geo = [_geometry(it) for it in items]
    bx, an, en = (as_array([g[0] for g in geo]), as_points([g[1] for g in geo]),
                  as_points([g[2] for g in geo]))
    far = np.array([g[3] for g in geo], dtype=bool)
    before = np.tri(n, k=-1, dtype=bool)                    # [k, m]: m placed before k
    area = overlap_matrix(bx, bx)
    terms = np.where(before & (area > 0), 200 + area, 0.0)
    crossed = (crossings_matrix(an, en, an, en) & far[None, :] & before).sum(axis=1)
    around = ((bx[None, :, 0] <= an[:, 0:1]) & (an[:, 0:1] <= bx[None, :, 2])
              & (bx[None, :, 1] <= an[:, 1:2]) & (an[:, 1:2] <= bx[None, :, 3]))
    hit = hits_matrix(an, en, bx)                            # [k, m]: k's leader, m's box
    struck = (hit & ~around & before).sum(axis=1)
    through = (hit.T & far[None, :] & before).sum(axis=1)   # earlier leaders through k
    count, row_sums = (terms > 0).sum(axis=1).tolist(), terms.sum(axis=1).tolist()
    cost = 0.0
    for k, (out4, hard, lines, cr, st, wa, th) in enumerate(parts):
        if count[k] + (hard != 0) <= 2:   # one or two terms: the same sum in any order
            hard = hard + row_sums[k] if count[k] else hard
        else:   # Python's order, left to right
            for t in terms[k][terms[k] > 0].tolist():
                hard += t
        cost += out4 + hard + (8 + 0.15 * lines if lines > 0 else 0.0)
        lead = 0.0
        if far[k]:
            lead += 20 * (cr + int(crossed[k]))
            lead += LEADER_THROUGH * (st + int(struck[k]))
            lead += LEADER_THROUGH_WALL * wa
        lead += LEADER_THROUGH * (th + int(through[k]))
        cost += lead
        if far[k]:
            cost += 0.02 * math.dist(geo[k][1], geo[k][2])
    return cost
