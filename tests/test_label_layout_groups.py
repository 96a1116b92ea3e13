"""Labels still in conflict after the pair repair, placed again with their neighbours
(report/chart_layout_groups.py), checked in the layout's own model (points on the model
axes, no rendering; test_labels_polish.py measures the same charts as drawn).

The bench zoo chart (C3, 2026-11-30): gemm_fp32_1024's leader struck through
'gemm_fp32_2048 · 87% of roof' at the right edge, and softmax_fp32's and layernorm_fp32's
leaders crossed; the greedy placement and the pair repair left both.
"""

from __future__ import annotations

import itertools
import math

import pytest

pytest.importorskip("matplotlib")


def _model(display):
    """(pt, {point index: item}) of a drawn chart's labels, as the layout saw them."""
    from rooflab.report.chart_layout_cost import _to_pt
    from rooflab.report.chart_layout_points import _item

    xlim, ylim = display.ax_.get_xlim(), display.ax_.get_ylim()
    pt = lambda x, y: _to_pt(x, y, xlim, ylim)  # noqa: E731
    return pt, {i: _item(pt, i, p) for i, p in enumerate(display.points) if p.text}


def test_zoo_labels_have_no_conflict_in_the_model():
    """Before: two pairs in conflict (gemm_fp32_1024 / gemm_fp32_2048, softmax_fp32 /
    layernorm_fp32); now none: no leader through a label, no two leaders crossing."""
    from test_labels_polish import _zoo_chart

    from rooflab.report.chart_layout_points import _in_conflict

    display = _zoo_chart()
    _, items = _model(display)
    assert len(items) == 18   # 20 kernels, copy_fp64 and sort_fp64 have no FLOP
    name = {i: display.points[i].kernel for i in items}
    bad = [(name[a], name[b]) for a, b in itertools.combinations(sorted(items), 2)
           if _in_conflict(items[a], items[b])]
    assert bad == []


def test_zoo_gemm_fp32_2048_label_sits_between_its_roofs():
    """gemm_fp32_2048 (17.18 GFLOP / 50.33 MB = AI 341, 17.18e9 / 0.08412 s = 204 GFLOP/s)
    sits 4.8 pt under the fp32 roof (235.31 GFLOP/s) at the right edge, the fp32 ceiling's
    label above the roof: its label, once above-left of it where gemm_fp32_1024's leader
    ran through it, is now under its point, right-aligned 7 pt left of it, in the band
    between the fp64 roof (117.66 GFLOP/s) and the fp32 roof."""
    from test_labels_polish import _zoo_chart

    from rooflab.report.chart_layout_cost import _box

    display = _zoo_chart()
    pt, items = _model(display)
    (k,) = [i for i in items if display.points[i].kernel == "gemm_fp32_2048"]
    p = display.points[k]
    assert p.ai == pytest.approx(17179869184 / 50331648)
    assert p.flop_per_s == pytest.approx(17179869184 / 0.08412)
    assert (p.label_offset, p.label_ha, p.label_va) == ((-7.0, -8.0), "right", "top")
    box = _box(*items[k][1:])
    x, y = pt(p.ai, p.flop_per_s)
    fp64_y, fp32_y = pt(p.ai, 117.66e9)[1], pt(p.ai, 235.31e9)[1]
    assert box[2] == pytest.approx(x - 7) and box[3] == pytest.approx(y - 8)
    assert fp64_y < box[1] and box[3] < fp32_y


def _pt(x, y):
    return (x, y)   # the points' (ai, flop_per_s) are model points already


def _point(kernel, x, y, offset, ha="left", va="center"):
    from rooflab.report.chart_parts import DrawnPoint

    return DrawnPoint(kernel, "DRAM", x, y, "C0", text=f"{kernel} · 21% of roof",
                      label_offset=offset, label_ha=ha, label_va=va)


def _crossed(points):
    from rooflab.report.chart_layout_points import _in_conflict, _item

    items = [_item(_pt, i, p) for i, p in enumerate(points)]
    return [(a[0], b[0]) for a, b in itertools.combinations(items, 2) if _in_conflict(a, b)]


@pytest.mark.parametrize("below", [-4.0, -3.0])
def test_crossed_leaders_are_uncrossed(below):
    """softmax_fp32 at (226, 134) with its label 60 pt right, 23.6 up; layernorm_fp32 at
    (249, 151), label 34 pt right, 4 down (the zoo chart's spots before; 3 down is off the
    grid of spots, as a cluster's column can be): softmax's leader runs from (226, 134) to
    (286, 157.6) and at x = 249 is at 134 + 23.6 x 23/60 = 143.0, under layernorm's point
    (151); at x = 283 it is at 156.4, over layernorm's leader's end (147 or 148): they
    cross. Placed again together, they no longer do; exp_fp32's label below, in no
    conflict and at a spot off the grid too, is one of the group and stays."""
    from rooflab.report.chart_layout_cost import _box, _marker_box
    from rooflab.report.chart_layout_groups import repair_groups

    pts = [_point("softmax_fp32", 226.0, 134.0, (60.0, 23.6)),
           _point("layernorm_fp32", 249.0, 151.0, (34.0, below)),
           _point("exp_fp32", 200.0, 110.0, (7.0, -8.5), va="top")]
    assert _crossed(pts) == [(0, 1)]
    markers = [_marker_box((p.ai, p.flop_per_s)) for p in pts]
    placed = markers + [_box((p.ai, p.flop_per_s), p.label_offset, p.label_ha, p.label_va,
                             p.text) for p in pts]
    out, placed_after = repair_groups(pts, _pt, placed, [], {0: 3, 1: 4, 2: 5}, ())
    assert _crossed(out) == []
    assert out[2] == pts[2]
    assert placed_after[:3] == markers
    for k in (0, 1, 2):   # each label's box is where its spot puts it
        p = out[k]
        assert placed_after[3 + k] == _box((p.ai, p.flop_per_s), p.label_offset,
                                           p.label_ha, p.label_va, p.text)


def test_labels_in_no_conflict_are_left_alone():
    """Two labels far apart, neither in conflict: nothing is searched, nothing moves."""
    from rooflab.report.chart_layout_groups import repair_groups

    pts = [_point("a", 100.0, 100.0, (60.0, 23.6)), _point("b", 400.0, 300.0, (7.0, -8.0),
                                                            va="top")]
    placed = [(0.0, 0.0, 1.0, 1.0), (2.0, 2.0, 3.0, 3.0)]
    out, after = repair_groups(pts, _pt, list(placed), [], {0: 0, 1: 1}, ())
    assert out == pts and after == placed


def test_pair_terms_add_up_to_the_arrangement_cost():
    """The beam search scores two members' spots by _between: with each one's cost alone,
    it is _arrangement_cost of the two (overlap 200 + area, leaders crossing 20, a
    leader through a label 60)."""
    from rooflab.report.chart_layout_cost import _arrangement_cost, _Scene
    from rooflab.report.chart_layout_groups import _arrays, _between
    from rooflab.report.chart_layout_points import _candidates

    scene = _Scene.of([(300.0, 100.0, 310.0, 110.0)], [], [(0.0, 200.0, 50.0, 210.0)],
                      [((20.0, 20.0), (80.0, 90.0))])
    a = [(0, (226.0, 134.0), o, ha, va, "softmax_fp32 · 21% of roof")
         for o, ha, va, _ in _candidates()[::7]]
    b = [(1, (249.0, 151.0), o, ha, va, "layernorm_fp32 · 20% of roof")
         for o, ha, va, _ in _candidates()[::5]]
    alone_a, alone_b = scene.alone(a)[0], scene.alone(b)[0]
    between = _between(_arrays(a), _arrays(b))
    checked = 0
    for m, ia in enumerate(a):
        for n, ib in enumerate(b):
            exact = _arrangement_cost([ia, ib], [(300.0, 100.0, 310.0, 110.0)], [],
                                      [(0.0, 200.0, 50.0, 210.0)],
                                      [((20.0, 20.0), (80.0, 90.0))], scene)
            assert math.isclose(alone_a[m] + alone_b[n] + between[m, n], exact,
                                rel_tol=1e-9, abs_tol=1e-6), (ia[2:5], ib[2:5])
            checked += between[m, n] > 0
    assert checked > 50   # many pairs of spots do meet
