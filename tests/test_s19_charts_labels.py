"""Chart labels clear of the ridge diamonds and of each other (s19 f4 items 2 and 4).

HTML: on H100 (fp16 tensor 990 TFLOP/s, fp8 tensor 1.98 PFLOP/s, DRAM 3.35 TB/s) the fp8
line runs from its ridge (1.98e15 / 3.35e12 = 591 FLOP/B) to the plot's edge, shorter than
'fp8 tensor 1.98 PFLOP/s', so the name covered the 591 diamond; it now goes in two rows.
PNG: a crowded chart of two roofs with three compute ceilings each, within 2x (measured
85/120/160, nominal 100/140/190 TFLOP/s): 'fp64 vector 85 TFLOP/s', slid left from the
right edge by points, overlapped 'fp64 vector 100 TFLOP/s' on the drawn axes although
the layout's model had them 1.7 pt apart; slid labels now sit at a point on their line.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import rooflab
from rooflab.model import Ceiling, Roof, analyze

SEEDS = Path(__file__).resolve().parents[1] / "examples" / "seeds"


def test_html_fp8_name_clear_of_the_ridge_diamonds():
    pytest.importorskip("plotly")
    from rooflab.report.html_figure import chart_display, figure
    from rooflab.report.html_labels import Axes, overlap
    from rooflab.report.html_marks import ridge_marks
    from rooflab.report.html_roofs import line_label_boxes

    analysis = analyze(rooflab.load_roof("H100 SXM"),
                       rooflab.load_kernels(SEEDS / "pts.json"))
    display = chart_display(analysis, None)
    assert sorted(round(r.ai) for r in display.ridges) == [295, 591]   # P / B
    axes = Axes(tuple(math.log10(x) for x in display.xlim),
                tuple(math.log10(y) for y in display.ylim))
    fig = figure(analysis, None)
    traces = [t for t in fig.data if t.mode == "lines+text" and isinstance(t.textposition, str)]
    names = [(text, box) for t in traces
             for text, box in zip([x for x in t.text if x], line_label_boxes([t], axes),
                                  strict=True)]
    assert {text for text, _ in names} == {"fp16 tensor 990 TFLOP/s",
                                           "fp8 tensor<br>1.98 PFLOP/s"}
    for text, box in names:
        for diamond in ridge_marks(display, axes):
            assert not overlap(box, diamond), text
    assert not overlap(names[0][1], names[1][1])


def _c(p, u, v, prov):
    return Ceiling(v, precision=p, unit=u, provenance=prov)


MEASURED = Roof("box measured", "measured",
                compute=(_c("fp64", "vector", 85e12, "measured"),
                         _c("fp32", "vector", 120e12, "measured"),
                         _c("fp16", "tensor", 160e12, "measured")),
                memory=(Ceiling(1.7e12, level="DRAM", provenance="measured"),
                        Ceiling(6e12, level="L2", provenance="measured")))
NOMINAL = Roof("box", "nominal",
               compute=(_c("fp64", "vector", 100e12, "nominal"),
                        _c("fp32", "vector", 140e12, "nominal"),
                        _c("fp16", "tensor", 190e12, "nominal")),
               memory=(Ceiling(2e12, level="DRAM"),))
def test_png_crowded_ceiling_labels_do_not_overlap():
    pytest.importorskip("matplotlib")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.text import Text

    d = rooflab.plot_roofline([MEASURED, NOMINAL], rooflab.load_kernels(SEEDS / "pts.json"),
                              precisions="all")
    canvas = FigureCanvasAgg(d.figure_)
    canvas.draw()
    renderer = canvas.get_renderer()
    ceilings = {ln.text for ln in d.lines if ln.kind == "compute" and ln.text}
    flats = [(t.get_text(), Text.get_window_extent(t, renderer)) for t in d.ax_.texts
             if t.get_text() in ceilings]
    assert len(flats) == 6
    for i, (a, box) in enumerate(flats):
        for b, other in flats[i + 1:]:
            assert not box.overlaps(other), (a, b, box, other)
    # a label slid along its line is anchored on the line, not offset sideways from an end
    for ln in d.lines:
        if ln.kind == "compute" and ln.text:
            assert ln.label_offset[0] == 0.0, ln.text
            assert ln.xs[0] <= ln.label_xy[0] <= ln.xs[-1]
