"""The demo chart's ridge labels and the HTML's ceiling names (session 34, helper C item 2).

A CPU probe under load read fp64 / fp32 vector at 6.7 / 6.72 GFLOP/s and DRAM at 5.9 GB/s
(the roofs of tests/test_s33_i_chart_labels.py, `rooflab demo` on 2026-12-03): the two
ridges sit at 6.7 / 5.9 = 1.1356 and 6.72 / 5.9 = 1.1390 FLOP/B, one spot on the chart,
and both were labelled 'AI*=1.14' (and the scalar pair, 87.6 / 5.9 = 0.014847 and
87.5 / 5.9 = 0.014831, twice 'AI*=0.0148'). Now each printed AI is one ridge naming both
ceilings. The HTML named the two vector ceilings apart ('fp32 vector 6.72 GFLOP/s' and
'fp64 vector 6.7 GFLOP/s' on one line) where the PNG writes one label
('fp32 / fp64 vector 6.72 / 6.7 GFLOP/s'): the HTML now writes the PNG's.
"""

from __future__ import annotations

from test_s33_i_chart_labels import _kernels, _roofs

from rooflab.report.chart import roofline_data
from rooflab.units import fmt_ai


def test_each_printed_ridge_once():
    d = roofline_data(list(_roofs()), _kernels())
    measured = [r for r in d.ridges if r.roof == d.roof_labels[0]]
    shown = [f"AI*={fmt_ai(r.ai)}" for r in measured]
    assert sorted(shown) == ["AI*=0.0148", "AI*=1.14"]          # old: each twice
    by_label = {f"AI*={fmt_ai(r.ai)}": r for r in measured}
    # the first kernel (gemm_fp64_256) is judged on fp64 vector: its ridge, named first
    assert by_label["AI*=1.14"].compute == "fp64 / fp32 vector"
    assert by_label["AI*=1.14"].label == "fp64 / fp32 vector / DRAM: AI* = 1.14"
    assert by_label["AI*=1.14"].ai == 6.7e9 / 5.9e9
    assert by_label["AI*=0.0148"].compute == "fp32 / fp64 scalar"


def test_equal_ceilings_keep_one_name():
    from rooflab.report.chart_roofs import joined_names

    assert joined_names("fp64 vector", "fp32 vector") == "fp64 / fp32 vector"
    assert joined_names("fp32 vector", "fp64 tensor") == "fp32 vector / fp64 tensor"
    # equal values (87.5 = 87.5 MFLOP/s): one ridge, its first name only, as before
    d = roofline_data(list(_roofs(scalar32=87.5e6, scalar64=87.5e6)), _kernels())
    scalar = [r for r in d.ridges if r.roof == d.roof_labels[0] and "scalar" in r.compute]
    assert [r.compute for r in scalar] == ["fp32 scalar"]


def test_html_names_ceilings_as_the_png():
    go = __import__("pytest").importorskip("plotly.graph_objects")
    from rooflab.report.html_roofs import roof_line_traces

    d = roofline_data(list(_roofs()), _kernels())
    png = sorted(ln.text.strip() for ln in d.lines
                 if ln.kind == "compute" and ln.roof == d.roof_labels[0] and ln.text.strip())
    texts = [f.text for _, f in roof_line_traces(go, d) if f is not None]
    assert png == ["fp32 / fp64 vector 6.72 / 6.7 GFLOP/s",
                   "fp64 / fp32 scalar 87.6 / 87.5 MFLOP/s"]
    for label in png:                      # old: 'fp32 vector 6.72 GFLOP/s' and
        assert label in texts              # 'fp64 vector 6.7 GFLOP/s', two names
    assert not any(t.startswith(("fp64 vector 6.7", "fp32 vector 6.72")) for t in texts)
    # the other roof keeps its kind after the name
    assert "fp64 vector 144 GFLOP/s (nominal)" in texts
