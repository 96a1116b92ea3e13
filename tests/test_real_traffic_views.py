"""The real-traffic DRAM ceiling in the views (charts, report words, choose) and the bound
of a level that does not bind (review 16a A and H).

The probe's triad at its own speed, as perf counts it: 1.775e9 elements in 1 s, one FMA
each (2 FLOP); STREAM counts 24 B per element (42.6 GB/s), the memory controller sees 32
(b, c and a's write-allocate read), so the real-traffic ceiling is 42.6 x 32/24 =
56.8 GB/s and the perf kernel runs exactly at it."""

from __future__ import annotations

import pytest

from rooflab.model.analysis import analyze
from rooflab.model.ceiling import Ceiling, Roof
from rooflab.model.choose import kernel_time
from rooflab.model.diagnose import diagnose
from rooflab.model.diagnose_evidence import level_bound
from rooflab.model.kernel import Kernel
from rooflab.model.real_traffic import REAL_TRAFFIC
from rooflab.model.whatif import scale_bytes
from rooflab.probe.cpu import bandwidth as bw
from rooflab.probe.cpu.dram_ceiling import real_traffic
from rooflab.report.chart import roofline_data
from rooflab.report.chart_words import REAL_TRAFFIC_LEGEND, REAL_TRAFFIC_STYLE
from rooflab.report.markdown import headroom_cell, kernel_rows, trust_warnings

N = 1.775e9
METHOD = f"STREAM triad a[i] = b[i] + s*c[i] (numba); {bw.BYTE_MODEL}; value = best sample"
COUNTERS = {"flop": "counted", "bytes": "measured", "seconds": "measured"}


def _roof(real: bool) -> Roof:
    mem = [Ceiling(24 * N, level="DRAM", provenance="measured", method=METHOD)]
    if real:
        mem.append(real_traffic(mem[0], {}))            # 56.8 GB/s, derived
    return Roof(name="zen4 measured", kind="measured", memory=tuple(mem),
                compute=(Ceiling(1.18e11, precision="fp64", unit="vector",
                                 provenance="measured"),))


def _perf() -> Kernel:
    return Kernel("triad_perf", flop={"fp64": 2 * N}, bytes={"DRAM": 32 * N}, seconds=1.0,
                  provenance=COUNTERS)


def _hand() -> Kernel:
    return Kernel("triad_hand", flop={"fp64": 2 * N}, bytes={"DRAM": 24 * N}, seconds=1.0)


def _real_lines(display):
    return [ln for ln in display.lines if ln.level == REAL_TRAFFIC]


# --- 1. the chart draws the real-traffic slope only for kernels judged against it --------

def test_no_real_traffic_slope_without_a_counter_kernel():
    d = roofline_data([_roof(real=True)], [_hand()])
    assert _real_lines(d) == []                       # old code: drawn dashed anyway
    assert [ln.level for ln in d.lines if ln.kind == "memory"] == ["DRAM"]


def test_real_traffic_slope_has_its_own_style_and_legend_words():
    pytest.importorskip("matplotlib")
    d = roofline_data([_roof(real=True)], [_perf(), _hand()])
    (line,) = _real_lines(d)
    assert line.style == REAL_TRAFFIC_STYLE           # old code: "dashed" (nominal's)
    assert line.ceiling.value == pytest.approx(32 * N)          # 56.8 GB/s
    d.plot()
    texts = [t.get_text().replace("\n", " ") for t in d.ax_.get_legend().get_texts()]
    assert REAL_TRAFFIC_LEGEND in texts
    # the roof's own lines are all measured: one style, no "dashed nominal" note
    assert "zen4 measured" in texts and not any("dashed nominal" in t for t in texts)
    import matplotlib.pyplot as plt

    plt.close(d.figure_)


def test_real_traffic_slope_left_off_a_chart_of_another_level():
    roof = _roof(real=True)
    roof = Roof(name=roof.name, kind=roof.kind, compute=roof.compute,
                memory=(Ceiling(4e11, level="L1", provenance="measured"), *roof.memory))
    k = _perf().with_(bytes={"L1": 64 * N, "DRAM": 32 * N})
    assert _real_lines(roofline_data([roof], [k], level="L1")) == []
    assert len(_real_lines(roofline_data([roof], [k]))) == 1


def test_html_chart_names_it_and_draws_it_dash_dot_dot():
    pytest.importorskip("plotly")
    from rooflab.report.html import figure

    fig = figure(analyze(_roof(real=True), [_perf()]))
    (trace,) = [t for t in fig.data if (t.name or "").startswith(REAL_TRAFFIC_LEGEND)]
    assert trace.name == f"{REAL_TRAFFIC_LEGEND} 56.8 GB/s"   # old code: "measured DRAM (
    assert trace.line.dash == "6px,2px,2px,2px,2px,2px"       # real traffic) ... (derived)"
    hand = figure(analyze(_roof(real=True), [_hand()]))
    assert not any("real traffic" in (t.name or "") for t in hand.data)


# --- 2. counter bytes above a STREAM-counted roof: the write_allocate finding speaks ------

def test_write_allocate_kernel_is_not_called_wrong():
    a = analyze(_roof(real=False), [_perf()])
    (d,) = diagnose(a)
    assert any(f.check == "write_allocate" for f in d.findings)
    assert d.headroom == pytest.approx(0.75)           # 24/32: 1.33x above the counted roof
    assert "counts are wrong" not in d.gain_words      # old code: "... counts are wrong"
    assert "1.33x above the STREAM-counted DRAM roof" in d.gain_words
    assert not any("faster than the roof allows" in w for w in trust_warnings((d,)))
    assert headroom_cell(d) == "0.75x (write-allocate)"   # the priority table's cell


def test_hand_counts_above_the_roof_keep_the_above_roof_cell():
    k = Kernel("triad_hand", flop={"fp64": 2 * N}, bytes={"DRAM": 32 * N}, seconds=1.0)
    (d,) = diagnose(analyze(_roof(real=False), [k]))
    assert headroom_cell(d) == "0.75x (above roof)"


def test_hand_counts_above_the_roof_are_still_called_wrong():
    k = Kernel("triad_hand", flop={"fp64": 2 * N}, bytes={"DRAM": 32 * N}, seconds=1.0)
    (d,) = diagnose(analyze(_roof(real=False), [k]))
    assert "counts are wrong" in d.gain_words
    (w,) = [w for w in trust_warnings((d,)) if "faster than the roof allows" in w]
    assert "triad_hand (1.33x above)" in w


# --- 3. choose and whatif hold counter bytes to the ceiling report holds them to ----------

def test_choose_times_counter_bytes_on_the_real_traffic_ceiling():
    kt, _ = kernel_time(_roof(real=True), _perf())
    # hand: 32 N B / 56.8 GB/s (= 32 N B/s) = 1.000 s; the counted 42.6 GB/s gave 1.333 s
    assert kt.seconds == pytest.approx(1.0)
    assert kt.binding == REAL_TRAFFIC
    (p,) = analyze(_roof(real=True), [_perf()]).points
    assert kt.work_s == pytest.approx(p.floor_s)       # report's floor
    hand, _ = kernel_time(_roof(real=True), _hand())
    assert hand.seconds == pytest.approx(1.0) and hand.binding == "DRAM"
    old_roof, _ = kernel_time(_roof(real=False), _perf())
    assert old_roof.seconds == pytest.approx(4 / 3)    # no real-traffic ceiling: counted


def test_whatif_same_bytes_predicts_its_own_time():
    w = scale_bytes(_roof(real=True), [_perf()], 1.0)
    ((old, new),) = w.moves
    assert new.seconds == pytest.approx(old.seconds)   # 1 s, at its roof
    (fb, fa), = w.floors
    assert fb == pytest.approx(1.0) and fa == pytest.approx(1.0)
    assert fb == pytest.approx(kernel_time(_roof(real=True), _perf())[0].seconds)


# --- 4. a level that does not bind is not "latency" ---------------------------------------

# Review 16a H's jacobi7_256: 2.622 GFLOP, 64 B/pt at L1 (20.975 GB), 7.866 GB from DRAM,
# 0.7556 s (3.47 GFLOP/s). L1 AI 0.125 x 595.7 GB/s = 74.5 GFLOP/s attainable: 4.66 %;
# DRAM AI 0.3333 x 42.6 GB/s = 14.2 GFLOP/s: 24.4 %, the binding level.
def _stencil_roof() -> Roof:
    return Roof(name="zen4 measured", kind="measured",
                memory=(Ceiling(595.7e9, level="L1", provenance="measured"),
                        Ceiling(42.6e9, level="DRAM", provenance="measured")),
                compute=(Ceiling(1.18e11, precision="fp64", unit="vector",
                                 provenance="measured"),))


def _stencil() -> Kernel:
    return Kernel("jacobi7_256", flop={"fp64": 2.622e9},
                  bytes={"L1": 2.0975e10, "DRAM": 7.866e9}, seconds=0.7556)


def test_non_binding_cache_point_is_not_called_latency():
    a = analyze(_stencil_roof(), [_stencil()])
    l1, dram = sorted(a.points, key=lambda p: p.level != "L1")
    assert l1.percent_of_roof == pytest.approx(4.66, abs=0.01)
    assert dram.percent_of_roof == pytest.approx(24.4, abs=0.1)
    assert l1.bound == "latency"                       # the analysis' own class, kept
    rows = {r[2]: r for r in kernel_rows(a)}
    assert rows["L1"][7] == "not binding (DRAM binds)"   # old code: "latency"
    assert rows["DRAM"][7] == "memory"
    (d,) = diagnose(a)
    assert d.bound == "memory" and d.point.level == "DRAM"   # the kernel's bound


def test_binding_latency_point_stays_latency():
    slow = _stencil().with_(seconds=10.0)              # 0.262 GFLOP/s: 1.8 % of DRAM's
    a = analyze(_stencil_roof(), [slow])
    rows = {r[2]: r for r in kernel_rows(a)}
    assert rows["DRAM"][7] == "latency"
    assert rows["L1"][7] == "not binding (DRAM binds)"
    (dram,) = [p for p in a.points if p.level == "DRAM"]
    assert level_bound(dram, dram) == "latency" and level_bound(dram, None) == "latency"


def test_chart_point_carries_the_level_bound():
    d = roofline_data([_stencil_roof()], [_stencil()], place_labels=False)
    bounds = {p.level: p.bound for p in d.points}
    assert bounds == {"L1": "not binding (DRAM binds)", "DRAM": "memory"}
