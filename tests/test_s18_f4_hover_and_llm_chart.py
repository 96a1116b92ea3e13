"""The HTML hover of an untimed launch-bound point names where it is drawn and why
(review s18 r5 F11), and `rooflab llm -o chart.png` says which op kinds it merged into
one point (F4).

`rooflab llm tinyllama-1.1b --on T4`: rope, 22 calls of 6.9 kFLOP each at T4's 5 us launch
floor, is drawn at FLOP / (22 x 5 us) = 1.38 GFLOP/s, but its hover said 'drawn at its
attainable FLOP/s (predicted) ... attainable: 240 GFLOP/s', 174x above its marker.
"""

from __future__ import annotations

import re

import pytest

from rooflab.hardware.catalog import lookup_roof
from rooflab.model import Kernel, analyze


def _rope():
    # 152 kFLOP and 203 kB over 22 calls (the tinyllama decode step's rope, fp16)
    return Kernel("rope", flop={"fp16": 152e3}, bytes={"DRAM": 203e3}, calls=22)


def test_hover_of_launch_bound_untimed_point_names_its_drawn_rate():
    from rooflab.report.html_hover import hover_text

    roof = lookup_roof("T4")
    assert roof.overhead_s == pytest.approx(5e-6)
    analysis = analyze(roof, [_rope()])
    (p,) = analysis.points
    text = hover_text(p, analysis)
    # 152e3 / (22 x 5e-6 s) = 1.382e9 FLOP/s, where the chart draws it
    assert "drawn at FLOP / (22 call(s) x 5 us launch floor) = 1.38 GFLOP/s" in text
    assert "launch-bound" in text
    assert "drawn at its attainable" not in text
    # the roof's rate is still given, said to be above where the point is drawn
    assert re.search(r"attainable: [\d.]+ GFLOP/s \(binding: DRAM\); the roof at its AI",
                     text)


def test_hover_rate_is_where_the_html_chart_draws_the_marker():
    pytest.importorskip("plotly")
    from rooflab.report.html_figure import figure

    roof = lookup_roof("T4")
    analysis = analyze(roof, [_rope(), Kernel("gemm", flop={"fp16": 2e12},
                                              bytes={"DRAM": 4e9}, calls=1)])
    fig = figure(analysis)
    drawn = [(y, h) for t in fig.data if t.hovertext and not isinstance(t.hovertext, str)
             for y, h in zip(t.y, t.hovertext, strict=True) if h.startswith("<b>rope")]
    assert len(drawn) == 1
    y, hover = drawn[0]
    assert y == pytest.approx(152e3 / (22 * 5e-6), rel=1e-9)
    assert "= 1.38 GFLOP/s (predicted, launch-bound" in hover
    # the gemm, not launch-bound, is drawn at its attainable rate and says so with it
    gemm = [h for t in fig.data if t.hovertext and not isinstance(t.hovertext, str)
            for h in t.hovertext if h.startswith("<b>gemm")]
    assert gemm and "drawn at its attainable FLOP/s, 65 TFLOP/s (predicted)" in gemm[0]


def test_llm_chart_draws_every_decode_kernel(tmp_path, monkeypatch):
    """`rooflab llm tinyllama-1.1b --on T4 -o llm.png` drew one point per op kind: 6 of
    the decode step's 15 kernels; q/o/up/down_proj and lm_head unnamed under gate_proj's
    label, the launch-bound k_proj/v_proj (a point of their own) gone, and no footnote
    for the no-FLOP embedding. Now every kernel, as `rooflab plot` of the study draws it."""
    from rooflab.cli.main import main
    from rooflab.report import chart

    seen = {}
    real = chart.plot_roofline

    def spy(roofs, kernels=(), **kw):
        seen["names"] = [k.name for k in kernels]
        seen["display"] = d = real(roofs, kernels, **kw)
        return d

    monkeypatch.setattr(chart, "plot_roofline", spy)
    assert main(["llm", "tinyllama-1.1b", "--on", "T4", "-o", str(tmp_path / "c.png"),
                 "--json"]) == 0
    linear = {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj",
              "lm_head"}
    assert linear | {"embedding", "attention", "rope", "norm", "final_norm",
                     "act_mul", "residual_add"} <= set(seen["names"])
    d = seen["display"]
    at = {p.kernel: p.flop_per_s for p in d.points}
    assert linear <= set(at)
    # T4: DRAM 320 GB/s; q_proj at AI 0.999 reaches 320 GFLOP/s at its roof; k_proj (2048 x
    # 256 x 2 FLOP per layer, 22 layers, 23.1 MFLOP) is held to FLOP / (22 x 5 us) = 210 G
    assert at["q_proj"] == pytest.approx(320e9, rel=0.01)
    assert at["k_proj"] == pytest.approx(22 * 2048 * 256 * 2 / (22 * 5e-6), rel=0.01)
    assert any("embedding" in n and "no FLOP" in n for n in d.notes)
