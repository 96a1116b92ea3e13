"""Review s23 r6 F1, F2, F3, F12: the PNG chart's legend keys, its texts' contrast, and
which roof a label or ridge belongs to, without colour.

Contrast is WCAG 2.1's (relative luminance in linear sRGB; (L1 + 0.05) / (L2 + 0.05)),
the formula of the reviewer's cvd.py, copied here: 4.5:1 is 1.4.3's mark for text, 3:1
1.4.11's for graphics that carry meaning.
"""

from __future__ import annotations

import pytest

from rooflab.model import Ceiling, Kernel, Roof
from rooflab.report.chart import roofline_data
from rooflab.report.chart_parts import ROOF_COLORS, ROOF_MARKERS

pytest.importorskip("matplotlib")


def _luminance(color: str) -> float:
    from matplotlib.colors import to_rgb

    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in to_rgb(color)]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def contrast(a: str, b: str = "#ffffff") -> float:
    la, lb = sorted((_luminance(a), _luminance(b)))
    return (lb + 0.05) / (la + 0.05)


def test_contrast_formula_matches_the_review():
    # the review's figures: #8c8c8c 3.36:1, #56B4E9 2.31:1, #767676 4.54:1 on white
    assert contrast("#8c8c8c") == pytest.approx(3.36, abs=0.005)
    assert contrast("#56B4E9") == pytest.approx(2.31, abs=0.005)
    assert contrast("#767676") == pytest.approx(4.54, abs=0.005)


# A measured roof (every line solid) whose longest kernel has a no-FMA ceiling (dashed):
# the RTX 4060's fp64 peak and DRAM, sigma_gpp_gpu's FMA share 0.5078 (test_s22_f1_chart)
MEASURED = Roof("rtx measured", kind="measured",
                compute=(Ceiling(155.52e9, "fp64", "vector", provenance="measured"),),
                memory=(Ceiling(256e9, level="DRAM", provenance="measured"),))
NOMINAL = Roof("rtx nominal", compute=(Ceiling(190e9, "fp64", "vector"),),
               memory=(Ceiling(272e9, level="DRAM"),))
THIRD = Roof("third", compute=(Ceiling(120e9, "fp64", "vector"),),
             memory=(Ceiling(200e9, level="DRAM"),))
SIGMA = Kernel("sigma", {"fp64": 1.093e12}, {"DRAM": 1.65e11}, seconds=12.29,
               meta={"fma_share": {"fp64": 0.5078}})


def _roof_key(d, label: str):
    from matplotlib.lines import Line2D

    from rooflab.report.chart_legend import _legend

    (h, words), = [(h, w) for h, w in _legend(d, Line2D) if w.startswith(label)]
    return h, words


# -- F1 ------------------------------------------------------------------------------------

def test_measured_roof_key_is_solid_though_a_no_fma_line_is_dashed():
    d = roofline_data([MEASURED], [SIGMA])
    assert [ln.style for ln in d.lines if ln.kind == "nofma"] == ["dashed"]
    h, words = _roof_key(d, "rtx measured")
    # old: dash-dot and "(solid measured, dashed nominal)": the no-FMA line was counted
    assert h.get_linestyle() == "-"
    assert words == "rtx measured"   # its name alone: no "(solid measured, ...)" note


def test_best_achieved_roof_key_is_dotted():
    from rooflab.ingest.profile_envelope import envelope_roof
    from rooflab.report.chart_roofs import ENVELOPE_LEGEND

    # no roof given: the kernels' best achieved, drawn dotted (compare without --on)
    roof = envelope_roof([SIGMA])
    d = roofline_data([roof], [SIGMA])
    assert {ln.style for ln in d.lines if ln.kind in ("compute", "memory")} == {"dotted"}
    assert [ln.kind for ln in d.lines if ln.kind == "nofma"] == ["nofma"]
    h, words = _roof_key(d, ENVELOPE_LEGEND)
    assert h.get_linestyle() == ":"
    assert "solid measured" not in words


# -- F12 -----------------------------------------------------------------------------------

A100 = Roof("A100", compute=(Ceiling(19.5e12, "fp32", "vector"),
                             Ceiling(312e12, "fp16", "tensor")),
            memory=(Ceiling(2039e9, level="DRAM"),))


def test_mixed_roof_and_no_fma_line_differ_in_dash_and_read_on_white():
    from matplotlib.lines import Line2D

    from rooflab.report.chart_legend import _legend
    from rooflab.report.chart_marks import mixed_style

    # 90 % of the FLOP on fp16 tensor, 10 % fp32 vector (a weighted roof), and a vector
    # kernel with FMA share 0.2 (a no-FMA ceiling at 60 % of 19.5 TFLOP/s)
    mixed = Kernel("mixed", {"fp16": 9e12, "fp32": 1e12}, {"DRAM": 1e10}, seconds=1.0)
    vec = Kernel("vec", {"fp32": 1e12}, {"DRAM": 1e9}, seconds=2.0,
                 meta={"fma_share": {"fp32": 0.2}})
    d = roofline_data([A100], [mixed, vec])
    lines = {ln.kind: ln for ln in d.lines if ln.kind in ("mixed", "nofma")}
    assert set(lines) == {"mixed", "nofma"}
    styles = {k: mixed_style(ln) for k, ln in lines.items()}
    # two different dash patterns (old: both "--")
    assert styles["mixed"][0] != styles["nofma"][0]
    # the compute side's orange #E69F00 (2.25:1) drawn in its dark shade: 3:1 or more
    assert lines["nofma"].color.upper() == "#E69F00"
    assert all(contrast(color) >= 3.0 for _, color in styles.values())
    keys = {w: h for h, w in _legend(d, Line2D)}
    a, b = (keys[lines[k].label] for k in ("mixed", "nofma"))
    assert a._unscaled_dash_pattern != b._unscaled_dash_pattern
    # drawn as keyed
    d.plot()
    drawn = {a.get_gid(): a for a in d.ax_.lines if (a.get_gid() or "").startswith("mixed-roof:")}
    for k, ln in lines.items():
        art = drawn[f"mixed-roof:{ln.label}"]
        assert art._unscaled_dash_pattern == keys[ln.label]._unscaled_dash_pattern
        assert art.get_color() == styles[k][1]


# -- F2 and F3: three roofs drawn ----------------------------------------------------------

@pytest.fixture(scope="module")
def three():
    k = Kernel("k", {"fp64": 1e9}, {"DRAM": 2e9}, seconds=1e-2)
    return roofline_data([NOMINAL, MEASURED, THIRD], [k], level="DRAM").plot()


def test_every_label_in_a_roofs_colour_reaches_4_5_to_1(three):
    from matplotlib.colors import to_hex

    texts = [t for t in three.ax_.texts if t.get_text().strip()]
    assert len(texts) >= 9   # 3 ceilings, 3 slopes, 3 ridges at least
    low = {(t.get_text(), to_hex(t.get_color())) for t in texts
           if contrast(to_hex(t.get_color())) < 4.5}
    # old: #8c8c8c 3.36:1 and #009e73 3.42:1 labels
    assert not low


def test_text_shades_keep_the_hue_and_reach_4_5_to_1():
    import colorsys

    from matplotlib.colors import to_rgb

    from rooflab.report.chart_marks import TEXT_SHADES, text_color
    from rooflab.report.chart_parts import COMPUTE_BOUND_COLOR, LEVEL_COLORS

    for c in (*ROOF_COLORS, *LEVEL_COLORS.values(), COMPUTE_BOUND_COLOR):
        shade = text_color(c)
        assert contrast(shade) >= 4.5, (c, shade)
        h0, _, _ = colorsys.rgb_to_hsv(*to_rgb(c))
        h1, _, _ = colorsys.rgb_to_hsv(*to_rgb(shade))
        assert abs(h0 - h1) < 0.01, (c, shade)
    assert text_color("#8C8C8C") == "#767676" == TEXT_SHADES["#8c8c8c"]


def test_later_roofs_labels_start_with_their_bead(three):
    from rooflab.report.chart_marks import BEAD_CHARS

    texts = [t.get_text() for t in three.ax_.texts]
    for i, roof in enumerate(three.roof_labels):
        bead = BEAD_CHARS.get(ROOF_MARKERS[i], "")
        for ln in three.lines:
            if ln.roof != roof or ln.kind not in ("compute", "memory"):
                continue
            name = ln.label   # (no two ceilings of a roof share a label here)
            (drawn,) = [t for t in texts if t.strip().endswith(name)]
            if ln.kind == "compute":   # laid out as written (chart_layout_roofs)
                assert ln.text == drawn
            if i == 0:   # the judging roof: no beads, its labels as before
                assert drawn.strip() == name
            else:        # "x fp64 vector 190 GFLOP/s", "o DRAM 200 GB/s"
                assert drawn.strip() == f"{bead} {name}"
    assert [BEAD_CHARS[m] for m in ROOF_MARKERS[1:3]] == ["\u00d7", "\u25cb"]


def test_later_roofs_ridges_carry_their_bead(three):
    ax = three.ax_
    beads = {a.get_gid().split(":", 1)[1]: a.get_marker() for a in ax.lines
             if (a.get_gid() or "").startswith("ridge-bead:")}
    first, *others = three.roof_labels
    assert first not in beads
    assert [a.get_marker() for a in ax.lines if a.get_gid() == f"ridge:{first}"] == ["D"]
    assert [beads[r] for r in others] == list(ROOF_MARKERS[1:3])
    # each at its roof's ridge, in place of the first roof's diamond
    for r in three.ridges:
        if r.roof in beads:
            (bead,) = [a for a in ax.lines if a.get_gid() == f"ridge-bead:{r.roof}"]
            assert (bead.get_xdata()[0], bead.get_ydata()[0]) == (r.ai, r.flop_per_s)


# -- F10 -----------------------------------------------------------------------------------

def test_no_roof_bead_inside_a_label(three):
    from rooflab.report.chart_layout_size import figure_renderer
    from rooflab.report.chart_legend import _text_boxes

    ax = three.ax_
    renderer = figure_renderer(ax.figure)
    boxes = [b for t in ax.texts if t.get_text().strip()
             for b in _text_boxes(t, renderer, 0.0)]   # (no padding: the text's own box)
    rows = [ln for ln in ax.lines if (ln.get_gid() or "").startswith("roof-beads:")]
    inside = [(ln.get_gid(), x, y) for ln in rows
              for x, y in ax.transData.transform(list(zip(ln.get_xdata(), ln.get_ydata(),
                                                          strict=True)))
              if any(x0 <= x <= x1 and y0 <= y <= y1 for x0, y0, x1, y1 in boxes)]
    # old: beads spaced evenly along each line, blind to the labels on it
    assert not inside
    # each later roof's lines keep beads
    assert {ln.get_gid() for ln in rows if len(ln.get_xdata())} == {
        f"roof-beads:{r}" for r in three.roof_labels[1:]}
