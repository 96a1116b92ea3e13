"""The launch cap on the roofline charts (seed 000 §6.2 "误判二", §7: draw the latency-bound
region): `calls` launches take at least calls x t0 (the roof's launch/dispatch floor), so a
kernel of F FLOP cannot pass F / (calls x t0) at any AI. The charts draw that cap as a
short dash over the kernel's point where it is at most 2x the point's own height (review
18c F4: weighed against the roof, a lid floated decades above or below its marker).

Hand numbers on a hand roof: fp64 1 TFLOP/s, DRAM 100 GB/s (ridge 10 FLOP/B), t0 = 1 µs.
  tiny: F = 1 MFLOP over 10 calls, 1 MB (AI 1), 15 us: the point at 1e6 / 1.5e-5 =
        66.7 GFLOP/s; cap 1e6 / (10 x 1e-6) = 1e11 FLOP/s = 1.5x the point <= 2x: drawn.
  big:  F = 10 GFLOP over 10 calls, 10 GB (AI 1), 0.2 s: the point at 50 GFLOP/s; cap
        1e10 / 1e-5 = 1e15 FLOP/s = 20,000,000x the point: not drawn.
  edge: tiny in 20 us: the point at 50 GFLOP/s, the cap exactly 2x: drawn; 22 us: 2.2x, not.
"""

from __future__ import annotations

import math
import re
from dataclasses import replace

import pytest

from rooflab.model import Ceiling, Kernel, Roof, analyze
from rooflab.report.chart import plot_roofline, roofline_data
from rooflab.report.chart_layout import _to_pt, cap_box, layout_labels
from rooflab.report.chart_layout_cost import _box, _overlap
from rooflab.report.chart_parts import (
    CAP_LEGEND,
    LEVEL_COLORS,
    MEMORY_BOUND_COLOR,
    DrawnPoint,
    LaunchCap,
    launch_cap,
)
from rooflab.report.html import figure, html_report

ROOF = Roof("hand", "measured",
            compute=(Ceiling(1e12, "fp64", provenance="measured"),),
            memory=(Ceiling(1e11, level="DRAM", provenance="measured"),),
            overhead_s=1e-6, overhead_source="measured: empty launch")
HOVER = "launch cap 100 GFLOP/s = 1 MFLOP / (10 calls × 1 us)"


def _tiny(name="tiny", flop=1e6, seconds=1.5e-5):
    # 15 us for 10 calls of a 1 us floor: launch-held, within 2x of the cap; AI 1 FLOP/B
    return Kernel(name, {"fp64": flop}, {"DRAM": flop}, seconds=seconds, calls=10)


def _big():
    return Kernel("big", {"fp64": 1e10}, {"DRAM": 1e10}, seconds=0.2, calls=10)


def test_the_value_by_hand():
    cap = launch_cap("tiny", "DRAM", ai=1.0, flop=1e6, calls=10, overhead_s=1e-6,
                     attainable_flop_per_s=1e11, color=MEMORY_BOUND_COLOR)
    assert cap.flop_per_s == pytest.approx(1e11, rel=1e-12)
    assert cap.words() == HOVER
    # a dash 0.12 decade either side of AI 1
    assert [math.log10(x) for x in cap.xs] == pytest.approx([-0.12, 0.12], abs=1e-12)
    assert cap.color == MEMORY_BOUND_COLOR


def test_the_chart_draws_it_over_the_tiny_kernel_only():
    d = roofline_data([ROOF], [_tiny(), _big()])
    (cap,) = d.caps
    assert (cap.kernel, cap.level, cap.calls) == ("tiny", "DRAM", 10)
    assert cap.flop_per_s == pytest.approx(1e11, rel=1e-12)
    assert cap.ai == pytest.approx(1.0)
    # in the point's colour: AI 1 is left of the ridge (10), memory-bound blue
    (p,) = [p for p in d.points if p.kernel == "tiny"]
    assert cap.color == p.color == MEMORY_BOUND_COLOR


@pytest.mark.parametrize(("seconds", "drawn"), [(2e-5, True), (2.2e-5, False)])
def test_the_2x_rule_at_its_edge(seconds, drawn):
    # cap 1e11 against 2 x the point's 1e6 / seconds: 2x at 20 us, 2.2x at 22 us
    d = roofline_data([ROOF], [_tiny(seconds=seconds)])
    assert bool(d.caps) is drawn


def test_no_cap_without_a_launch_floor():
    assert roofline_data([replace(ROOF, overhead_s=None)], [_tiny()]).caps == ()
    assert launch_cap("k", "DRAM", 1.0, 1e6, 10, None, 1e11) is None
    assert launch_cap("k", "DRAM", 1.0, 1e6, 10, 0.0, 1e11) is None   # a zero floor: no cap
    assert launch_cap("k", "DRAM", 1.0, 0.0, 10, 1e-6, 1e11) is None   # no FLOP: off the axes


def test_the_dash_is_an_obstacle_for_labels():
    # A point at AI 1, 1 TFLOP/s on 6 x 6 decades; its label's first spot (below-right)
    # runs from 7 pt right of it, 8 pt down. A cap dash (another kernel's) at AI 2.2,
    # 600 GFLOP/s lies inside that spot: the label must go elsewhere, clear of the dash.
    xlim, ylim = (0.01, 1e4), (1e9, 1e15)
    p = DrawnPoint(kernel="k", level="DRAM", ai=1.0, flop_per_s=1e12, color="#0072B2",
                   text="k\nAI 1 · 1 TFLOP/s")
    cap = LaunchCap("other", "DRAM", 2.2, 6e11, 10, 1e-6, 6e6, "#0072B2")
    pt = lambda x, y: _to_pt(x, y, xlim, ylim)  # noqa: E731

    def label_box(q):
        return _box(pt(q.ai, q.flop_per_s), q.label_offset, q.label_ha, q.label_va, q.text)

    (_, _, (free,)) = layout_labels([], [], [p], xlim, ylim, ())
    assert free.label_offset == (7.0, -8.0)
    assert _overlap(label_box(free), cap_box(cap, pt)) > 0      # where it would have gone
    (_, _, (moved,)) = layout_labels([], [], [p], xlim, ylim, (), caps=[cap])
    assert moved.label_offset != (7.0, -8.0)
    assert _overlap(label_box(moved), cap_box(cap, pt)) == 0


def test_png_draws_the_dash_and_its_legend_entry():
    d = plot_roofline([ROOF], [_tiny(), _big()])
    (art,) = [a for a in d.ax_.lines if (a.get_gid() or "").startswith("launch-cap:")]
    assert art.get_gid() == "launch-cap:tiny"
    xs, ys = art.get_xdata(), art.get_ydata()
    assert [math.log10(x) for x in xs] == pytest.approx([-0.12, -0.12, 0.12, 0.12])
    assert ys[1] == ys[2] == pytest.approx(1e11)
    assert ys[0] == ys[3] < 1e11                    # ticks down at both ends: a lid
    assert art.get_color() == MEMORY_BOUND_COLOR
    texts = [t.get_text() for t in d.ax_.get_legend().get_texts()]
    assert texts.count(CAP_LEGEND) == 1
    from rooflab.report.chart import figure_bytes
    assert figure_bytes(d, "svg").count(b"launch-cap:tiny") == 1


def test_png_has_no_dash_or_entry_for_a_big_kernel():
    d = plot_roofline([ROOF], [_big()])
    assert not [a for a in d.ax_.lines if (a.get_gid() or "").startswith("launch-cap")]
    assert CAP_LEGEND not in [t.get_text() for t in d.ax_.get_legend().get_texts()]


def test_html_trace_with_the_numbers_on_hover():
    pytest.importorskip("plotly", reason="an HTML report needs plotly (the [html] extra)")
    fig = figure(analyze(ROOF, [_tiny(), _big()]))
    (t,) = [t for t in fig.data if t.name == CAP_LEGEND]
    assert t.showlegend and t.legendgroup == "launch-cap"
    assert HOVER in t.hovertext
    assert t.y[1] == t.y[2] == pytest.approx(1e11) and t.y[0] < 1e11
    assert [math.log10(x) for x in t.x] == pytest.approx([-0.12, -0.12, 0.12, 0.12])
    assert t.line.color == LEVEL_COLORS["DRAM"]
    # plotly's JSON escapes '/' as \u002f, and with orjson installed '×' as \u00d7 too
    page = re.sub(r"\\u([0-9a-fA-F]{4})", lambda m: chr(int(m.group(1), 16)),
                  html_report(analyze(ROOF, [_tiny()])))
    assert HOVER in page
    assert CAP_LEGEND in page


def test_html_one_legend_entry_for_several_caps_and_none_without_a_floor():
    pytest.importorskip("plotly", reason="an HTML report needs plotly (the [html] extra)")
    fig = figure(analyze(ROOF, [_tiny("a"), _tiny("b", flop=1.5e6)]))
    caps = [t for t in fig.data if t.name == CAP_LEGEND]
    assert len(caps) == 2 and [t.showlegend for t in caps] == [True, False]
    fig = figure(analyze(replace(ROOF, overhead_s=None), [_tiny()]))
    assert not [t for t in fig.data if t.name == CAP_LEGEND]


def test_no_cap_for_a_time_below_calls_x_floor():
    # 1000 calls in 1 ms on a 5 us floor: the time (GPU-side) holds none of the 5 ms of
    # launches, so no cap binds it (review 10, finding 3); 6 ms would hold them
    from rooflab.report.chart_parts import launch_cap
    args = ("k", "DRAM", 10.0, 1e9, 1000, 5e-6, 1e12)
    assert launch_cap(*args, seconds=1e-3) is None
    assert launch_cap(*args, seconds=6e-3).flop_per_s == pytest.approx(1e9 / 5e-3)
