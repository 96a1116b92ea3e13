"""Chart leftovers after review 18c's chart work (C3).

- F14: asked to zoom (zoom=True), a chart whose points fill a sliver of the axes is
  zoomed to them, every ridge and ceiling still shown (not automatic: the GPP label
  layouts of test_labels_chart/test_labels_polish are tuned to the whole roof).
  Hand GPP-like roof (the RTX 4060 Laptop profiler peaks of the nersc-gpp recordings):
  fp64 156 GFLOP/s; L1 4.98 TB/s, L2 1.66 TB/s, DRAM 256 GB/s, so
  ridges at 156e9 / 4.98e12 = 0.0313, / 1.66e12 = 0.0940 and / 256e9 = 0.609 FLOP/B.
  Points at AI 1.8-35 and 85-89 GFLOP/s. Zoomed limits, half a decade (x sqrt(10)) each
  side: x 0.0313 / 3.162 = 0.00991 to 35 x 3.162 = 110.7; y 85e9 / 3.162 = 26.9 GFLOP/s
  to 156e9 x 3.162 = 493 GFLOP/s. Before: x from 0.0313 / 100 = 3.1e-4, y down to the
  DRAM slope there, 256e9 x 3.1e-4 = 80 MFLOP/s.
- whatif's one-line labels say "predicted" once: 'q_proj (before, predicted)'.
- a thread row's nominal partner is built in hardware/resolve (compute per N cores).
- the above-roof ring is vermillion edged in black.
- DrawnPoint's docstring says what flop_per_s is for a predicted point.
"""

from __future__ import annotations

import json

import pytest

from rooflab.model import Ceiling, Kernel, Roof

pytest.importorskip("matplotlib")

HALF_DECADE = 10 ** 0.5

GPP_ROOF = Roof("RTX 4060 Laptop (profiler peaks)", "nominal",
                compute=(Ceiling(156e9, "fp64", provenance="derived"),),
                memory=tuple(Ceiling(v, level=lv, provenance="derived") for lv, v in
                             (("L1", 4.98e12), ("L2", 1.66e12), ("DRAM", 256e9))))

# (AI, FLOP/s) of eight steps at DRAM, 1 s each: FLOP = rate, bytes = rate / AI
STEPS = [(1.8, 85e9), (2.1, 86e9), (3.7, 87e9), (4.6, 89e9), (6.7, 88e9), (8.9, 87e9),
         (15.0, 86e9), (35.0, 85e9)]


def _steps():
    return [Kernel(f"step{i}", {"fp64": y}, {"DRAM": y / x}, seconds=1.0)
            for i, (x, y) in enumerate(STEPS)]


# --- F14: zoomed to the points ---------------------------------------------------------

def test_a_crowded_chart_is_zoomed_to_its_points_ridges_and_ceilings():
    from rooflab.report.chart import roofline_data

    whole = roofline_data([GPP_ROOF], _steps())
    assert whole.xlim[0] == pytest.approx(156e9 / 4.98e12 / 100)   # without zoom: as before
    assert whole.ylim[0] == pytest.approx(256e9 * whole.xlim[0])
    d = roofline_data([GPP_ROOF], _steps(), zoom=True)
    assert d.xlim == pytest.approx((156e9 / 4.98e12 / HALF_DECADE, 35.0 * HALF_DECADE))
    assert d.xlim == pytest.approx((0.00991, 110.7), rel=1e-3)
    assert d.ylim == pytest.approx((85e9 / HALF_DECADE, 156e9 * HALF_DECADE))
    assert d.ylim == pytest.approx((26.88e9, 493.3e9), rel=1e-3)
    # every ridge inside, every slope enters the plot before its ridge, the ceiling inside
    for r in d.ridges:
        assert d.xlim[0] < r.ai < d.xlim[1]
    for ln in d.lines:
        if ln.kind == "memory":
            assert ln.ys[0] < d.ylim[1] and ln.ys[-1] > d.ylim[0]
        if ln.kind == "compute":
            assert d.ylim[0] < ln.ys[0] < d.ylim[1]


def test_a_spread_chart_keeps_the_whole_roof():
    """Points over four decades of AI fill the axes: the limits stay the usual ones, two
    decades of slope left of the lowest ridge (0.0313 / 100)."""
    from rooflab.report.chart import roofline_data

    ks = [Kernel("lo", {"fp64": 1e9}, {"DRAM": 1e10}, seconds=1.0),        # AI 0.1
          Kernel("hi", {"fp64": 1e11}, {"DRAM": 1e8}, seconds=1.0)]        # AI 1000
    d = roofline_data([GPP_ROOF], ks, zoom=True)
    assert d.xlim == pytest.approx((156e9 / 4.98e12 / 100, 1000 * 4))


def test_one_point_keeps_the_whole_roof():
    from rooflab.report.chart import roofline_data

    d = roofline_data([GPP_ROOF], _steps()[:1], zoom=True)
    assert d.xlim[0] == pytest.approx(156e9 / 4.98e12 / 100)


def test_a_zoomed_axis_labels_its_minor_ticks_in_flop_per_s():
    """Under two decades matplotlib labels minor ticks ('4 x 10^11'); they read as the
    major ones do ('400 GFLOP/s')."""
    from rooflab.report.chart import plot_roofline

    d = plot_roofline([GPP_ROOF], _steps(), zoom=True)
    d.figure_.canvas.draw()
    minor = [t.get_text() for t in d.ax_.yaxis.get_minorticklabels() if t.get_text()]
    assert minor and all(t.endswith("FLOP/s") for t in minor), minor
    assert "400 GFLOP/s" in minor


# --- whatif labels say "predicted" once -------------------------------------------------

def test_compact_before_after_labels_say_predicted_once():
    from rooflab.report.chart import roofline_data
    from rooflab.report.chart_layout_texts import predicted
    from rooflab.report.chart_words import memory_ops

    assert predicted("q_proj (before)") == "q_proj (before, predicted)"
    assert predicted("q_proj (after, 3.80x)") == "q_proj (after, 3.80x, predicted)"
    assert predicted("rope") == "rope (predicted)"
    # nine untimed kernels: one-line labels (more than FULL_LABELS = 8 points)
    ks = [Kernel(f"k{i} (before)", {"fp64": 1e9}, {"DRAM": 1e9 / (i + 1)}) for i in range(4)]
    ks += [Kernel(f"k{i} (after, 2.00x)", {"fp64": 1e9}, {"DRAM": 5e8 / (i + 1)})
           for i in range(4)]
    ks.append(Kernel("rope", {"fp64": 1e9}, {"DRAM": 3e9}))
    d = roofline_data([GPP_ROOF], ks)
    texts = sorted(p.text for p in d.points if p.text)
    assert "k0 (before, predicted)" in texts and "k0 (after, 2.00x, predicted)" in texts
    assert "rope (predicted)" in texts
    assert not [t for t in texts if t.count("(") > 1]
    # the footnote of a what-if's memory op (no FLOP, untimed) says it the same way
    ops = [Kernel("embedding (before)", {}, {"DRAM": 1e6}),
           Kernel("embedding (after, 1.59x)", {}, {"DRAM": 6e5})]
    note = memory_ops(roofline_data([GPP_ROOF], ops + ks[:1]))
    assert "embedding (before, untimed)" in note
    assert "embedding (after, 1.59x, untimed)" in note and ") (" not in note


# --- the thread row's nominal partner, in hardware/resolve -------------------------------

def _scaling_profile() -> dict:
    """`probe --threads 1,all` on a 2-core box: measured at 2 threads, a 1-thread row; the
    nominal derived for 2 cores (fp64 96 GFLOP/s, fp32 192) with a DRAM of 50 GB/s."""
    def row(n):
        return {"threads": n, "DRAM": {"bytes_per_s": 1e10 * n, "samples": [1e10 * n]},
                "fp64": {"flop_per_s": 4.8e10 * n, "samples": [4.8e10 * n]},
                "fp32": {"flop_per_s": 9.6e10 * n, "samples": [9.6e10 * n]}}

    def derived(p, v):
        return {"precision": p, "unit": "vector", "flop_per_s": v, "provenance": "derived"}

    return {"schema_version": 1, "host": {"name": "box", "kind": "cpu", "cores": 2},
            "measured": {"name": "box measured (2 threads)", "kind": "measured",
                         "compute": [{"precision": "fp64", "unit": "vector",
                                      "flop_per_s": 9.6e10, "provenance": "measured"}],
                         "memory": [{"level": "DRAM", "bytes_per_s": 2e10,
                                     "provenance": "measured"}]},
            "nominal": {"name": "box (Zen 4, 2 cores @ 3 GHz)", "kind": "nominal",
                        "compute": [derived("fp64", 9.6e10), derived("fp32", 1.92e11)],
                        "memory": [{"level": "DRAM", "bytes_per_s": 5e10,
                                    "provenance": "nominal"}]},
            "extras": {"threads": 2, "scaling": {
                "counts": [1, 2], "reference_threads": 2, "method": "m",
                "by_threads": {"1": row(1), "2": row(2)}}}}


def test_a_one_thread_row_comes_with_a_one_core_nominal(tmp_path):
    from rooflab.hardware.resolve import load_roofs

    path = tmp_path / "t.json"
    path.write_text(json.dumps(_scaling_profile()))
    row, nominal = load_roofs(f"{path}@1t")
    assert row.find_compute("fp64").value == pytest.approx(4.8e10)
    assert nominal.find_compute("fp64").value == pytest.approx(9.6e10 / 2)   # 1 of 2 cores
    assert nominal.find_compute("fp32").value == pytest.approx(1.92e11 / 2)
    assert nominal.bandwidth("DRAM").value == pytest.approx(5e10)           # the whole chip's
    assert nominal.name == "box (Zen 4, 2 cores @ 3 GHz; compute per 1 core)"
    assert nominal.find_compute("fp64").method.startswith("scaled to 1 of 2 cores")
    assert nominal.bandwidth("DRAM").method.startswith("whole chip (shared by its 2 cores)")
    assert "scaled to 1 of its 2 cores" in nominal.notes[-1]


def test_the_whole_chip_row_and_a_plain_file_keep_the_nominal(tmp_path):
    from rooflab.hardware.resolve import load_roofs

    path = tmp_path / "t.json"
    path.write_text(json.dumps(_scaling_profile()))
    _, nominal = load_roofs(f"{path}@2t")
    assert nominal.find_compute("fp64").value == pytest.approx(9.6e10)
    assert nominal.name == "box (Zen 4, 2 cores @ 3 GHz)"
    _, plain = load_roofs(str(path))
    assert plain.find_compute("fp64").value == pytest.approx(9.6e10)


def test_the_chart_scales_no_roof_twice_and_parses_no_methods(tmp_path):
    """The chart draws the resolved pair as given (48 GFLOP/s, not 24), and its scaling
    of hand-given roofs is thread_rows' (no method parsing of its own)."""
    from rooflab.hardware import thread_rows
    from rooflab.hardware.resolve import load_roofs
    from rooflab.report import chart
    from rooflab.report.chart import roofline_data

    assert chart.per_thread_nominal is thread_rows.per_thread_nominal
    assert not hasattr(chart, "THREAD_ROW") and not hasattr(chart, "CORES_METHOD")
    path = tmp_path / "t.json"
    path.write_text(json.dumps(_scaling_profile()))
    d = roofline_data(list(load_roofs(f"{path}@1t")),
                      [Kernel("k", {"fp64": 1e9}, {"DRAM": 1e8}, seconds=0.1)])
    flat = {ln.label for ln in d.lines if ln.kind == "compute"}
    assert "fp64 vector 48 GFLOP/s" in flat and "fp64 vector 24 GFLOP/s" not in flat


# --- the above-roof ring ------------------------------------------------------------------

def test_the_above_roof_ring_is_vermillion_edged_in_black():
    from matplotlib.colors import to_rgba

    from rooflab.report.chart import plot_roofline
    from rooflab.report.chart_marks import ABOVE_COLOR
    from rooflab.report.chart_words import ABOVE_LEGEND

    roof = Roof("hand", "measured", compute=(Ceiling(1e12, "fp64", provenance="measured"),),
                memory=(Ceiling(1e11, level="DRAM", provenance="measured"),))
    # 1e12 FLOP at AI 100 in 0.5 s: 2 TFLOP/s, 200 % of the 1 TFLOP/s roof
    d = plot_roofline([roof], [Kernel("gemm", {"fp64": 1e12}, {"DRAM": 1e10}, seconds=0.5)])
    by_gid = {a.get_gid(): a for a in d.ax_.lines}
    edge, ring = by_gid["above-roof-edge:gemm"], by_gid["above-roof:gemm"]
    assert to_rgba(edge.get_markeredgecolor()) == to_rgba("black")
    assert to_rgba(ring.get_markeredgecolor()) == to_rgba(ABOVE_COLOR)
    assert edge.get_markersize() == ring.get_markersize()
    assert edge.get_markeredgewidth() > ring.get_markeredgewidth()   # a black line each side
    assert edge.get_zorder() < ring.get_zorder()
    legend = d.ax_.get_legend()
    i = [t.get_text() for t in legend.get_texts()].index(ABOVE_LEGEND)
    handle = legend.legend_handles[i]
    assert to_rgba(handle.get_markeredgecolor()) in (to_rgba("black"), to_rgba(ABOVE_COLOR))


# --- DrawnPoint's words ------------------------------------------------------------------

def test_drawn_point_says_a_predicted_point_is_at_its_predicted_rate():
    from rooflab.report.chart_parts import DrawnPoint

    doc = " ".join(DrawnPoint.__doc__.split())
    assert "attainable when predicted" not in doc
    assert "predicted one" in doc and "launch-bound" in doc
