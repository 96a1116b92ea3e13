"""Two labels in conflict placed again together (the pair repair), scored incrementally.

The pair repair once built, for every pair in conflict, the chart without the pair's two
labels and scored both labels' 300 spots against it from scratch (_cheapest): 1,588
pairs on a 200-kernel chart, 36 s of its layout's 38 (f40b0ea). What a spot costs against
the chart is a sum over the boxes and leaders in it, and between two pairs only the
labels that moved change: here each label's spots are scored once against the whole
chart (_Spots, when the label is first in a pair), the pair's own two boxes and leaders
are taken back out of those sums, and a label that moves updates the sums of the spots
it reaches. The costs are the same floats as _cheapest's (the counts are integers; an
overlap sum is redone, left to right as sums_in_order adds it, wherever a box it holds
moved or is taken out), so the labels go where they went, byte for byte
(tests/test_layout_speed_pairs.py; benchmarks/chart_speed.py --against).

Part of the chart's label layout (chart_layout); no matplotlib here.
"""

from __future__ import annotations

import math

import numpy as np

from .boxes import (
    as_array,
    as_points,
    crossings_matrix,
    hits_matrix,
    overlap_matrix,
    sums_in_order,
)
from .chart_layout_cost import (
    LEADER_THROUGH,
    LEADER_THROUGH_WALL,
    _arrangement_cost,
    _box,
    _geometry,
    _Scene,
)
from .chart_layout_groups import _penalties
from .chart_layout_points import (
    PAIR_TRIES,
    _candidates,
    _in_conflict,
    _item,
    _leader_of,
    _move_label,
    _pair_costs,
)


class _Spots:
    """Every label's 300 spots (_candidates), label n of `idx` at rows n * 300 on, scored
    against the whole chart: the boxes placed and every label's leader. What a pair's
    search needs, the spots scored without the pair's own boxes and leaders, is taken out
    of these sums; a label that moves updates them, for all spots at once."""

    def __init__(self, idx, items, soft_arr, walls_arr):
        cands = _candidates()
        self.n = len(cands)
        self.row = {k: n * self.n for n, k in enumerate(idx)}
        self.items = [(k, items[k][1], o, ha, va, items[k][5])
                      for k in idx for o, ha, va, _ in cands]
        geo = [_geometry(it) for it in self.items]
        self.bx = as_array([g[0] for g in geo])
        self.an = as_points([g[1] for g in geo])
        self.en = as_points([g[2] for g in geo])
        self.far = np.array([g[3] for g in geo], dtype=bool).reshape(-1)
        self.dist = np.array([0.02 * math.dist(g[1], g[2]) if g[3] else 0.0 for g in geo])
        self.pen = np.array([pen for *_, pen in cands])
        self.soft, self.walls_arr = soft_arr, walls_arr
        # each spot's reach: its box and its label's point (its leader runs between)
        self.reach = np.column_stack([np.minimum(self.bx[:, :2], self.an),
                                      np.maximum(self.bx[:, 2:], self.an)])
        # the spots' parts, columns of _Scene.columns's, against the whole chart; a
        # label's are worked out when it is first in a pair (`live` from then on)
        size = len(geo)
        self.out4, self.hard, self.lines = np.zeros(size), np.zeros(size), np.zeros(size)
        self.crossed, self.struck, self.walls, self.through = (
            np.zeros(size, dtype=int) for _ in range(4))
        self.live = np.zeros(size, dtype=bool)
        self.dirty = np.zeros(size, dtype=bool)   # overlap sums to redo (boxes moved)

    def _start(self, k, placed_arr, leader):
        """Label k's spots scored against the whole chart as it is now."""
        r = slice(self.row[k], self.row[k] + self.n)
        leaders = [ld for ld in leader.values() if ld]
        scene = _Scene(placed_arr, self.soft, self.walls_arr,
                       as_points([a for a, _ in leaders]), as_points([b for _, b in leaders]))
        cols = scene.columns(self.bx[r], self.an[r], self.en[r])
        for name, col in zip(("out4", "hard", "lines", "crossed", "struck", "walls",
                              "through"), cols, strict=True):
            getattr(self, name)[r] = col
        self.live[r] = True

    def moved(self, old, new):
        """A placed box moved, a label's leader with it: old and new are (box, leader
        or None). Only the spots that reach where it was or is are looked at (the others'
        sums cannot change); their overlap sums are redone when next asked for."""
        near = np.array([g for b, ld in (old, new)
                         for g in ((b[0], b[1]), (b[2], b[3]), *(ld or ()))])
        lo, hi = near.min(axis=0), near.max(axis=0)
        h = self.reach
        rows = np.nonzero(self.live & (h[:, 0] <= hi[0]) & (lo[0] <= h[:, 2])
                          & (h[:, 1] <= hi[1]) & (lo[1] <= h[:, 3]))[0]
        if not len(rows):
            return
        bx, an, en = self.bx[rows], self.an[rows], self.en[rows]
        for sign, (box, leader) in ((-1, old), (1, new)):
            arr = as_array([box])
            self.dirty[rows] |= overlap_matrix(bx, arr)[:, 0] > 0
            self.struck[rows] += sign * _struck(an, en, arr)[:, 0]
            if leader is not None:
                s, e = as_points([leader[0]]), as_points([leader[1]])
                self.crossed[rows] += sign * crossings_matrix(an, en, s, e)[:, 0]
                self.through[rows] += sign * hits_matrix(s, e, bx)[0]

    def pair(self, ks, placed_arr, cols, leaders, leader):
        """For each label of ks: (penalty, item, parts) for its PAIR_TRIES cheapest spots,
        as _cheapest gives them, with placed boxes `cols` and `leaders` taken out; those
        spots' costs alone (the sort key less the penalty); and the parts of every spot,
        columns of _Scene.columns's."""
        for k in ks:
            if not self.live[self.row[k]]:
                self._start(k, placed_arr, leader)
        rows = np.concatenate([np.arange(self.row[k], self.row[k] + self.n) for k in ks])
        bx, an, en = self.bx[rows], self.an[rows], self.en[rows]
        dirty = np.nonzero(self.dirty[rows])[0]
        if len(dirty):   # boxes moved over these spots since they were summed
            self.hard[rows[dirty]] = sums_in_order(overlap_matrix(bx[dirty], placed_arr), 200)
            self.dirty[rows] = False
        hard = self.hard[rows]
        over = np.nonzero((overlap_matrix(bx, placed_arr[cols]) > 0).any(axis=1))[0]
        if len(over):   # the sums with the pair's own boxes in them, redone without
            m = overlap_matrix(bx[over], placed_arr)
            m[:, cols] = 0.0   # (sums_in_order adds only the overlaps)
            hard[over] = sums_in_order(m, 200)
        struck = self.struck[rows] - _struck(an, en, placed_arr[cols]).sum(axis=1)
        crossed, through = self.crossed[rows], self.through[rows]
        if leaders:
            s, e = as_points([a for a, _ in leaders]), as_points([b for _, b in leaders])
            crossed = crossed - crossings_matrix(an, en, s, e).sum(axis=1)
            through = through - hits_matrix(s, e, bx).sum(axis=0)
        lines, walls, far, out4 = (c[rows] for c in (self.lines, self.walls, self.far,
                                                      self.out4))
        # as _Scene.alone adds them up
        base = out4 + hard + np.where(lines > 0, 8 + 0.15 * lines, 0.0)
        lead = np.where(far, 20 * crossed + LEADER_THROUGH * struck
                        + LEADER_THROUGH_WALL * walls, 0.0) + LEADER_THROUGH * through
        cost = (base + lead) + self.dist[rows]
        out = []
        for n, k in enumerate(ks):
            r = slice(n * self.n, (n + 1) * self.n)
            order = np.argsort(cost[r] + self.pen, kind="stable")[:PAIR_TRIES]
            columns = [c[r].tolist() for c in (out4, hard, lines, crossed, struck, walls,
                                                through)]
            parts = list(zip(*columns, strict=True))
            first = self.row[k]
            out.append(([(self.pen[o], self.items[first + o], parts[o])
                         for o in order.tolist()],
                        cost[r][order].tolist(), parts))
        return out


def _struck(an, en, boxes):
    """[spot, box]: the spot's leader through the box, not the marker it starts in."""
    around = ((boxes[None, :, 0] <= an[:, 0:1]) & (an[:, 0:1] <= boxes[None, :, 2])
              & (boxes[None, :, 1] <= an[:, 1:2]) & (an[:, 1:2] <= boxes[None, :, 3]))
    return hits_matrix(an, en, boxes) & ~around


# At most this many pair searches per label (each scores both labels' 300 spots against
# every box placed): the pairs in conflict grow faster than the labels where labels crowd
# (review s22 r6 F2: 160 labels over 2 001 markers, 1 120 searches, 7 per label, most of
# a 15 s layout). The labels not reached stay where they were placed, and
# _drop_overprinted still keeps text off text; the layout charts of tests/ need at most
# 2.2 per label, so they are placed as before.
PAIR_SEARCHES_PER_LABEL = 3


def repair_pairs(out, pt, placed, soft, boxes_at, walls):
    """Two labels in conflict (one's leader through the other's label, or their leaders
    crossing), placed one at a time: the first took the spot the second needed. Place the
    two together instead, the best pair of spots among each one's cheapest, the others
    staying put; kept where it costs less. At most PAIR_SEARCHES_PER_LABEL searches a
    label. Returns (points, placed)."""
    out, placed = list(out), list(placed)
    idx = sorted(boxes_at)
    budget = PAIR_SEARCHES_PER_LABEL * len(idx)
    items = {k: _item(pt, k, out[k]) for k in idx}
    boxes = {k: _box(*items[k][1:]) for k in idx}
    soft_arr, walls_arr = as_array(soft), as_array(walls)
    placed_arr = as_array(placed)
    leader = {k: _leader_of(items[k]) for k in idx}
    spots = None   # made at the first pair in conflict

    pens = _penalties()
    spot = {c[:3]: n for n, c in enumerate(_candidates())}
    for a_pos, i in enumerate(idx):
        for j in idx[a_pos + 1:]:
            if not _in_conflict(items[i], items[j], boxes[i], boxes[j]):
                continue
            if budget <= 0:
                return out, placed
            budget -= 1
            skip = [boxes_at[i], boxes_at[j]]
            spots = spots or _Spots(idx, items, soft_arr, walls_arr)
            out_of = [leader[k] for k in (i, j) if leader[k]]
            (ti, pre, parts_i), (tj, _, parts_j) = spots.pair((i, j), placed_arr, skip,
                                                               out_of, leader)
            # the two labels' present spots, scored from their parts where they are on
            # the grid of candidates; the chart without them is built only for a spot off
            # it (where a cluster's column put it)
            at = [spot.get(items[k][2:5]) for k in (i, j)]
            fixed = leaders = scene = None
            if None in at:
                keep = np.ones(len(placed), dtype=bool)
                keep[skip] = False
                fixed = [b for n, b in enumerate(placed) if n not in skip]
                leaders = [leader[k] for k in idx if k not in (i, j) and leader[k]]
                scene = _Scene(placed_arr[keep], soft_arr, walls_arr,
                               as_points([a for a, _ in leaders]),
                               as_points([b for _, b in leaders]))
            now_parts = None if None in at else [parts_i[at[0]], parts_j[at[1]]]
            now = (_arrangement_cost([items[i], items[j]], fixed, soft, walls, leaders, scene,
                                     now_parts)
                   + _pen(pens, items[i]) + _pen(pens, items[j]))
            # (with `pre`, _pair_costs needs neither the chart nor the scene)
            costs = np.array(_pair_costs(ti, tj, fixed, soft, walls, leaders, scene, pre))
            if not (costs < now - 1e-9).any():
                continue   # nothing beats the present spots (most pairs): no search
            best = (now, None)
            for ci, row in zip(ti, costs.tolist(), strict=True):
                for cj, cost in zip(tj, row, strict=True):
                    if cost < best[0] - 1e-9:
                        best = (cost, (ci[1], cj[1]))
            for it in best[1]:
                k = it[0]
                old = (placed[boxes_at[k]], leader[k])
                _move_label(it, pt, out, placed, items, boxes, boxes_at)
                placed_arr[boxes_at[k]] = placed[boxes_at[k]]
                leader[k] = _leader_of(items[k])
                spots.moved(old, (placed[boxes_at[k]], leader[k]))
    return out, placed


def _pen(pens, item) -> float:
    """_penalty of the spot an item sits at (0 off the grid of candidates)."""
    return pens.get(item[2:5], 0.0)
