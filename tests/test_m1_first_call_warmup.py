"""A first call is a warm-up, never a timed sample (review r4 F6: a numba kernel's first
decorated call, its JIT compile, read 1.1 s against 12 ms for the next two, and the
summed time made the reduction 18-31x slow and "latency" bound). The decorator leaves a
first call over 5x the median of the later calls of the same work out (a compile, a
page-in), flags a later call that slow, and keeps every call's time in meta."""

from __future__ import annotations

import time

import pytest

import rooflab
from rooflab.measure_runs import Measurement
from rooflab.measuring import collect


def _decorated(durations: list[float]):
    """A decorated function on a fake clock: call i lasts durations[i] seconds."""
    now = [0.0]
    calls = iter(durations)

    def clock() -> float:
        return now[0]

    spec = Measurement(flop={"fp64": 2e7}, bytes={"DRAM": 1.6e8}, name="reduce",
                       clock=clock)

    def body():
        now[0] += next(calls)

    return spec(body)


def test_the_first_call_is_left_out_as_a_warm_up():
    # the review's numbers: 1.106 s (the compile), then 12.0 and 12.3 ms
    fn = _decorated([1.106, 0.0120, 0.0123])
    for _ in range(3):
        fn()
    k = fn.kernel
    # 2 calls kept: 0.0120 + 0.0123 = 0.0243 s; FLOP 2 x 2e7, bytes 2 x 1.6e8
    assert k.calls == 2
    assert k.seconds == pytest.approx(0.0243)
    assert dict(k.flop) == {"fp64": 4e7} and dict(k.bytes) == {"DRAM": 3.2e8}
    assert k.samples == pytest.approx((0.0120, 0.0123))
    assert k.meta["raw_samples"] == pytest.approx((1.106, 0.0120, 0.0123))
    assert k.meta["first_calls_left_out"] == 1
    assert "call 1 1.11 s (the first call: a warm-up, left out)" in k.meta["slow_runs_note"]
    assert len(fn.runs) == 3   # the raw runs stay


def test_a_much_slower_later_call_is_flagged_and_noise_is_not():
    fn = _decorated([0.010, 0.010, 0.200, 0.010])
    for _ in range(4):
        fn()
    k = fn.kernel
    # call 3: 0.2 s > 5 x median(0.01, 0.01, 0.01) = 0.05 s: flagged, kept (the user
    # called it); the first call (0.01 s) is no warm-up outlier: 0.01+0.01+0.2+0.01 = 0.23
    assert k.calls == 4 and k.seconds == pytest.approx(0.23)
    assert k.meta["slow_runs"] == [3] and "call 3 200 ms (kept)" in k.meta["slow_runs_note"]
    assert "first_calls_left_out" not in k.meta

    noisy = _decorated([0.040, 0.010, 0.030, 0.010])
    for _ in range(4):
        noisy()
    # call 1: 0.04 s < 5 x median(0.01, 0.03, 0.01) = 0.05 s: a warm first call, kept;
    # 0.04 + 0.01 + 0.03 + 0.01 = 0.09 s over 4 calls
    assert noisy.kernel.calls == 4 and noisy.kernel.seconds == pytest.approx(0.090)
    assert "slow_runs_note" not in noisy.kernel.meta


def test_a_short_first_call_is_not_taken_for_a_compile():
    fn = _decorated([14e-6, 4e-6, 4e-6])
    for _ in range(3):
        fn()
    # 14 µs is 3.5x the 4 µs of the others (under 5x): kept
    assert fn.kernel.calls == 3
    fast = _decorated([60e-6, 4e-6, 4e-6])
    for _ in range(3):
        fast()
    # 60 µs > 5 x 4 µs but only 56 µs longer (< SINGLE_RUN_MIN_S, 100 µs): kept
    assert fast.kernel.calls == 3


def test_a_single_call_is_kept_and_said_to_be_a_first_call():
    fn = _decorated([0.5])
    fn()
    k = fn.kernel
    assert k.calls == 1 and k.seconds == pytest.approx(0.5)
    assert "JIT compile" in k.meta["first_call_kept"]
    assert "slow_runs_note" not in k.meta


def test_collect_the_bench_run_path_leaves_the_first_call_out():
    fn = _decorated([1.0, 0.01, 0.01])
    with collect() as found:
        for _ in range(3):
            fn()
    (k,) = found.kernels
    assert k.calls == 2 and k.seconds == pytest.approx(0.02)   # 0.01 + 0.01


def test_the_benchmark_form_never_times_the_first_call_even_quick():
    made = [0]

    def cold_then_fast():
        made[0] += 1
        time.sleep(0.3 if made[0] == 1 else 0.0005)

    k = rooflab.measure(cold_then_fast, flop=1, bytes=8, plan="quick")
    # every sample is seconds per call of the warm calls (~0.5 ms); the 0.3 s call is not
    # among them, even divided by an inner count (quick samples last ~10 ms, so inner <= 32)
    assert max(k.samples) < 0.3 / 32
    assert k.meta["warmup_calls"] >= 1
