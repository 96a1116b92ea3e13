"""CPU probe machinery with an injected fake clock: calibration, rates, spread and drift
warnings, plateau detection and level labelling on synthetic bandwidth curves."""

from __future__ import annotations

import math

import pytest

from rooflab.errors import MissingDependency, ProbeError
from rooflab.hardware.host import Caches, HostInfo
from rooflab.model.ceiling import Ceiling, Roof
from rooflab.probe.cpu import bandwidth as bw
from rooflab.probe.cpu.flags import drift_note, flag_overshoot
from rooflab.probe.cpu.modes import get_mode
from rooflab.probe.cpu.runner import calibrate_reps, measure_rate
from rooflab.probe.cpu.suite import dram_working_set
from rooflab.probe.timer import FakeClock, TimingPlan

PLAN = TimingPlan(warmup_s=0.01, sample_s=0.01, budget_s=0.1, min_samples=5)
KiB, MiB = 2**10, 2**20


def fake_kernel(clock: FakeClock, per_rep_s, overhead_s: float = 0.0):
    """call(reps) advances the fake clock as a kernel of known speed would."""
    def call(reps: int) -> None:
        cost = per_rep_s(clock.calls) if callable(per_rep_s) else per_rep_s
        clock.now += overhead_s + reps * cost
        clock.calls += 1
    return call


def test_rates_are_work_over_time_exactly():
    clock = FakeClock(0.0)
    rate = measure_rate(fake_kernel(clock, 1e-6), work_per_rep=24_000, plan=PLAN, clock=clock)
    # 24 kB per 1 us = 24 GB/s in every sample, no spread, no warning
    assert rate.samples and all(r == pytest.approx(24e9) for r in rate.samples)
    assert rate.stats.spread == pytest.approx(0.0, abs=1e-12)
    assert rate.warning("DRAM") is None
    assert rate.reps == 10_000                 # 10 ms / 1 us
    assert len(rate.samples) in (10, 11)       # 0.1 s budget / 10 ms samples (+ rounding)


def test_calibration_keeps_a_fixed_call_cost_small():
    # 50 us hand-off per call, 10 ns per repetition: reps=1 looks like 50 us of work;
    # extrapolating from it would give reps ~ 200 and samples dominated by overhead.
    clock = FakeClock(0.0)
    reps = calibrate_reps(fake_kernel(clock, 10e-9, overhead_s=50e-6), PLAN, clock)
    sample = 50e-6 + reps * 10e-9
    assert 0.8 * PLAN.sample_s <= sample <= 1.2 * PLAN.sample_s
    assert 50e-6 / sample < 0.01


def test_spread_warning_when_samples_disagree():
    clock = FakeClock(0.0)
    slow_every_third = fake_kernel(clock, lambda i: 1.2e-6 if i % 3 == 0 else 1e-6)
    rate = measure_rate(slow_every_third, 1000, PLAN, clock=clock, reps=1000)
    assert rate.stats.spread == pytest.approx(0.2 / 1.0 * (1 / 1.2) * 1.2 / 1.0, rel=0.3)
    assert rate.best == pytest.approx(1e9)     # best = fastest sample: 1000 B / 1 us
    assert "interquartile range" in rate.warning("L2 bandwidth")


def test_one_disturbed_sample_among_many_is_not_noise():
    clock = FakeClock(0.0)
    once = fake_kernel(clock, lambda i: 3e-6 if i == 20 else 1e-6)   # one sample 3x slower
    rate = measure_rate(once, 1000, TimingPlan(0.0, 0.001, 0.1, 50, 500), clock=clock,
                        reps=1000)
    assert rate.stats.spread > 0.5            # (max - min) / median: large
    assert rate.warning("fp64 peak") is None  # but the samples agree


def test_drift_note_only_beyond_five_percent():
    assert drift_note(100e9, 103e9) is None
    note = drift_note(100e9, 90e9)
    assert note and "-10.0 %" in note


def test_overshoot_of_nominal_is_flagged_not_hidden():
    from rooflab.hardware.cpu_arch import get_arch

    nominal = Roof("n", compute=(Ceiling(116e9, precision="fp64", unit="vector",
                                         provenance="derived"),))
    measured = [Ceiling(233e9, precision="fp64", unit="vector", provenance="measured",
                        samples=(233e9, 230e9)),
                Ceiling(100e9, precision="fp32", unit="vector", provenance="measured")]
    out = flag_overshoot(measured, nominal, get_arch("Zen 4"))
    assert out[0].value == 233e9                       # the number is kept
    assert any("201 %" in w and "Zen 4" in w for w in out[0].warnings)
    assert out[1].warnings == ()                       # no nominal fp32: nothing to flag


# --- plateaus -----------------------------------------------------------------------
def synthetic_curve(edges=(32 * KiB, 1 * MiB, 16 * MiB), levels=(600e9, 230e9, 190e9, 40e9)):
    """Per-thread sizes x1.25 from 4 KiB to 256 MiB and a bandwidth curve with a smooth
    two-point transition at each edge and +-3 % deterministic ripple."""
    sizes = bw.sweep_sizes(4 * KiB, 256 * MiB, 1.25)
    values = []
    for i, s in enumerate(sizes):
        x = math.log(s)
        v = math.log(levels[0])
        for edge, lo, hi in zip(edges, levels, levels[1:], strict=False):
            t = 1 / (1 + math.exp(-(x - math.log(edge * 1.15)) / 0.12))
            v += t * (math.log(hi) - math.log(lo))
        values.append(math.exp(v) * (1 + 0.03 * math.sin(1.7 * i)))
    return sizes, values


def test_find_plateaus_on_a_four_level_curve():
    sizes, values = synthetic_curve()
    plateaus = bw.find_plateaus(values)
    assert len(plateaus) == 4
    got = [p.bytes_per_s for p in plateaus]
    for g, want in zip(got, (600e9, 230e9, 190e9, 40e9), strict=False):
        assert g == pytest.approx(want, rel=0.04)
    # plateaus are ordered, disjoint and the first ends below 32 KiB + transition
    assert all(a.last < b.first for a, b in zip(plateaus, plateaus[1:], strict=False))
    assert sizes[plateaus[0].last] < 48 * KiB


def test_one_noisy_point_does_not_split_a_plateau():
    sizes, values = synthetic_curve()
    values = list(values)
    values[4] *= 0.6                         # a disturbed sample inside L1
    plateaus = bw.find_plateaus(values)
    assert len(plateaus) == 4
    assert plateaus[0].first == 0


def test_levels_named_from_reported_caches():
    sizes, values = synthetic_curve()
    caches = Caches(l1d=32 * KiB, l2=1 * MiB, l3=32 * MiB, source="test")
    levels, chosen, notes = bw.label_levels(values, sizes, caches, threads=2)
    assert list(levels) == ["L1", "L2", "L3", "DRAM"]
    assert not [n for n in notes if "reports" in n]
    # the representative point of each cache lies well inside the level
    assert sizes[chosen["L1"]] <= 32 * KiB / 1.5
    assert 48 * KiB <= sizes[chosen["L2"]] <= 1 * MiB / 1.5
    assert sizes[chosen["DRAM"]] >= 0.99 * 12 * 16 * MiB   # 3 arrays, each >= 4x the L3 share
    assert values[chosen["DRAM"]] == pytest.approx(40e9, rel=0.04)


def test_vm_reporting_wrong_cache_sizes_is_said():
    # The curve drops at 48 KiB / 2 MiB but the OS claims 16 KiB / 512 KiB.
    sizes, values = synthetic_curve(edges=(48 * KiB, 2 * MiB, 16 * MiB))
    caches = Caches(l1d=16 * KiB, l2=512 * KiB, l3=32 * MiB, source="test")
    levels, _chosen, notes = bw.label_levels(values, sizes, caches, threads=2)
    assert "DRAM" in levels
    assert any(n.startswith("L1: the OS reports 16 KiB") and "virtual machine" in n
               for n in notes)


def test_noisy_tail_still_gives_dram():
    sizes, values = synthetic_curve()
    values = list(values)
    values[-1] *= 0.8                        # the last points no longer agree
    values[-3] *= 1.2
    levels, chosen, _ = bw.label_levels(values, sizes,
                                        Caches(32 * KiB, 1 * MiB, 32 * MiB), threads=2)
    # the DRAM level runs to the largest size; its point is beyond 12x the L3 share
    assert levels["DRAM"].last == len(sizes) - 1
    assert sizes[chosen["DRAM"]] >= 0.99 * 12 * 16 * MiB


def test_no_cache_sizes_names_levels_by_order():
    sizes, values = synthetic_curve()
    levels, _, notes = bw.label_levels(values, sizes, Caches(), threads=2)
    assert list(levels) == ["L1", "L2", "L3", "DRAM"]
    assert any("no cache sizes" in n for n in notes)


# --- working sets and byte model -----------------------------------------------------------
def test_stream_byte_model():
    assert bw.STREAM["triad"].bytes_per_element == 24
    assert bw.STREAM["copy"].bytes_per_element == 16
    assert bw.STREAM["sum"].bytes_per_element == 8
    assert bw.elements_for(bw.STREAM["triad"], 24 * KiB) == 1024
    a = bw.aligned(100)
    assert a.ctypes.data % 64 == 0 and a.size == 100


def _host(avail: int | None) -> HostInfo:
    return HostInfo("test cpu", "x", None, None, frozenset(), 2, 2,
                    Caches(32 * KiB, 1 * MiB, 32 * MiB), 64 * 2**30, avail, None, "os", "x86_64")


def test_dram_working_set_shrinks_with_little_memory():
    want, notes = dram_working_set(_host(16 * 2**30), get_mode("quick"))
    assert want == 12 * 32 * MiB and notes == []
    want, notes = dram_working_set(_host(320 * MiB), get_mode("quick"))
    assert want == 80 * MiB and "shrunk" in notes[0]
    with pytest.raises(ProbeError, match="free memory"):
        dram_working_set(_host(100 * MiB), get_mode("quick"))


def test_unknown_mode_names_the_choices():
    with pytest.raises(Exception, match="quick, default, full"):
        get_mode("fast")


def test_missing_numba_names_the_extra(monkeypatch):
    import sys

    from rooflab.probe.cpu import probe_cpu

    monkeypatch.setitem(sys.modules, "numba", None)
    with pytest.raises(MissingDependency, match=r"rooflab\[cpu\]"):
        probe_cpu("quick")


def test_a_level_without_plateau_is_read_inside_its_reported_size():
    sizes, values = synthetic_curve()
    values = list(values)
    for i, s in enumerate(sizes):            # chop the L2 plateau into alternating levels
        if 40 * KiB <= s <= 800 * KiB:
            values[i] *= 2.0 if i % 2 else 0.5
    levels, chosen, notes = bw.label_levels(values, sizes,
                                            Caches(32 * KiB, 1 * MiB, 32 * MiB), threads=2)
    assert list(levels) == ["L1", "L2", "L3", "DRAM"]
    assert 48 * KiB <= sizes[chosen["L2"]] <= 700 * KiB
    assert any(n.startswith("L2: no clear plateau") for n in notes)


def test_calibration_stops_when_noise_hides_the_slope():
    # every call takes the same 3 ms whatever the repetitions (noise swamps the work):
    # calibration gives up after 20 sample lengths instead of running forever
    clock = FakeClock(0.0)

    def flat(reps: int) -> None:
        clock.now += 3e-3

    assert calibrate_reps(flat, PLAN, clock) >= 1
    assert clock.now < 20 * PLAN.sample_s + 0.02


def test_calibration_subtracts_a_large_fixed_cost():
    # 100 us to start a parallel region, 0.5 ns per repetition (a 2-cycle ALU chain):
    # the start-up alone exceeds sample_s / 8 and must not be taken for work
    clock = FakeClock(0.0)
    plan = TimingPlan(sample_s=5e-4)
    reps = calibrate_reps(fake_kernel(clock, 0.5e-9, overhead_s=100e-6), plan, clock)
    assert reps * 0.5e-9 >= 0.5 * plan.sample_s


def test_more_threads_than_numba_can_run_is_a_clear_error():
    pytest.importorskip("numba")
    from rooflab.probe.cpu.runner import Team

    with pytest.raises(ProbeError, match=r"--threads 100000 is more than the \d+ (CPU|thread)"):
        with Team(100_000):
            pass


def test_gemm_is_trusted_only_on_the_requested_threads(monkeypatch):
    import importlib.util

    from rooflab.probe.cpu.flops import blas_threads_match

    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    assert blas_threads_match(10_000)          # asked for at least every CPU: BLAS default
    assert not blas_threads_match(0)           # fewer threads and no way to limit the BLAS


def test_a_failed_clock_reading_is_replaced_not_used():
    """Seen under load: a preempted calibration read 505 Hz. It must not become the clock."""
    from rooflab.probe.cpu.nominal_clock import clock_estimate

    ghz, note = clock_estimate(505.0, 3.6e9, 2, end_hz=3.7e9)
    assert ghz == pytest.approx(3.7) and "failed" in note
    # the failed result is no reading: its side of 0.3-8 GHz is said, not '505 Hz' (s33 I)
    assert "measurement failed (other load preempted it: its result, below 0.3 GHz" in note
    assert "kHz" not in clock_estimate(2760.0, 3.6e9, 2)[1]
    ghz, note = clock_estimate(3.6e9, 3.65e9, 2)
    assert ghz == pytest.approx(3.6) and note is None
    # Two threads at half the one-thread clock: the cores were shared; one-thread clock used.
    ghz, note = clock_estimate(1.6e9, 3.6e9, 2)
    assert ghz == pytest.approx(3.6) and "shared the cores" in note


def test_dram_measured_again_at_the_end_says_when_the_host_moved():
    from rooflab.probe.cpu.flags import dram_drift_note

    # 37 GB/s in the sweep, 55 at the end (this VM's two states): +49 %, said
    note = dram_drift_note(37e9, 55e9)
    assert note.startswith("DRAM triad read 37 GB/s in the sweep and 55 GB/s at the end "
                           "of the probe (+49 %)")
    assert dram_drift_note(55e9, 52e9) is None          # -5 %: within 10 %
    assert "(-33 %)" in dram_drift_note(55e9, 37e9)
