"""Labels still in conflict after the pair repair, placed again with their neighbours.

The pair repair (chart_layout_pairs.repair_pairs) moves two labels in conflict (one's
leader through the other's label, or their leaders crossing) together; where the spots
they need are held by labels around them, no pair of moves frees them. On the bench zoo
chart the right edge holds four labels (gemm_fp64_256, gemm_fp64_1024, gemm_fp32_1024,
gemm_fp32_2048) between the fp64 and fp32 roofs and their ceiling labels: the pair left
gemm_fp32_1024's leader through 'gemm_fp32_2048 · 87% of roof', and the way out moves
gemm_fp32_2048's label under its point (between the two roofs) and gemm_fp64_256's out of
the band, three labels at once. Here a conflict's two labels and the labels near them (up
to GROUP_MAX) are placed again together: a beam search over each one's cheapest spots,
scored as _arrangement_cost scores them, kept where the exact cost is less. Two crossed
leaders are undone by the same search: it scores the two labels' spots together, the
pairs of rows that put each leader on its own side of the other among them.

Part of the chart's label layout (chart_layout); no matplotlib here.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from .boxes import as_array, as_points, crossings_matrix, hits_matrix, overlap_matrix
from .chart_layout_cost import (
    LEADER_THROUGH,
    _arrangement_cost,
    _box,
    _geometry,
    _Scene,
)
from .chart_layout_points import (
    _candidates,
    _in_conflict,
    _item,
    _leader_of,
    _move_label,
    _penalty,
)

# A group: the two labels in conflict and the labels nearest them, at most GROUP_MAX in
# all; "near": a label whose box or point lies within NEAR_PT of the box around the two
# labels, their points and their leaders. Each member tries its GROUP_TRIES cheapest spots
# (alone against the labels outside the group) among the spots of penalty up to
# GROUP_PENALTY (162 of the 300: up to 7 rows up or down in the column 60 pt out; the
# zoo chart's right edge takes two spots there, at penalties 50.5 and 53); the search
# keeps the BEAM cheapest partial arrangements, member by member. Scoring each member's
# spots alone against the rest of the chart is most of a group's time: 2-3 ms on a small
# chart, 10-15 ms among the 500 markers of a large one. At most MAX_GROUPS groups a
# chart, and a label whose group found nothing better is not searched again with another
# label: its neighbours were in that group (a crowded chart has labels in conflict with
# many, all hopeless).
GROUP_MAX = 5
NEAR_PT = 40.0
GROUP_TRIES = 30
GROUP_PENALTY = 60.0
BEAM = 120
MAX_GROUPS = 8


def repair_groups(out, pt, placed, soft, boxes_at, walls):
    """For each pair of labels still in conflict, the pair and its neighbours placed again
    together where that costs less (the others staying put). Returns (points, placed)."""
    out, placed = list(out), list(placed)
    idx = sorted(boxes_at)
    items = {k: _item(pt, k, out[k]) for k in idx}
    boxes = {k: _box(*items[k][1:]) for k in idx}
    tried, stuck, moved = 0, set(), True
    while moved:   # a group moved may leave two other labels in conflict: look again
        moved = False
        for a_pos, i in enumerate(idx):
            for j in idx[a_pos + 1:]:
                if tried >= MAX_GROUPS:
                    return out, placed
                if i in stuck or j in stuck or not _in_conflict(items[i], items[j],
                                                                boxes[i], boxes[j]):
                    continue
                tried += 1
                best = _group_move(i, j, idx, items, boxes, out, placed, soft, boxes_at,
                                   walls)
                if best is None:
                    stuck.update((i, j))
                    continue
                moved = True
                for it in best:
                    _move_label(it, pt, out, placed, items, boxes, boxes_at)
    return out, placed


def _group_move(i, j, idx, items, boxes, out, placed, soft, boxes_at, walls):
    """The group of i and j (in conflict) placed again: its items, or None where no
    arrangement found costs less than the present one."""
    group = _neighbours(i, j, idx, items, boxes)
    skip = {boxes_at[k] for k in group}
    fixed = [b for n, b in enumerate(placed) if n not in skip]
    leaders = [ld for k in idx if k not in group for ld in [_leader_of(items[k])] if ld]
    scene = _Scene.of(fixed, soft, walls, leaders)
    now = (_arrangement_cost([items[k] for k in group], fixed, soft, walls, leaders, scene)
           + sum(_penalty(out[k]) for k in group))
    best = _beam(group, items, out, scene)
    cost = (_arrangement_cost(best, fixed, soft, walls, leaders, scene)
            + sum(_spot_penalty(it) for it in best))
    return best if cost < now - 1e-9 else None


def _neighbours(i, j, idx, items, boxes) -> list[int]:
    """i, j and the labels nearest the box around their labels, points and leaders."""
    xs, ys = [], []
    for k in (i, j):
        b, anchor, end, _ = _geometry(items[k])
        xs += [b[0], b[2], anchor[0], end[0]]
        ys += [b[1], b[3], anchor[1], end[1]]
    lo, hi = (min(xs) - NEAR_PT, min(ys) - NEAR_PT), (max(xs) + NEAR_PT, max(ys) + NEAR_PT)
    mid = ((lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2)

    def near(k):
        b, a = boxes[k], items[k][1]
        return (b[0] < hi[0] and lo[0] < b[2] and b[1] < hi[1] and lo[1] < b[3]) or (
            lo[0] <= a[0] <= hi[0] and lo[1] <= a[1] <= hi[1])

    others = sorted((k for k in idx if k not in (i, j) and near(k)),
                    key=lambda k: (math.dist(items[k][1], mid), k))
    return [i, j, *others[:GROUP_MAX - 2]]


def _spot_penalty(item) -> float:
    # 0 for a spot off the grid of candidates (a cluster's column), as _penalty has it
    return _penalties().get(item[2:5], 0.0)


@functools.cache   # the same for every label
def _penalties() -> dict:
    return {(o, ha, va): pen for o, ha, va, pen in _candidates()}


def _tries(k, items, out, scene):
    """Label k's present spot and its GROUP_TRIES cheapest spots alone against the scene,
    as (items, costs with the penalty), the cheapest first; the present spot first among
    spots that cost the same, so that the search moves no label for nothing."""
    anchor, text = items[k][1], out[k].text
    cands = _group_candidates()
    tried = [items[k]] + [(k, anchor, o, ha, va, text) for o, ha, va, _ in cands]
    alone, _ = scene.alone(tried)
    pens = [_penalty(out[k])] + [pen for *_, pen in cands]
    cost = [c + pen for c, pen in zip(alone, pens, strict=True)]
    # (the present spot, where it is on the grid, comes again: dropped)
    order = [n for n in sorted(range(len(tried)), key=lambda n: (cost[n], n))
             if n == 0 or tried[n][2:5] != items[k][2:5]]
    keep = order[:GROUP_TRIES] + ([0] if 0 not in order[:GROUP_TRIES] else [])
    return [tried[n] for n in keep], np.array([cost[n] for n in keep])


@functools.cache   # the same for every label
def _group_candidates() -> tuple:
    """The spots a member may take: those of _candidates whose penalty is at most
    GROUP_PENALTY."""
    return tuple(c for c in _candidates() if c[3] <= GROUP_PENALTY)


def _arrays(tries):
    geo = [_geometry(it) for it in tries]
    return (as_array([g[0] for g in geo]), as_points([g[1] for g in geo]),
            as_points([g[2] for g in geo]), np.array([g[3] for g in geo], dtype=bool))


def _between(a, b) -> np.ndarray:
    """What two members' spots cost together, [spot of a, spot of b]: their labels
    touching, their leaders crossing, either's leader through the other's label (as
    _arrangement_cost scores them; the leader struck through the label whose own point
    it starts in is not counted, either way round)."""
    box_a, an_a, en_a, far_a = a
    box_b, an_b, en_b, far_b = b
    area = overlap_matrix(box_a, box_b)
    cost = np.where(area > 0, 200 + area, 0.0)
    cost += 20 * (crossings_matrix(an_a, en_a, an_b, en_b) & far_a[:, None] & far_b[None, :])

    def inside(anchors, bx):   # [n, m]: anchor n inside box m
        return ((bx[None, :, 0] <= anchors[:, 0:1]) & (anchors[:, 0:1] <= bx[None, :, 2])
                & (bx[None, :, 1] <= anchors[:, 1:2]) & (anchors[:, 1:2] <= bx[None, :, 3]))

    a_through = hits_matrix(an_a, en_a, box_b) & ~inside(an_a, box_b) & far_a[:, None]
    b_through = (hits_matrix(an_b, en_b, box_a) & ~inside(an_b, box_a) & far_b[:, None]).T
    return cost + LEADER_THROUGH * (a_through.astype(float) + b_through)


def _beam(group, items, out, scene) -> list[tuple]:
    """The cheapest arrangement of the group's labels the beam search finds."""
    tries, alone, arrays = [], [], []
    for k in group:
        t, c = _tries(k, items, out, scene)
        tries.append(t)
        alone.append(c)
        arrays.append(_arrays(t))
    inter = {(s, t): _between(arrays[s], arrays[t])
             for t in range(len(group)) for s in range(t)}
    order = np.argsort(alone[0], kind="stable")[:BEAM]
    chosen, cost = order[:, None], alone[0][order]
    for t in range(1, len(group)):
        total = cost[:, None] + alone[t][None, :]
        for s in range(t):
            total = total + inter[(s, t)][chosen[:, s], :]
        flat = np.argsort(total, axis=None, kind="stable")[:BEAM]
        rows, cols = np.unravel_index(flat, total.shape)
        chosen = np.hstack([chosen[rows], cols[:, None]])
        cost = total[rows, cols]
    return [tries[t][n] for t, n in enumerate(chosen[0].tolist())]
