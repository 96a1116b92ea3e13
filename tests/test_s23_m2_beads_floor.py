"""clear_beads keeps at least one bead on each later roof's line (review s23 h2 F9: on
`llm ... --compare H200,A100` the H200 fp8 ceiling lost every bead, so the line no
longer said whose it was)."""

from __future__ import annotations

import pytest

pytest.importorskip("matplotlib")


def _axes_with_text():
    from matplotlib.figure import Figure

    from rooflab.report.chart_layout_size import figure_renderer

    fig = Figure(figsize=(6, 4), dpi=100)
    ax = fig.add_subplot()
    ax.set_xlim(0, 10)
    ax.set_ylim(0, 10)
    text = ax.text(5, 5, "fp8 tensor 1.98 PFLOP/s", ha="center", va="center", fontsize=14)
    box = text.get_window_extent(figure_renderer(fig))
    return fig, ax, box


def test_every_bead_on_a_text_keeps_the_farthest_one():
    from rooflab.report.chart_beads import clear_beads

    fig, ax, box = _axes_with_text()
    px = fig.dpi / 72
    # the text's middle, then 1 pt and 2 pt right of its box: all three within
    # BEAD_CLEAR_PT (3 pt) of it, the last the farthest
    at = [(box.x0 + box.width / 2, box.y0 + box.height / 2),
          (box.x1 + 1 * px, box.y0 + box.height / 2),
          (box.x1 + 2 * px, box.y0 + box.height / 2)]
    data = ax.transData.inverted().transform(at)
    row = ax.plot(data[:, 0], data[:, 1], "x", gid="roof-beads:H200")[0]
    assert clear_beads(ax) == 2          # old: 3, the line left bare
    assert list(row.get_xdata()) == pytest.approx([data[2, 0]])


def test_beads_clear_of_texts_all_stay_and_those_on_them_go():
    from rooflab.report.chart_beads import clear_beads

    fig, ax, box = _axes_with_text()
    data = ax.transData.inverted().transform([(box.x0 + box.width / 2, box.y0 + box.height / 2)])
    row = ax.plot([data[0, 0], 1.0, 9.0], [data[0, 1], 1.0, 9.0], "x",
                  gid="roof-beads:A100")[0]
    assert clear_beads(ax) == 1
    assert list(row.get_xdata()) == [1.0, 9.0]
