"""The HTML report's chart names its slopes along them, clear of each other, and its
ceilings clear of the y axis.

`rooflab demo` then `rooflab report kernels.json --on profile.json -o report.html`: the
slopes' names were plotly scatter text, level (plotly never turns it) at the same spot of
each slope, so "L2 234 GB/s" and "L3 194 GB/s" (slopes 9 px apart) printed over each
other; the nominal ceilings' names began at the plot's left edge, against the y axis'
tick labels. These tests read the geometry back from the figure: each slope's name is an
annotation whose turned box is checked against the markers, the names and the lines.
"""

from __future__ import annotations

import math

import pytest

from rooflab.hardware.catalog import lookup_roof
from rooflab.hardware.profile import MachineProfile
from rooflab.model import Ceiling, Kernel, Roof, analyze
from rooflab.report import boxes
from rooflab.report.html_label_model import PLOT_PX, line_label_box
from rooflab.report.html_labels import Axes, marker_box, text_box
from rooflab.report.html_slope_names import Slope, place_slope_names, slope_angle, slope_name_size

pytest.importorskip("plotly")

# the demo's measured roof (an EPYC, 2 threads) and its nominal peaks, without bandwidth
EPYC = Roof("AMD EPYC measured (2 threads)", "measured",
            compute=(Ceiling(118e9, precision="fp64", unit="vector", provenance="measured"),
                     Ceiling(235e9, precision="fp32", unit="vector", provenance="measured")),
            memory=tuple(Ceiling(v, level=lv, provenance="measured") for lv, v in
                         (("L1", 596e9), ("L2", 234e9), ("L3", 194e9), ("DRAM", 37.5e9))))
EPYC_NOMINAL = Roof("AMD EPYC (nominal)", "nominal",
                    compute=(Ceiling(118e9, precision="fp64", unit="vector"),
                             Ceiling(236e9, precision="fp32", unit="vector"),
                             Ceiling(942e9, precision="int8", unit="vector"),
                             Ceiling(471e9, precision="bf16", unit="vector")))
# (name, precision, AI, achieved FLOP/s) as the demo measured them
DEMO = (("triad_fp64", "fp64", 0.0833, 1.9e9), ("sum_fp64", "fp64", 0.125, 4.23e9),
        ("gemv_fp64", "fp64", 0.25, 4.94e9), ("softmax_fp32", "fp32", 0.5, 2.76e9),
        ("gemm_fp64_256", "fp64", 21.3, 60.4e9), ("gemm_fp64_1024", "fp64", 85.3, 87.1e9))


def _demo():
    ks = [Kernel(n, {p: ai * 1e8}, {"DRAM": 1e8}, seconds=ai * 1e8 / f)
          for n, p, ai, f in DEMO]
    profile = MachineProfile(host={"name": "epyc"}, nominal=EPYC_NOMINAL, measured=EPYC)
    return analyze(EPYC, ks), profile


def _gpu_kernels():
    ks = [Kernel(f"hgemm_{ai:g}", {"fp16": ai * 1e8 * (i + 1)}, {"DRAM": 1e8 * (i + 1)},
                 seconds=ai * 1e8 * (i + 1) / min(400e12, ai * 2.5e12) * 1.6, unit="tensor")
          for i, ai in enumerate((0.5, 2, 8, 30, 120, 300))]
    ks += [Kernel(f"sgemm_{ai:g}", {"fp32": ai * 2e8}, {"DRAM": 2e8},
                  seconds=ai * 2e8 / min(50e12, ai * 2.5e12) * 2.0) for ai in (0.5, 4, 40)]
    # a mixed-precision kernel draws its own weighted ceiling (a dotted line)
    ks.append(Kernel("mixed", {"fp16": 9e9, "fp32": 1e9}, {"DRAM": 1e8}, seconds=1.5e-4,
                     unit="tensor"))
    return ks


def _axes(fig) -> Axes:
    return Axes(tuple(fig.layout.xaxis.range), tuple(fig.layout.yaxis.range))


def _slope_names(fig, axes):
    """(trace index, text, turned corners, angle in radians) of each slope's name, from
    the annotation as plotly draws it: centred on (x, y) (log10 on log axes), shifted by
    (xshift, yshift) pixels, turned textangle degrees clockwise."""
    out = []
    for a in fig.layout.annotations:
        if not (a.name or "").startswith("slope:"):
            continue
        at = axes.px(10 ** a.x, 10 ** a.y)
        center = (at[0] + a.xshift, at[1] + a.yshift)
        angle = math.radians(-a.textangle)
        poly = boxes.turned_corners(center, *slope_name_size(a.text, a.font.size), angle)
        out.append((int(a.name.split(":")[1]), a.text, poly, angle))
    return out


def _lines(fig, axes):
    """(trace index, segment in pixels) of every line drawn."""
    return [(i, axes.px(*p), axes.px(*q)) for i, t in enumerate(fig.data)
            if t.mode and "lines" in t.mode
            for p, q in zip(zip(t.x, t.y, strict=True), list(zip(t.x, t.y, strict=True))[1:],
                            strict=False)]


def _point_names(fig, axes):
    """(text, anchor, box) of every kernel named beside its marker."""
    out = []
    for t in fig.data:
        if not t.mode or "markers" not in t.mode:
            continue
        pos = t.textposition if isinstance(t.textposition, tuple) else [t.textposition] * len(t.x)
        for x, y, s, p in zip(t.x, t.y, t.text, pos, strict=True):
            if s:
                out.append((s, axes.px(x, y), text_box(axes.px(x, y), s, p)))
    return out


def _markers(fig, axes):
    return [marker_box(axes.px(x, y)) for t in fig.data if t.mode and "markers" in t.mode
            for x, y in zip(t.x, t.y, strict=True)]


def _kernel_boxes(fig, axes):
    """Every marker's box and every kernel name's."""
    return _markers(fig, axes) + [box for _, _, box in _point_names(fig, axes)]


def _ceiling_boxes(fig, axes):
    return [line_label_box(axes, x, y, s, t.textposition, t.textfont.size or 11)
            for t in fig.data if t.mode == "lines+text"
            for x, y, s in zip(t.x, t.y, t.text, strict=True) if s]


def _assert_slope_names_clear(fig):
    axes = _axes(fig)
    slopes = [i for i, t in enumerate(fig.data) if t.mode and "lines" in t.mode
              and len(set(t.y)) > 1 and "mixed" not in t.name]
    names = _slope_names(fig, axes)
    assert sorted(i for i, *_ in names) == slopes, "each slope named once"
    others = _kernel_boxes(fig, axes) + _ceiling_boxes(fig, axes)
    segments = _lines(fig, axes)
    for k, (i, text, poly, angle) in enumerate(names):
        # along its line: the trace's own angle on the same axes
        xs, ys = fig.data[i].x, fig.data[i].y
        (x0, y0), (x1, y1) = axes.px(xs[0], ys[0]), axes.px(xs[-1], ys[-1])
        assert angle == pytest.approx(math.atan2(y1 - y0, x1 - x0), abs=1e-9), text
        assert angle == pytest.approx(slope_angle(axes))
        assert all(-1 <= x <= PLOT_PX[0] + 1 and -1 <= y <= PLOT_PX[1] + 1 for x, y in poly)
        for j, _, other, _ in names[k + 1:]:
            assert not boxes.polygons_overlap(poly, other, 0.5), (text, fig.data[j].name)
        for b in others:
            assert not boxes.polygons_overlap(poly, boxes.corners(b), 0.5), (text, b)
        center = tuple(sum(c) / 4 for c in zip(*poly, strict=True))
        w, h = slope_name_size(text)
        frame = (-w / 2, -h / 2, w / 2, h / 2)
        for j, a, b in segments:
            if j != i:
                assert not boxes.hits(boxes.local(a, center, angle),
                                      boxes.local(b, center, angle), frame), \
                    f"{fig.data[j].name} crosses the name {text!r}"
    return [text for _, text, _, _ in names]


def test_demo_slopes_named_along_them_without_overlap():
    from rooflab.report.html import figure

    analysis, profile = _demo()
    texts = _assert_slope_names_clear(figure(analysis, profile))
    assert texts == ["L1 596 GB/s", "L2 234 GB/s", "L3 194 GB/s", "DRAM 37.5 GB/s"]


def test_nominal_ceiling_names_start_clear_of_the_y_axis():
    """The nominal roof has no bandwidth: its flat roofs run from the left edge, and
    their names began on it, against the tick labels "1T", "5", "2"."""
    from rooflab.report.html import figure

    analysis, profile = _demo()
    fig = figure(analysis, profile)
    axes = _axes(fig)
    nominal = [t for t in fig.data if t.name.startswith("nominal ")]
    assert len(nominal) == 4
    at_left = 0
    for t in nominal:
        (box,) = [line_label_box(axes, x, y, s, t.textposition, 11)
                  for x, y, s in zip(t.x, t.y, t.text, strict=True) if s]
        assert 5.0 <= box[0] and box[2] <= PLOT_PX[0]
        at_left += box[0] <= 20.0
        # the line itself still starts at the edge, flat
        assert axes.px(t.x[0], t.y[0])[0] == pytest.approx(0.0) and len(set(t.y)) == 1
    # a name moves along its line only when its left end is taken (fp64's: the slopes
    # cross it there, test_html_ceiling_labels)
    assert at_left >= 3


# a measured H100 roof below its nominal one (two roofs on one chart)
H100_MEASURED = Roof("H100 measured", "measured",
                     compute=(Ceiling(600e12, precision="fp16", unit="tensor",
                                      provenance="measured"),
                              Ceiling(48e12, precision="fp32", unit="vector",
                                      provenance="measured")),
                     memory=(Ceiling(9.5e12, level="L2", provenance="measured"),
                             Ceiling(2.9e12, level="DRAM", provenance="measured")))


def test_gpu_one_roof_and_two_roofs_with_a_mixed_kernel():
    from rooflab.report.html import figure

    h100 = lookup_roof("H100")
    ks = _gpu_kernels()
    assert _assert_slope_names_clear(figure(analyze(h100, ks))) == ["DRAM 3.35 TB/s"]
    measured = H100_MEASURED
    profile = MachineProfile(host={"name": "h100"}, nominal=h100, measured=measured)
    texts = _assert_slope_names_clear(figure(analyze(measured, ks), profile))
    assert texts == ["L2 9.5 TB/s", "DRAM 2.9 TB/s", "DRAM 3.35 TB/s (nominal)"]


def test_two_close_slopes_do_not_share_a_spot():
    """L2 and L3 a factor 1.2 apart: their names at the same spot of each (as plotly's
    scatter text put them) overlap; placed, they do not."""
    axes = Axes((-2.1, 3.0), (8.5, 12.2))
    slopes = [Slope(0, 234e9, 10 ** -2.1, 1.0, "L2 234 GB/s"),
              Slope(1, 194e9, 10 ** -2.1, 1.2, "L3 194 GB/s")]
    lines = [(s.key, [(s.x0, s.bandwidth * s.x0), (s.x1, s.bandwidth * s.x1)])
             for s in slopes]
    angle = slope_angle(axes)
    same = [boxes.turned_corners(axes.px(10 ** -1.0, s.bandwidth * 10 ** -1.0),
                                 *slope_name_size(s.text), angle) for s in slopes]
    assert boxes.polygons_overlap(*same)
    placed = place_slope_names(slopes, axes, lines=lines)
    assert not boxes.polygons_overlap(placed[0].corners, placed[1].corners)
    assert placed[0].offset > 0 > placed[1].offset or placed[0].x != placed[1].x


def test_the_page_turns_the_names_to_its_real_size():
    """The page is as wide as the window: its script re-angles each slope's name on the
    plot's real pixels, and hides it with its slope when the legend does."""
    from rooflab.report.html import html_report

    analysis, profile = _demo()
    page = html_report(analysis, profile)
    end = page.rindex("plotly_afterplot")      # the last: after plotly.js, the page's own
    script = page[end - 1500:end + 100]
    assert "getElementById('roofline')" in script and "textangle" in script
    assert page.count('"name":"slope:') == 4


def test_polygons_overlap_and_turned_corners():
    square = boxes.corners((0, 0, 2, 2))
    # a diamond off the square's corner: their bounding boxes overlap, they do not
    diamond = boxes.turned_corners((3.0, 3.0), 2.0, 2.0, math.pi / 4)
    assert boxes.overlaps((0, 0, 2, 2), (1.58, 1.58, 4.42, 4.42))
    assert not boxes.polygons_overlap(square, diamond)
    assert boxes.polygons_overlap(square, boxes.turned_corners((2.6, 1.0), 2, 2, math.pi / 4))
    assert boxes.local((1.0, 1.0), (0.0, 0.0), math.pi / 4) == pytest.approx((math.sqrt(2), 0))
