"""s22 r3 F4, r1 F7: a PNG chart of Chinese or emoji names drew boxes and printed one raw
matplotlib "Glyph N missing from font(s) DejaVu Sans" warning per character per text
(25-77 stderr lines, -q or not). Now an installed font that has the characters is added
as a fallback family; what none has is one `warning:` line (-q silences it); an SVG,
whose text the viewer draws, says nothing."""

from __future__ import annotations

import warnings

import pytest

from rooflab import Kernel
from rooflab.cli.main import main
from rooflab.hardware.catalog import lookup_roof
from rooflab.report import chart_fonts
from rooflab.report.chart import figure_bytes, plot_roofline, roofline_data, save_figure
from rooflab.report.chart_fonts import MissingGlyphsWarning, fallback_families

GEMM, SOFTMAX = "矩阵乘法_gemm", "softmax 归一化 🚀"
CSV = f"name,flop,bytes,seconds,precision\n{GEMM},1e12,1e9,1e-2,fp32\n{SOFTMAX},1e9,1e9,1e-3,fp32\n"


@pytest.fixture
def no_fallback(monkeypatch):
    """As on a machine with no CJK or emoji font (this one: DejaVu, Liberation, STIX)."""
    monkeypatch.setattr(chart_fonts, "FALLBACK_FAMILIES", ())


def _kernels():
    return [Kernel(GEMM, {"fp32": 1e12}, {"DRAM": 1e9}, seconds=1e-2),
            Kernel(SOFTMAX, {"fp32": 1e9}, {"DRAM": 1e9}, seconds=1e-3)]


def test_a_png_of_chinese_and_emoji_names_gives_one_warning_an_svg_none(tmp_path,
                                                                       no_fallback):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        d = plot_roofline(lookup_roof("t4"), _kernels())
        save_figure(d, tmp_path / "p.png", dpi=20)
    said = [str(w.message) for w in caught]
    assert not [s for s in said if s.startswith("Glyph")]     # old: 16 here, 25 in the CLI
    (one,) = [w for w in caught if issubclass(w.category, MissingGlyphsWarning)]
    text = str(one.message)
    assert "Chinese, Japanese or Korean characters or emoji" in text
    assert f"in {GEMM}, {SOFTMAX}, drawn as boxes:" in text  # the names, not each label
    assert "fonts-noto-cjk" in text and "fonts-symbola" in text
    assert one.filename == __file__                          # the caller's line
    # the same chart as SVG: its text is <text> the viewer draws with its own fonts
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        svg = figure_bytes(d, "svg").decode()
    assert [str(w.message) for w in caught if "Glyph" in str(w.message)
            or issubclass(w.category, MissingGlyphsWarning)] == []    # old: 38 in the CLI
    assert f">{GEMM}</text>" in svg


def test_the_cli_says_one_line_and_minus_q_none(tmp_path, capsys, no_fallback):
    csv = tmp_path / "zh.csv"
    csv.write_text(CSV, encoding="utf-8")
    png = ["--on", "t4", "--dpi", "20", "-o", str(tmp_path / "p.png")]
    assert main(["plot", str(csv), *png]) == 0
    err = capsys.readouterr().err
    assert "Glyph" not in err
    (line,) = [ln for ln in err.splitlines() if "fonts-noto-cjk" in ln]
    assert line.startswith("warning: the chart's font (DejaVu Sans) has no glyph for the "
                           "Chinese, Japanese or Korean characters or emoji in 矩阵乘法_gemm")
    assert main(["-q", "plot", str(csv), *png]) == 0
    err = capsys.readouterr().err
    assert "Glyph" not in err and "warning" not in err       # old: 51 lines under -q


def test_an_installed_font_with_the_characters_draws_them(tmp_path, monkeypatch):
    # Circled letters: STIXGeneral (matplotlib's own) has them, DejaVu Sans has not; a
    # stand-in for Noto Sans CJK, which this machine lacks
    from rooflab.report.chart_fonts import _codepoints

    name = "gemm_\u24c9\u24dd"
    assert all(ord(c) not in _codepoints("DejaVu Sans") for c in name[-2:])
    assert all(ord(c) in _codepoints("STIXGeneral") for c in name[-2:])
    monkeypatch.setattr(chart_fonts, "FALLBACK_FAMILIES", ("WenQuanYi Zen Hei", "STIXGeneral"))
    assert fallback_families([name]) == ["STIXGeneral"]
    assert fallback_families(["gemm"]) == []                 # nothing missing: none added
    assert fallback_families([GEMM]) == []                   # STIX has no CJK: not added
    k = Kernel(name, {"fp32": 1e12}, {"DRAM": 1e9}, seconds=1e-2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        d = plot_roofline(lookup_roof("t4"), [k])
        save_figure(d, tmp_path / "p.png", dpi=20)
    assert not [w for w in caught if "Glyph" in str(w.message)
                or issubclass(w.category, MissingGlyphsWarning)]
    (label,) = [t for t in d.ax_.texts if t.get_text().startswith(name)]
    assert label.get_fontfamily()[-1] == "STIXGeneral"     # after the chart's own family
    assert d.ax_.title.get_fontfamily()[-1] == "STIXGeneral"


def test_other_scripts_and_control_characters_are_named_by_code_point(no_fallback):
    d = roofline_data([lookup_roof("t4")], [Kernel("k_\u24c9", {"fp32": 1e9}, {"DRAM": 1e8})])
    text = chart_fonts.missing_glyphs(d, {"\u24c9"}, "DejaVu Sans")
    assert text.startswith("the chart's font (DejaVu Sans) has no glyph for the other "
                           "characters U+24C9 in k_\u24c9, drawn as boxes: install a font "
                           "that has them (fonts-noto), then delete matplotlib's font list")
    # an ESC in a name (review s22 r1 F7: "Glyph 27 missing" x 12): no font helps
    d = roofline_data([lookup_roof("t4")], [Kernel("\x1b[2Jk", {"fp32": 1e9}, {"DRAM": 1e8})])
    assert chart_fonts.missing_glyphs(d, {"\x1b"}, "DejaVu Sans") == (
        "the chart's font (DejaVu Sans) has no glyph for the control characters U+001B in "
        "\x1b[2Jk, drawn as boxes: no font draws these: take them out of the names")
