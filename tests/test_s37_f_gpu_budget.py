"""benchmarks/gpu_check_budget.py: the device run's time on an H200, stage by stage, from the
probe's own sizes and plans (issue 4: the whole check within 4 minutes). Before there was
only a hand estimate in RESULTS.md ("about 2 minutes"), which no size change would move.
"""

from __future__ import annotations

import math

import pytest
from benchmark_script import load_benchmark

from rooflab.probe.timer import TimingPlan

PLAN = TimingPlan(warmup_s=0.025, budget_s=0.12, min_samples=10, max_samples=200)


def _budget():
    return load_benchmark("gpu_check_budget", "gpu_check_budget_s37f")


def test_one_measurement_counts_calls_as_time_calls_does():
    """A 1 ms call, no flush, the default CUDA plan: warm-up ceil(0.025 / 0.001) = 25 calls,
    timed ceil(0.12 / 0.001) = 120, plus the first call and 5 estimate calls:
    151 x 1 ms + 20 ms fixed = 0.171 s. With a 1 ms flush the estimate is 2 ms a call:
    warm-up ceil(0.025 / 0.002) = 13, timed 60; 1 + 5 x 2 + 13 x 1 + 60 x 2 = 144 ms
    + 20 ms = 0.164 s."""
    b = _budget()
    assert b.measurement_s(1e-3, PLAN) == pytest.approx(0.171)
    assert b.measurement_s(1e-3, PLAN, flush_s=1e-3) == pytest.approx(0.164)
    # a slow call is held to min_samples: 100 ms -> 1 + 5 + 1 warm-up + 10 timed = 1.72 s
    assert b.measurement_s(0.1, PLAN) == pytest.approx(17 * 0.1 + 0.02)


def test_rates_are_half_the_h200_catalog():
    """bf16 tensor 989.5 / 2 = 494.75 TFLOP/s, IEEE fp32 on the vector units 67 / 2 = 33.5,
    HBM 4.8 / 2 = 2.4 TB/s, PCIe Gen5 x16 63.0 / 2 = 31.5 GB/s, 132 SMs, L2 50 MiB."""
    r = _budget().h200_rates()
    assert r.flop["bf16"] == pytest.approx(494.75e12)
    assert r.flop["fp32"] == pytest.approx(33.5e12)
    assert r.flop["fp64"] == pytest.approx(33.5e12)        # the fp64 tensor cores: 67 / 2
    assert r.vector["fp64"] == pytest.approx(17e12)
    assert r.dram == pytest.approx(2.4e12)
    assert r.link == pytest.approx(31.5e9, rel=1e-3)
    assert (r.sms, r.l2_bytes) == (132, 50 * 2**20)


def test_the_default_check_fits_four_minutes_and_the_quick_probe_twenty_seconds():
    """Every stage is named, in run order; the default check's sum is under 240 s and the
    quick probe's stages (what the CLI run judges) under 20 s."""
    b = _budget()
    stages = b.estimate("default")
    names = list(stages)
    assert names[0] == "start (python, torch, CUDA)" and names[-1] == "CLI --quick, warm"
    assert sum(stages.values()) <= 240
    assert sum(b.probe_stages("quick", b.h200_rates()).values()) <= 20
    assert sum(b.probe_stages("default", b.h200_rates()).values()) \
        + b.COMPILES["default"] * b.COMPILE_S <= 60


def test_the_estimate_moves_with_the_probe_sizes(monkeypatch):
    """The matmul stage follows CUDA_SIZES: adding 16384 to the default sizes adds, for
    bf16 alone, one call of 2 x 16384^3 / 494.75e12 = 17.8 ms held to 10 timed calls
    (17 calls in all) plus its flush: more than 0.3 s."""
    from dataclasses import replace

    from rooflab.probe.gpu import context

    b = _budget()
    before = b.estimate("default")["probe compute: matmul"]
    big = replace(context.CUDA_SIZES["default"], matmul_sizes=(2048, 4096, 8192, 16384))
    monkeypatch.setitem(context.CUDA_SIZES, "default", big)
    after = b.estimate("default")["probe compute: matmul"]
    t = 2 * 16384 ** 3 / 494.75e12
    assert math.isclose(t, 0.01778, rel_tol=1e-3)
    assert after - before > 17 * t


def test_the_script_prints_each_stage_the_total_and_its_bounds(capsys):
    b = _budget()
    assert b.main([]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("start (python, torch, CUDA)")
    total = next(ln for ln in out if ln.startswith("total"))
    assert float(total.split()[1]) <= 240
    assert out[-1] == ("bounds: the CLI runs end by 200 s after start (skipped under 25 s "
                       "left); a stuck run dumps its stacks and exits at 250 s")
