"""Scalar ceilings are per core, and one test says "this loop is scalar" (review s19 x1
F2, F12).

The hand profile of test_s19_vectorize_threads (probed at 2 threads: fp64 vector 103.2,
fp64 and fp32 scalar 25.8 GFLOP/s) with host.cores = 1: the 2 threads are SMT siblings of
one core, which share its FMA pipes, so 1 thread on that core reaches the whole 25.8
(x 1/1), not 25.8 x 1/2 = 12.9.
"""

from __future__ import annotations

import pytest
from test_s19_vectorize_threads import CHAINS12_T1, G, _profile

from rooflab.hardware.profile import roof_at_threads
from rooflab.model.advice import advise
from rooflab.model.analysis import analyze
from rooflab.model.machine import machine_of


def _smt_profile() -> dict:
    p = _profile()
    p["host"]["cores"] = 1
    return p


def test_core_share_counts_threads_on_distinct_cores():
    from rooflab.model.machine import core_share
    assert core_share(1, 2, 1) == 1.0          # 2 SMT siblings of one core
    assert core_share(1, 2, 2) == 0.5          # 2 cores
    assert core_share(1, 4, 2) == 0.5          # 4 threads on 2 cores: 1 of 2
    assert core_share(1, 2, None) == 0.5       # unknown cores: by threads
    assert core_share(4, 2, None) == 1.0       # not scaled up without the core count
    assert core_share(4, 2, 4) == 2.0


def test_an_smt_hosts_one_thread_row_keeps_a_whole_cores_scalar_ceiling():
    roof = roof_at_threads(_smt_profile(), 1)
    for prec in ("fp64", "fp32"):
        s = roof.find_compute(prec, "scalar")
        assert s.value == pytest.approx(25.8 * G)
        assert s.provenance == "derived"
        assert "x 1/1, scalar FMA throughput being per core" in s.method
        assert "1 cores" in s.method or "host's 1 cores" in s.method


def test_one_thread_scalar_loop_on_an_smt_roof_is_told_to_vectorise():
    # 24.8 GFLOP/s on 1 thread of a 2-thread roof whose threads share one core: at 96 % of
    # the core's 25.8 scalar ceiling; by threads (12.9) it read 1.9x above and got nothing
    roof = roof_at_threads(_smt_profile(), 2)
    k = CHAINS12_T1.with_(name="chains12_scalar_smt", seconds=4.8e6 / (24.8 * G))
    machine = machine_of(roof, _smt_profile()["host"])
    got = [a for a in advise(analyze(roof, [k]).points[0], roof, k, machine=machine)
           if a.action.startswith("not vectorised")]
    assert len(got) == 1
    assert "(25.8 GFLOP/s, one lane, no SIMD)" in got[0].detail
    assert got[0].speedup == pytest.approx(4.0, rel=1e-6)   # 103.2 / 25.8


def test_a_kernel_at_its_scalar_ceiling_is_not_told_fp32_doubles_it():
    # the review's chains12_scalar_t1 on 2 threads, no unit: 10.42 GFLOP/s of the 2-thread
    # roof's 25.8 scalar ceiling; fp32 scalar = fp64 scalar, so no precision lever (the old
    # "use fp32 instead of fp64: 2.0x" was priced on fp32 vector 206.4 / fp64 vector 103.2)
    roof = roof_at_threads(_profile(), 2)
    k = CHAINS12_T1.with_(meta={"threads": 2})
    machine = machine_of(roof, {"kind": "cpu"})
    actions = [a.action for a in advise(analyze(roof, [k]).points[0], roof, k,
                                        machine=machine)]
    assert any(a.startswith("not vectorised") for a in actions)
    assert not any(a.startswith("use fp32") for a in actions)
