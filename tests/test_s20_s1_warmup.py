"""Review s20 r2 F5: measure() warmed up for a fixed 20 ms and never looked at the order
of its samples, so a kernel still warming up (2 ms calls for the first 150, then 1 ms)
read its cold 2.0 ms as the median, and after 100 slow calls 1.56 ms, neither state.
Now the probe's order test (probe.stats.slowdown) runs on the times: samples that sped
up are left out as warm-up and the kernel timed again (measure_trend)."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from rooflab.measure_context import PLANS
from rooflab.measuring import timed_kernel
from rooflab.model.sanity_timing import check_timing
from rooflab.probe.timer import FakeClock

CALLS = [0]   # the calls the last _time made


def _time(cost):
    clk = FakeClock(cost)

    def call():
        clk.tick()
        CALLS[0] = clk.calls
    return timed_kernel(call, name="k", flop={"fp32": 1e6}, bytes={"DRAM": 1e3},
                        provenance={}, clock=clk)


@pytest.mark.parametrize("slow_calls", [100, 150])
def test_a_long_warm_up_is_left_out_and_the_steady_time_reported(slow_calls):
    k = _time(lambda i: 2e-3 if i < slow_calls else 1e-3)
    assert k.seconds == pytest.approx(1e-3)            # was 2.0 ms (150) and 1.56 ms (100)
    assert all(s == pytest.approx(1e-3) for s in k.samples)
    assert k.meta["warmup_samples_left_out"] == 15     # 9 taken, sampled on to 15, left out
    assert "warning" not in k.meta
    assert "sped up" in k.meta["slow_runs_note"]
    # the report says so as information, as for a decorated function's left-out calls
    (f,) = check_timing(k)
    assert (f.check, f.severity) == ("slow_runs", "info")
    assert f.message.startswith("15 first timing samples left out: the first 15 timing "
                                "samples sped up (the last third's calls took 50 % less "
                                "time than the first's: 2 ms -> 1 ms)")


def test_a_warm_up_still_running_warns_and_keeps_the_last_third():
    # each call 2 ms falling linearly to 1 ms over 2000 calls: still falling after the
    # second run of samples, which is cut to its last third (5) and topped up with 4
    # taken after it to the plan's 9 (the default plan's least: compare's U test)
    k = _time(lambda i: 2e-3 * max(0.5, 1 - i / 2000))
    assert len(k.samples) == 9 and k.meta["plan"]["min_samples"] == 9
    assert k.seconds == pytest.approx(sorted(k.samples)[4])
    assert k.seconds < min(k.meta["raw_samples"][:15])
    assert len(k.meta["raw_samples"]) == 15 + 15 + 4
    assert k.samples == tuple(k.meta["raw_samples"][25:])
    # the 25 samples before the first kept one are warm-up in the recipe: every call made
    # is a warm-up call or a timed one (review s25 r1 F5: the second run's first 10 were
    # counted nowhere)
    assert k.meta["warmup_samples_left_out"] == 25
    assert k.meta["warmup_calls"] + len(k.samples) * k.meta["calls_per_sample"] == CALLS[0]
    assert "warm-up still running" in k.meta["warning"]
    assert ("the time is the median of the last 5 samples and 4 taken after them (the 9 "
            "asked for), the steady state so far" in k.meta["warning"])


def test_a_plan_of_5_keeps_the_last_third_alone():
    # the last third (5) already meets a plan that asks for 5: nothing taken after it
    clk = FakeClock(lambda i: 2e-3 * max(0.5, 1 - i / 2000))
    plan = replace(PLANS["default"], min_samples=5)
    k = timed_kernel(clk.tick, name="k", flop={"fp32": 1e6}, bytes={"DRAM": 1e3},
                     provenance={}, clock=clk, plan=plan)
    assert len(k.samples) == 5 and len(k.meta["raw_samples"]) == 30
    assert "the time is the last 5 samples' median" in k.meta["warning"]


def test_steady_samples_are_neither_extended_nor_left_out():
    rnd = random.Random(1)
    k = _time(lambda i: 60e-3 * rnd.gauss(1, 0.01))    # one call a sample: 9 samples
    assert len(k.samples) == 9 and "warmup_samples_left_out" not in k.meta
    k = _time(lambda i: 1e-3)
    assert "warmup_samples_left_out" not in k.meta and "warning" not in k.meta
