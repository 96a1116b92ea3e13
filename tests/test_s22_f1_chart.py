"""Session 22 fixer f1: the matplotlib chart's reviews (s22 r6 F1/F3/F4/F5/F7, r1 F1,
r4 F2 chart side). Light: no probe runs, each test well under 2 s."""

from __future__ import annotations

import pytest

from rooflab.hardware.catalog import lookup_roof
from rooflab.model.ceiling import Ceiling, Roof
from rooflab.model.kernel import Kernel
from rooflab.report.chart import roofline_data
from rooflab.report.chart_draw import _axis_words
from rooflab.report.chart_legend import _legend
from rooflab.report.chart_words import provenance_label

pytest.importorskip("matplotlib")

TOY = Roof("toy", compute=(Ceiling(1e12, "fp32", "vector"),),
           memory=(Ceiling(1e11, level="DRAM"), Ceiling(4e11, level="L2")))


# --- r1 F1: a `$` pair in a name is drawn literally, not as mathtext ----------------------

def test_dollar_names_are_drawn_literally_and_do_not_crash():
    from matplotlib.text import Text

    ks = [Kernel("foo$bar", {"fp32": 1e9}, {"DRAM": 1e8}, seconds=1e-3),
          Kernel("$\\frac{1}$", {"fp32": 2e9}, {"DRAM": 1e8}, seconds=1e-3),
          Kernel("drop$LT$Vec$GT$", {"fp32": 1e9}, {"DRAM": 1e7}, seconds=1e-3)]
    roof = Roof("box $a$", compute=TOY.compute, memory=TOY.memory[:1])
    d = roofline_data([roof], ks, labels=0).plot()
    texts = [t for t in d.figure_.findobj(Text) if "$" in t.get_text()]
    renderer = d.figure_.canvas.get_renderer()
    for t in texts:   # laid out as when written: old, ValueError from mathtext ('\frac{1}')
        t.get_window_extent(renderer)
    # as matplotlib draws them: plain text, each dollar kept (old: math, the dollars gone)
    drawn = [t._preprocess_math(t.get_text()) for t in texts if "mathdefault" not in
             t.get_text()]   # the log axes' own tick labels are math, as they should be
    assert all(math is False for _, math in drawn)
    words = "\n".join(s for s, _ in drawn)
    for name in ("foo$bar", "$\\frac{1}$", "drop$LT$Vec$GT$", "Roofline: box $a$ (nominal)"):
        assert name in words


# --- r6 F7: equal ceilings of different units keep their own unit -----------------------

def test_equal_ceilings_of_two_units_keep_each_unit():
    from rooflab.report.chart_layout_roofs import shared_label

    assert shared_label(["fp8 tensor 1.98 PFLOP/s", "int8 tensor 1.98 POP/s"]) == (
        "fp8 tensor 1.98 PFLOP/s, int8 tensor 1.98 POP/s")
    assert shared_label(["bf16 tensor 990 TFLOP/s", "fp16 tensor 990 TFLOP/s"]) == (
        "bf16 tensor, fp16 tensor 990 TFLOP/s")
    d = roofline_data([lookup_roof("h100-sxm")], precisions="all")
    texts = [ln.text.strip() for ln in d.lines if ln.kind == "compute" and ln.text]
    # old: "fp8 tensor, int8 tensor 1.98 PFLOP/s" (int8 is 1.98 POP/s: specs show)
    assert "fp8 tensor 1.98 PFLOP/s, int8 tensor 1.98 POP/s" in texts


# --- r6 F1: the labelled (longest) kernels are drawn over the crowd ----------------------

def test_labelled_kernels_are_drawn_over_the_crowd_and_small_batches_carry_no_glyph():
    # 210 small kernels (each 1/210 of 10 % of the time: clamped to 4 pt) and one kernel
    # with 90 % of it: 20 * sqrt(0.9) = 19.0 pt, labelled; all at AI 1, under the roof
    ks = [Kernel(f"k{i}", {"fp32": 1e6}, {"DRAM": 1e6}, seconds=0.1 / 210) for i in range(210)]
    ks.append(Kernel("HOT", {"fp32": 1e9}, {"DRAM": 1e9}, seconds=0.9))
    d = roofline_data([TOY], ks, labels=1).plot()
    (hot,) = [p for p in d.points if p.kernel == "HOT"]
    assert hot.size == pytest.approx(20 * 0.9 ** 0.5) and hot.text
    batched = [a for a in d.ax_.lines if a.get_gid() == "kernel-points"]
    assert sum(len(a.get_xdata()) for a in batched) == 210
    (hot_marker,) = [a for a in d.ax_.lines if tuple(a.get_xdata()) == (1.0,)
                     and a.get_gid() is None and a.get_markersize() == hot.size]
    # old: HOT at 5 + (20 - 19.0) / 100 = 5.01 under the 4-pt batch at 5.16
    assert hot_marker.get_zorder() > max(a.get_zorder() for a in batched)
    glyphs = [c for c in d.ax_.collections if (c.get_gid() or "").startswith("side-glyph")]
    # one glyph: HOT's own; the 4-pt batch's glyphs (white slashes over the whole cloud) gone
    assert len(glyphs) == 1 and glyphs[0].get_zorder() > hot_marker.get_zorder()


# --- r6 F3: the x axis names the bytes the intensity counts ------------------------------

def test_the_x_axis_names_the_level_its_intensity_counts():
    k = Kernel("k", {"fp32": 1e9}, {"DRAM": 1e8, "L2": 4e8}, seconds=1e-3)
    # the words chart_draw sets as the x label (drawing it is the label, no more)
    one = _axis_words(roofline_data([TOY], [k], level="L2"))
    assert one.startswith("arithmetic intensity (FLOP per L2 byte)")   # old: "(FLOP/byte)"
    both = _axis_words(roofline_data([TOY], [k]))
    assert both.startswith("arithmetic intensity (FLOP per byte at each marker's level)")


# --- r6 F5: an fp64 kernel on a catalog GPU gets the fp32 ceiling beside its own ---------

def test_an_fp64_kernel_is_drawn_with_the_fp32_ceiling():
    roof = lookup_roof("RTX 4060 Laptop GPU")
    k = Kernel("sigma", {"fp64": 1.093e12}, {"DRAM": 1.65e11}, seconds=12.29)
    d = roofline_data([roof], [k])
    drawn = sorted(ln.label for ln in d.lines if ln.kind == "compute")
    # old: fp64 vector and fp8 tensor only; fp32 vector is 64x fp64 (14.6 T / 228 G)
    assert "fp32 vector 14.6 TFLOP/s" in drawn and "fp64 vector 228 GFLOP/s" in drawn
    assert roof.find_compute("fp32", "vector").value / roof.find_compute(
        "fp64", "vector").value == pytest.approx(64)
    assert any("fp32 beside fp64" in n for n in d.notes)


# --- r6 F4: the clock the peaks hold at ---------------------------------------------------

def test_the_clock_of_a_catalog_gpu_an_ncu_profile_and_a_cpu():
    from rooflab.report.chart_clock import roof_clock

    # T4: 8.1 TFLOP/s fp32 / (40 SMs x 64 lanes x 2) = 1.582 GHz
    assert roof_clock(lookup_roof("t4")) == "peaks at 1.58 GHz SM boost clock (datasheet)"
    # ncu output5's peaks: fp32 9.95328 TFLOP/s / (24 SMs x 128 lanes x 2) = 1.62 GHz, the
    # sm__cycles_elapsed.avg.per_second the file records
    ncu = Roof("NVIDIA GeForce RTX 4060 Laptop GPU (profiler peaks)", kind="derived",
               compute=(Ceiling(9.95328e12, "fp32", "vector", provenance="derived"),))
    k = Kernel("s", {"fp64": 1e9}, {"DRAM": 1e8}, seconds=1.0,
               meta={"device": "NVIDIA GeForce RTX 4060 Laptop GPU", "sms": "24", "cc": "8.9"})
    assert roof_clock(ncu, [k]) == "peaks at SM 1.62 GHz (the clock ncu profiled at)"
    assert roof_clock(ncu, []) == ""      # no SM count: no figure made up
    assert roof_clock(lookup_roof("EPYC 9654")) == "peaks at 3.55 GHz (all-core boost, AMD)"
    from matplotlib.lines import Line2D

    texts = [t for _, t in _legend(roofline_data([lookup_roof("t4")], [k]), Line2D)]
    assert "peaks at 1.58 GHz SM boost clock (datasheet)" in texts


# --- r4 F2 (chart side): the roof's kind as text and JSON state it ------------------------

def test_a_cpu_catalog_roof_is_nominal_on_the_chart_as_in_text_and_json():
    roof = lookup_roof("EPYC 9654")
    assert roof.kind == "nominal"             # what `report` and --json print
    assert {c.provenance for c in roof.compute} == {"derived"}
    label = provenance_label(roof)
    # old: "AMD EPYC 9654 (derived, not a datasheet figure)": no "nominal" anywhere
    assert label == "AMD EPYC 9654 (nominal; peaks derived, not datasheet figures)"
    d = roofline_data([roof], [Kernel("k", {"fp64": 1e9}, {"DRAM": 1e8}, seconds=1e-3)])
    assert "(nominal; peaks derived" in d.title


# --- r6 F8: the longest kernel's no-FMA ceiling, dashed under its peak --------------------

def test_the_longest_kernels_no_fma_ceiling_is_drawn():
    # output5.ncu-rep's peaks: fp64 vector 155.52 GFLOP/s, DRAM 256 GB/s; sigma_gpp_gpu_34's
    # FMA share of fp64 add/mul/fma 0.5078: (1 + 0.5078) / 2 x 155.52 G = 117.25 GFLOP/s,
    # the report's "tops out at 75 % of the peak (the no-FMA ceiling)"
    roof = Roof("RTX 4060 (profiler peaks)", kind="derived",
                compute=(Ceiling(155.52e9, "fp64", "vector", provenance="derived"),),
                memory=(Ceiling(256e9, level="DRAM", provenance="derived"),))
    sigma = Kernel("sigma", {"fp64": 1.093e12}, {"DRAM": 1.65e11}, seconds=12.29,
                   meta={"fma_share": {"fp64": 0.5078}})
    red = Kernel("red", {"fp64": 5e5}, {"DRAM": 4e6}, seconds=2e-4,
                 meta={"fma_share": {"fp64": 0.1}})
    d = roofline_data([roof], [sigma, red])
    (line,) = [ln for ln in d.lines if ln.kind == "nofma"]   # the longest kernel's only
    assert line.ys == pytest.approx((117.25e9, 117.25e9), rel=1e-4)
    assert line.xs[0] == pytest.approx(117.25e9 / 256e9, rel=1e-4)    # its ridge
    assert line.label == "sigma no-FMA ceiling 117 GFLOP/s (FMA share 51 %)"
    # an FMA-heavy mix (>= 90 %) reaches within 5 % of the peak: no line
    fma = sigma.with_(meta={"fma_share": {"fp64": 0.95}})
    assert not [ln for ln in roofline_data([roof], [fma]).lines if ln.kind == "nofma"]
