"""Numbers beside the line that classed them keep their side in the report's Markdown,
terminal and HTML hover, units.fmt_pct and the advice (review s22 r4 F3); the report's
kernel table lists the longest kernel first (F10); the gain column says what its percent is
of; the Markdown chart line's alt text reads as the HTML's.

The kernels are review r4's edge.json on its toy roof: fp64 1 TFLOP/s over DRAM 100 GB/s,
ridge AI 10 FLOP/B.
"""

from __future__ import annotations

import html
import re

import pytest

from rooflab.model import Ceiling, Kernel, Roof, analyze

TOY = Roof("toy", "nominal", compute=(Ceiling(1e12, precision="fp64", unit="vector"),),
           memory=(Ceiling(100e9, level="DRAM"),))


def _k(name: str, dram: float, seconds: float | None, **kw) -> Kernel:
    return Kernel(name, {"fp64": 1e10}, {"DRAM": dram}, seconds=seconds, **kw)


# AI 1e10 / 1.00040016e9 = 9.996 under the ridge 10: memory-bound, at its roof
RIDGE_MINUS = _k("ridge_minus", 1000400160.0640255, 0.01000800480256128)
# AI 100: 1e10 FLOP in 0.100040016 s = 99.96 GFLOP/s = 9.996 % of 1 TFLOP/s (< 10 %: latency)
P9_996 = _k("p9_996", 1e8, 0.10004001600640255)
# 1e10 FLOP in 20.02 ms = 499.5 GFLOP/s = 49.95 %: headroom 1 / 0.4995 = 2.002 (> 2x, flagged)
P49_95 = _k("p49_95", 1e8, 0.02002002002002002)
EDGE = [RIDGE_MINUS, P49_95, P9_996]


def _md(kernels=EDGE, **kw) -> str:
    from rooflab.report.markdown import markdown_report

    return markdown_report(analyze(TOY, kernels), **kw)


def _row(md: str, name: str, table_head: str) -> list[str]:
    part = md.split(table_head, 1)[1]
    line = next(x for x in part.splitlines() if x.startswith(f"| {name} |")
                or re.match(rf"\| \d+ \| {name} \|", x))
    return [c.strip() for c in line.strip("|").split("|")]


def test_units_and_advice_percent_keep_the_latency_side():
    from rooflab.model.advice_core import pct
    from rooflab.units import fmt_pct

    assert fmt_pct(9.996) == "9.996 %"            # was '10%' for a latency-bound point
    assert fmt_pct(49.95, space=True) == "49.95 %"
    assert fmt_pct(10.004) == "10.004 %" and fmt_pct(37.4) == "37 %" and fmt_pct(0.07) == "0.07 %"
    assert pct(0.09996) == "9.996 %"


def test_markdown_tables_keep_ai_percent_and_headroom_off_their_lines():
    md = _md()
    kernels = "| kernel | precision | level | AI (FLOP/B) |"
    assert _row(md, "ridge_minus", kernels)[3] == "9.996"    # was '10' beside ridge 10
    assert _row(md, "p9_996", kernels)[6] == "9.996 %"       # was '10 %', latency-bound
    assert _row(md, "p9_996", kernels)[7] == "latency"
    top = "| # | kernel | bound |"
    assert _row(md, "p49_95", top)[4] == "2.002x (>2x)"      # was '2.00x (>2x)'


def test_along_slope_does_not_say_one_x_beside_the_ridge():
    md = _md(top=3)
    # ridge 10 / AI 9.996 = 1.0004: '1x left', 'up to 1x more' read as no distance at all
    assert "AI 9.996 is 1.0004x left of the ridge 10" in md
    assert "up to 1.0004x more attainable FLOP/s" in md
    assert "**along slope** (1.0004x)" in md
    assert "up to 1x more" not in md


def test_markdown_kernel_table_lists_the_longest_first():
    md = _md(kernels=[*EDGE, _k("notime", 1e8, None), _k("short", 1e8, 0.011)])
    table = md.split("## Kernels on the roof", 1)[1].split("\n\n")[1]
    names = [line.split("|")[1].strip() for line in table.splitlines()[2:]]
    # 100 ms, 20 ms, 11 ms, 10 ms, then the untimed one (rooflab ncu's order)
    assert names == ["p9_996", "p49_95", "short", "ridge_minus", "notime"]


def test_html_hover_keeps_ai_and_percent_apart_from_the_lines():
    from rooflab.report.html_hover import hover_text

    a = analyze(TOY, EDGE)
    by_name = {p.kernel: hover_text(p, a) for p in a.points}
    assert "AI: 9.996 FLOP/B (ridge 10)" in by_name["ridge_minus"]
    assert "% of roof: 9.996 %" in by_name["p9_996"]


def test_gain_header_says_own_file_for_several_profiler_files():
    from rooflab.model.diagnose import diagnose
    from rooflab.report.markdown import priority_headers

    files = [_k("a", 1e8, 0.02, meta={"step_index": 0}),
             _k("b", 1e8, 0.04, meta={"step_index": 1})]
    assert any(d.per_file for d in diagnose(analyze(TOY, files)))
    assert "| gain at roof / own file |" in _md(kernels=files)
    assert "| gain at roof / total |" in _md()
    assert "gain at roof / own file" in priority_headers(diagnose(analyze(TOY, files)))


def test_terminal_gain_header_says_own_file():
    pytest.importorskip("rich")
    from rich.console import Console

    from rooflab.model.diagnose import diagnose
    from rooflab.report.terminal import priority_table

    files = [_k("a", 1e8, 0.02, meta={"step_index": 0}),
             _k("b", 1e8, 0.04, meta={"step_index": 1})]
    console = Console(width=200, record=True, color_system=None)
    console.print(priority_table(diagnose(analyze(TOY, files))))
    out = console.export_text()
    assert "own file" in out and "/ total" not in out


def test_markdown_chart_alt_text_reads_as_the_html_summary():
    pytest.importorskip("plotly")
    markdown_it = pytest.importorskip("markdown_it")
    from rooflab.model.diagnose import diagnose
    from rooflab.report.chart import roofline_data
    from rooflab.report.html_static import chart_summary
    from rooflab.report.markdown import chart_image

    # a name whose characters are Markdown: emphasis, code, an entity, a bracket
    a = analyze(TOY, [_k("__k__ *b* &amp; `x` [y]", 1e8, 0.1)])
    d = roofline_data([TOY], a.kernels, place_labels=False)
    diags = diagnose(a)
    summary = chart_summary(a, d, diags)
    assert "top kernel to work on: __k__ *b* &amp; `x` [y] (" in summary
    rendered = markdown_it.MarkdownIt("commonmark").render(chart_image(a, d, diags, "r.png"))
    # rendered before: 'k b & x [y]' (emphasis, code span, entity taken as markup)
    assert html.unescape(re.search(r'alt="([^"]*)"', rendered).group(1)) == summary


def test_below_roof_distance_keeps_a_flagged_kernel_past_two_x():
    from rooflab.model.diagnose import FLAG_HEADROOM
    from rooflab.model.diagnose_distances import BELOW_ROOF_LINE

    assert BELOW_ROOF_LINE == FLAG_HEADROOM    # the line the flag is decided on
    md = _md(top=3)
    # p49_95: 1 / 0.4995 = 2.002 below its roof, flagged '(>2x)'; it read '(2x): 2x below'
    assert "**below roof** (2.002x): 2.002x below the roof at its AI" in md
    assert "**below roof** (10.0x): 10.0x below the roof" in md     # p9_996, off any line


def test_gain_words_keep_a_small_share_in_two_figures():
    """Review s22 h2 F7: '36.7 ms saved (0 % of its own file)' beside 0.3 % in the table."""
    from rooflab.model.analysis import analyze
    from rooflab.model.ceiling import Ceiling, Roof
    from rooflab.model.diagnose import diagnose
    from rooflab.model.kernel import Kernel

    roof = Roof("r", "measured", compute=(Ceiling(1e12, precision="fp32", unit="vector"),),
                memory=(Ceiling(1e11, level="DRAM"),))
    slow = Kernel("slow", flop={"fp32": 1e9}, bytes={"DRAM": 1e9}, seconds=0.02)   # floor 10 ms
    big = Kernel("big", flop={"fp32": 1e12}, bytes={"DRAM": 1e9}, seconds=3.0)
    (d,) = [x for x in diagnose(analyze(roof, [slow, big])) if x.point.kernel == "slow"]
    # saved 10 ms of 3.02 s = 0.33 %
    assert "10 ms saved (0.33 % of the total)" in d.gain_words
