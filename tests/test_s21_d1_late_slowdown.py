"""A run whose last samples are slower than every one before (s21 d1 item 4): no warm-up
(the warm-up look, may_have_sped_up, asks whether the calls sped up), but load that
started during the run or a clock that came down. measure() said nothing: 9 samples of
60 ms whose last 2 took 96 ms read 60 ms with no warning. Now a warning names the change;
the time stays the median (the earlier state's) and nothing is timed again, so steady runs
re-time no more often than before (1000 runs of each noise below: the same rates).
"""

from __future__ import annotations

import random

import pytest

from rooflab.measure_trend import late_slowdown, steady_timing
from rooflab.measuring import timed_kernel
from rooflab.probe.stats import summarize
from rooflab.probe.timer import FakeClock, Timing


def _time(cost):
    clk = FakeClock(cost)
    return timed_kernel(clk.tick, name="k", flop={"fp32": 1e6}, bytes={"DRAM": 1e3},
                        provenance={}, clock=clk)


def _calls_before_sampling() -> int:
    # 60 ms calls: one a sample, 9 samples; the calls before them are the warm-up and
    # the calibration
    seen = []
    k = _time(lambda i: seen.append(i) or 60e-3)
    assert len(k.samples) == 9
    return len(seen) - 9


@pytest.mark.parametrize("slow", [2, 3])
def test_the_last_samples_slower_say_load_changed(slow):
    start = _calls_before_sampling() + 9 - slow
    k = _time(lambda i: 96e-3 if i >= start else 60e-3)   # + 60 % from sample 10 - slow
    assert k.seconds == pytest.approx(60e-3)                # the median: the earlier state
    assert len(k.samples) == 9 and "warmup_samples_left_out" not in k.meta
    assert (f"k: the last {slow} of 9 timing samples are 60 % slower than the ones before "
            f"(60 ms -> 96 ms): load changed during the run (other work started, a clock "
            f"came down), not warm-up; the time is the median of all 9, the earlier "
            f"state's; rerun on a quiet machine") in k.meta["warning"]


def test_one_slow_last_sample_is_a_held_up_call_not_a_change():
    start = _calls_before_sampling() + 8
    k = _time(lambda i: 96e-3 if i >= start else 60e-3)
    assert k.seconds == pytest.approx(60e-3) and "warning" not in k.meta


def _fake(samples_per_run):
    runs = iter(samples_per_run)

    def more(n):
        xs = tuple(next(runs)) if n is None else (1.0,) * n
        return Timing(samples=xs, inner=1, stats=summarize(xs))
    return more


def test_twelve_samples_the_last_two_up_60_percent():
    xs = (1.0, 1.01, 0.99, 1.0, 1.02, 0.98, 1.0, 1.01, 0.99, 1.0, 1.6, 1.62)
    more = _fake([xs])
    t, meta, warning = steady_timing("k", more(None), more)
    assert t.samples == xs and meta == {}                   # not extended, not re-timed
    assert warning.startswith("k: the last 2 of 12 timing samples are 61 % slower than "
                              "the ones before (1 s -> 1.61 s)")
    assert late_slowdown(xs) == (2, 1.0, 1.61)


def test_a_step_up_in_the_middle_or_a_small_one_is_not_late():
    assert late_slowdown((1.0,) * 6 + (1.6,) * 3 + (1.0,) * 3) is None   # back again
    assert late_slowdown((1.0,) * 10 + (1.15, 1.15)) is None             # 15 %: noise-sized
    assert late_slowdown((1.0,) * 4 + (1.6, 1.6)) is None                # too few before


@pytest.mark.parametrize("sigma", [0.05, 0.20])
def test_steady_runs_rarely_warn_and_never_re_time_for_it(sigma):
    # test_s20_n1_trend's steady data: 1000 9-sample lognormal runs; the warm-up look
    # and re-timing as before (5 %: 7.6 % sampled on, 0.2 % re-timed; 20 %: 17.6 %, 0.5 %)
    rnd = random.Random(7)
    retimed = warned = 0
    for _ in range(1000):
        calls = []

        def more(n, calls=calls):
            calls.append(n)
            xs = tuple(rnd.lognormvariate(0, sigma) for _ in range(9 if n is None else n))
            return Timing(samples=xs, inner=1, stats=summarize(xs))
        first = more(None)
        calls.clear()
        _, _, warning = steady_timing("k", first, more)
        retimed += None in calls
        warned += warning is not None and "slower than the ones before" in warning
    assert retimed == (2 if sigma == 0.05 else 5)
    assert warned <= 3
