"""report/chart.py: the drawn data (vertices, ridges, points, colours), not pixels."""

from __future__ import annotations

import subprocess
import sys

import pytest

from rooflab.errors import InputError
from rooflab.model import Ceiling, Kernel, Roof
from rooflab.report.chart import plot_roofline, roofline_data, save_figure
from rooflab.report.chart_parts import COMPUTE_BOUND_COLOR, MEMORY_BOUND_COLOR

# Seed 004: T4 nominal 65 TFLOP/s fp16 tensor, 320 GB/s; the example measurement 50e12, 270e9.
T4_NOMINAL = Roof("T4", "nominal",
                  compute=(Ceiling(65e12, precision="fp16", unit="tensor"),
                           Ceiling(8.1e12, precision="fp32", unit="vector")),
                  memory=(Ceiling(320e9, level="DRAM"),))
T4_MEASURED = Roof("T4", "measured",
                   compute=(Ceiling(50e12, precision="fp16", unit="tensor",
                                    provenance="measured"),),
                   memory=(Ceiling(270e9, level="DRAM", provenance="measured"),))
# Seed 004's three points: decode b=1, matmul 4096 at 50 TFLOP/s, y = x + 1 at 270 GB/s.
DECODE = Kernel("decode b=1", {"fp16": 2.2e9}, {"DRAM": 2.2e9}, 0.015)
MATMUL = Kernel("matmul 4096", {"fp16": 2 * 4096**3}, {"DRAM": 6 * 4096**2},
                2 * 4096**3 / 50e12, unit="tensor")
ADD1 = Kernel("x + 1", {"fp16": 1e8}, {"DRAM": 4e8}, 4e8 / 270e9)


@pytest.fixture(scope="module")
def seed_chart():
    return plot_roofline([T4_MEASURED, T4_NOMINAL], [DECODE, MATMUL, ADD1])


def _line(display, roof, kind, label_start):
    found = [ln for ln in display.lines
             if ln.roof == roof and ln.kind == kind and ln.label.startswith(label_start)]
    assert len(found) == 1, [ln.label for ln in display.lines]
    return found[0]


def test_roof_vertices_and_styles(seed_chart):
    d = seed_chart
    slope = _line(d, "T4 (measured)", "memory", "DRAM")
    # The slope ends where it meets the fp16 ceiling: x = 50e12 / 270e9 = 185.19.
    assert slope.xs[1] == pytest.approx(185.185, rel=1e-4)
    assert slope.ys == pytest.approx((270e9 * slope.xs[0], 50e12))
    assert slope.style == "solid"
    flat = _line(d, "T4 (nominal)", "compute", "fp16 tensor")
    assert flat.xs[0] == pytest.approx(203.125) and flat.ys == (65e12, 65e12)
    assert flat.style == "dashed"
    # One horizontal per precision/unit: the nominal roof also carries fp32 vector.
    fp32 = _line(d, "T4 (nominal)", "compute", "fp32 vector")
    assert fp32.xs[0] == pytest.approx(8.1e12 / 320e9)
    # The lines really drawn carry the same vertices and dash style.
    drawn = {(tuple(ln.get_xdata()), tuple(ln.get_ydata())): ln.get_linestyle()
             for ln in d.ax_.lines}
    assert drawn[(slope.xs, slope.ys)] == "-"
    assert drawn[(flat.xs, flat.ys)] == "--"


def test_ridges_are_seed_values(seed_chart):
    ridges = {(r.roof, r.compute, r.level): r.ai for r in seed_chart.ridges}
    assert ridges[("T4 (measured)", "fp16 tensor", "DRAM")] == pytest.approx(185.19, rel=1e-3)
    assert ridges[("T4 (nominal)", "fp16 tensor", "DRAM")] == pytest.approx(203.1, rel=1e-3)
    assert all("AI* =" in r.label for r in seed_chart.ridges)


def test_points_positions_colours_and_labels(seed_chart):
    pts = {p.kernel: p for p in seed_chart.points}
    decode = pts["decode b=1"]
    assert (decode.ai, decode.flop_per_s) == pytest.approx((1.0, 146.67e9), rel=1e-3)
    assert decode.color == MEMORY_BOUND_COLOR
    assert decode.percent_of_roof == pytest.approx(54.3, abs=0.1)   # seed 004: ≈ 54 %
    assert "54 % of roof" in decode.label and "AI 1" in decode.label
    mm = pts["matmul 4096"]
    assert mm.ai == pytest.approx(1365.33, rel=1e-5) and mm.color == COMPUTE_BOUND_COLOR
    assert pts["x + 1"].ai == pytest.approx(0.25) and pts["x + 1"].color == MEMORY_BOUND_COLOR
    # Every point, ridge and roof corner inside the axes with margin.
    (x0, x1), (y0, y1) = seed_chart.xlim, seed_chart.ylim
    for p in seed_chart.points:
        assert x0 < p.ai < x1 and y0 < p.flop_per_s < y1
    for r in seed_chart.ridges:
        assert x0 < r.ai / 10 and r.ai * 10 <= x1 and r.flop_per_s * 2 < y1
    assert seed_chart.ax_.get_xscale() == "log" and seed_chart.ax_.get_yscale() == "log"
    assert seed_chart.ax_.get_xlim() == pytest.approx(seed_chart.xlim)


def test_legend_names_each_roof(seed_chart):
    texts = [t.get_text() for t in seed_chart.ax_.get_legend().get_texts()]
    assert "T4 (measured)" in texts and "T4 (nominal)" in texts
    assert "memory-bound side" in texts and "compute-bound side" in texts


def test_unmeasured_kernel_is_hollow_at_attainable():
    k = Kernel("predicted", {"fp16": 1e9}, {"DRAM": 1e8})
    d = plot_roofline([T4_MEASURED], [k])
    (p,) = d.points
    assert not p.measured and p.flop_per_s == pytest.approx(270e9 * 10)
    (marker,) = [ln for ln in d.ax_.lines if tuple(ln.get_xdata()) == (10.0,)]
    assert marker.get_markerfacecolor() == "none"


def test_hierarchical_points_one_per_level():
    roof = Roof("cpu", "measured",
                compute=(Ceiling(200e9, precision="fp64", unit="vector", provenance="measured"),),
                memory=(Ceiling(900e9, level="L1", provenance="measured"),
                        Ceiling(360e9, level="L2", provenance="measured"),
                        Ceiling(40e9, level="DRAM", provenance="measured")))
    k = Kernel("stencil", {"fp64": 1e9}, {"L1": 8e9, "L2": 4e9, "DRAM": 2e8}, seconds=0.05)
    d = roofline_data([roof], [k])
    by_level = {p.level: p for p in d.points}
    assert set(by_level) == {"L1", "L2", "DRAM"}
    assert {p.marker for p in d.points} == {"^", "s", "o"}
    assert all(p.flop_per_s == pytest.approx(20e9) for p in d.points)   # one time, one height
    assert by_level["L1"].ai == pytest.approx(0.125)
    assert by_level["DRAM"].ai == pytest.approx(5.0)   # ridge 200/40 = 5: not left of it
    assert by_level["DRAM"].color == COMPUTE_BOUND_COLOR
    # L2: AI 0.25 left of its ridge 200/360 = 0.56.
    assert by_level["L2"].color == MEMORY_BOUND_COLOR
    # One slope per level, each ending on the compute ceiling.
    ends = {ln.label.split()[0]: ln.xs[1] for ln in d.lines if ln.kind == "memory"}
    assert ends == pytest.approx({"L1": 200 / 900, "L2": 200 / 360, "DRAM": 5.0})
    only = roofline_data([roof], [k], level="L2")
    assert [p.level for p in only.points] == ["L2"]


def test_sweep_arrows_trajectory():
    before = Kernel("gpp", {"fp64": 1e9}, {"DRAM": 1e9}, seconds=1e-2)
    after = Kernel("gpp", {"fp64": 1e9}, {"DRAM": 2.5e8}, seconds=2e-3)
    d = roofline_data([T4_MEASURED], [before, after], trajectory=True,
                      sweep=[(0.5, 1e11), (2.0, 4e11)], arrows=[(before, after)])
    (sweep,) = [ln for ln in d.lines if ln.kind == "sweep"]
    assert sweep.xs == (0.5, 2.0) and sweep.ys == (1e11, 4e11)
    kinds = sorted(a.kind for a in d.arrows)
    assert kinds == ["arrow", "trajectory"]
    for a in d.arrows:
        assert a.start == pytest.approx((1.0, 1e11)) and a.end == pytest.approx((4.0, 5e11))
    assert len(d.points) == 2   # the arrow's kernels are not drawn twice
    # The sweep's precision marks its ridge (where it should bend) even with no kernel.
    s = roofline_data([T4_NOMINAL], sweep=[(1.0, 3e11)], sweep_precision="fp32")
    assert {r.compute: r.ai for r in s.ridges} == pytest.approx(
        {"fp32 vector": 8.1e12 / 320e9, "fp16 tensor": 65e12 / 320e9})
    assert [ln.label for ln in s.lines if ln.kind == "sweep"] == [
        "intensity sweep fp32 (measured)"]


def test_zero_flop_kernel_is_noted_not_drawn():
    k = Kernel("embedding", {"fp16": 0.0}, {"DRAM": 1e6}, seconds=1e-5)
    d = roofline_data([T4_MEASURED], [k, ADD1])
    assert [p.kernel for p in d.points] == ["x + 1"]
    assert any("embedding" in n and "log axes" in n for n in d.notes)


def test_roofs_only_and_given_axes():
    from matplotlib.figure import Figure

    fig = Figure()
    ax = fig.add_subplot()
    d = plot_roofline([T4_NOMINAL], ax=ax, title="T4")
    assert d.ax_ is ax and d.figure_ is fig and ax.get_title() == "T4"
    assert d.points == () and len(d.ridges) == 1
    with pytest.raises(InputError, match="at least one roof"):
        roofline_data([])


def test_save_png_and_svg(tmp_path, seed_chart):
    png = save_figure(seed_chart, tmp_path / "chart.png")
    svg = save_figure(seed_chart, tmp_path / "chart.svg")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = svg.read_text()
    assert text.lstrip().startswith("<?xml") and "<svg" in text
    assert sorted(p.name for p in tmp_path.iterdir()) == ["chart.png", "chart.svg"]
    with pytest.raises(InputError, match=r"\.png or \.svg"):
        save_figure(seed_chart, tmp_path / "chart.pdf")


def test_import_does_not_load_matplotlib():
    code = ("import sys\nfrom rooflab.model import Roof\nfrom rooflab.report import chart\n"
            "chart.roofline_data([Roof('x')])\nprint('matplotlib' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# --- ceiling selection and label layout -------------------------------------------------
# Nine ceilings, as a catalog GPU has (A100-like figures; fp32 vector = fp64 tensor).
BIG = Roof("GPU", "nominal",
           compute=(Ceiling(9.7e12, precision="fp64", unit="vector"),
                    Ceiling(19.5e12, precision="fp64", unit="tensor"),
                    Ceiling(19.5e12, precision="fp32", unit="vector"),
                    Ceiling(156e12, precision="tf32", unit="tensor"),
                    Ceiling(78e12, precision="fp16", unit="vector"),
                    Ceiling(312e12, precision="fp16", unit="tensor"),
                    Ceiling(312e12, precision="bf16", unit="tensor"),
                    Ceiling(624e12, precision="int8", unit="tensor"),
                    Ceiling(1248e12, precision="int4", unit="tensor")),
           memory=(Ceiling(2.04e12, level="DRAM"),))
SOFTMAX = Kernel("softmax", {"fp32": 1e9}, {"DRAM": 8e9}, seconds=5e-3)


def _compute_labels(d):
    return sorted(ln.label.rsplit(" ", 2)[0] for ln in d.lines if ln.kind == "compute")


def test_default_draws_kernels_ceilings_and_top_float():
    d = roofline_data([BIG], [SOFTMAX])
    # fp32 (judges softmax) + top float (fp16 tensor 312; bf16 tensor equal, first wins).
    assert _compute_labels(d) == ["fp16 tensor", "fp32 vector"]
    assert {r.compute for r in d.ridges} == {"fp32 vector", "fp16 tensor"}
    assert sorted(r.ai for r in d.ridges) == pytest.approx([19.5e12 / 2.04e12, 312e12 / 2.04e12])
    assert len(d.hidden) == 7 and any(h.startswith("GPU (nominal): int4 tensor") for h in d.hidden)
    (note,) = [n for n in d.notes if "left out" in n]
    assert "drawn 2 of 9" in note and "int4 tensor" in note and "--precision all" in note
    drawn = plot_roofline([BIG], [SOFTMAX])
    legend = [t.get_text() for t in drawn.ax_.get_legend().get_texts()]
    assert "7 compute ceiling(s) not drawn (rooflab plot --precision all)" in legend
    # The kernel is judged by the full roof whatever is drawn.
    # softmax: 2e11 FLOP/s achieved at AI 0.125 under min(19.5e12, 0.125 x 2.04e12).
    assert d.points[0].percent_of_roof == pytest.approx(2e11 / 2.55e11 * 100)
    # Few ceilings: all drawn, nothing hidden, no note.
    t4 = roofline_data([T4_NOMINAL], [DECODE])
    assert _compute_labels(t4) == ["fp16 tensor", "fp32 vector"] and t4.hidden == ()


def test_default_without_kernels_keeps_fastest_unit_per_precision():
    d = roofline_data([BIG])
    assert _compute_labels(d) == ["bf16 tensor", "fp16 tensor", "fp32 vector", "fp64 tensor",
                                  "int4 tensor", "int8 tensor", "tf32 tensor"]
    assert sorted(h.split(": ")[1].rsplit(" ", 2)[0] for h in d.hidden) == ["fp16 vector",
                                                                            "fp64 vector"]


def test_precisions_option():
    d = roofline_data([BIG, T4_NOMINAL], [SOFTMAX], precisions=["fp16", "fp32"])
    by_roof = {r: sorted(ln.label.rsplit(" ", 2)[0] for ln in d.lines
                         if ln.kind == "compute" and ln.roof == r) for r in d.roof_labels}
    assert by_roof == {"GPU (nominal)": ["fp16 tensor", "fp16 vector", "fp32 vector"],
                       "T4 (nominal)": ["fp16 tensor", "fp32 vector"]}
    # Ridges follow: only drawn ceilings, and the slope ends at the top one drawn.
    assert {r.compute for r in d.ridges} <= {"fp16 tensor", "fp16 vector", "fp32 vector"}
    slope = next(ln for ln in d.lines if ln.roof == "GPU (nominal)" and ln.kind == "memory")
    assert slope.ys[1] == pytest.approx(312e12)
    assert len(_compute_labels(roofline_data([BIG], precisions="all"))) == 9
    assert _compute_labels(roofline_data([BIG], precisions=["fp16 tensor"])) == ["fp16 tensor"]
    with pytest.raises(InputError, match="no roof has a 'fp8' compute ceiling.*fp16"):
        roofline_data([BIG], precisions=["fp8"])


def _label_boxes(d):
    from rooflab.report.chart_layout import _to_pt
    from rooflab.report.chart_layout_cost import _box

    boxes = []
    for ln in d.lines:
        if ln.kind == "compute" and ln.text:
            boxes.append(("line " + ln.label, _box(_to_pt(*ln.label_xy, d.xlim, d.ylim),
                                                   ln.label_offset, ln.label_ha, ln.label_va,
                                                   ln.text)))
    for p in d.points:
        if p.text:
            boxes.append((p.kernel, _box(_to_pt(p.ai, p.flop_per_s, d.xlim, d.ylim),
                                         p.label_offset, p.label_ha, p.label_va, p.text)))
    return boxes


def _assert_no_overlap(boxes):
    for i, (na, a) in enumerate(boxes):
        for nb, b in boxes[i + 1:]:
            tol = 0.5   # points: half a point of touch is invisible
            apart = (a[2] <= b[0] + tol or b[2] <= a[0] + tol or a[3] <= b[1] + tol
                     or b[3] <= a[1] + tol)
            assert apart, f"labels of {na!r} and {nb!r} overlap: {a} {b}"


def test_close_ceiling_labels_do_not_collide():
    # Two roofs whose ceilings interleave within a few percent (T4 vs A100 style).
    close = Roof("B", "nominal", compute=tuple(
        Ceiling(v, precision=p, unit="tensor") for v, p in
        ((66e12, "fp16"), (132e12, "int8"), (8.3e12, "fp32"), (16.5e12, "bf16"))),
        memory=(Ceiling(330e9, level="DRAM"),))
    d = roofline_data([T4_NOMINAL, close, BIG], precisions="all")
    boxes = _label_boxes(d)
    assert len(boxes) == 2 + 4 + 7   # BIG: two pairs of equal ceilings share one label each
    _assert_no_overlap(boxes)
    shared = sorted(ln.text for ln in d.lines if ", " in ln.text or " = " in ln.text)
    # BIG is the third roof: its labels start with its bead, told apart without colour
    # (review s23 r6 F3); one unit name says it once (group_label, s33 I)
    assert shared == ["  \u25cb fp16 = bf16 tensor 312 TFLOP/s ",
                      "  \u25cb fp64 tensor, fp32 vector 19.5 TFLOP/s "]


def test_many_kernels_at_similar_ai_get_apart_labels():
    ks = [Kernel(f"kernel_{i}", {"fp16": 1e9 * (1 + i / 40)}, {"DRAM": 1e9},
                 seconds=1e-2 * (1 + i / 50)) for i in range(20)]
    d = roofline_data([T4_MEASURED], ks)
    assert len(d.points) == 20
    assert all(p.text and "\n" not in p.text for p in d.points)   # one line each when many
    # 1e11 FLOP/s of 270 GB/s x AI 1; "of roof" since review 18c F6
    assert d.points[0].text == "kernel_0 · 37 % of roof"
    offsets = {(p.label_offset, p.label_ha) for p in d.points}
    assert len(offsets) > 1   # nudged: not all at the same place
    _assert_no_overlap(_label_boxes(d))
    # The slope's label sits on its slope (y = B x), inside the drawn stretch.
    (slope,) = [ln for ln in d.lines if ln.kind == "memory"]
    x, y = slope.label_xy
    assert slope.xs[0] < x < slope.xs[1] and y == pytest.approx(270e9 * x)
    # The same inputs give the same layout.
    again = roofline_data([T4_MEASURED], ks)
    assert [p.label_offset for p in again.points] == [p.label_offset for p in d.points]


def test_trajectory_labels_steps():
    steps = [Kernel("gpp", {"fp64": 4e9}, {"DRAM": b}, s)
             for b, s in ((4e9, 8e-3), (1e9, 2e-3), (5e8, 1e-3))]
    d = roofline_data([T4_MEASURED], steps, trajectory=True)
    texts = [p.text.split("\n")[0] for p in d.points]
    assert texts == ["gpp · step 1", "step 2", "step 3"]
    assert "AI 8" in d.points[2].text   # the last step carries its figures


def test_no_slope_runs_through_a_ceiling_label():
    # A measured CPU roof beside a server CPU 30x faster: the server roof's slope climbs
    # through the region right of its lower ridges, where its ceiling labels go first.
    from rooflab.hardware.catalog import lookup_roof
    from rooflab.report.chart_layout import _line_boxes, _to_pt
    from rooflab.report.chart_layout_cost import _overlap

    measured = Roof("mine", "measured", compute=(
        Ceiling(118e9, precision="fp64", unit="vector", provenance="measured"),
        Ceiling(236e9, precision="fp32", unit="vector", provenance="measured")),
        memory=(Ceiling(35e9, level="DRAM", provenance="measured"),
                Ceiling(586e9, level="L1", provenance="measured")))
    d = roofline_data([measured, lookup_roof("EPYC 9654")], precisions="all")
    slopes = _line_boxes([ln for ln in d.lines if ln.kind == "memory"],
                         lambda x, y: _to_pt(x, y, d.xlim, d.ylim))
    for name, box in _label_boxes(d):
        struck = [s for s in slopes if _overlap(box, s) > 0]
        assert not struck, f"a slope runs through the label of {name}"


def test_a_short_arrow_goes_under_its_overlapping_markers_a_long_one_between_them():
    # over the markers its head covered the "before" marker (review s18 r5 F5a)
    pytest.importorskip("matplotlib")
    from matplotlib.text import Annotation

    from rooflab.report.chart import plot_roofline

    before = Kernel("add", {"fp32": 1e9}, {"DRAM": 4e10}, seconds=0.04)
    after = Kernel("add", {"fp32": 1e9}, {"DRAM": 4e10}, seconds=0.05)   # 25 -> 20 GFLOP/s
    far = Kernel("add", {"fp32": 1e9}, {"DRAM": 4e9}, seconds=0.004)      # 10x the AI
    for pair, short in (((before, after), True), ((before, far), False)):
        d = plot_roofline([T4_NOMINAL], arrows=[pair])
        (arrow,) = [a for a in d.ax_.get_children()
                    if isinstance(a, Annotation) and a.arrow_patch is not None
                    and not a.get_text()]
        shrink = arrow.arrowprops["shrinkA"]
        # a long one starts at its "before" marker's edge (radius + 1 pt), not 5 pt in
        assert arrow.get_zorder() < 4 if short else (
            shrink > 5.0 and arrow.get_zorder() == 3)
