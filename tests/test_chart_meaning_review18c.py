"""What the chart says (review 18c: F4, F5, F7, F17, F10, F8, F9, F19).

Hand roof: fp64 1 TFLOP/s, DRAM 100 GB/s (ridge 10 FLOP/B), launch floor t0 = 5 us.
  rope (untimed): 1.5 MFLOP, 2 MB (AI 0.75), 22 calls. Work floor max(1.5e6 / 1e12,
       2e6 / 1e11) = 20 us; 22 launches take 110 us, so it reaches 1.5e6 / 1.1e-4 =
       13.6 GFLOP/s, not the roof's 75 GFLOP/s at AI 0.75: drawn there, its cap (the same
       1.5e6 / (22 x 5 us)) right on it.
  slow (measured): 1 MFLOP, 1 MB, 100 s, 1 call: 10 kFLOP/s. Its cap 1e6 / 5e-6 =
       200 GFLOP/s is 2x the roof at AI 1 (the old rule drew it) but 2e7x the point.
"""

from __future__ import annotations

import pytest

from rooflab.hardware.cpu_arch import get_arch
from rooflab.hardware.cpu_nominal import cpu_nominal_roof
from rooflab.hardware.profile import roof_at_threads
from rooflab.model import Ceiling, Kernel, Roof
from rooflab.report.chart import per_thread_nominal, plot_roofline, roofline_data
from rooflab.report.chart_precisions import precision_ceilings
from rooflab.report.chart_roofs import ENVELOPE_LEGEND
from rooflab.report.chart_words import (
    ABOVE_LEGEND,
    DERIVED_WORDS,
    REAL_TRAFFIC_LEGEND,
    caveats,
    provenance_label,
)

ROOF = Roof("hand", "measured",
            compute=(Ceiling(1e12, "fp64", provenance="measured"),),
            memory=(Ceiling(1e11, level="DRAM", provenance="measured"),),
            overhead_s=5e-6, overhead_source="measured: empty launch")


def _legend(d) -> list[str]:
    # an entry over 64 characters is folded onto lines (chart_legend.legend_text, s33 I)
    return [t.get_text().replace("\n", " ") for t in d.ax_.get_legend().get_texts()]


# --- F4: a launch-bound predicted point sits at the rate its label states --------------

def test_an_untimed_launch_bound_point_is_drawn_at_its_launch_rate():
    rope = Kernel("rope", {"fp64": 1.5e6}, {"DRAM": 2e6}, calls=22)
    d = roofline_data([ROOF], [rope])
    (p,) = d.points
    assert p.flop_per_s == pytest.approx(1.5e6 / (22 * 5e-6))       # 13.6 GFLOP/s
    assert "predicted 13.6 GFLOP/s (launch-bound)" in p.label
    (cap,) = d.caps
    assert cap.flop_per_s / p.flop_per_s == pytest.approx(1.0)


def test_every_cap_sits_within_2x_over_its_point():
    ks = [Kernel("rope", {"fp64": 1.5e6}, {"DRAM": 2e6}, calls=22),
          Kernel("slow", {"fp64": 1e6}, {"DRAM": 1e6}, seconds=100.0, calls=1),
          Kernel("held", {"fp64": 1e6}, {"DRAM": 1e6}, seconds=8e-6, calls=1)]
    d = roofline_data([ROOF], ks)
    points = {p.kernel: p for p in d.points}
    assert {c.kernel for c in d.caps} == {"rope", "held"}     # none 7 decades over "slow"
    for c in d.caps:
        assert 1 <= c.flop_per_s / points[c.kernel].flop_per_s <= 2
    # held: 1e6 / 8 us = 125 GFLOP/s measured under a 200 GFLOP/s cap: 1.6x
    assert d.caps[-1].flop_per_s / points["held"].flop_per_s == pytest.approx(1.6)


# --- F5: an unreliable roof and points above their roof are marked on the image ---------

LOAD = ("other processes used 82% of the CPUs while the probe ran (and the load average "
        "was 7.5 on 2 CPUs before it started): measured ceilings read low; rerun on a "
        "quiet machine")
GAVE_UP = ("fp64 peak: calibration gave up (the kernel's time did not grow with its "
           "repetitions: other load held every call up), so each sample timed mostly "
           "waiting and the figure can read far low; rerun on a quiet machine")
LOADED = Roof("box measured (2 threads)", "measured",
              compute=(Ceiling(4.94e9, "fp64", "vector", provenance="measured",
                               warnings=(GAVE_UP,)),),
              memory=(Ceiling(6.33e9, level="DRAM", provenance="measured"),),
              notes=(LOAD,))


def test_a_loaded_probe_and_its_flagged_ceiling_are_named_under_the_axis():
    # gemm: 8.53e9 FLOP, 1e8 B (AI 85.3) in 0.143 s: 59.7 GFLOP/s, 1208 % of 4.94
    gemm = Kernel("gemm", {"fp64": 8.53e9}, {"DRAM": 1e8}, seconds=0.143)
    d = plot_roofline([LOADED], [gemm])
    words = caveats(d)
    assert words.startswith("measured under load: other processes used 82% of the CPUs "
                            "while the probe ran; * flagged by the probe")
    assert "load average" not in words and words.endswith(": fp64 vector")
    assert "measured under load" in d.ax_.get_xlabel()
    (fp64,) = [ln for ln in d.lines if ln.kind == "compute"]
    assert fp64.label == "fp64 vector* 4.94 GFLOP/s"
    (dram,) = [ln for ln in d.lines if ln.kind == "memory"]
    assert "*" not in dram.label                      # no warning, no mark
    # the point at 1208 % of its roof: a ring and a legend entry
    (p,) = d.points
    assert p.percent_of_roof == pytest.approx(100 * 8.53e9 / 0.143 / 4.94e9)
    assert [a.get_gid() for a in d.ax_.lines].count("above-roof:gemm") == 1
    assert ABOVE_LEGEND in _legend(d)


def test_a_quiet_roof_says_nothing_and_rings_nothing():
    k = Kernel("k", {"fp64": 1e9}, {"DRAM": 1e8}, seconds=0.01)   # 100 GFLOP/s = 10 %
    d = plot_roofline([ROOF], [k])
    assert caveats(d) == "" and "under load" not in d.ax_.get_xlabel()
    assert not [a for a in d.ax_.lines if (a.get_gid() or "").startswith("above-roof")]
    assert ABOVE_LEGEND not in _legend(d)


# --- F7: each label names its precision, the legend the ceiling that judges it ----------

A100 = Roof("A100", "nominal",
            compute=(Ceiling(312e12, "fp16", "tensor"), Ceiling(19.5e12, "fp32", "vector")),
            memory=(Ceiling(2.04e12, level="DRAM"),))


def test_kernels_of_two_precisions_name_theirs_and_their_ceiling():
    ks = [Kernel("k16", {"fp16": 1e12}, {"DRAM": 1e9}, seconds=0.04, unit="tensor"),
          Kernel("k32", {"fp32": 1e10}, {"DRAM": 1e9}, seconds=0.001)]
    d = plot_roofline([A100], ks)
    firsts = {p.kernel: p.label.split("\n")[0] for p in d.points}
    assert firsts == {"k16": "k16 · fp16", "k32": "k32 · fp32"}
    assert precision_ceilings(d) == ["fp16 kernels: judged on fp16 tensor 312 TFLOP/s",
                                     "fp32 kernels: judged on fp32 vector 19.5 TFLOP/s"]
    assert set(precision_ceilings(d)) <= set(_legend(d))


def test_one_precision_keeps_plain_names():
    ks = [Kernel("a", {"fp32": 1e10}, {"DRAM": 1e9}, seconds=0.001),
          Kernel("b", {"fp32": 1e9}, {"DRAM": 1e9}, seconds=0.001)]
    d = roofline_data([A100], ks)
    assert [p.label.split("\n")[0] for p in d.points] == ["a", "b"]
    assert precision_ceilings(d) == []


# --- F17, F10: a thread row against its chip's derived nominal ---------------------------

def _profile() -> dict:
    """A `probe --threads 1,all` profile: measured at 2 threads, a 1-thread row."""
    def rate(v):
        return {"bytes_per_s": v, "samples": [v]}

    def row(n):
        return {"threads": n, "DRAM": rate(1e10 * n),
                "fp64": {"flop_per_s": 4.8e10 * n, "samples": [4.8e10 * n]},
                "fp32": {"flop_per_s": 9.6e10 * n, "samples": [9.6e10 * n]}}

    return {"schema_version": 1, "host": {"name": "box"},
            "measured": {"name": "box measured (2 threads)", "kind": "measured",
                         "compute": [{"precision": "fp64", "unit": "vector",
                                      "flop_per_s": 9.6e10, "provenance": "measured"}],
                         "memory": [{"level": "DRAM", "bytes_per_s": 2e10,
                                     "provenance": "measured"}]},
            "extras": {"threads": 2, "scaling": {
                "counts": [1, 2], "reference_threads": 2, "method": "m",
                "by_threads": {"1": row(1), "2": row(2)}}}}


# Zen 4, 2 cores at 3 GHz: fp64 2 x 3e9 x 4 lanes x 2 pipes x 2 = 96 GFLOP/s, derived
NOMINAL = cpu_nominal_roof("box (Zen 4, 2 cores @ 3 GHz)", 2, 3.0, get_arch("Zen 4"), None,
                           "probe")


def test_a_one_thread_row_meets_a_one_core_nominal():
    one = roof_at_threads(_profile(), 1)
    roofs, note = per_thread_nominal((one, NOMINAL))
    assert roofs[0] is one
    assert NOMINAL.find_compute("fp64").value == pytest.approx(96e9)
    assert roofs[1].find_compute("fp64").value == pytest.approx(48e9)   # 1 of 2 cores
    assert roofs[1].find_compute("fp32").value == pytest.approx(96e9)
    assert roofs[1].name == "box (Zen 4, 2 cores @ 3 GHz; compute per 1 core)"
    assert "scaled to 1 of its 2 cores" in note
    d = plot_roofline([one, NOMINAL], [Kernel("k", {"fp64": 1e9}, {"DRAM": 1e8},
                                              seconds=0.1)])
    dashed = [ln for ln in d.lines if ln.kind == "compute" and ln.style == "dashed"]
    assert {ln.label for ln in dashed} >= {"fp64 vector 48 GFLOP/s"}
    assert any("per 1 core" in t for t in _legend(d))


def test_the_whole_chip_row_keeps_the_nominal_as_it_is():
    whole = roof_at_threads(_profile(), 2)
    roofs, note = per_thread_nominal((whole, NOMINAL))
    assert roofs == (whole, NOMINAL) and note == ""


def test_a_derived_nominal_is_named_derived():
    assert provenance_label(NOMINAL) == (f"box (Zen 4, 2 cores @ 3 GHz, {DERIVED_WORDS})")
    d = plot_roofline([roof_at_threads(_profile(), 2), NOMINAL],
                      [Kernel("k", {"fp64": 1e9}, {"DRAM": 1e8}, seconds=0.1)])
    assert f"box (Zen 4, 2 cores @ 3 GHz, {DERIVED_WORDS})" in _legend(d)
    assert not any(t.endswith(", nominal)") for t in _legend(d))
    assert DERIVED_WORDS in d.title
    # a catalog roof of datasheet figures stays "nominal"
    assert provenance_label(A100) == "A100 (nominal)"


# --- F8: the real-traffic ceiling is worded as analysis.real_traffic_reason --------------

def test_the_real_traffic_legend_names_read_only_kernels():
    assert "counters' bytes" not in REAL_TRAFFIC_LEGEND
    assert "read-only" in REAL_TRAFFIC_LEGEND and "counter-measured" in REAL_TRAFFIC_LEGEND


# --- F19: a best-achieved roof is no machine's ------------------------------------------

def test_a_best_achieved_roof_is_dotted_named_and_gives_no_percent():
    from rooflab.ingest.profile_envelope import ENVELOPE_NAME, ENVELOPE_SOURCE

    env = Roof(ENVELOPE_NAME, "derived",
               compute=(Ceiling(8.89e10, "fp64", provenance="derived",
                                source=ENVELOPE_SOURCE),),
               memory=(Ceiling(1.34e10, level="DRAM", provenance="derived",
                               source=ENVELOPE_SOURCE),),
               source=ENVELOPE_SOURCE,
               notes=("no roof was given, the files name no known device and record no "
                      "peaks; pass --on GPU (a catalog name or a profile) for real "
                      "ceilings",))
    k = Kernel("k", {"fp64": 8.89e9}, {"DRAM": 1e9}, seconds=0.1)   # 100 % of it
    d = plot_roofline([env], [k])
    assert {ln.style for ln in d.lines} == {"dotted"}
    assert ENVELOPE_LEGEND in _legend(d)
    (p,) = d.points
    assert p.percent_of_roof is None and "of roof" not in p.label
    assert "pass --on GPU (a catalog name or a profile) for real ceilings" in caveats(d)


# --- F9: whatif -o names each arrow's ends and its machine -------------------------------

def test_whatif_chart_names_before_and_after_and_the_machine(tmp_path, monkeypatch):
    from rooflab.cli import whatif as cli_whatif
    from rooflab.report import chart

    seen = {}
    real = chart.plot_roofline

    def spy(roofs, kernels, **kw):
        seen.update(kernels=list(kernels), **kw)
        return real(roofs, kernels, **kw)

    monkeypatch.setattr(chart, "plot_roofline", spy)
    from rooflab.model import analyze
    from rooflab.model.retime import WhatIf

    old = Kernel("gemv", {"fp16": 2e9}, {"DRAM": 2e9}, seconds=1e-3)
    new = Kernel("gemv", {"fp16": 2e9}, {"DRAM": 5e8}, seconds=2.5e-4)
    same = Kernel("add", {"fp16": 1e6}, {"DRAM": 6e6}, seconds=1e-5)
    result = WhatIf("weights -> int4", "a", analyze(A100, [old, same]),
                    analyze(A100, [new, same]), ((old, new), (same, same)))
    cli_whatif._write(str(tmp_path / "w.png"), result, {})
    assert seen["title"] == "what if on A100: weights -> int4"
    names = [k.name for k in seen["kernels"]]
    assert names == ["gemv (after, 4.00x)", "add", "gemv (before)"]   # add drawn once
    ((b, a),) = seen["arrows"]
    assert (b.name, a.name) == ("gemv (before)", "gemv (after, 4.00x)")
