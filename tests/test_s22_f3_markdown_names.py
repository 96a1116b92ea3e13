"""Review s22 r1 F2 / r4 F9: `report -o x.md` wrote kernel and roof names as raw HTML and
Markdown (only `|` escaped): `<img onerror>` and `</script><script>` ran in any renderer that
passes HTML through, `x<y>&z` rendered as "x&z", `*b*` in italics. The names are data now."""

from __future__ import annotations

import html
import re

import pytest

from rooflab.model.analysis import analyze
from rooflab.model.ceiling import Ceiling, Roof
from rooflab.model.kernel import Kernel
from rooflab.report.markdown import markdown_report
from rooflab.report.md_escape import md_name, md_safe

EVIL = ("</script><script>alert(1)</script>", '"><img src=x onerror=alert(2)>',
        "x<y>&z *b* _u_ `c`", '<a href="https://e.co">k</a>', "[click](http://evil)",
        "drop$LT$Vec$GT$ ~~s~~ a\\b | c")
ROOF = Roof('<a href="https://evil.example/roof">H100</a>', "nominal",
            compute=(Ceiling(10e12, precision="fp32", unit="vector"),),
            memory=(Ceiling(1e12, level="DRAM"),))


def _report() -> str:
    # AI 10 each (1e9 FLOP / 1e8 B), 1 ms: 1 TFLOP/s of the 10 TFLOP/s roof
    ks = [Kernel(n, {"fp32": 1e9 * (i + 1)}, {"DRAM": 1e8 * (i + 1)}, 1e-3)
          for i, n in enumerate(EVIL)]
    return markdown_report(analyze(ROOF, ks), title="<i>t</i> report")


def _render(md: str) -> str:
    markdown_it = pytest.importorskip("markdown_it")   # rich's Markdown renderer
    return markdown_it.MarkdownIt("commonmark", {"html": True}).enable(
        ["table", "strikethrough"]).render(md)


def test_markdown_report_renders_no_html_or_markup_from_names():
    out = _render(_report())
    tags = set(re.findall(r"<([a-z0-9]+)", out))
    # old: script, img, a (live), em (from *b* and _u_), s (strike), i (the title)
    assert not tags & {"script", "img", "a", "em", "s", "i", "del"}, tags
    text = html.unescape(re.sub(r"<[^>]+>", "", out))
    for name in EVIL:   # each name reads as written (table cells, headings, lists)
        assert name in text, name
    assert ROOF.name in text and "<i>t</i> report" in text


def test_markdown_names_in_cells_and_headings():
    md = _report()
    cell = md_name("x<y>&z *b* _u_ `c`")
    assert cell == "x&lt;y&gt;&amp;z \\*b\\* \\_u\\_ \\`c\\`"
    assert f"| {cell} | fp32 vector | DRAM | 10 |" in md          # kernels table
    assert f"### 3. {cell} — " in md or f". {cell} — " in md        # diagnosis heading
    assert "| \\[click\\](http://evil) |" in md
    assert "drop\\$LT\\$Vec\\$GT\\$ \\~\\~s\\~\\~ a\\\\b \\| c" in md
    assert "Roof: **&lt;a href=\"https://evil.example/roof\"&gt;H100&lt;/a&gt;** (nominal)" in md


def test_escape_keeps_plain_names_and_rooflab_words_readable():
    # an underscore inside a word opens no emphasis: left as it is
    assert md_name("sigma_gpp_gpu_34") == "sigma_gpp_gpu_34"
    assert md_name("__init__") == "\\_\\_init\\_\\_"
    # rooflab's own words: only what could start HTML is escaped
    assert md_safe("fp32 -> fp16 tensor (fallback)") == "fp32 -> fp16 tensor (fallback)"
    assert md_safe("AI 10 < ridge 20, 44.67x (>2x)") == "AI 10 < ridge 20, 44.67x (>2x)"
    assert md_safe("kernel '<img src=x>' &amp; x") == "kernel '&lt;img src=x>' &amp;amp; x"
    assert md_safe("a|b\nc", cell=True) == "a\\|b c"
