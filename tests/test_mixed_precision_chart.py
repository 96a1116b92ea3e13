"""A mixed-precision kernel's own weighted compute ceiling on the charts (PNG and HTML) and in
the text places that name a kernel's ceiling (record table, ridge-band warning, sanity's
precision fallback), as `rooflab report` holds it (ceiling.kernel_ceiling).

A100 hand numbers (SI, catalog): fp16 tensor 312 TFLOP/s, fp32 vector 19.5 TFLOP/s, DRAM
2039 GB/s. 9e9 fp16 tensor + 1e9 fp32 FLOP: 9e9 / 312e12 + 1e9 / 19.5e12 = 28.846 µs +
51.282 µs = 80.128 µs, so 10e9 / 80.128 µs = 124.8 TFLOP/s exactly (312 = 16 x 19.5:
10 / (25 / 312) = 124.8); its ridge 124.8e12 / 2039e9 = 61.21 FLOP/B, left of the fp16
tensor ridge 312e12 / 2039e9 = 153.0 the chart drew alone before.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from rooflab.hardware.catalog import lookup_roof
from rooflab.hardware.profile import MachineProfile
from rooflab.model import Ceiling, Kernel, Roof, analyze
from rooflab.model.diagnose import diagnose
from rooflab.model.sanity import check_kernel
from rooflab.report.chart import roofline_data
from rooflab.report.chart_parts import COMPUTE_BOUND_COLOR
from rooflab.report.html import figure
from rooflab.report.markdown import record_rows, trust_warnings

A100 = lookup_roof("A100")
WEIGHTED = 124.8e12                      # FLOP/s, hand-computed above
DRAM = 2039e9                            # B/s
RIDGE = WEIGHTED / DRAM                  # 61.21 FLOP/B
FP16_RIDGE = 312e12 / DRAM               # 153.0 FLOP/B


def _mixed(name="mixed", scale=1.0, seconds=1e-4):
    # AI = 10e9 / 1e8 = 100 FLOP/B: right of the weighted ridge (61.2), left of fp16's (153);
    # 10e9 FLOP in 100 µs = 100 TFLOP/s, under the weighted 124.8 (80 % of roof).
    return Kernel(name, {"fp16": 9e9 * scale, "fp32": 1e9 * scale}, {"DRAM": 1e8 * scale},
                  seconds=seconds * scale, unit="tensor")


def _single():
    return Kernel("gemm", {"fp16": 10e9}, {"DRAM": 1e8}, seconds=1e-4, unit="tensor")


def _mixed_lines(d):
    return [ln for ln in d.lines if ln.kind == "mixed"]


def test_hand_numbers():
    assert 10e9 / (9e9 / 312e12 + 1e9 / 19.5e12) == pytest.approx(WEIGHTED, rel=1e-12)
    assert RIDGE == pytest.approx(61.2065, rel=1e-5)
    assert FP16_RIDGE == pytest.approx(153.016, rel=1e-5)


def test_chart_draws_the_weighted_segment_from_the_kernels_ridge():
    d = roofline_data([A100], [_mixed()])
    (ln,) = _mixed_lines(d)
    assert ln.ys == (pytest.approx(WEIGHTED, rel=1e-12),) * 2
    assert ln.xs[0] == pytest.approx(RIDGE, rel=1e-12)
    # short: a decade right of the ridge (the point at AI 100 is under it: 2 x 100 < 612)
    assert ln.xs[1] == pytest.approx(10 * RIDGE, rel=1e-12)
    assert ln.style == "dashed" and ln.roof == ""
    (p,) = d.points
    assert p.side == "compute" and ln.color == p.color == COMPUTE_BOUND_COLOR
    assert ln.label == "mixed mixed roof 124.8 TFLOP/s (weighted by FLOP share)"
    # the first ridge (the one the dotted vertical marks) is the kernel's weighted one
    assert d.ridges[0].ai == pytest.approx(RIDGE, rel=1e-12)
    assert d.ridges[0].compute == "weighted fp16 tensor + fp32 vector"


def test_drawn_artist_and_legend():
    d = roofline_data([A100], [_mixed()]).plot()
    (art,) = [a for a in d.ax_.lines if (a.get_gid() or "").startswith("mixed-roof:")]
    assert list(art.get_ydata()) == pytest.approx([WEIGHTED, WEIGHTED], rel=1e-12)
    assert art.get_xdata()[0] == pytest.approx(RIDGE, rel=1e-12)
    assert art.get_linestyle() == "--" and art.get_linewidth() == 1.0
    texts = [t.get_text() for t in d.ax_.get_legend().get_texts()]
    assert "mixed mixed roof 124.8 TFLOP/s (weighted by FLOP share)" in texts


def test_single_precision_chart_has_no_mixed_artist():
    d = roofline_data([A100], [_single()]).plot()
    assert _mixed_lines(d) == []
    assert not [a for a in d.ax_.lines if (a.get_gid() or "").startswith("mixed-roof:")]
    assert d.ridges[0].ai == pytest.approx(FP16_RIDGE, rel=1e-12)
    assert not any("weighted" in t.get_text() for t in d.ax_.get_legend().get_texts())


def test_kernels_sharing_a_weighted_ceiling_draw_it_once():
    # the same 90/10 split at twice the size: the same 124.8 TFLOP/s ceiling
    d = roofline_data([A100], [_mixed("a"), _mixed("b", scale=2.0)])
    (ln,) = _mixed_lines(d)
    assert ln.label == "a, b mixed roof 124.8 TFLOP/s (weighted by FLOP share)"
    assert [r.ai for r in d.ridges].count(pytest.approx(RIDGE, rel=1e-12)) == 1


def test_slope_drawn_up_to_the_ridge_when_no_drawn_ceiling_reaches_it():
    # only fp32 vector (19.5 TFLOP/s) drawn: the DRAM slope stops at 19.5e12 / 2039e9 =
    # 9.564 FLOP/B, so the segment starts there and climbs to its ridge (61.21)
    d = roofline_data([A100], [_mixed()], precisions=["fp32 vector"])
    (ln,) = _mixed_lines(d)
    assert ln.xs[:2] == (pytest.approx(19.5e12 / DRAM, rel=1e-12),
                         pytest.approx(RIDGE, rel=1e-12))
    assert ln.ys == (pytest.approx(19.5e12, rel=1e-12),
                     pytest.approx(WEIGHTED, rel=1e-12), pytest.approx(WEIGHTED, rel=1e-12))


def test_html_chart_draws_the_weighted_segment():
    pytest.importorskip("plotly", reason="an HTML report needs plotly (the [html] extra)")
    fig = figure(analyze(A100, [_mixed(), _single()]))
    (t,) = [t for t in fig.data if "weighted by FLOP share" in (t.name or "")]
    assert t.name == "mixed mixed roof 124.8 TFLOP/s (weighted by FLOP share)"
    assert list(t.y) == pytest.approx([WEIGHTED, WEIGHTED], rel=1e-12)
    assert t.x[0] == pytest.approx(RIDGE, rel=1e-12)
    assert t.line.dash == "dot"
    single = figure(analyze(A100, [_single()]))
    assert not [t for t in single.data if "weighted" in (t.name or "")]


def _measured_a100():
    return replace(A100, name="A100 measured", kind="measured", overhead_s=None)


def test_record_rows_hold_a_mixed_kernel_to_its_weighted_nominal_ceiling():
    measured = _measured_a100()
    profile = MachineProfile(host={"name": "a100"}, nominal=replace(A100, overhead_s=None),
                             measured=measured)
    rows = {r[0]: r for r in record_rows(analyze(measured, [_mixed(), _single()]), profile)}
    # mixed: min(124.8e12, 2039e9 x 100 = 203.9e12) = 124.8 TFLOP/s (the fp16 tensor
    # ceiling alone said 203.9); floor max(10e9 / 124.8e12 = 80.13 µs, 1e8 / 2039e9 =
    # 49.04 µs) = 80.1 µs (not 49 µs)
    assert rows["mixed: FLOP/s"][1] == "125 TFLOP/s"
    assert rows["mixed: time"][1] == "80.1 us (floor)"
    # single precision unchanged: min(312e12, 203.9e12) = 204 TFLOP/s; floor 49 µs
    assert rows["gemm: FLOP/s"][1] == "204 TFLOP/s"
    assert rows["gemm: time"][1] == "49 us (floor)"


def test_no_ridge_band_warning_for_a_mixed_kernel_on_the_same_side_of_both_roofs():
    # measured = nominal values: AI 100 is compute-side of the weighted ridge (61.2) on
    # both roofs; the fp16 tensor ridge (153) alone put it memory-side on the nominal one
    measured = _measured_a100()
    profile = MachineProfile(host={"name": "a100"}, nominal=replace(A100, overhead_s=None),
                             measured=measured)
    a = analyze(measured, [_mixed()])
    warnings = trust_warnings(diagnose(a), profile, a.notes, a.kernels)
    assert not [w for w in warnings if "between the ridges" in w]


ROOF = Roof("no-fp64", compute=(Ceiling(312e12, precision="fp16", unit="tensor"),
                                Ceiling(19.5e12, precision="fp32", unit="vector")),
            memory=(Ceiling(DRAM, level="DRAM"),))


def test_precision_fallback_names_the_mixed_part_that_fell_back():
    # fp16 tensor + an fp64 epilogue (vector) on a roof without fp64: the fp64 part runs
    # at fp32 vector's 19.5 TFLOP/s, narrower math than fp64, so a warning naming fp64
    # (no fp64 stand-in but the slowest float ceiling; the dominant fp16's own ceiling is
    # exact, so the old check said 'info' and asked for an 'fp16 ceiling')
    k = Kernel("mixed64", {"fp16": 9e9, "fp64": 1e9}, {"DRAM": 1e8}, seconds=1e-4,
               unit="tensor")
    a = analyze(ROOF, [k])
    (p,) = a.points
    assert p.peak_flop_per_s == pytest.approx(WEIGHTED, rel=1e-12)
    (f,) = [f for f in check_kernel(a, k) if f.check == "precision_fallback"]
    assert f.severity == "warning"
    assert f.message.startswith("roof 'no-fp64' has no fp64 ceiling; using fp32 vector "
                                "(the slowest float ceiling)")
    assert "than the kernel's fp64 part does" in f.message
    assert f.fix.startswith("use a roof with a fp64 ceiling")


def test_precision_fallback_single_precision_unchanged():
    k = Kernel("dp", {"fp64": 1e9}, {"DRAM": 1e8}, seconds=1.0, unit="vector")
    (f,) = [f for f in check_kernel(analyze(ROOF, [k]), k) if f.check == "precision_fallback"]
    assert f.severity == "warning"
    assert f.message == ("roof 'no-fp64' has no fp64 ceiling; using fp32 vector (the slowest "
                         "float ceiling), so this point's percent of roof is only indicative; "
                         "that ceiling is for narrower, faster math than the kernel does, so "
                         "its % of roof and bound class are not meaningful")
    assert f.fix == "use a roof with a fp64 ceiling (a profile, or a catalog entry that lists it)"


def test_before_roof_segment_names_its_roof_and_climbs_its_own_slope():
    # arrows from A100 (not drawn) to H100: the before kernel's 124.8 TFLOP/s ceiling is
    # the A100's, its slope (not drawn) runs from the left edge up to its ridge 61.21
    h100 = lookup_roof("H100")
    after = _mixed(seconds=5e-5)
    d = roofline_data([h100], arrows=[(_mixed(), after)], before_roof=A100)
    before = [ln for ln in _mixed_lines(d) if " on " in ln.label]
    (ln,) = before
    assert ln.label == ("mixed mixed roof on NVIDIA A100 80GB SXM (nominal) 124.8 TFLOP/s "
                        "(weighted by FLOP share)")
    assert ln.xs[0] == d.xlim[0] and ln.ys[0] == pytest.approx(DRAM * d.xlim[0], rel=1e-12)
    assert ln.xs[1] == pytest.approx(RIDGE, rel=1e-12) and ln.ys[1:] == (
        pytest.approx(WEIGHTED, rel=1e-12),) * 2


def test_report_json_says_the_same_read_with_care_lines_as_the_text():
    # `rooflab report --json` called trust_warnings without the kernels (a mixed kernel
    # got the fp16-ridge band warning the text no longer gives) and without the notes.
    from rooflab.cli.report import report_dict

    measured = _measured_a100()
    profile = MachineProfile(host={"name": "a100"}, nominal=replace(A100, overhead_s=None),
                             measured=measured)
    a = analyze(measured, [_mixed()])
    text = trust_warnings(diagnose(a), profile, a.notes, a.kernels)
    assert report_dict(a, profile).get("read_with_care", []) == text
    assert not [w for w in text if "between the ridges" in w]
