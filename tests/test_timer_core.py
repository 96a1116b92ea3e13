"""The timing loop with an injected clock: calibration, budgets, raw samples, noise."""

from __future__ import annotations

import pytest

from rooflab.probe.stats import summarize
from rooflab.probe.timer import FakeClock, TimingPlan, bench, calibrate


def test_calibration_reaches_sample_length():
    clock = FakeClock(1e-4)  # every call costs 100 us
    plan = TimingPlan(warmup_s=0.0, sample_s=0.01, budget_s=0.05)
    inner = calibrate(clock.tick, plan, clock)
    assert inner * 1e-4 >= 0.01 * 0.99 and inner <= 256


def test_bench_keeps_raw_per_call_samples_within_budget():
    clock = FakeClock(lambda i: 1e-3 if i % 2 else 1.1e-3)
    plan = TimingPlan(warmup_s=0.005, sample_s=0.01, budget_s=0.1, min_samples=3)
    t = bench(clock.tick, plan, clock=clock)
    assert len(t.samples) >= 3
    assert all(1e-3 <= s <= 1.1e-3 for s in t.samples)
    assert t.best == pytest.approx(min(t.samples))
    # 0.1 s budget of ~10 ms samples: about 10 samples, never unbounded.
    assert 5 <= len(t.samples) <= 12


def test_noisy_measurement_carries_a_warning():
    clock = FakeClock(lambda i: 1e-3 * (1 + 0.3 * (i % 3 == 0)))
    t = bench(clock.tick, TimingPlan(warmup_s=0, sample_s=0.0001, budget_s=0.01), clock=clock,
              inner=1)
    assert t.stats.noisy and t.stats.spread > 0.05
    s = summarize([1.0, 1.0, 1.02, 0.99])
    assert not s.noisy and s.median == 1.0
