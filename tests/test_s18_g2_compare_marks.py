"""Review s18 r5 F5 (compare chart): (a) a short before -> after arrow kept its length and
was drawn over both markers, its head covering the "before" marker; (b) a point ringed
above its roof went unnamed when it was not among the 20 longest kernels."""

from __future__ import annotations

from rooflab.hardware.catalog import lookup_roof
from rooflab.model import Kernel
from rooflab.report.chart import roofline_data
from rooflab.report.chart_marks import ARROW_HEAD_FRACTION, arrow_fit


def test_a_short_arrow_stops_at_both_markers_edges_with_a_head_that_fits():
    # two 8 pt markers (radius 4 + 1 edge) 13 pt apart: 3 pt between their edges
    fit = arrow_fit((100.0, 100.0), (100.0, 113.0), 5.0, 5.0)
    assert (fit.shrink_a, fit.shrink_b) == (5.0, 5.0)       # old: 3.25 pt, into the markers
    head = ARROW_HEAD_FRACTION * fit.scale
    assert head <= 13.0 - 10.0                                 # old: a 4 pt head in 3 pt
    # a long arrow: the usual head, under the markers
    long = arrow_fit((0.0, 0.0), (0.0, 100.0), 5.0, 5.0)
    assert long.scale == 10.0 and long.zorder < 4
    # markers overlapping (6 pt apart): no head fits; drawn under the markers
    under = arrow_fit((0.0, 0.0), (0.0, 6.0), 5.0, 5.0)
    assert under.zorder < 4


def test_the_drawn_arrow_uses_the_fit():
    import matplotlib
    matplotlib.use("Agg")
    from rooflab.report.chart import plot_roofline

    h100 = lookup_roof("H100")
    before = Kernel("reduce", {"fp32": 1e9}, {"DRAM": 1.4e9}, seconds=1e-2)
    after = Kernel("reduce", {"fp32": 1e9}, {"DRAM": 1.4e9}, seconds=2.5e-3)
    display = plot_roofline([h100], [before, after], arrows=[(before, after)])
    arrows = [a for a in display.figure_.axes[0].texts
              if getattr(a, "arrow_patch", None) is not None and a.get_text() == ""]
    assert len(arrows) == 1
    patch = arrows[0].arrow_patch
    # the before kernel (80 % of the time) is drawn larger: its arrow starts at its edge
    sizes = {p.kernel_index: p.size for p in display.points}
    assert sizes[0] > sizes[1]
    assert abs(patch.shrinkA - (sizes[0] / 2 + 1.0)) < 1e-9     # old: min(5, length / 4)
    assert abs(patch.shrinkB - (sizes[1] / 2 + 1.0)) < 1e-9


def test_a_point_above_its_roof_is_labelled_when_not_among_the_longest():
    from rooflab.report.chart_layout_texts import above_labelled
    from rooflab.report.chart_point_labels import _longest_labelled

    h100 = lookup_roof("H100")
    # 67 TFLOP/s fp32 vector: "fast" runs at 80 TFLOP/s (120 %) but is the shortest
    ks = [Kernel(f"k{i}", {"fp32": 1e12}, {"DRAM": 1e10}, seconds=1.0 + i) for i in range(3)]
    ks.append(Kernel("fast", {"fp32": 80e12 * 1e-3}, {"DRAM": 80e12 * 1e-3 / 200},
                     seconds=1e-3))
    full = list(roofline_data([h100], ks, labels=0).points)
    texts, left, note = _longest_labelled(full, ks, 2)
    assert not any(p.text for p in texts if p.kernel == "fast") and left == 2
    out, left, note = above_labelled(full, texts, left, note, 2)
    fast = [p for p in out if p.kernel == "fast"]
    assert fast[0].text.startswith("fast") and fast[0].percent_of_roof > 119
    assert left == 1 and "1 more above their roof" in note
