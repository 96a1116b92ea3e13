"""Points are linked to their kernels by index (review 14b F5, F8, F14).

Point.kernel was a name, and Analysis.points_of, Analysis.primary and the report's
kernel_of re-matched points to kernels by value: two kernels of one name (a kernel CSV
listing two launches, two GEMMs of a model both called "gemm") collapsed into one point
in primary(), and two identical launches each got both points. Now analyze sets
Point.kernel_index (the kernel's position in Analysis.kernels) and every lookup follows
it. The report's nominal floors and the profiler verbs' CSV read the model's numbers.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from rooflab.hardware.catalog import lookup_roof
from rooflab.model import Ceiling, Kernel, Roof, analyze
from rooflab.model.placement import point_on

H100 = lookup_roof("H100")
# two GEMMs of one name: 2 TFLOP over 4 GB (AI 500) in 4 ms, 1 GFLOP over 100 MB (AI 10)
# in 200 us
BIG = Kernel("gemm", {"bf16": 2e12}, {"DRAM": 4e9}, seconds=4e-3)
SMALL = Kernel("gemm", {"bf16": 1e9}, {"DRAM": 1e8}, seconds=2e-4)
ROOF = Roof("one DRAM roof", "nominal",
            compute=(Ceiling(8e12, precision="fp32", unit="vector"),),
            memory=(Ceiling(300e9, level="DRAM"),))


def _links_hold(a) -> None:
    """The property every analysis has: a kernel's points are exactly those whose index
    names it, and each point's kernel is the one its index names."""
    for i, k in enumerate(a.kernels):
        assert a.points_of(k) == tuple(p for p in a.points if a.kernels[p.kernel_index] is k)
        assert all(p.kernel_index == i for p in a.points_of(k))
    for p in a.points:
        assert a.kernel_of(p) is a.kernels[p.kernel_index]
        assert a.kernel_of(p).name == p.kernel


def test_two_same_name_kernels_keep_two_points_in_primary():
    a = analyze(H100, [BIG, SMALL])
    assert [p.kernel_index for p in a.points] == [0, 1]
    primary = a.primary()
    assert len(primary) == 2                      # was 1: keyed by the name "gemm"
    # H100 bf16 tensor 989.5 TFLOP/s, DRAM 3.35 TB/s: the ridge is 295.4 FLOP/B
    assert [p.ai for p in primary] == [pytest.approx(500.0), pytest.approx(10.0)]
    assert [p.bound for p in primary] == ["compute", "memory"]
    assert [a.kernel_of(p) for p in primary] == [BIG, SMALL]
    assert a.kernel_of(primary[1]) is SMALL
    _links_hold(a)


def test_identical_launches_each_keep_their_own_point():
    """Two kernels of one name with the same numbers (one launch listed twice): each had
    both points, as the match by name and numbers found both."""
    twin = Kernel("gemm", {"bf16": 1e9}, {"DRAM": 1e8}, seconds=2e-4)
    a = analyze(H100, [SMALL, twin])
    assert a.points_of(SMALL) == (a.points[0],)
    assert a.points_of(twin) == (a.points[1],)
    _links_hold(a)


def test_links_hold_for_several_levels_and_unplaced_kernels():
    multi = Kernel("stencil", {"fp32": 1e9}, {"DRAM": 1e8, "L2": 4e8}, seconds=1e-3)
    lone = Kernel("l2 only", {"fp32": 1e9}, {"L2": 1e8}, seconds=4e-3)
    a = analyze(ROOF, [multi, lone, BIG.with_(flop={"fp32": 2e12})])
    assert [p.kernel_index for p in a.points] == [0, 2]   # ROOF has no L2: lone unplaced
    assert [u.kernel_index for u in a.unplaced] == [1]
    assert a.points_of(lone) == ()
    _links_hold(a)


def test_the_report_tables_list_both_gemms():
    from rooflab.report.markdown import markdown_report

    text = markdown_report(analyze(H100, [BIG, SMALL]))
    roof_table = text.split("## Kernels on the roof")[1].split("##")[0]
    rows = [r for r in roof_table.splitlines() if r.startswith("| gemm |")]
    # AI 500 achieves 2e12 / 4e-3 = 500 TFLOP/s; AI 10 achieves 1e9 / 2e-4 = 5 TFLOP/s
    # of min(989.5, 3.35 x 10 = 33.5) TFLOP/s
    assert [r.split(" | ")[3:6] for r in rows] == [["500", "500 TFLOP/s", "990 TFLOP/s"],
                                                  ["10", "5 TFLOP/s", "33.5 TFLOP/s"]]
    top = text.split("## Top kernels to work on")[1].split("##")[0]
    assert len([r for r in top.splitlines() if r.startswith("| ") and "| gemm |" in r]) == 2


def test_the_html_chart_names_and_draws_both_gemms():
    pytest.importorskip("plotly")
    from rooflab.report.html import figure

    fig = figure(analyze(H100, [BIG, SMALL]))
    (t,) = [t for t in fig.data if t.mode == "markers+text"]
    assert sorted(zip(t.x, t.y, strict=True)) == [(pytest.approx(10.0), pytest.approx(5e12)),
                                                   (pytest.approx(500.0), pytest.approx(5e14))]
    assert list(t.text) == ["gemm", "gemm"]   # each named at its own point


def test_nominal_floors_come_from_the_model():
    """The record table's nominal column: the same kernel placed on the nominal roof
    (model.analysis.point_on), not min(peak, B x AI) written again in the renderer."""
    measured = Roof("H100 measured", "measured",
                    compute=(Ceiling(700e12, precision="bf16", unit="tensor",
                                     provenance="measured"),),
                    memory=(Ceiling(3.0e12, level="DRAM", provenance="measured"),))
    a = analyze(measured, [BIG, SMALL])
    there = [point_on(H100, p, a.kernel_of(p)) for p in a.points]
    # BIG: min(989.5e12, 3.35e12 x 500) = 989.5e12; floor max(2e12 / 989.5e12 = 2.021 ms,
    # 4e9 / 3.35e12 = 1.194 ms) = 2.021 ms. SMALL: min(989.5e12, 33.5e12) = 33.5e12; floor
    # max(1.01 us, 1e8 / 3.35e12 = 29.85 us) = 29.85 us
    assert [p.attainable_flop_per_s for p in there] == [pytest.approx(989.5e12),
                                                        pytest.approx(33.5e12)]
    assert [p.floor_s for p in there] == [pytest.approx(2e12 / 989.5e12),
                                          pytest.approx(1e8 / 3.35e12)]
    at_l2 = replace(a.points[0], level="L2")
    assert point_on(H100, at_l2, BIG) is None    # no L2 ceiling on the catalog H100


def test_csv_rows_of_a_level_the_roof_lacks_read_the_model():
    """-o x.csv lists every level a kernel has bytes at; at a level the roof lacks (L2
    here) AI and achieved are the model's (LevelFigures), the share the kernel's."""
    from rooflab.cli.profiled import csv_table

    multi = Kernel("stencil", {"fp32": 1e9}, {"DRAM": 1e8, "L2": 4e8}, seconds=1e-3)
    other = Kernel("other", {"fp32": 1e9}, {"DRAM": 1e9}, seconds=3e-3)
    lone = Kernel("l2 only", {"fp32": 1e9}, {"L2": 1e8}, seconds=4e-3)
    rows, _ = csv_table(analyze(ROOF, [multi, other, lone]))
    by = {(r["kernel"], r["level"]): r for r in rows}
    # 8 ms in all: stencil 1/8, l2 only 4/8; AI 1e9 / 4e8 = 2.5 and 1e9 / 1e8 = 10;
    # achieved 1e9 / 1 ms = 1 TFLOP/s and 1e9 / 4 ms = 250 GFLOP/s
    l2 = by[("stencil", "L2")]
    assert (l2["ai"], l2["achieved_flop_per_s"], l2["time_share"]) == (
        pytest.approx(2.5), pytest.approx(1e12), pytest.approx(0.125))
    assert l2["percent_of_roof"] is None and l2["bound"] is None
    alone = by[("l2 only", "L2")]
    assert (alone["ai"], alone["achieved_flop_per_s"], alone["time_share"]) == (
        pytest.approx(10.0), pytest.approx(250e9), pytest.approx(0.5))
    assert by[("stencil", "DRAM")]["percent_of_roof"] == pytest.approx(
        100 * 1e12 / min(8e12, 300e9 * 10))


def _gemm_warnings() -> list[str]:
    from rooflab.cli.profiled import above_roof_warnings

    gemm = Kernel("gemm", {"fp32": 1e9}, {"DRAM": 1e7}, seconds=1e-3)   # AI 100, 1 TFLOP/s
    return above_roof_warnings(analyze(ROOF, [gemm]))


def test_profiler_warnings_follow_the_sanity_checks_themselves(monkeypatch):
    """cli/profiled diagnosed only when copies of the two checks' conditions said a
    warning might fire; a change to either check was silently dropped there. With the
    AI-high check changed to fire on a GEMM, the warning now reaches the profiler verbs."""
    from rooflab.model import sanity

    assert _gemm_warnings() == []          # AI 100 for a GEMM: fine; 12.5 % of roof

    def fires(kernel, points):
        return sanity.Finding(kernel=kernel.name, check="ai_high", severity="warning",
                              message="changed check", level=points[0].level)

    monkeypatch.setattr(sanity, "check_ai_high", fires)
    (line,) = _gemm_warnings()
    assert line.startswith("1 kernel(s) have an AI too high for their op: gemm (AI 100)")


def test_profiler_warnings_for_a_kernel_above_its_roof():
    from rooflab.cli.profiled import above_roof_warnings

    # 1e9 FLOP over 1e8 B (AI 10) on 8 TFLOP/s and 300 GB/s: floor 333 us; in 100 us
    fast = Kernel("fast", {"fp32": 1e9}, {"DRAM": 1e8}, seconds=1e-4)
    (line,) = above_roof_warnings(analyze(ROOF, [fast]))
    assert line.startswith("1 kernel(s) run faster than the roof allows: fast (3.33x above)")


def test_shares_per_file_follow_each_kernel_not_its_name():
    """Two profiling runs (step files) each with a kernel "k": each point's share is of its
    own kernel's file. By name, both "k" points read the second file's kernel (2 ms) and
    the first file's "k" counted into the second file's total: 2/3 each."""
    from rooflab.cli.profiled import shares_per_file

    first = Kernel("k", {"fp32": 1e9}, {"DRAM": 1e8}, seconds=1e-3, meta={"step_index": 0})
    other = Kernel("other", {"fp32": 1e9}, {"DRAM": 1e8}, seconds=3e-3,
                   meta={"step_index": 0})
    second = Kernel("k", {"fp32": 1e9}, {"DRAM": 1e8}, seconds=2e-3, meta={"step_index": 1})
    a, note = shares_per_file(analyze(ROOF, [first, other, second]))
    # file 0: 1 ms + 3 ms; file 1: 2 ms
    assert [p.time_share for p in a.points] == [pytest.approx(0.25), pytest.approx(0.75),
                                                pytest.approx(1.0)]
    assert note.startswith("share is of each kernel's own file: the 2 files")
