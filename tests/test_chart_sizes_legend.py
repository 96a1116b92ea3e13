"""Chart leftovers (F4): what marker sizes say when every file holds one timed kernel, and
a PNG legend placed where it covers no label and no marker (else outside the axes)."""

from __future__ import annotations

import io
import math

import pytest

from rooflab.cli.main import main
from rooflab.model import Ceiling, Kernel, Roof
from rooflab.model.analysis import analyze
from rooflab.report.chart import one_kernel_per_file, plot_roofline, roofline_data
from rooflab.report.chart_layout_size import figure_renderer as _renderer
from rooflab.report.chart_legend import _covers, _legend_obstacles
from rooflab.report.chart_words import SIZES_ALIKE, size_legend
from rooflab.report.marker_size import POINT_SIZE, SIZE_LEGEND

ROOF = Roof("Test GPU", "measured",
            compute=(Ceiling(10e12, precision="fp32", unit="vector", provenance="measured"),),
            memory=(Ceiling(1e12, level="DRAM", provenance="measured"),))


def _file(name: str, seconds: float, index: int) -> Kernel:
    # 1 GFLOP over 0.25 GB: AI 4, as a profiler file's one kernel (meta step/step_index)
    return Kernel(name, {"fp32": 1e9}, {"DRAM": 2.5e8}, seconds,
                  meta={"step": f"output{index}", "step_index": index})


def _legend_texts(display) -> list[str]:
    # an entry over 64 characters is folded onto lines (chart_legend.legend_text, s33 I)
    return [t.get_text().replace("\n", " ") for t in display.ax_.get_legend().get_texts()]


# --- 1. sizes with one timed kernel per file -----------------------------------------
def test_one_kernel_per_file_is_drawn_alike_and_the_legend_says_why():
    # before 4 ms, after 1 ms: each is 100 % of its own file (model/analysis.share_totals)
    before, after = _file("gemm", 4e-3, 0), _file("gemm", 1e-3, 1)
    d = plot_roofline(ROOF, [before, after])
    assert [p.share for p in d.points] == [1.0, 1.0]
    assert [p.size for p in d.points] == [POINT_SIZE, POINT_SIZE] and not d.sized
    assert size_legend(d) == SIZES_ALIKE
    # the old legend had no size entry at all: equal markers read as equal times
    assert SIZES_ALIKE in _legend_texts(d)
    assert not any(t.startswith(SIZE_LEGEND) for t in _legend_texts(d))


def test_the_html_chart_says_the_same():
    pytest.importorskip("plotly")
    from rooflab.report.html import chart_display, figure

    analysis = analyze(ROOF, [_file("gemm", 4e-3, 0), _file("gemm", 1e-3, 1)])
    fig = figure(analysis, display=chart_display(analysis))
    assert [t.name for t in fig.data if t.name == SIZES_ALIKE] == [SIZES_ALIKE]


def test_shares_still_size_one_run_and_a_file_of_two():
    # one run, no files: 4 ms and 1 ms are 80 % and 20 % of 5 ms; 20 x sqrt(.8) = 17.89 pt,
    # 20 x sqrt(.2) = 8.94 pt, and the legend is the share one
    run = [Kernel("a", {"fp32": 1e9}, {"DRAM": 2.5e8}, 4e-3),
           Kernel("b", {"fp32": 1e9}, {"DRAM": 2.5e8}, 1e-3)]
    d = roofline_data(ROOF, run)
    assert [round(p.size, 2) for p in d.points] == [17.89, 8.94]
    assert size_legend(d) == SIZE_LEGEND and not one_kernel_per_file(run)
    # file 1 holds two timed kernels: shares within it say something, so all are sized
    two = [_file("a", 4e-3, 0), _file("b", 3e-3, 1), _file("c", 1e-3, 1)]
    d = roofline_data(ROOF, two)
    # output0: 100 % (20 pt); output1: 75 % and 25 % (17.32 pt, 10 pt)
    assert [round(p.size, 2) for p in d.points] == [20.0, 17.32, 10.0]
    assert size_legend(d) == SIZE_LEGEND


def test_no_size_words_where_nothing_is_sized():
    untimed = [Kernel("a", {"fp32": 1e9}, {"DRAM": 2.5e8})]
    assert size_legend(roofline_data(ROOF, untimed)) == ""
    timed = [Kernel("a", {"fp32": 1e9}, {"DRAM": 2.5e8}, 1e-3)]
    assert size_legend(roofline_data(ROOF, timed, size_by="none")) == ""


def test_plot_help_says_the_rule(capsys):
    assert main(["plot", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.replace("│", " ").split())
    assert "where every file holds one timed kernel" in out
    assert "each is 100 %, so all are drawn alike and the legend says why" in out
    # and where --size-by is described
    assert "one timed kernel per file draws all alike, as the legend says" in out


# --- 2. where the PNG legend goes -----------------------------------------------------
# The demo's chart on a 2-thread EPYC (the measured and nominal roof of its profile, its six
# reference kernels): at the lower right the legend covered gemm_fp64_256's label
# ("0.48% of roof") and its marker's neighbourhood.
EPYC = Roof("EPYC measured", "measured",
            compute=(Ceiling(117.7e9, precision="fp64", unit="vector", provenance="measured"),
                     Ceiling(113.1e9, precision="fp32", unit="vector", provenance="measured")),
            memory=(Ceiling(69.7e9, level="L1", provenance="measured"),
                    Ceiling(208.4e9, level="L2", provenance="measured"),
                    Ceiling(6.716e9, level="L3", provenance="measured"),
                    Ceiling(8.038e9, level="DRAM", provenance="measured")))
EPYC_NOMINAL = Roof("AMD EPYC (Zen 4, 2 cores @ 3.68 GHz)", "nominal",
                    compute=(Ceiling(117.9e9, precision="fp64", unit="vector"),
                             Ceiling(235.8e9, precision="fp32", unit="vector"),
                             Ceiling(471.7e9, precision="bf16", unit="vector"),
                             Ceiling(943.3e9, precision="int8", unit="vector")))
DEMO = [Kernel("triad_fp64", {"fp64": 16777216.0}, {"DRAM": 201326592.0}, 0.0306),
        Kernel("sum_fp64", {"fp64": 8388607.0}, {"DRAM": 67108872.0}, 0.00612),
        Kernel("gemv_fp64", {"fp64": 33554432.0}, {"DRAM": 134283264.0}, 0.0199),
        Kernel("gemm_fp64_256", {"fp64": 33554432.0}, {"DRAM": 1572864.0}, 0.0595),
        Kernel("gemm_fp64_1024", {"fp64": 2147483648.0}, {"DRAM": 25165824.0}, 0.151),
        Kernel("softmax_fp32", {"fp32": 67108864.0}, {"DRAM": 134217728.0}, 0.0367)]


def _drawn(display):
    """The display saved as PNG (the layout settled), with its renderer and obstacles."""
    display.figure_.savefig(io.BytesIO(), format="png")
    renderer = _renderer(display.figure_)
    return renderer, _legend_obstacles(display.ax_, display, renderer)


def test_the_legend_covers_no_label_where_lower_right_did():
    d = plot_roofline([EPYC, EPYC_NOMINAL], DEMO)
    renderer, blocked = _drawn(d)
    legend = d.ax_.get_legend()
    assert not _covers(legend.get_window_extent(renderer), blocked)
    # every kernel label is among the obstacles, as drawn
    labels = [t for t in d.ax_.texts if t.get_text().startswith("gemm_fp64_256")]
    assert len(labels) == 1
    box = labels[0].get_window_extent(renderer)
    assert not legend.get_window_extent(renderer).overlaps(box)
    # the old place, lower right, with the same entries, covered that label
    old = d.ax_.legend(handles=legend.legend_handles,
                       labels=[t.get_text() for t in legend.get_texts()], loc="lower right",
                       fontsize=7)
    assert old.get_window_extent(renderer).overlaps(box)


def _grid() -> list[Kernel]:
    """Nine kernels at AI 0.1, 10, 1000 and three heights: a marker in every corner."""
    out = []
    for i, ai in enumerate((0.1, 10.0, 1000.0)):
        for j, rate in enumerate((1e8, math.sqrt(1e8 * 10 ** 11.5), 10 ** 11.5)):
            out.append(Kernel(f"k{i}{j}", {"fp64": ai * 1e6}, {"DRAM": 1e6}, ai * 1e6 / rate))
    return out


def test_no_free_corner_puts_the_legend_outside_and_widens_the_figure():
    d = plot_roofline(EPYC, _grid())
    renderer, blocked = _drawn(d)
    legend, axes = d.ax_.get_legend(), d.ax_.get_window_extent(renderer)
    box = legend.get_window_extent(renderer)
    assert box.x0 >= axes.x1 and not _covers(box, blocked)
    # the figure grew by the legend's width, so the axes kept the width the label layout
    # assumed (chart_layout.AXES_PT: 550 pt, within the tick labels' play)
    width_in, _ = d.figure_.get_size_inches()
    assert width_in == pytest.approx(9.0 + box.width / d.figure_.dpi + 6 / 72, abs=0.05)
    assert axes.width / d.figure_.dpi * 72 == pytest.approx(550, abs=12)


def test_a_given_axes_is_not_resized():
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.0, 4.0))
    ax = fig.add_subplot()
    plot_roofline(EPYC, _grid(), ax=ax)
    assert tuple(fig.get_size_inches()) == (6.0, 4.0)
