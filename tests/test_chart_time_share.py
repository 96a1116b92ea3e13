"""The chart shows where the time is (review 14d G and L4): marker area proportional to a
kernel's share of the timed total (clamped 4-20 pt), a thin grey line through one kernel's
per-level points, and --min-share to leave out the long tail; the HTML report draws the
same sizes and lines."""

from __future__ import annotations

import json
import math

import pytest

from rooflab.cli.main import main
from rooflab.files import write_json
from rooflab.model import Ceiling, Kernel, Roof
from rooflab.model.analysis import analyze
from rooflab.model.schema import kernel_to_dict
from rooflab.report.chart import roofline_data
from rooflab.report.chart_parts import JOIN_LEGEND
from rooflab.report.marker_size import POINT_SIZE, SIZE_LEGEND, SIZE_MAX, SIZE_MIN, share_size

ROOF = Roof("Test GPU", "measured",
            compute=(Ceiling(10e12, precision="fp32", unit="vector", provenance="measured"),),
            memory=(Ceiling(1e12, level="DRAM", provenance="measured"),
                    Ceiling(4e12, level="L2", provenance="measured"),
                    Ceiling(16e12, level="L1", provenance="measured")))

# Five kernels whose times add up to 1 s: shares 50 %, 30 %, 14.9 %, 5 % and 0.1 %.
SECONDS = {"a": 0.5, "b": 0.3, "c": 0.149, "d": 0.05, "e": 0.001}


def kernels() -> list[Kernel]:
    # 1 GFLOP over 0.25 GB of DRAM: AI 4, under the 4 TFLOP/s of the roof there
    return [Kernel(name, {"fp32": 1e9}, {"DRAM": 2.5e8}, s) for name, s in SECONDS.items()]


def sizes(display) -> dict[str, float]:
    return {p.kernel: p.size for p in display.points}


def test_marker_area_proportional_to_time_share_within_the_clamp():
    d = roofline_data(ROOF, kernels())
    got = sizes(d)
    assert d.sized
    # area = size^2 = SIZE_MAX^2 x share: 400 pt^2 at 100 %
    assert got["a"] == pytest.approx(20 * math.sqrt(0.5))      # 14.142
    assert got["b"] == pytest.approx(20 * math.sqrt(0.3))      # 10.954
    assert got["c"] == pytest.approx(20 * math.sqrt(0.149))    # 7.720
    assert got["d"] == pytest.approx(20 * math.sqrt(0.05))     # 4.472
    for name in "abcd":
        assert got[name] ** 2 / SECONDS[name] == pytest.approx(SIZE_MAX ** 2)
    # 0.1 % would be 0.63 pt across: clamped to the smallest marker
    assert got["e"] == SIZE_MIN == 4.0
    assert {p.kernel: p.share for p in d.points} == pytest.approx(SECONDS)
    assert share_size(1.0) == SIZE_MAX and share_size(0.04) == pytest.approx(SIZE_MIN)
    assert share_size(None) == POINT_SIZE


def test_size_by_none_and_untimed_kernels_keep_one_size():
    assert set(sizes(roofline_data(ROOF, kernels(), size_by="none")).values()) == {8.0}
    untimed = [Kernel("u", {"fp32": 1e9}, {"DRAM": 2.5e8}), Kernel("v", {"fp32": 1e9},
                                                                   {"DRAM": 1e9})]
    d = roofline_data(ROOF, untimed)
    assert not d.sized and set(sizes(d).values()) == {POINT_SIZE}
    # one timed kernel among untimed ones: it holds all the time (20 pt), the others 8
    mixed = roofline_data(ROOF, [*untimed, Kernel("t", {"fp32": 1e9}, {"DRAM": 1e9}, 0.01)])
    assert sizes(mixed) == {"u": 8.0, "v": 8.0, "t": 20.0}
    with pytest.raises(Exception, match="size_by"):
        roofline_data(ROOF, kernels(), size_by="area")


def test_one_kernels_levels_joined_by_a_line():
    # 1 GFLOP in 1 ms: 1 TFLOP/s at every level; AI 1 at DRAM, 0.5 at L2, 0.25 at L1
    three = Kernel("gemm", {"fp32": 1e9}, {"DRAM": 1e9, "L2": 2e9, "L1": 4e9}, 1e-3)
    one = Kernel("copy", {"fp32": 1e8}, {"DRAM": 1e9}, 1e-3)
    d = roofline_data(ROOF, [three, one])
    assert len(d.joins) == 1                        # none for a one-level kernel
    j = d.joins[0]
    assert j.kind == "levels" and j.label == "gemm"
    assert j.xs == pytest.approx((0.25, 0.5, 1.0))  # in order of AI: L1, L2, DRAM
    assert j.ys == pytest.approx((1e12, 1e12, 1e12))
    # the drawn chart: one collection for the joins, markers at their sizes, the legend
    d.plot()
    coll = [c for c in d.ax_.collections if c.get_gid() == "level-joins"]
    assert len(coll) == 1 and len(coll[0].get_segments()) == 1
    assert coll[0].get_segments()[0][:, 0] == pytest.approx([0.25, 0.5, 1.0])
    # gemm holds half the time: 20 x sqrt(0.5) pt at each of its three levels
    ms = sorted(ln.get_markersize() for ln in d.ax_.lines if ln.get_marker() in "o^s"
                and len(ln.get_xdata()) == 1)
    assert ms == pytest.approx([20 * math.sqrt(0.5)] * 4)
    texts = [t.get_text() for t in d.ax_.get_legend().get_texts()]
    assert any(t.startswith(SIZE_LEGEND) for t in texts) and JOIN_LEGEND in texts
    # no joins, no sizes legend without them
    flat = roofline_data(ROOF, [one], size_by="none").plot()
    assert not flat.joins
    assert not any(SIZE_LEGEND in t.get_text() for t in flat.ax_.get_legend().get_texts())


def test_batched_points_carry_their_sizes():
    # over BATCH_POINTS (200) the unlabelled markers are one artist per look and size
    # (to 0.5 pt): 20 kernels at 4.5 % of the time each (4.24 pt: drawn 4.0), 280 at
    # 1/28 of 10 % (clamped, 4 pt); the labelled 20 one by one
    many = [Kernel(f"big{i}", {"fp32": 1e9}, {"DRAM": 2.5e8}, 0.045) for i in range(20)]
    many += [Kernel(f"k{i}", {"fp32": 1e9}, {"DRAM": 2.5e8}, 0.1 / 280) for i in range(280)]
    d = roofline_data(ROOF, many)
    assert {round(p.size, 3) for p in d.points if p.kernel.startswith("big")} == {
        round(20 * math.sqrt(0.045), 3)} == {4.243}
    d.plot()
    batched = [ln for ln in d.ax_.lines if ln.get_gid() == "kernel-points"]
    assert sum(len(ln.get_xdata()) for ln in batched) == 280
    assert {ln.get_markersize() for ln in batched} == {4.0}
    single = [ln.get_markersize() for ln in d.ax_.lines if ln.get_gid() is None
              and len(ln.get_xdata()) == 1 and ln.get_marker() == "o"]
    assert single == pytest.approx([20 * math.sqrt(0.045)] * 20)


def test_min_share_drops_the_long_tail_and_says_so():
    d = roofline_data(ROOF, kernels(), min_share=0.10)
    assert [k.name for k in d.kernels] == ["a", "b", "c"]
    note = "2 kernels under 10 % of the time not drawn (together 5.1 % of it"
    assert d.dropped.startswith(note) and any(n.startswith(note) for n in d.notes)
    # the shares stay those of the whole run: a is still half of it
    assert sizes(d)["a"] == pytest.approx(20 * math.sqrt(0.5))
    assert not roofline_data(ROOF, kernels(), min_share=0).dropped
    assert len(roofline_data(ROOF, kernels(), min_share=0.0005).kernels) == 5
    one = roofline_data(ROOF, kernels(), min_share=0.01)
    assert one.dropped.startswith("1 kernel under 1 % of the time not drawn (together "
                                  "0.1 % of it")
    with pytest.raises(Exception, match="min_share"):
        roofline_data(ROOF, kernels(), min_share=5)


@pytest.fixture
def kernel_file(tmp_path):
    path = tmp_path / "k.json"
    write_json(path, {"kernels": [kernel_to_dict(k) for k in kernels()]})
    return path


def test_plot_cli_min_share_and_size_by(tmp_path, kernel_file, capsys):
    out = tmp_path / "c.png"
    assert main(["plot", str(kernel_file), "--on", "T4", "-o", str(out), "--min-share",
                 "10%", "--json"]) == 0
    cap = capsys.readouterr()
    data = json.loads(cap.out)["drawn"]
    drawn = data["points"]
    assert data["joins"] == []        # one level each: nothing to join
    assert [p["kernel"] for p in drawn] == ["a", "b", "c"]
    assert [p["size"] for p in drawn] == pytest.approx(
        [20 * math.sqrt(s) for s in (0.5, 0.3, 0.149)])
    assert "2 kernels under 10 % of the time not drawn" in cap.err
    assert out.stat().st_size > 0
    assert main(["plot", str(kernel_file), "--on", "T4", "-o", str(out), "--size-by", "none",
                 "--json"]) == 0
    assert {p["size"] for p in json.loads(capsys.readouterr().out)["drawn"]["points"]} == {8.0}


@pytest.mark.parametrize("args, words", [
    (["--min-share", "abc"], "--min-share abc: give a percent of the time in [0, 100)"),
    (["--min-share", "100"], "--min-share 100: give a percent"),
    (["--min-share", "-1"], "--min-share -1: give a percent"),
    (["--size-by", "area"], "--size-by area: use time or none"),
])
def test_plot_cli_bad_options(tmp_path, kernel_file, capsys, args, words):
    assert main(["plot", str(kernel_file), "--on", "T4", "-o", str(tmp_path / "c.png"),
                 *args]) == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err
    assert not (tmp_path / "c.png").exists()


def test_html_traces_carry_the_same_sizes_and_joins():
    pytest.importorskip("plotly")
    from rooflab.report.html import chart_display, figure

    three = Kernel("gemm", {"fp32": 1e9}, {"DRAM": 1e9, "L2": 2e9, "L1": 4e9}, 0.75)
    one = Kernel("copy", {"fp32": 1e8}, {"DRAM": 1e9}, 0.25)
    analysis = analyze(ROOF, [three, one])
    display = chart_display(analysis)
    fig = figure(analysis, display=display)
    by_name = {t.name: t for t in fig.data}
    dram = by_name["kernels @ DRAM"]
    # the PNG's sizes, in px: 20 x sqrt(0.75) = 17.32 and 20 x sqrt(0.25) = 10
    want = {p.kernel: p.size for p in display.points if p.level == "DRAM"}
    assert list(dram.marker.size) == pytest.approx([want["gemm"], want["copy"]])
    assert list(dram.marker.size) == pytest.approx([20 * math.sqrt(0.75), 10.0])
    assert list(by_name["kernels @ L2"].marker.size) == pytest.approx([20 * math.sqrt(0.75)])
    joins = by_name[JOIN_LEGEND]
    xs = list(joins.x)
    assert xs[:3] == pytest.approx([0.25, 0.5, 1.0]) and xs[3:] == [None]
    legend = [t for t in fig.data if t.name.startswith(SIZE_LEGEND)]
    assert [t.name for t in legend] == [SIZE_LEGEND + " (area: 4 px under 4 %, 20 px at "
                                                      "100 %)"]
    assert list(legend[0].x) == []    # a legend entry only
    # --size-by none: the report's usual 11 px, no size legend
    plain = figure(analysis, display=chart_display(analysis, size_by="none"))
    assert {t.marker.size for t in plain.data if t.name.startswith("kernels @")} == {11}
    assert not any(t.name.startswith(SIZE_LEGEND) for t in plain.data)


def test_report_html_min_share(tmp_path, kernel_file, capsys):
    pytest.importorskip("plotly")
    out = tmp_path / "r.html"
    assert main(["report", str(kernel_file), "--on", "T4", "-o", str(out),
                 "--min-share", "10"]) == 0
    page = out.read_text()
    assert ("Chart: 2 kernels under 10 % of the time not drawn (together 5.1 % of it"
            in page)
    # the tables keep every kernel: e (0.1 % of the time) is still listed
    assert "<th scope='row'>e</th>" in page
    assert main(["report", str(kernel_file), "--on", "T4", "-o", str(out),
                 "--min-share", "x"]) == 2
    assert "--min-share x: give a percent" in capsys.readouterr().err
