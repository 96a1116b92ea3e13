"""rooflab.measure: the benchmark form, the decorator and the context manager, with given
counts (no torch needed) and a fake clock."""

from __future__ import annotations

import numpy as np
import pytest

import rooflab
from rooflab.errors import InputError
from rooflab.measure_aggregate import aggregate
from rooflab.measure_counts import normalize_bytes, normalize_flop
from rooflab.measuring import Measurement, TimingWarning, timed_kernel
from rooflab.probe.timer import FakeClock, TimingPlan

PLAN = TimingPlan(warmup_s=0.0, sample_s=0.01, budget_s=0.05, min_samples=5, max_samples=50)


def test_timed_kernel_with_a_fake_clock_keeps_samples_and_both_statistics():
    # Calls alternate 1 ms and 3 ms. Calibration sees 1 ms, estimates 11 calls for the 10 ms
    # sample target and rounds up to 16; a sample of 16 calls averages 2 ms per call.
    clock = FakeClock(lambda i: 1e-3 if i % 2 == 0 else 3e-3)
    k = timed_kernel(clock.tick, name="alt", flop={"fp64": 2e6}, bytes={"DRAM": 8e6},
                     provenance={"flop": "given", "bytes": "given"}, plan=PLAN, clock=clock)
    assert k.meta["calls_per_sample"] == 16
    assert all(s == pytest.approx(2e-3) for s in k.samples)
    assert k.seconds == pytest.approx(2e-3) and k.meta["seconds_stat"] == "median"
    assert k.meta["best_s"] == pytest.approx(2e-3) and k.meta["median_s"] == k.seconds
    assert dict(k.provenance) == {"flop": "given", "bytes": "given", "seconds": "measured"}
    assert k.calls == 1 and len(k.samples) >= 5


def test_median_is_reported_and_best_kept_when_samples_differ():
    # The first call (30 ms) calibrates one call per sample; then five 1-call samples.
    costs = [0.03, 0.02, 0.01, 0.03, 0.02, 0.04]
    clock = FakeClock(lambda i: costs[i])
    k = timed_kernel(clock.tick, name="x", flop={"fp32": 1.0}, bytes={"DRAM": 1.0},
                     provenance={}, plan=PLAN, clock=clock)
    assert k.samples == pytest.approx((0.02, 0.01, 0.03, 0.02, 0.04))
    assert k.seconds == pytest.approx(0.02)               # the median
    assert k.meta["best_s"] == pytest.approx(0.01)        # the best, kept
    assert k.meta["spread"] == pytest.approx(1.5)         # (0.04 - 0.01) / 0.02
    assert "spread 150 %" in k.meta["warning"]


def test_measure_a_real_numpy_function_with_given_counts():
    x = np.random.default_rng(0).random(10_000)
    y = np.empty_like(x)
    # A bare number counts as fp32 (documented), and float64 arrays draw a warning saying so.
    with pytest.warns(UserWarning, match="counts as fp32 FLOP, but the array arguments are fp64"):
        k = rooflab.measure(np.multiply, x, 2.0, out=y, flop=1e4, bytes=1.6e5, plan="quick")
    assert k.name == "multiply"
    assert dict(k.flop) == {"fp32": 1e4} and dict(k.bytes) == {"DRAM": 1.6e5}
    assert 0 < k.seconds < 0.01 and k.samples and k.meta["device"] == "cpu"
    np.testing.assert_allclose(y, 2 * x)             # the kwargs reached the function


def test_measure_accepts_counts_by_precision_and_level():
    k = rooflab.measure(lambda: None, flop={"float64": 10, "fp32": 5},
                        bytes={"DRAM": 100, "L2": 300}, name="dicts", plan="quick")
    assert dict(k.flop) == {"fp64": 10.0, "fp32": 5.0}
    assert dict(k.bytes) == {"DRAM": 100.0, "L2": 300.0}
    assert k.name == "dicts"


@pytest.mark.parametrize("flop, bytes_, match", [
    (-1, 10, "flop must be a finite number >= 0"),
    ("many", 10, "flop must be a number"),
    (1, {"DRAM": float("nan")}, r"bytes\[DRAM\] must be a finite number"),
    ({"fp99": 1}, 1, "unknown dtype 'fp99'"),
])
def test_bad_counts_are_input_errors(flop, bytes_, match):
    with pytest.raises(InputError, match=match):
        rooflab.measure(lambda: None, flop=flop, bytes=bytes_, plan="quick")


def test_bad_calls_are_input_errors():
    with pytest.raises(InputError, match="must be a callable"):
        rooflab.measure(42, flop=1, bytes=1)
    with pytest.raises(InputError, match="arguments without a function"):
        rooflab.measure(None, 1, 2)
    with pytest.raises(InputError, match="plan must be a TimingPlan or one of"):
        rooflab.measure(lambda: None, flop=1, bytes=1, plan="forever")


def test_normalizers():
    assert normalize_flop(3) == {"fp32": 3.0}
    assert normalize_flop({"half": 2}) == {"fp16": 2.0}
    assert normalize_bytes(7) == {"DRAM": 7.0}


def test_context_manager_times_the_block_once():
    clock = FakeClock(0.25)
    with Measurement(flop=1e9, bytes=4e6, name="step", clock=clock) as m:
        clock.tick()
    k = m.kernel
    assert k.seconds == pytest.approx(0.25) and k.samples == (pytest.approx(0.25),)
    assert dict(k.flop) == {"fp32": 1e9} and dict(k.bytes) == {"DRAM": 4e6}
    assert k.meta["seconds_stat"] == "single run"
    assert dict(k.provenance) == {"flop": "given", "bytes": "given", "seconds": "measured"}


def test_context_manager_leaves_no_kernel_when_the_block_raises():
    m = rooflab.measure(flop=1, bytes=1, name="boom")
    with pytest.raises(KeyError):
        with m:
            {}["missing"]
    assert m.kernel is None


def test_public_context_manager_form():
    # a block this short is mostly timer overhead, and measure says so (an empty block:
    # 0.4-1.4 us; sum(range(1000)), 16 us, passed 100 us when preempted, 1 in ~1000)
    with pytest.warns(TimingWarning, match="under 100"):
        with rooflab.measure(flop=2e3, bytes=8e3, name="block") as m:
            pass
    assert m.kernel.name == "block" and m.kernel.seconds > 0


def test_decorator_records_every_call_and_aggregates():
    clock = FakeClock(lambda i: 0.1 * (i + 1))

    @Measurement(flop=100, bytes={"DRAM": 40}, clock=clock)
    def work(x, scale=1):
        clock.tick()
        return x * scale

    assert work.kernel is None
    assert work(2, scale=3) == 6 and work(5) == 5
    k = work.kernel
    assert k.name.endswith("work") and k.calls == 2
    assert k.samples == (pytest.approx(0.1), pytest.approx(0.2))
    assert k.seconds == pytest.approx(0.3)
    assert dict(k.flop) == {"fp32": 200.0} and dict(k.bytes) == {"DRAM": 80.0}  # per call x 2
    assert k.seconds_per_call == pytest.approx(0.15)


def test_decorator_bench_runs_the_full_benchmark():
    @rooflab.measure(flop=10, bytes=10, name="tiny")
    def tiny():
        return sum(range(100))

    k = tiny.bench(plan="quick")
    assert k.name == "tiny" and len(k.samples) >= 5 and k.meta["seconds_stat"] == "median"
    assert tiny.__name__ == "tiny"


def test_aggregate_sums_runs():
    a = rooflab.Kernel("s", flop={"fp32": 1}, bytes={"DRAM": 2}, seconds=0.5, samples=(0.5,))
    b = rooflab.Kernel("s", flop={"fp32": 3, "fp64": 1}, bytes={"DRAM": 2}, seconds=1.5,
                       samples=(1.5,))
    k = aggregate([a, b])
    assert dict(k.flop) == {"fp32": 4.0, "fp64": 1.0} and k.seconds == 2.0 and k.calls == 2


def test_rooflab_measure_is_the_function_even_after_importing_its_module():
    import rooflab.measuring as module

    assert rooflab.measure is module.measure
    k = rooflab.measure(lambda: None, flop=1, bytes=1, plan="quick")
    assert k.seconds > 0


def test_decorated_methods_get_their_instance():
    class Model:
        scale = 3

        @rooflab.measure(flop=1, bytes=8)
        def forward(self, x):
            return x * self.scale

    m = Model()
    with pytest.warns(TimingWarning, match="under 100"):
        assert m.forward(2) == 6 and m.forward(5) == 15
    # a first call preempted for ms on a loaded box is left out as warm-up (measure_warmup)
    k = m.forward.kernel
    assert k.calls + k.meta.get("first_calls_left_out", 0) == 2
    assert Model.forward.kernel.calls == k.calls
