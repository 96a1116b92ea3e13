"""Ceiling value labels: never on each other, and never read as another ceiling's of their
own roof, both at once (review s18 r5 F1 and test_chart's close-ceilings case).

The 'across' cost (a label nearer another ceiling of its roof than its own, or with one
between) first cost more than two labels touching: where every spot off the other labels
was across a line, a label was written on another (tests/test_chart.py
test_close_ceiling_labels_do_not_collide: 'int8 tensor 132 TOP/s' over 'tf32 tensor 156
TFLOP/s'). Before it, a label pushed off its line could sit by the next ceiling up.
"""

from __future__ import annotations

import math

import pytest

from rooflab.model import Ceiling, Roof
from rooflab.report.chart import roofline_data
from rooflab.report.chart_layout_cost import _box, _to_pt


def _tensor(v, p):
    return Ceiling(v, precision=p, unit="tensor")


# Two roofs whose ceilings interleave: A's tf32 102 TFLOP/s runs 0.052 decade under B's
# bf16 115 TFLOP/s, B's tf32 183 TFLOP/s 0.20 decade over it; all labelled at the right.
A = Roof("A", "nominal", compute=(_tensor(44.1e12, "fp64"), _tensor(76.5e12, "fp16"),
                                  _tensor(102e12, "tf32")),
         memory=(Ceiling(1.16e12, level="DRAM"),))
B = Roof("B", "nominal", compute=(_tensor(115e12, "bf16"), _tensor(183e12, "tf32")),
         memory=(Ceiling(1.33e12, level="DRAM"),))


def _boxes(d):
    pt = lambda x, y: _to_pt(x, y, d.xlim, d.ylim)  # noqa: E731
    return pt, [(ln, _box(pt(*ln.label_xy), ln.label_offset, ln.label_ha, ln.label_va,
                          ln.text))
                for ln in d.lines if ln.kind == "compute" and ln.text]


def test_interleaved_roofs_labels_apart_and_each_by_its_own_line():
    """Old (before the across cost): 'bf16 tensor 115' pushed a line above its own line,
    its middle 9.7 pt from B's 183 line and 13.9 pt from its own (read as 183's). Then
    (across cost over overlap): written above its line on 'tf32 tensor 102' (2.5 pt of
    overlap). Now: no overlap, and each label by its own line."""
    d = roofline_data([A, B], precisions="all")
    pt, boxes = _boxes(d)
    assert len(boxes) == 5
    y = {ln.label: pt(1.0, ln.ys[0])[1] for ln, _ in boxes}
    # the layout's model axes: 117 pt a decade here (log10(183 / 115) = 0.202 -> 23.7 pt)
    per_decade = (y["tf32 tensor 183 TFLOP/s"] - y["bf16 tensor 115 TFLOP/s"]) / \
        math.log10(183 / 115)
    assert y["bf16 tensor 115 TFLOP/s"] - y["tf32 tensor 102 TFLOP/s"] == \
        pytest.approx(per_decade * math.log10(115 / 102))   # 6.1 pt: one label won't fit
    for i, (la, a) in enumerate(boxes):
        for lb, b in boxes[i + 1:]:
            tol = 0.5   # as test_chart's _assert_no_overlap
            assert (a[2] <= b[0] + tol or b[2] <= a[0] + tol or a[3] <= b[1] + tol
                    or b[3] <= a[1] + tol), (la.label, "on", lb.label)
    for ln, box in boxes:
        own, mid = y[ln.label], (box[1] + box[3]) / 2
        for other in d.lines:   # every line of this chart runs under every label
            if other.kind != "compute" or other.roof != ln.roof or other is ln:
                continue   # another roof's line is dashed or grey and labelled apart
            oy = pt(1.0, other.ys[0])[1]
            assert not min(own, mid) < oy < max(own, mid), (ln.label, "across", other.label)
            assert abs(mid - own) < abs(mid - oy), (ln.label, "nearer", other.label)
