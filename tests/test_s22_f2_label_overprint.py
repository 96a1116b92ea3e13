"""Review s22 r6 F6: labels printed over each other on the CPU bench chart.

The label layout works in a model of the axes, AXES_PT (550 x 378 pt); four footnote lines
under the x axis left the drawn axes 315 pt tall, so labels laid out a line apart printed
on each other. chart_layout_size.fit_axes_height heightens the figure to keep the axes
at the model's height. And a point's label over a ceiling's label is left out, as one over
another point's label is (chart_layout_points._drop_overprinted).
"""

from __future__ import annotations

import pytest

from rooflab.report.chart_layout_cost import AXES_PT


def _figure(lines: int):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(9.0, 6.0), layout="constrained")   # as chart_draw's own figure
    ax = fig.add_subplot()
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(0.01, 1000)
    ax.set_ylim(1e9, 1e15)
    ax.set_title("Roofline: AMD EPYC measured (2 threads)")
    ax.set_ylabel("performance (FLOP/s)")
    ax.set_xlabel("\n".join(["arithmetic intensity (FLOP/byte)"]
                            + ["a footnote line under the axis"] * (lines - 1)))
    return fig, ax


def _axes_pt(fig, ax) -> float:
    return ax.get_position().height * fig.get_size_inches()[1] * 72


def test_footnote_lines_keep_the_axes_at_the_layouts_height():
    from rooflab.report.chart_layout_size import fit_axes_height, settle

    fig, ax = _figure(5)
    settle(fig)
    assert _axes_pt(fig, ax) < AXES_PT[1] - 40       # 326 pt: labels 14 % closer than laid
    added = fit_axes_height(fig, ax)
    assert added == pytest.approx((AXES_PT[1] - 326.3) / 72, abs=0.03)   # about 0.72 in
    assert fig.get_size_inches()[0] == 9.0 and fig.get_size_inches()[1] > 6.6
    assert _axes_pt(fig, ax) == pytest.approx(AXES_PT[1], abs=3.0)


def test_a_chart_without_footnotes_keeps_its_size():
    from rooflab.report.chart_layout_size import fit_axes_height

    fig, ax = _figure(1)
    assert fit_axes_height(fig, ax) == 0.0
    assert tuple(fig.get_size_inches()) == (9.0, 6.0)
    assert _axes_pt(fig, ax) == pytest.approx(AXES_PT[1], abs=3.0)


def test_a_point_label_on_a_ceiling_label_is_left_out():
    """Two labelled points; the first one's label box (7 pt right of it, 8 pt down, 16
    characters: 68.8 x 8.6 pt) overlaps a ceiling label's box placed before it; the other
    one's does not. The first loses its label, the second keeps it."""
    from rooflab.report.chart_layout_points import _drop_overprinted
    from rooflab.report.chart_parts import DrawnPoint

    pt = lambda x, y: (x, y)  # noqa: E731  (the points already in points)
    a = DrawnPoint("a", "DRAM", 100.0, 200.0, "C0", text="gemm_fp32_1024 7", share=0.5)
    b = DrawnPoint("b", "DRAM", 300.0, 100.0, "C0", text="conv2d_fp32 · 2%", share=0.1)
    wall = (120.0, 185.0, 220.0, 195.0)    # a's label box: 107-175.8 x 183.4-192
    out = _drop_overprinted([a, b], pt, [wall])
    assert [p.text for p in out] == ["", "conv2d_fp32 · 2%"]
    assert [p.text for p in _drop_overprinted([a, b], pt)] == [a.text, b.text]
