"""The shared label boxes (report/boxes.py): the scalar helpers, and the array forms the
chart's layout scores candidates with, which must agree with them to the last bit (the
layout compares costs exactly, so a last-bit difference could move a label)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from rooflab.report import boxes
from rooflab.report.boxes import (
    aligned_box,
    as_array,
    as_points,
    crosses,
    crossings_matrix,
    hits,
    hits_matrix,
    inside,
    marker_box,
    overlap_area,
    overlap_matrix,
    overlaps,
    sums_in_order,
)


@pytest.mark.parametrize(("ha", "va", "want"), [
    ("left", "bottom", (10.0, 20.0, 14.0, 23.0)),
    ("left", "baseline", (10.0, 20.0, 14.0, 23.0)),
    ("right", "top", (6.0, 17.0, 10.0, 20.0)),
    ("center", "center", (8.0, 18.5, 12.0, 21.5)),
])
def test_aligned_box_aligns_like_matplotlib(ha, va, want):
    assert aligned_box(10.0, 20.0, 4.0, 3.0, ha, va) == want


def test_overlap_touch_and_tolerance():
    a, b = (0.0, 0.0, 10.0, 10.0), (10.0, 0.0, 20.0, 10.0)
    assert overlap_area(a, b) == 0.0 and not overlaps(a, b)          # touching edges
    c = (9.6, 9.6, 20.0, 20.0)
    assert overlap_area(a, c) == pytest.approx(0.16)
    assert overlaps(a, c) and not overlaps(a, c, tol=0.5)             # within a touch
    assert marker_box((1.0, 2.0), 0.5) == (0.5, 1.5, 1.5, 2.5)
    assert inside((0.0, 0.0, 5.0, 5.0), (5.0, 5.0))
    assert not inside((-0.1, 0.0, 5.0, 5.0), (5.0, 5.0))


def test_segments():
    box = (0.0, 0.0, 10.0, 10.0)
    assert hits((-5.0, 5.0), (15.0, 5.0), box)          # straight through
    assert not hits((-5.0, 10.0), (15.0, 10.0), box)    # along an edge
    assert not hits((-5.0, -5.0), (-1.0, 20.0), box)    # beside it
    assert crosses((0.0, 0.0), (10.0, 10.0), (0.0, 10.0), (10.0, 0.0))
    assert not crosses((0.0, 0.0), (10.0, 0.0), (0.0, 1.0), (10.0, 1.0))


def _random_boxes(rng, n):
    out = []
    for _ in range(n):
        x, y = rng.choice([rng.uniform(0, 100), float(rng.randint(0, 20) * 5)]), \
            rng.choice([rng.uniform(0, 100), float(rng.randint(0, 20) * 5)])
        out.append((x, y, x + rng.choice([rng.uniform(0, 30), 5.0, 10.0]),
                    y + rng.choice([rng.uniform(0, 30), 5.0, 10.0])))
    return out


def _random_points(rng, n):
    # on a grid too, so that axis-parallel and degenerate segments come up
    return [(rng.choice([rng.uniform(-10, 110), float(rng.randint(0, 10) * 10)]),
             rng.choice([rng.uniform(-10, 110), float(rng.randint(0, 10) * 10)]))
            for _ in range(n)]


@pytest.mark.parametrize("seed", range(5))
def test_arrays_agree_with_the_scalar_helpers(seed):
    rng = random.Random(seed)
    bx, others = _random_boxes(rng, 40), _random_boxes(rng, 30)
    starts, ends = _random_points(rng, 40), _random_points(rng, 40)
    starts[0] = ends[0]   # a segment of no length
    m = overlap_matrix(as_array(bx), as_array(others))
    assert m.tolist() == [[overlap_area(a, b) for b in others] for a in bx]
    h = hits_matrix(as_points(starts), as_points(ends), as_array(others))
    segs = list(zip(starts, ends, strict=True))
    assert h.tolist() == [[hits(s, e, b) for b in others] for s, e in segs]
    c = crossings_matrix(as_points(starts), as_points(ends), as_points(starts[::-1]),
                         as_points(ends[::-1]))
    assert c.tolist() == [[crosses(s, e, s2, e2) for s2, e2 in segs[::-1]] for s, e in segs]


@pytest.mark.parametrize("add", [0.0, 200.0])
def test_sums_in_order_is_pythons_sum(add):
    rng = random.Random(7)
    rows = [[rng.choice([0.0, 0.0, rng.uniform(0, 1), rng.uniform(0, 1e6) / 3])
             for _ in range(12)] for _ in range(300)]
    rows += [[0.0] * 12, [0.1, 0.2, 0.3] + [0.0] * 9]
    got = sums_in_order(np.array(rows), add)
    want = [sum(add + v for v in r if v > 0) for r in rows]
    assert got == want                                   # exactly, not approximately
    assert type(got[-2]) is int and got[-2] == 0          # none positive: Python's 0


def test_empty_arrays():
    assert as_array([]).shape == (0, 4) and as_points([]).shape == (0, 2)
    assert overlap_matrix(as_array([(0, 0, 1, 1)]), as_array([])).shape == (1, 0)
    assert hits_matrix(as_points([]), as_points([]), as_array([(0, 0, 1, 1)])).shape == (0, 1)
    assert boxes.crossings_matrix(as_points([(0, 0)]), as_points([(1, 1)]), as_points([]),
                                  as_points([])).shape == (1, 0)


def _old_arrangement_cost(items, fixed, soft, walls, leaders):
    """chart_layout's _arrangement_cost before it scored with arrays: one label at a time
    against lists, with _cost and _leader_cost."""
    import math

    from rooflab.report.chart_layout_cost import _box, _cost, _leader_cost, has_leader

    placed, leaders, cost = list(fixed), list(leaders), 0.0
    for _, anchor, offset, ha, va, text in items:
        box = _box(anchor, offset, ha, va, text)
        end = (anchor[0] + offset[0], anchor[1] + offset[1])
        cost += _cost(box, placed, soft)
        cost += _leader_cost(anchor, end if has_leader(offset) else None, box, placed, leaders,
                             walls)
        if has_leader(offset):
            cost += 0.02 * math.dist(anchor, end)
            leaders.append((anchor, end))
        placed.append(box)
    return cost


@pytest.mark.parametrize("seed", range(4))
def test_chart_layout_scores_as_the_scalar_definition(seed):
    """The chart layout's array scoring (_Scene, _arrangement_cost, _pair_costs) gives
    exactly the costs of _cost and _leader_cost applied one label at a time."""
    from rooflab.report.chart_layout import _marker_box
    from rooflab.report.chart_layout_cost import _arrangement_cost, _Scene
    from rooflab.report.chart_layout_points import _candidates, _pair_costs

    rng = random.Random(seed)
    pts = [(rng.uniform(0, 550), rng.uniform(0, 378)) for _ in range(25)]
    fixed = [_marker_box(p) for p in pts] + _random_boxes(rng, 10)
    soft = [_marker_box((x, 0.4 * x), 1.0) for x in range(0, 550, 6)]
    walls = _random_boxes(rng, 3)
    leaders = [(pts[k], (pts[k][0] + 40, pts[k][1] - 30)) for k in range(6)]
    scene = _Scene.of(fixed, soft, walls, leaders)
    cands = _candidates()

    def item(k):
        o, ha, va, _ = cands[rng.randrange(len(cands))]
        return (k, pts[k], o, ha, va, rng.choice(["a", "kernel_07 · 41%", "x\ny"]))

    for n in (1, 2, 5, 12):
        items = [item(k) for k in range(n)]
        assert _arrangement_cost(items, fixed, soft, walls, leaders, scene) == \
            _old_arrangement_cost(items, fixed, soft, walls, leaders)
    # (penalty, item, parts) each, as _cheapest gives them
    ti = [(1.0, it, scene.alone([it])[1][0]) for it in (item(k) for k in range(8))]
    tj = [(2.5, it, scene.alone([it])[1][0]) for it in (item(k) for k in range(8, 14))]
    got = _pair_costs(ti, tj, fixed, soft, walls, leaders, scene)
    want = [[_old_arrangement_cost([ci, cj], fixed, soft, walls, leaders) + pi + pj
             for pj, cj, _ in tj] for pi, ci, _ in ti]
    assert got == want
    its = [item(k) for k in range(10)]
    assert scene.alone(its)[0] == [_old_arrangement_cost([it], fixed, soft, walls, leaders)
                                   for it in its]
