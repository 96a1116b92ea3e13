"""Two close compute ceilings: each value label and each ridge name sits by its own line
or diamond, never across or nearer the other (review s18 r5 F1, F2).

`rooflab demo` under load (88 % of the CPUs busy) probed fp64 vector 3.86 and fp32 vector
2.58 GFLOP/s, 0.18 decade apart, DRAM 4.68 GB/s: the PNG wrote 'fp32 vector* 2.58' between
the two lines and pushed 'fp64 vector* 3.86' under the 2.58 line (read top-down: 2.58
then 3.86); the HTML wrote 'AI*=0.551' level with the 0.823 diamond and 'AI*=0.823' level
with the 0.551 one. The figures below are that recording's (/tmp/r5/keep, 2026-12-01).
"""

from __future__ import annotations

import math

import pytest

from rooflab.model import Ceiling, Kernel, Roof
from rooflab.report.chart import roofline_data
from rooflab.report.chart_layout_cost import _box, _to_pt


def _vec(p, v, prov):
    flagged = ("disturbed",) if prov == "measured" else ()
    return Ceiling(v, precision=p, unit="vector", provenance=prov, warnings=flagged)


MEASURED = Roof("AMD EPYC measured (2 threads)", "measured",
                compute=(_vec("fp64", 3.8555e9, "measured"), _vec("fp32", 2.5811e9, "measured")),
                memory=tuple(Ceiling(v, level=lv, provenance="measured", warnings=("disturbed",))
                             for lv, v in (("L1", 37.79e9), ("L3", 100.19e9), ("DRAM", 4.684e9))))
NOMINAL = Roof("AMD EPYC (Zen 3, 2 cores @ 3.24 GHz)", "nominal",
               compute=(_vec("fp64", 103.54e9, "nominal"), _vec("fp32", 207.07e9, "nominal")))
# (name, precision, FLOP, DRAM bytes, seconds, unit) as the loaded demo recorded them
KERNELS = [("triad_fp64", "fp64", 16777216, 201326592, 0.0484, "vector"),
           ("sum_fp64", "fp64", 8388607, 67108872, 0.01678, "vector"),
           ("gemv_fp64", "fp64", 33554432, 134283264, 0.03157, "vector"),
           ("gemm_fp64_256", "fp64", 33554432, 1572864, 0.05999, None),
           ("gemm_fp64_1024", "fp64", 2147483648, 25165824, 0.32, None),
           ("softmax_fp32", "fp32", 67108864, 134217728, 0.207, "vector")]
SWEEP = [(0.125, 0.9e9), (0.5, 3.2e9), (2.0, 9.4e9), (8.0, 12.1e9), (32.0, 12.1e9)]


def _kernels():
    return [Kernel(n, flop={p: f}, bytes={"DRAM": b}, seconds=s, unit=u)
            for n, p, f, b, s, u in KERNELS]


def test_close_ceilings_each_label_by_its_own_line():
    """Each compute ceiling's label: no other ceiling between it and its line, and its
    middle nearer its own line than any other ceiling over its width (points of the
    layout's model axes). Old: fp64's label 18.2 pt under its line, across the fp32 line
    11.4 pt under it."""
    d = roofline_data([MEASURED, NOMINAL], _kernels(), sweep=SWEEP, sweep_precision="fp64")
    ceilings = [ln for ln in d.lines if ln.kind == "compute"]
    ys = {ln.label: ln.ys[0] for ln in ceilings}
    assert ys["fp64 vector* 3.86 GFLOP/s"] / ys["fp32 vector* 2.58 GFLOP/s"] == \
        pytest.approx(1.4937, rel=1e-3)   # 0.174 decade: 11.3 pt on the model axes
    pt = lambda x, y: _to_pt(x, y, d.xlim, d.ylim)  # noqa: E731
    checked = 0
    for ln in ceilings:
        if not ln.text:
            continue
        box = _box(pt(*ln.label_xy), ln.label_offset, ln.label_ha, ln.label_va, ln.text)
        own = pt(ln.xs[0], ln.ys[0])[1]
        mid = (box[1] + box[3]) / 2
        for other in ceilings:
            (x0, y), (x1, _) = pt(other.xs[0], other.ys[0]), pt(other.xs[-1], other.ys[-1])
            if other is ln or x1 <= box[0] or x0 >= box[2]:
                continue
            assert not min(own, mid) < y < max(own, mid), (ln.label, "across", other.label)
            assert abs(mid - own) < abs(mid - y), (ln.label, "nearer", other.label)
            checked += 1
    assert checked >= 2   # the two measured labels were each checked against the other
    by = {ln.label: ln for ln in ceilings}
    # read top-down, the labels come in the lines' order: 3.86's above 2.58's
    hi, lo = by["fp64 vector* 3.86 GFLOP/s"], by["fp32 vector* 2.58 GFLOP/s"]
    hi_box = _box(pt(*hi.label_xy), hi.label_offset, hi.label_ha, hi.label_va, hi.text)
    lo_box = _box(pt(*lo.label_xy), lo.label_offset, lo.label_ha, lo.label_va, lo.text)
    assert hi_box[1] > pt(1.0, lo.ys[0])[1] > lo_box[1]


def _box_distance(box, xy) -> float:
    return math.hypot(max(box[0] - xy[0], 0.0, xy[0] - box[2]),
                      max(box[1] - xy[1], 0.0, xy[1] - box[3]))


def test_html_ridge_names_each_by_its_own_diamond():
    """The HTML chart's 'AI*=' names (annotations, read back from the figure): each box
    nearer its own diamond than the other's, and not level with the other diamond beside
    it. Old: 'AI*=0.551' above-left of its diamond, level with the 0.823 diamond 23 px to
    its right; 'AI*=0.823' below-right of its diamond, level with the 0.551 one."""
    pytest.importorskip("plotly")
    from rooflab.hardware.profile import MachineProfile
    from rooflab.model import analyze
    from rooflab.report.html_figure import chart_display, figure
    from rooflab.report.html_label_model import POINT_FONT_PX
    from rooflab.report.html_labels import Axes, text_box

    analysis = analyze(MEASURED, _kernels())
    profile = MachineProfile(host={"name": "epyc"}, nominal=NOMINAL, measured=MEASURED)
    display = chart_display(analysis, profile)
    assert [round(r.ai, 3) for r in display.ridges] == [0.823, 0.551]   # P / B, fp64 then fp32
    axes = Axes(tuple(math.log10(x) for x in display.xlim),
                tuple(math.log10(y) for y in display.ylim))
    diamonds = [axes.px(r.ai, r.flop_per_s) for r in display.ridges]
    names = [a for a in figure(analysis, profile).layout.annotations
             if (a.name or "").startswith("ridge:")]
    assert names   # at least one written (the other may be on hover only)
    word = {("left", "top"): "bottom right", ("right", "bottom"): "top left",
            ("right", "top"): "bottom left", ("left", "bottom"): "top right"}
    for a in names:
        i = int(a.name.split(":")[1])
        assert a.text == f"AI*={display.ridges[i].ai:.3g}"
        box = text_box(diamonds[i], a.text, word[(a.xanchor, a.yanchor)], POINT_FONT_PX)
        other = diamonds[1 - i]
        assert _box_distance(box, diamonds[i]) < _box_distance(box, other), a.text
        assert not (box[1] <= other[1] <= box[3]
                    and _box_distance(box, other) <= 3 * POINT_FONT_PX), (a.text, "level")
