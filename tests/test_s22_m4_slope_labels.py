"""Review s22 h2 F3 (mender m4): slopes that print as one line share one label, and a
slope label's model box is as tall as its drawn text."""

from __future__ import annotations

import math

from rooflab.model.ceiling import Ceiling, Roof
from rooflab.model.kernel import Kernel
from rooflab.report.chart import roofline_data
from rooflab.report.chart_layout import NO_LABEL, shared_slopes
from rooflab.report.chart_layout_cost import AXES_PT
from rooflab.report.chart_layout_roofs import _slope_boxes


def _bench_roof() -> Roof:
    # the bandwidths of /tmp/r6/s22/bench.json (a 2-thread EPYC probed under load): L1,
    # L3 and DRAM within 7 % of each other, 2 pt apart on the chart
    mem = {"L1": 8.99e9, "L2": 159e9, "L3": 8.4e9, "DRAM": 8.82e9}
    return Roof(name="bench", kind="measured",
                compute=(Ceiling(186e9, precision="fp32", unit="vector"),
                         Ceiling(3.73e9, precision="fp64", unit="vector")),
                memory=tuple(Ceiling(v, level=k) for k, v in mem.items()))


def _display():
    k = Kernel(name="dot_fp64", flop={"fp64": 2e8}, bytes={"DRAM": 1.6e9}, seconds=0.5)
    return roofline_data([_bench_roof()], [k])


def test_near_equal_slopes_share_one_label():
    """L1 8.99, DRAM 8.82 and L3 8.4 GB/s: one label on the fastest names all three, top
    down; the other two write none (their labels printed over each other, struck by the
    other slopes); L2 159 GB/s keeps its own."""
    d = _display()
    mem = {ln.label.split()[0]: ln for ln in d.lines if ln.kind == "memory"}
    assert set(mem) == {"L1", "L2", "L3", "DRAM"}
    assert mem["L1"].text == "L1 8.99 GB/s, DRAM 8.82 GB/s, L3 8.4 GB/s"
    assert mem["L1"].label_xy is not None
    assert mem["DRAM"].label_va == NO_LABEL and mem["L3"].label_va == NO_LABEL
    assert mem["L2"].text == "L2 159 GB/s" and mem["L2"].label_va != NO_LABEL


def test_shared_slopes_by_distance_on_the_axes():
    """The grouping by points up the axes: 8.99 / 8.4 GB/s is 0.0295 decades, 2.0 pt at
    67.5 pt a decade (the bench chart's 5.6 decades), in one group; 13.7 / 8.99 is 12.4
    pt, apart."""
    d = _display()
    ylim = (1e6, 1e6 * 10 ** (AXES_PT[1] / 67.5))
    lines = [ln for ln in d.lines if ln.kind == "memory"]
    groups = shared_slopes(lines, ylim)
    by = {ln.label.split()[0]: i for i, ln in enumerate(lines)}
    assert groups[by["L1"]] == [by["L1"], by["DRAM"], by["L3"]]
    assert by["L2"] not in groups
    assert math.log10(8.99 / 8.4) * 67.5 < 3.0 < math.log10(13.7 / 8.99) * 67.5


def test_slope_label_box_is_as_tall_as_the_drawn_text():
    """chart_draw writes a slope label in 7-pt text 3 pt off its line: the model's boxes
    must reach as far across the line as the drawn text does (they took 1.5-8.5 pt, the
    text reaches ~11 pt: a slope 9.6 pt away, DRAM (real traffic) 13.7 GB/s over L1 8.99
    GB/s on the bench chart, struck "L1* 8.99 GB/s" through where the model saw room)."""
    import pytest

    pytest.importorskip("matplotlib")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(dpi=72)
    text = fig.text(0.1, 0.1, " L1 8.99 GB/s", fontsize=7, va="bottom")
    tall = text.get_window_extent(FigureCanvasAgg(fig).get_renderer()).height   # points
    assert 6.5 < tall < 9.0   # 7.0 pt (DejaVu Sans, ascent + descent)
    angle = math.radians(40.0)
    n = (-math.sin(angle), math.cos(angle))
    for box in _slope_boxes((100.0, 100.0), " L1 8.99 GB/s", angle, 1):
        mid = ((box[0] + box[2]) / 2 - 100.0, (box[1] + box[3]) / 2 - 100.0)
        across, r = mid[0] * n[0] + mid[1] * n[1], (box[2] - box[0]) / 2
        assert across - r <= 3.0 + 0.01 and across + r >= 3.0 + tall - 0.5
