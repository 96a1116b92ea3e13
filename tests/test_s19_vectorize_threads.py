"""A scaling profile's thread rows carry scalar ceilings (review s19 r4 F1: on `probe
--threads 1,all` a one-thread scalar loop never met its scalar ceiling).

Hand profile, the review's p12 rounded: probed at 2 threads (fp64 vector 103.2, fp64
scalar 25.8, fp32 scalar 25.8 GFLOP/s), a 1-thread row with fp64 vector 51.6 GFLOP/s.
Without the row's own scalar figures the 1-thread scalar ceiling is derived: 25.8 x 1/2
= 12.9 GFLOP/s (the review's one-thread probe measured 12.9). The kernel is the review's
chains12_scalar_t1 (k6_1.json): 4.8 MFLOP fp64 in 460.44 us on 1 thread, 10.42 GFLOP/s.
"""

from __future__ import annotations

import copy

import pytest

from rooflab.hardware.profile import roof_at_threads
from rooflab.model.advice import advise
from rooflab.model.analysis import analyze
from rooflab.model.kernel import Kernel
from rooflab.model.machine import machine_of
from rooflab.probe.cpu import scaling
from rooflab.probe.cpu.runner import Rate

G = 1e9
PROBE = "rooflab probe (numba kernels, this machine)"


def _flop(v: float) -> dict:
    return {"flop_per_s": v, "samples": [v, 0.99 * v, 0.98 * v]}


def _profile(row_scalar: dict | None = None) -> dict:
    def c(p, u, v):
        return {"precision": p, "unit": u, "flop_per_s": v, "provenance": "measured"}

    one = {"threads": 1, "fp64": _flop(51.6 * G), "fp32": _flop(103.2 * G),
           "L1": {"bytes_per_s": 206 * G, "samples": [206 * G], "ws_bytes_per_thread": 16384},
           "DRAM": {"bytes_per_s": 20 * G, "samples": [20 * G]}}
    if row_scalar is not None:
        one["scalar"] = row_scalar
    return {"schema_version": 2, "host": {"name": "AMD EPYC", "kind": "cpu", "cores": 2},
            "measured": {"name": "AMD EPYC measured (2 threads)", "kind": "measured",
                         "source": PROBE,
                         "compute": [c("fp64", "vector", 103.2 * G),
                                     c("fp32", "vector", 206.4 * G),
                                     c("fp64", "scalar", 25.8 * G),
                                     c("fp32", "scalar", 25.8 * G)],
                         "memory": [{"level": "L1", "bytes_per_s": 410 * G,
                                     "provenance": "measured"},
                                    {"level": "DRAM", "bytes_per_s": 21 * G,
                                     "provenance": "measured"}]},
            "extras": {"threads": 2, "scaling": {
                "counts": [1, 2], "reference_threads": 2, "method": "m",
                "by_threads": {"1": one, "2": {"threads": 2, "fp64": _flop(103.2 * G)}}}}}


CHAINS12_T1 = Kernel(name="chains12_scalar_t1", flop={"fp64": 4800000.0}, bytes={"L1": 8.0},
                     seconds=4.604404e-4, meta={"threads": 1})


def test_an_older_rows_scalar_ceiling_is_derived_per_core():
    roof = roof_at_threads(_profile(), 1)
    s64 = roof.find_compute("fp64", "scalar")
    assert s64 is not None and s64.value == pytest.approx(12.9 * G)
    assert s64.provenance == "derived"
    assert s64.method.startswith("derived (1 thread): the profile's fp64 scalar peak (25.8 "
                                 "GFLOP/s on 2 threads) x 1/2, scalar FMA throughput being "
                                 "per core")
    assert roof.find_compute("fp32", "scalar").value == pytest.approx(12.9 * G)
    # the vector ones stay the row's own
    assert roof.find_compute("fp64", "vector").value == 51.6 * G


def test_a_row_with_its_own_scalar_figures_uses_them_measured():
    roof = roof_at_threads(_profile({"fp64": _flop(12.6 * G)}), 1)
    s64 = roof.find_compute("fp64", "scalar")
    assert s64.value == 12.6 * G and s64.provenance == "measured"
    assert s64.samples == pytest.approx((12.6 * G, 0.99 * 12.6 * G, 0.98 * 12.6 * G))
    assert "measured (1 thread): scalar FMA-throughput kernel" in s64.method
    # measured rows give only what they measured: no derived fp32 beside them
    assert roof.find_compute("fp32", "scalar") is None


def test_a_one_thread_scalar_loop_on_the_scaling_row_is_told_to_vectorise():
    roof = roof_at_threads(_profile(), 1)
    p = analyze(roof, [CHAINS12_T1]).points[0]
    items = advise(p, roof, CHAINS12_T1, machine=machine_of(roof, {"kind": "cpu"}))
    [a] = [x for x in items if x.action.startswith("not vectorised")]
    # 10.42 of 12.9: 81 %, kept on 51.6 -> 4.00x (the review's 1-thread profile: 3.97x)
    assert a.speedup == pytest.approx(4.0, rel=1e-9)
    assert "the derived fp64 scalar ceiling (12.9 GFLOP/s, one lane, no SIMD)" in a.detail


def test_the_reference_count_keeps_the_profiles_own_scalar_ceiling():
    roof = roof_at_threads(copy.deepcopy(_profile()), 2)
    s64 = roof.find_compute("fp64", "scalar")
    assert s64.value == 25.8 * G and s64.provenance == "measured"


def test_the_scaling_pass_measures_the_scalar_peaks(monkeypatch):
    pytest.importorskip("numba")
    plans = []

    class Fake:
        def __init__(self, v):
            self.rate = Rate(samples=(v, 0.9 * v), reps=1, seconds=(1.0, 1.0))

    def scalar(p, team, plan):
        plans.append((p, team.threads, plan.budget_s))
        return Fake(12.9 * G)

    monkeypatch.setattr(scaling.bw, "measure_stream",
                        lambda *a, **k: (Rate(samples=(1e10,), reps=1, seconds=(1.0,)), 64))
    monkeypatch.setattr(scaling, "fma_peak", lambda p, team, plan: Fake(51.6 * G))
    monkeypatch.setattr(scaling, "scalar_fma_peak", scalar)
    out = scaling.measure_scaling((1, 2), {"threads": 2}, {"DRAM": 2.0**28})
    row = out["by_threads"]["1"]
    assert row["scalar"]["fp64"]["flop_per_s"] == 12.9 * G
    assert row["scalar"]["fp32"]["samples"] == pytest.approx([12.9 * G, 0.9 * 12.9 * G])
    # half the quick peak plan's budget, on the row's 1 thread, both precisions
    from rooflab.probe.cpu.modes import get_mode
    half = get_mode("quick").peak_plan.scaled(0.5).budget_s
    assert plans == [("fp64", 1, half), ("fp32", 1, half)]
    # the table's rows read as before (the scalar figures are no column)
    [one, _] = scaling.scaling_rows(out | {"by_threads": out["by_threads"] | {
        "2": {"threads": 2, "fp64": _flop(103.2 * G)}}})
    assert one.fp64 == 51.6 * G and "scalar" not in one.noisy
