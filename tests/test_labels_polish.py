"""Label layout polish, measured on the rendered chart (Agg, Text.get_window_extent).

Two charts a review left open:
- the eight NERSC GPP steps drawn as separate kernels (no --trajectory): one placed at a
  time, their long labels scattered far below the cluster, and the leaders crossed each
  other and struck through 3-4 labels; now the cluster's labels are one column, in the
  order of the points' x, so no leader crosses another or passes through a label;
- the `rooflab bench` zoo chart: slope labels of near-equal bandwidths (L3 188 GB/s,
  L2 222 GB/s) printed on top of each other, and a kernel's leader crossed a ceiling label.
The box helpers are test_labels_chart's, so both files measure the same way.
"""

from __future__ import annotations

import math

import pytest
from test_labels_chart import _assert_labels_apart, _leaders_through_labels, _text_box
from test_labels_chart import gpp as gpp  # noqa: F401  (a fixture: the GPP recordings)

pytest.importorskip("matplotlib")


def _leaders(texts):
    """(label, start, end) of each drawn leader line, in display coordinates."""
    out = []
    for t in texts:
        if getattr(t, "arrow_patch", None) is not None:
            v = t.arrow_patch.get_path().vertices
            out.append((t.get_text(), tuple(v[0]), tuple(v[-1])))
    return out


def _segments_cross(a, b, c, d) -> bool:
    def side(p, q, r):
        return (q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0])
    return side(a, b, c) * side(a, b, d) < 0 and side(c, d, a) * side(c, d, b) < 0


def _leader_crossings(texts):
    """Pairs of labels whose leader lines cross each other."""
    lead = _leaders(texts)
    return [(la, lb) for i, (la, a0, a1) in enumerate(lead)
            for lb, b0, b1 in lead[i + 1:] if _segments_cross(a0, a1, b0, b1)]


def _gpp_separate(gpp):
    from rooflab.cli.plot import load_inputs
    from rooflab.report.chart import plot_roofline

    files, rep = gpp
    roofs, kernels = load_inputs(files, [rep])
    return plot_roofline(roofs, kernels)


def test_gpp_separate_kernels_leaders_neither_cross_nor_strike(gpp):
    """`rooflab plot output*.csv --on output5.ncu-rep` (no --trajectory): before, 3-4
    leaders struck through labels and several crossed; now none."""
    display = _gpp_separate(gpp)
    texts, renderer = _assert_labels_apart(display)
    assert _leaders_through_labels(texts, renderer) == []
    assert _leader_crossings(texts) == []


def test_gpp_cluster_labels_are_one_column_in_the_order_of_x(gpp):
    """The eight labels stack in one column (one aligned edge), in the order of their
    points' x (points less than a marker apart may swap, so their leaders do not cross),
    each still naming its kernel and step in full."""
    display = _gpp_separate(gpp)
    labelled = [p for p in display.points if p.text]
    assert len(labelled) == 8
    assert all(p.text.startswith("sigma_gpp_gpu_") and "[output" in p.text for p in labelled)
    texts, renderer = _assert_labels_apart(display)
    ax = display.ax_
    rows = []   # (point's x, label's box), display coordinates
    for p in labelled:
        t = next(t for t in texts if t.get_text() == p.text)
        rows.append((ax.transData.transform((p.ai, p.flop_per_s))[0], _text_box(t, renderer)))
    edges = [b.x1 if p.label_ha == "right" else b.x0 for p, (_, b) in
             zip(labelled, rows, strict=True)]
    assert max(edges) - min(edges) <= 2, f"not one column: edges {sorted(edges)}"
    marker = 8 * display.figure_.dpi / 72
    order = {(xa < xb) == (a.y1 > b.y1) for xa, a in rows for xb, b in rows
             if abs(xa - xb) > marker}
    assert len(order) == 1, "rows not in the order of the points' x"


# `rooflab probe --quick` on this 2-core VM and `rooflab bench --on` it (2026-11-30): the
# measured roof's L2 and L3 slopes are 222 and 188 GB/s, nearly one line; 20 zoo kernels
# as (name, precision, FLOP, DRAM bytes, seconds, unit).
def _epyc_roofs():
    from rooflab.model import Ceiling, Roof

    def vec(p, v, prov):
        return Ceiling(v, precision=p, unit="vector", provenance=prov)

    measured = Roof("AMD EPYC measured (2 threads)", "measured",
                    compute=(vec("fp64", 117.66e9, "measured"), vec("fp32", 235.31e9, "measured")),
                    memory=tuple(Ceiling(v, level=lv, provenance="measured") for lv, v in
                                 (("L1", 593.2e9), ("L2", 222.4e9), ("L3", 188.1e9),
                                  ("DRAM", 26.86e9))))
    nominal = Roof("AMD EPYC (Zen 4, 2 cores @ 3.69 GHz)", "nominal",
                   compute=(vec("fp64", 117.96e9, "nominal"), vec("fp32", 235.91e9, "nominal"),
                            vec("int8", 943.65e9, "nominal"), vec("bf16", 471.83e9, "nominal")))
    return measured, nominal


ZOO = [("copy_fp64", "fp64", 0.0, 134217728, 0.004667, "vector"),
       ("scale_fp64", "fp64", 8388608, 134217728, 0.004538, "vector"),
       ("add_fp64", "fp64", 8388608, 201326592, 0.006298, "vector"),
       ("triad_fp64", "fp64", 16777216, 201326592, 0.009363, "vector"),
       ("triad_fp32", "fp32", 33554432, 201326592, 0.009261, "vector"),
       ("sum_fp64", "fp64", 8388607, 67108872, 0.001914, "vector"),
       ("dot_fp64", "fp64", 16777216, 134217728, 0.003643, "vector"),
       ("gemv_fp64", "fp64", 33554432, 134283264, 0.003698, "vector"),
       ("gemm_fp64_64", "fp64", 524288, 98304, 1.0346e-05, None),
       ("gemm_fp64_256", "fp64", 33554432, 1572864, 0.0003614, None),
       ("gemm_fp64_1024", "fp64", 2147483648, 25165824, 0.02057, None),
       ("gemm_fp32_1024", "fp32", 2147483648, 12582912, 0.0104, None),
       ("gemm_fp32_2048", "fp32", 17179869184, 50331648, 0.08412, None),
       ("bgemm_fp32_32", "fp32", 16777216, 3145728, 0.0001608, None),
       ("conv2d_fp32", "fp32", 301989888, 2244608, 0.005984, None),
       ("softmax_fp32", "fp32", 67108864, 134217728, 0.02426, "vector"),
       ("layernorm_fp32", "fp32", 117440512, 134250496, 0.0251, "vector"),
       ("exp_fp32", "fp32", 16777216, 134217728, 0.007924, "vector"),
       ("fft_c128", "fp64", 220200960, 67108864, 0.08494, "vector"),
       ("sort_fp64", "fp64", 0.0, 33554432, 0.1193, "vector")]


def _zoo_chart():
    from rooflab.model import Kernel
    from rooflab.report.chart import plot_roofline

    kernels = [Kernel(n, {p: f}, {"DRAM": b}, seconds=s, unit=u) for n, p, f, b, s, u in ZOO]
    return plot_roofline(_epyc_roofs(), kernels,
                         title="reference kernels on AMD EPYC measured (2 threads)")


def _rotated_box(t, renderer):
    """The corners (display coordinates) of a rotated text's own rectangle: its window
    extent is the axis-aligned box around it, far larger than the text on a slope."""
    from matplotlib.text import Text

    rot = t.get_rotation()
    t.set_rotation(0)
    flat = Text.get_window_extent(t, renderer)   # anchored at the same point, unrotated
    t.set_rotation(rot)
    x0, y0 = t.get_transform().transform(t.get_unitless_position())
    a = math.radians(rot)
    c, s = math.cos(a), math.sin(a)
    return [(x0 + (u - x0) * c - (v - y0) * s, y0 + (u - x0) * s + (v - y0) * c)
            for u, v in ((flat.x0, flat.y0), (flat.x1, flat.y0), (flat.x1, flat.y1),
                         (flat.x0, flat.y1))]


def _polygons_overlap(p, q) -> bool:
    """Separating-axis test for two convex polygons (a touch is not an overlap)."""
    for poly in (p, q):
        for k in range(len(poly)):
            (x0, y0), (x1, y1) = poly[k], poly[(k + 1) % len(poly)]
            n = (y0 - y1, x1 - x0)
            pa = [n[0] * x + n[1] * y for x, y in p]
            qa = [n[0] * x + n[1] * y for x, y in q]
            if max(pa) <= min(qa) or max(qa) <= min(pa):
                return False
    return True


def _label_polygons(display):
    """(text, corners) of every label drawn, slope labels as their rotated rectangles."""
    from test_labels_chart import _rendered

    texts, renderer = _rendered(display)
    out = []
    for t in texts:
        if t.get_rotation() != 0:
            out.append((t.get_text(), _rotated_box(t, renderer)))
        else:
            b = _text_box(t, renderer)
            out.append((t.get_text(), [(b.x0, b.y0), (b.x1, b.y0), (b.x1, b.y1), (b.x0, b.y1)]))
    return out


def _slope_label_overlaps(display):
    """Pairs of labels that overlap where one of them is a slope's (rotated) label."""
    polys = _label_polygons(display)
    rotated = {t.get_text() for t in display.ax_.texts if t.get_rotation() != 0}
    return [(a, b) for i, (a, pa) in enumerate(polys) for b, pb in polys[i + 1:]
            if (a in rotated or b in rotated) and _polygons_overlap(pa, pb)]


def _slope_labels_struck(display):
    """(slope label, other slope) for each slope label another slope's line runs through:
    the label's rotated rectangle, shrunk by a pixel, against the line's drawn segment."""
    from test_labels_chart import _rendered

    texts, renderer = _rendered(display)
    ax = display.ax_
    out = []
    for t in texts:
        if t.get_rotation() == 0:
            continue
        poly = _rotated_box(t, renderer)
        cx = sum(x for x, _ in poly) / 4
        cy = sum(y for _, y in poly) / 4
        inner = [(x + (cx - x) * 0.08, y + (cy - y) * 0.08) for x, y in poly]
        for ln in display.lines:
            if ln.kind != "memory" or t.get_text().strip() == ln.label and \
                    t.get_color() == ln.color:
                continue
            seg = [tuple(ax.transData.transform((ln.xs[k], ln.ys[k]))) for k in (0, -1)]
            if _polygons_overlap(inner, seg):
                out.append((t.get_text().strip(), ln.label))
    return out


def test_zoo_slope_labels_of_close_bandwidths_stay_apart():
    """L2 222 GB/s and L3 188 GB/s are nearly one line, a few points apart: the L3 label,
    above its line, sat in the L2 line and against the L2 label. Now no slope label
    overlaps another label or is struck through by another slope."""
    display = _zoo_chart()
    assert _slope_label_overlaps(display) == []
    assert _slope_labels_struck(display) == []


def _ceiling_texts(display) -> set[str]:
    return {ln.text for ln in display.lines if ln.kind in ("compute", "memory") and ln.text}


def test_zoo_leaders_clear_the_ceiling_labels():
    """A kernel's leader crossed the 'fp64 vector 118 GFLOP/s' label; ceiling labels are
    obstacles for leaders like any other. (Since review 18c the one-line labels end
    "· 88 % of roof", 8 characters longer; still no leader strikes a ceiling label. One
    leader struck a point label, and two crossed, until the group repair: the next test.)"""
    display = _zoo_chart()
    texts, renderer = _assert_labels_apart(display)
    ceilings = _ceiling_texts(display)
    assert len(ceilings) >= 6
    struck = _leaders_through_labels(texts, renderer)
    assert [(a, b) for a, b in struck if b in ceilings] == []


def test_zoo_leaders_clear_the_point_labels():
    """gemm_fp32_1024's leader ran up-left through 'gemm_fp32_2048 · 87 % of roof', and
    softmax_fp32's and layernorm_fp32's leaders crossed: the four right-edge labels had no
    spots the greedy placement and the pair repair found. Labels still in conflict are now
    placed again with their neighbours (chart_layout_groups): none strikes, none cross."""
    display = _zoo_chart()
    texts, renderer = _assert_labels_apart(display)
    assert _leaders_through_labels(texts, renderer) == []
    assert _leader_crossings(texts) == []
