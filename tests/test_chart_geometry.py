"""One chart geometry for the PNG and the HTML report (review 14b F6).

The HTML report re-derived the roofline geometry (its own slopes, flat roofs, styles and
x range) and drew every compute ceiling of a roof (all ten of an H100 SXM), while the PNG
chart (report/chart.py: roofline_data) draws the kernels' own ceilings plus the top float
one of a roof with more than MAX_CEILINGS and says which it left out. Now the HTML figure
is drawn from the display roofline_data works out; as scikit-learn tests its Displays,
these tests compare the drawn data (trace x/y against the display's lines and points),
not pixels.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from rooflab.hardware.catalog import lookup_roof
from rooflab.hardware.profile import MachineProfile
from rooflab.ingest.kernelfile import load_kernels
from rooflab.model import Ceiling, Kernel, Roof, analyze
from rooflab.report.chart import roofline_data
from rooflab.report.chart_ceilings import MAX_CEILINGS
from rooflab.report.chart_parts import PLOTLY_DASH, ceiling_style

pytest.importorskip("plotly")

SEEDS = Path(__file__).resolve().parents[1] / "examples" / "seeds"

# `rooflab demo`'s profile as one run on a 2-core AMD EPYC measured it (solid: measured
# ceilings and four memory levels) beside the nominal peaks of its catalog entry (dashed,
# no bandwidths), and the six reference kernels at their measured AI and FLOP/s.
EPYC = Roof("AMD EPYC measured (2 threads)", "measured",
            compute=(Ceiling(25.8e9, precision="fp64", unit="vector", provenance="measured"),
                     Ceiling(230e9, precision="fp32", unit="vector", provenance="measured")),
            memory=tuple(Ceiling(v, level=lv, provenance="measured") for lv, v in
                         (("L1", 103e9), ("L2", 234e9), ("L3", 77.5e9), ("DRAM", 16.8e9))))
EPYC_NOMINAL = Roof("AMD EPYC (nominal)", "nominal",
                    compute=(Ceiling(118e9, precision="fp64", unit="vector"),
                             Ceiling(236e9, precision="fp32", unit="vector"),
                             Ceiling(944e9, precision="int8", unit="vector"),
                             Ceiling(472e9, precision="bf16", unit="vector")))
DEMO = (("triad_fp64", "fp64", 0.0833, 1.14e9), ("sum_fp64", "fp64", 0.125, 1.91e9),
        ("gemv_fp64", "fp64", 0.25, 1.24e9), ("gemm_fp64_256", "fp64", 21.3, 62.4e9),
        ("gemm_fp64_1024", "fp64", 85.3, 18.7e9), ("softmax_fp32", "fp32", 0.5, 1.68e9))


def _demo():
    ks = [Kernel(n, {p: ai * 1e8}, {"DRAM": 1e8}, seconds=ai * 1e8 / f)
          for n, p, ai, f in DEMO]
    profile = MachineProfile(host={"name": "epyc"}, nominal=EPYC_NOMINAL, measured=EPYC)
    return analyze(EPYC, ks), profile, [EPYC, EPYC_NOMINAL]


def _h100_seeds():
    h100 = lookup_roof("H100")
    ks = [k for f in ("k.json", "conv.json", "ew.json") for k in load_kernels(str(SEEDS / f))]
    return analyze(h100, ks), None, [h100]


CASES = {"demo profile": _demo, "H100 SXM with the seed kernels": _h100_seeds}


def _figure(case):
    from rooflab.report.html import figure

    analysis, profile, roofs = CASES[case]()
    # the PNG chart's data for the same roofs (judging roof first) and kernels
    display = roofline_data(roofs, analysis.kernels)
    return figure(analysis, profile), display, analysis


def _roof_lines(display):
    return [ln for ln in display.lines if ln.kind in ("memory", "compute")]


def _on_segment(x, y, xs, ys) -> bool:
    """(x, y) on the straight log-log segment (xs[0], ys[0]) - (xs[1], ys[1])."""
    lx = [math.log10(v) for v in xs]
    ly = [math.log10(v) for v in ys]
    t = (math.log10(x) - lx[0]) / (lx[1] - lx[0])
    return -1e-12 <= t <= 1 + 1e-12 and math.isclose(
        math.log10(y), ly[0] + t * (ly[1] - ly[0]), rel_tol=1e-12, abs_tol=1e-12)


@pytest.mark.parametrize("case", CASES)
def test_html_roof_traces_are_the_display_lines(case):
    fig, display, _ = _figure(case)
    lines = _roof_lines(display)
    traces = list(fig.data[:len(lines)])      # the roofs' lines come first, in order
    assert len(lines) > 0
    for t, ln in zip(traces, lines, strict=True):
        kind = next(r.kind for r, label in zip(display.roofs, display.roof_labels,
                                               strict=True) if label == ln.roof)
        assert t.name.startswith(f"{kind} {ln.label}"), (t.name, ln.label)
        # the same ends ...
        assert (t.x[0], t.y[0]) == pytest.approx((ln.xs[0], ln.ys[0]), rel=1e-12)
        assert (t.x[-1], t.y[-1]) == pytest.approx((ln.xs[-1], ln.ys[-1]), rel=1e-12)
        # ... and any vertex between (hover, a name's anchor) on the same line
        for x, y in zip(t.x[1:-1], t.y[1:-1], strict=True):
            assert _on_segment(x, y, ln.xs, ln.ys), (ln.label, x, y)
        # measured solid, nominal dashed, as the PNG
        assert t.line.dash == PLOTLY_DASH[ln.style] == PLOTLY_DASH[ceiling_style(ln.ceiling)]
    # the plot spans the display's limits: flat roofs reach its right edge
    assert [10 ** v for v in fig.layout.xaxis.range] == pytest.approx(display.xlim, rel=1e-12)
    assert [10 ** v for v in fig.layout.yaxis.range] == pytest.approx(display.ylim, rel=1e-12)


@pytest.mark.parametrize("case", CASES)
def test_html_markers_are_the_display_points(case):
    fig, display, analysis = _figure(case)
    drawn = sorted((x, y) for t in fig.data if t.mode == "markers+text"
                   for x, y in zip(t.x, t.y, strict=True))
    assert drawn == sorted((p.ai, p.flop_per_s) for p in display.points)
    assert len(drawn) == len(analysis.points)   # one DRAM point per kernel, all drawn


def test_html_and_png_list_the_same_ceilings_on_an_h100():
    """An H100 SXM has ten compute ceilings, more than MAX_CEILINGS (5): both charts draw
    the seeds' own (gemm_ai190: fp16 tensor 989.5 TFLOP/s; relu/add/mul, elementwise with
    no unit: fp16 vector 134 (model/held_unit); conv: fp32 vector 67) and the top float one
    (fp8 tensor 1979), and the page names the six left out. The old HTML drew all ten."""
    from rooflab.report.html import html_report

    fig, display, analysis = _figure("H100 SXM with the seed kernels")
    assert len(analysis.roof.compute) == 10 > MAX_CEILINGS
    flats = [t.name for t in fig.data if t.mode == "lines+text"]
    assert flats == ["nominal fp32 vector 67 TFLOP/s", "nominal fp16 vector 134 TFLOP/s",
                     "nominal fp16 tensor 990 TFLOP/s", "nominal fp8 tensor 1.98 PFLOP/s"]
    assert flats == [f"nominal {ln.label}" for ln in display.lines if ln.kind == "compute"]
    assert len(display.hidden) == 6
    page = html_report(analysis)
    assert ("left out: NVIDIA H100 SXM (nominal): fp64 vector 34 TFLOP/s, fp64 tensor 67 "
            "TFLOP/s, bf16 vector 134 TFLOP/s, tf32 tensor 494 "
            "TFLOP/s, bf16 tensor 990 TFLOP/s, int8 tensor 1.98 POP/s.") in page


def test_demo_profile_both_roofs_every_ceiling():
    """The demo profile's roofs have 2 and 4 compute ceilings (<= MAX_CEILINGS): both
    charts draw all six, the measured ones solid and the nominal ones dashed, and the page
    leaves nothing out."""
    from rooflab.report.html import html_report

    fig, display, analysis = _figure("demo profile")
    flats = [(t.name, t.line.dash) for t in fig.data if t.mode == "lines+text"]
    assert flats == [("measured fp64 vector 25.8 GFLOP/s", "solid"),
                     ("measured fp32 vector 230 GFLOP/s", "solid"),
                     ("nominal fp64 vector 118 GFLOP/s", "dash"),
                     ("nominal fp32 vector 236 GFLOP/s", "dash"),
                     ("nominal int8 vector 944 GOP/s", "dash"),
                     ("nominal bf16 vector 472 GFLOP/s", "dash")]
    assert display.hidden == ()
    assert "left out" not in html_report(analysis, CASES["demo profile"]()[1])
