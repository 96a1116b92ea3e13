"""Review s22 r1 F6: the plotly chart of the HTML report showed kernel and roof names as
HTML (a live `<a href>` link in a point's label, a leader, a roof's name, the title), though
the hover escaped them. Every text plotly draws now shows the name as written."""

from __future__ import annotations

import html

import pytest

from rooflab.model.analysis import analyze
from rooflab.model.ceiling import Ceiling, Roof
from rooflab.model.kernel import Kernel

pytest.importorskip("plotly", reason="an HTML report needs plotly (the [html] extra)")

from rooflab.report.html_figure import figure  # noqa: E402
from rooflab.report.html_labels import text_box  # noqa: E402
from rooflab.report.html_text import plotly_text, shown_len  # noqa: E402

LINK = '<a href="https://e.co">k</a>'
ROOF = Roof('<a href="https://evil.example/roof">H100</a>', "nominal",
            compute=(Ceiling(10e12, precision="fp32", unit="vector"),),
            memory=(Ceiling(1e12, level="DRAM"),))
# plotly draws these tags (and no script): none may come from a name
LIVE = ("<a ", "<a>", "<i>", "</a>", "<img", "<script")


def _texts(fig) -> list[str]:
    """Every text plotly draws as markup: point labels, legend entries, annotations
    (slopes, ridges, leaders), the title, hovers."""
    out = [fig.layout.title.text or "", fig.layout.xaxis.title.text or ""]
    for t in fig.data:
        out.append(t.name or "")
        for field in ("text", "hovertext"):
            v = getattr(t, field, None)
            out += [v] if isinstance(v, str) else [x for x in (v or ()) if isinstance(x, str)]
    out += [a.text or "" for a in fig.layout.annotations]
    return out


def test_names_reach_the_chart_as_text_not_markup():
    ks = [Kernel(LINK, {"fp32": 1e9}, {"DRAM": 1e8}, 1e-3),          # AI 10, 1 TFLOP/s
          Kernel("x<y>&z", {"fp32": 4e9}, {"DRAM": 1e8}, 1e-3)]       # AI 40, 4 TFLOP/s
    fig = figure(analyze(ROOF, ks))
    texts = _texts(fig)
    assert not [t for t in texts if any(tag in t for tag in LIVE)], texts
    labels = [x for t in fig.data if t.mode == "markers+text" for x in t.text if x]
    # both kernels named beside their markers, as the hover names them (escaped, whole)
    assert sorted(labels) == sorted([html.escape(LINK, quote=False), "x&lt;y&gt;&amp;z"])
    assert fig.layout.title.text == ("Roofline: &lt;a href=\"https://evil.example/roof\"&gt;"
                                     "H100&lt;/a&gt;")
    legend = [t.name for t in fig.data]
    assert "nominal fp32 vector 10 TFLOP/s" in legend and "kernels @ DRAM" in legend
    # a title given by the user (report --title) is shown as written too
    assert figure(analyze(ROOF, ks[:1]), title="<i>t</i>").layout.title.text == \
        "&lt;i&gt;t&lt;/i&gt;"


def test_layout_measures_the_characters_shown():
    # '&lt;y&gt;' shows 3 characters: its box is as wide as 'abc''s, not 'abcdefghi''s
    assert shown_len(plotly_text("<y>")) == 3 and shown_len("a<br") == 4
    assert text_box((0, 0), plotly_text("<y>"), "top right") == text_box((0, 0), "abc",
                                                                         "top right")
