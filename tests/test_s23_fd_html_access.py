"""The HTML report for everyone (review s23 r6 F5-F8): chart text at WCAG 4.5:1, a dark
theme that keeps it legible, keyboard toggles and screen-reader structure, and the side of
the ridge shown by a glyph as well as a colour.

Contrast is WCAG 2.1's (relative luminance of sRGB), computed here by hand, not by the
product: #56B4E9 on white is 2.31:1, #187CB5 4.58:1."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rooflab.hardware.profile import MachineProfile
from rooflab.model import Ceiling, Kernel, Roof, analyze

pytest.importorskip("plotly", reason="an HTML report needs plotly (the [html] extra)")


def luminance(color: str) -> float:
    h = color.lstrip("#")
    h = "".join(c * 2 for c in h) if len(h) == 3 else h
    rgb = [int(h[i:i + 2], 16) / 255 for i in (0, 2, 4)]
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def contrast(a: str, b: str) -> float:
    la, lb = sorted((luminance(a), luminance(b)))
    return (lb + 0.05) / (la + 0.05)


def test_contrast_helper_on_known_pairs():
    assert contrast("#000000", "#ffffff") == pytest.approx(21.0)
    assert contrast("#56B4E9", "#ffffff") == pytest.approx(2.31, abs=0.01)   # review's number
    assert contrast("#767676", "#ffffff") == pytest.approx(4.54, abs=0.01)


# A measured roof with all four levels (L3's sky blue is the palest) and two compute
# ceilings, and a nominal one (its ridges in the second roof's grey #8c8c8c).
MEASURED = Roof("box measured", kind="measured",
                compute=(Ceiling(200e9, precision="fp64", unit="vector", provenance="measured"),
                         Ceiling(400e9, precision="fp32", unit="vector", provenance="measured")),
                memory=(Ceiling(20e9, level="DRAM", provenance="measured"),
                        Ceiling(100e9, level="L3", provenance="measured"),
                        Ceiling(200e9, level="L2", provenance="measured"),
                        Ceiling(400e9, level="L1", provenance="measured")))
NOMINAL = Roof("box nominal", compute=(Ceiling(250e9, precision="fp64", unit="vector"),),
               memory=(Ceiling(25e9, level="DRAM"),))
PROFILE = MachineProfile(host={"name": "box", "kind": "cpu"}, nominal=NOMINAL,
                         measured=MEASURED)
# triad: AI 0.1 at DRAM (memory-bound); gemm: AI 100 (compute-bound)
TRIAD = Kernel("triad", {"fp64": 2e7}, {"DRAM": 2e8, "L3": 2e8, "L2": 2e8, "L1": 2e8},
               seconds=0.02)
GEMM = Kernel("gemm", {"fp64": 2e11}, {"DRAM": 2e9}, seconds=2.0)
ANALYSIS = analyze(MEASURED, [TRIAD, GEMM])
GLYPHS = {"/", "–"}


@pytest.fixture(scope="module")
def fig():
    from rooflab.report.html_figure import figure

    return figure(ANALYSIS, PROFILE)


def _text_colors(fig) -> dict[str, str]:
    """Every text the chart writes on its background -> its colour: the annotations (slope
    and ridge names) and the traces' texts (the ceilings' names), glyphs inside markers
    left out (they sit on the marker)."""
    out = {}
    for a in fig.layout.annotations:
        if a.font and a.font.color:
            out[a.text] = a.font.color
    for t in fig.data:
        texts = [x for x in (t.text or ()) if x and x not in GLYPHS]
        if texts and t.textfont and isinstance(t.textfont.color, str):
            for x in texts:
                out[x] = t.textfont.color
    return out


def test_html_chart_names_read_at_4_5_on_white(fig):
    """F5: L3's name was #56B4E9 (2.31:1), L2's #CC79A7 (3.06), L1's #009E73 (3.42), the
    ceilings' #D55E00 (3.87), the nominal ridge's #8c8c8c (3.36): 11-px text needs 4.5."""
    colors = _text_colors(fig)
    names = " ".join(colors)
    for word in ("L3", "L2", "L1", "DRAM", "fp64 vector", "AI*="):
        assert word in names, word
    low = {t: (c, round(contrast(c, "#ffffff"), 2)) for t, c in colors.items()
           if contrast(c, "#ffffff") < 4.5}
    assert low == {}
    # the lines keep their colours (Okabe-Ito sky blue for L3, vermillion for ceilings)
    line_colors = {t.line.color for t in fig.data if t.mode and "lines" in t.mode}
    assert {"#56B4E9", "#D55E00", "#CC79A7", "#009E73", "#0072B2"} <= line_colors


def test_html_chart_dark_theme_colours_read_at_4_5_on_its_background(fig):
    """F6: under the dark theme every name is mapped to a colour at 4.5:1 on its dark
    background (the DRAM blue 3.5:1 and the dark greys 1.4-2.4:1 would not be)."""
    from rooflab.report.html_colors import DARK_BG, DARK_TEXT, DARK_TEXT_COLORS

    dark = {k.lower(): v for k, v in DARK_TEXT_COLORS.items()}
    low = {t: c for t, c in _text_colors(fig).items()
           if contrast(dark.get(c.lower(), c), DARK_BG) < 4.5}
    assert low == {}
    assert contrast(DARK_TEXT, DARK_BG) >= 12


def test_html_markers_carry_their_side_glyph(fig):
    """F8: the side of the ridge was the marker's colour alone; now the PNG's glyph is
    written in each marker: '/' on the memory-bound triad (white on the blue), '–' on the
    compute-bound gemm (black on the orange), toggled with its markers (legend group)."""
    points = {t.legendgroup: t for t in fig.data if (t.name or "").startswith("kernels @")}
    glyphs = [t for t in fig.data if t.mode == "text" and t.name == "side glyphs"]
    assert glyphs
    seen = {}
    for g in glyphs:
        assert g.legendgroup in points and g.showlegend is False and g.hoverinfo == "skip"
        for x, text, color in zip(g.x, g.text, g.textfont.color, strict=True):
            seen[(round(x, 3), text)] = color
    assert seen[(0.1, "/")] == "white"          # triad: 2e7 / 2e8 B at DRAM
    assert seen[(100.0, "–")] == "black"        # gemm: 2e11 / 2e9 B
    assert contrast("#0072B2", "#ffffff") >= 4.5 and contrast("#E69F00", "#000000") >= 4.5


def test_html_table_has_column_and_row_heads_and_a_name():
    """F7: no <th> had a scope, the kernel's name was a <td>, and no table was tied to
    its heading."""
    from rooflab.report.html_page import html_table

    assert html_table(("kernel", "time"), [("a<b", "1 ms"), ("c", "2 ms")], "kernels") == (
        "<table class='sortable' aria-labelledby='kernels'><thead><tr>"
        "<th scope='col'>kernel</th><th scope='col'>time</th></tr></thead><tbody>"
        "<tr><th scope='row'>a&lt;b</th><td>1 ms</td></tr>"
        "<tr><th scope='row'>c</th><td>2 ms</td></tr></tbody></table>")


@pytest.fixture(scope="module")
def page():
    from rooflab.report.html import html_report

    return html_report(ANALYSIS, PROFILE)


def test_html_page_structure_for_screen_readers(page):
    """F7: the chart's notes are its figcaption, which points to the kernels' table; every
    table is named by its heading; each kernel row is headed by its name."""
    fig_html = page[page.index("<figure class='chart'"):page.index("</figure>")]
    cap = fig_html[fig_html.index("<figcaption>"):]
    assert "Every number on the chart is in the tables below" in cap
    assert "<a href='#kernels'>Kernels on the roof</a>" in cap
    assert "<h2 id='kernels'>Kernels on the roof</h2>" in page
    tables = re.findall(r"<table class='sortable'([^>]*)>", page)
    assert tables and all("aria-labelledby=" in t for t in tables)
    for label in re.findall(r"aria-labelledby='([^']+)'", page):
        assert f"id='{label}'" in page, label
    assert "<th scope='row'>triad</th>" in page and "<th scope='row'>gemm</th>" in page
    assert "<td>triad</td>" not in page


def test_html_page_declares_its_dark_theme(page):
    """F6: both schemes declared, a dark style sheet, the plot transparent over a white
    image (what Chromium's forced dark mode leaves white)."""
    assert "<meta name='color-scheme' content='light dark'>" in page
    assert "@media (prefers-color-scheme: dark)" in page
    assert "url(data:image/png;base64," in page
    assert re.search(r'"paper_bgcolor":\s*"rgba\(0,0,0,0\)"', page)
    assert "matchMedia('(prefers-color-scheme: dark)')" in page


# --- in a real browser ----------------------------------------------------------------------
CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")


def _driver(tmp_path: Path, name: str, *extra: str):
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = str(CHROMIUM)
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1300,1000", "--no-first-run",
                f"--user-data-dir={tmp_path / name}", *extra):
        opts.add_argument(arg)
    d = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=opts)
    d.set_page_load_timeout(30)
    return d


def _open(d, page: Path) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    d.get(page.as_uri())
    WebDriverWait(d, 20).until(lambda d: d.execute_script(
        "return document.querySelectorAll('#roofline .main-svg').length"))


# every SVG text of the plot but the side glyphs: its fill, as #rrggbb
_FILLS = """
return Array.from(document.querySelectorAll('#roofline text')).filter(function (t) {
  var s = t.textContent.trim(); return s && s !== '/' && s !== '\u2013'; }).map(function (t) {
  var m = getComputedStyle(t).fill.match(/\\d+/g).slice(0, 3);
  return [t.textContent.slice(0, 30), '#' + m.map(function (v) {
    return ('0' + (+v).toString(16)).slice(-2); }).join('')]; });
"""


@pytest.mark.browser
@pytest.mark.skipif(not (CHROMIUM.exists() and CHROMEDRIVER.exists()),
                    reason="needs /usr/bin/chromium and /usr/bin/chromedriver")
def test_html_chart_in_chromium_light_dark_forced_dark_and_keyboard(tmp_path, page):
    """The review's checks in headless Chromium: (1) light: every chart text at 4.5:1 on
    white, the plot's SVG hidden from screen readers, one checkbox per legend entry that
    the keyboard reaches and that hides its traces; (2) a dark preference: the dark theme,
    every chart text at 4.5:1 on its background (was #2a3f5f at 1.7:1 under forced dark);
    (3) forced dark under a light preference: the plot stays a white panel."""
    from PIL import Image
    from selenium.webdriver.common.keys import Keys

    path = tmp_path / "report.html"
    path.write_text(page, encoding="utf-8")
    d = _driver(tmp_path, "light")
    try:
        _open(d, path)
        low = [(t, c) for t, c in d.execute_script(_FILLS) if contrast(c, "#ffffff") < 4.5]
        assert low == []
        hidden = d.execute_script("return Array.from(document.querySelectorAll("
                                  "'#roofline svg')).map(s => s.getAttribute('aria-hidden'))")
        assert hidden and set(hidden) == {"true"}
        boxes = d.execute_script("return document.querySelectorAll("
                                 "'.chart-toggles input[type=checkbox]').length")
        assert boxes == d.execute_script("return document.querySelectorAll("
                                         "'#roofline .legendtoggle').length") > 0
        first = d.find_element("css selector", ".chart-toggles input")
        d.execute_script("arguments[0].focus()", first)
        first.send_keys(Keys.SPACE)
        assert d.execute_script("return document.getElementById('roofline').data[0].visible"
                                ) == "legendonly"
        assert first.is_selected() is False
    finally:
        d.quit()
    from rooflab.report.html_colors import DARK_BG

    d = _driver(tmp_path, "dark", "--force-dark-mode", "--enable-features=WebContentsForceDark")
    try:
        _open(d, path)
        assert d.execute_script(
            "return document.getElementById('roofline')._fullLayout.paper_bgcolor") == DARK_BG
        fills = d.execute_script(_FILLS)
        assert len(fills) > 10
        low = [(t, c) for t, c in fills if contrast(c, DARK_BG) < 4.5]
        assert low == []
    finally:
        d.quit()
    d = _driver(tmp_path, "forced", "--enable-features=WebContentsForceDark")
    try:
        _open(d, path)
        r = d.execute_script("var r = document.querySelector('#roofline .nsewdrag')"
                             ".getBoundingClientRect(); window.scrollTo(0, r.top - 50);"
                             "r = document.querySelector('#roofline .nsewdrag')"
                             ".getBoundingClientRect(); return [r.left, r.top, r.width, r.height]")
        shot = tmp_path / "forced.png"
        d.save_screenshot(str(shot))
        x, y, w, h = (int(v) for v in r)
        img = Image.open(shot).convert("L").crop((x, y, x + w, min(y + h, 1000)))
        hist = img.histogram()
        light = sum(hist[201:]) / sum(hist)
        assert light > 0.8          # the plot area: a white panel, not #121212
    finally:
        d.quit()
