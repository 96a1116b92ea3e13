"""The CPU probe's measuring functions driven through their `clock=` parameter (review r6
F4; STYLE.md 4: clocks injected, probes tested deterministically): fma_peak, gemm_peak,
torch_matmul_peak, measure_clock, measure_stream, intensity_sweep, and the bandwidth
sweep (suite._sweep) over them.

The numba kernels (and numpy/torch matmul) are replaced by stand-ins that do no work and
advance a fake clock by the time the scripted machine would take, so the calibration,
the rates, best/median, the spread and slowdown warnings and the plateau labelling are
checked against hand calculations. Times are powers of two so the arithmetic is exact.
A function that ignored `clock=` would time the stand-ins with perf_counter (nothing
measurable): its rates would not be these numbers.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

# the probe's kernels module compiles its numba kernels at import (the [cpu] extra)
pytest.importorskip("numba", reason="the CPU probe's modules need numba (the [cpu] extra)")

from rooflab.hardware.host import Caches  # noqa: E402
from rooflab.probe.cpu import bandwidth as bw
from rooflab.probe.cpu import kernels as K
from rooflab.probe.cpu import suite
from rooflab.probe.cpu.assemble import _measured
from rooflab.probe.cpu.clock import measure_clock
from rooflab.probe.cpu.flops import FMA_PER_CALL, fma_peak, gemm_peak, torch_matmul_peak
from rooflab.probe.cpu.intensity import intensity_sweep
from rooflab.probe.cpu.modes import get_mode
from rooflab.probe.cpu.overhead import numba_empty_call
from rooflab.probe.cpu.runner import Team
from rooflab.probe.timer import TimingPlan

US = 2.0**-20          # ~0.95 us: one repetition of the scripted kernels below
SAMPLE = 2.0**-10      # ~0.98 ms: each sample's target length
CALL = 2.0**-14        # fixed cost of each call (a parallel region's start), 1/16 sample
# Calibration times the empty call (CALL), finds 2^-20 s per repetition from 512 and 1024
# reps, and fills the rest of a sample: (2^-10 - 2^-14) / 2^-20 = 960 reps, so a sample
# lasts 2^-14 + 960 x 2^-20 = 2^-10 s, and no calibration call has 960 reps.
REPS = 960
# Exactly five samples (min = max), each calibrated to SAMPLE seconds.
PLAN = TimingPlan(warmup_s=SAMPLE, sample_s=SAMPLE, budget_s=2.0**-6, min_samples=5,
                  max_samples=5)


class KernelClock:
    """A fake clock: reading it returns `now`; only the stand-in kernels advance it. A call
    of `reps` repetitions lasts `fixed_s + reps * per_rep_s`; the calls with exactly
    `sample_reps` repetitions (the calibrated count, which each test asserts, and which no
    calibration call uses) are the samples, and the i-th of them lasts `slow[i]` times
    that (1 once the script ends)."""

    def __init__(self, fixed_s: float = 0.0, sample_reps: int | None = None, slow=()):
        self.now = 0.0
        self.fixed_s = fixed_s
        self.sample_reps = sample_reps
        self._slow = iter(slow)
        self.log: list[tuple] = []

    def __call__(self) -> float:
        return self.now

    def run(self, reps: int, per_rep_s: float) -> None:
        factor = next(self._slow, 1.0) if reps == self.sample_reps else 1.0
        self.now += (self.fixed_s + reps * per_rep_s) * factor


@pytest.fixture
def fake_kernels(monkeypatch):
    """Install stand-ins for the numba kernels; returns a function that makes the clock
    for a test, given the per-repetition cost as a function of the kernel's arguments."""
    made = {}

    def make(cost, **kw) -> KernelClock:
        clock = made["clock"] = KernelClock(**kw)
        made["cost"] = cost
        return clock

    def par_run(kind, a, b, c, s, k, nblocks, reps, out, n):
        made["clock"].log.append(("par_run", kind, a.shape[0], k, nblocks, n, reps,
                                  len({id(a), id(b), id(c)})))
        made["clock"].run(reps, made["cost"](kind, a.shape[0], n, k))

    def par_ert(a, b, m, k, nblocks, reps, out):
        made["clock"].log.append(("par_ert", a.dtype, a.shape, k, nblocks, reps))
        made["clock"].run(reps, made["cost"]("ert32", a.shape[0], a.shape[1], k))

    monkeypatch.setattr(K, "par_run", par_run)
    monkeypatch.setattr(K, "par_ert", par_ert)
    monkeypatch.setattr(K, "par_fill", lambda rows, value: None)   # pages untouched
    return make


def _hand_rates(work_per_rep: float, reps: int, seconds) -> list[float]:
    return [work_per_rep * reps / s for s in seconds]


# --- measure_stream ------------------------------------------------------------------
def test_triad_bandwidth_is_its_bytes_over_the_scripted_seconds(fake_kernels):
    # 2 threads, 24 KiB per thread: triad's 3 arrays of 1024 fp64 elements per thread,
    # 24 B per element (2 loads + 1 store) -> 49152 B per repetition.
    clock = fake_kernels(lambda *a: US, fixed_s=CALL, sample_reps=REPS, slow=(1, 1, 1.25, 1, 1))
    rate, n = bw.measure_stream(bw.STREAM["triad"], 24 * 1024, Team(2), PLAN, clock=clock)
    assert n == 1024
    assert rate.reps == REPS
    assert rate.seconds == (SAMPLE, SAMPLE, 1.25 * SAMPLE, SAMPLE, SAMPLE)
    full = 49152 * REPS / SAMPLE        # 48.32 GB/s (the call's fixed cost is in the sample)
    assert full == pytest.approx(48.318382080e9, rel=1e-12)
    assert rate.samples == pytest.approx([full, full, full / 1.25, full, full], rel=1e-12)
    assert rate.best == pytest.approx(full, rel=1e-12)
    assert rate.median == pytest.approx(full, rel=1e-12)
    # (max - min) / median = (1 - 0.8) / 1; quartiles (inclusive: sorted ranks 1 and 3 of
    # 0..4) 1.0 and 1.0 of full, so IQR 0: one slow sample among five is an outlier, not
    # noise, and no warning (review s20 r2 F1: the exclusive method read 0.9 / 1.0, a 10 %
    # IQR, and warned)
    assert rate.stats.spread == pytest.approx(0.2, rel=1e-9)
    assert rate.stats.iqr_rel == 0.0
    assert rate.warning("DRAM bandwidth") is None
    kinds = {e[1:] for e in clock.log if e[6] == REPS}
    assert kinds == {(K.TRIAD, 2, 0, 0, 1024, REPS, 3)}   # 2 threads, 3 distinct arrays


def test_a_fixed_call_cost_is_calibrated_away_and_counted_in_the_samples(fake_kernels):
    # sum: 1 array, 8 B per element; 8 KiB per thread -> 1024 elements, 1 thread.
    # Each call also waits CALL = 2^-14 s: calibration takes it off (960 reps, not 1024),
    # and it stays in every sample: the rate is 15/16 of the kernel's own 8 GiB/s.
    clock = fake_kernels(lambda *a: US, fixed_s=CALL)
    rate, n = bw.measure_stream(bw.STREAM["sum"], 8 * 1024, Team(1), PLAN, clock=clock)
    assert (n, rate.reps) == (1024, REPS)
    assert rate.seconds == (SAMPLE,) * 5
    assert rate.samples == pytest.approx([8 * 1024 * 960 / SAMPLE] * 5, rel=1e-12)
    assert rate.best == pytest.approx(8.053063680e9, rel=1e-12)   # 7.5 GiB/s, not 8
    assert rate.warning("L1") is None and rate.calibrated


# --- fma_peak ------------------------------------------------------------------------
def test_fma_peak_is_flop_over_the_fastest_scripted_sample(fake_kernels):
    slow = (1.0, 1.125, 1.25, 1.0625, 1.5)
    clock = fake_kernels(lambda *a: US, fixed_s=CALL, sample_reps=REPS, slow=slow)
    got = fma_peak("fp64", Team(2), PLAN, clock=clock)
    # one block of NVEC SIMD vectors per thread, FMA_PER_CALL FMAs per element, 2 FLOP each
    n = K.NVEC * K.SIMD_BITS // 64
    work = 2 * FMA_PER_CALL * n * 2
    assert FMA_PER_CALL == 2048
    assert got.rate.reps == REPS
    assert got.rate.samples == pytest.approx(
        [work * REPS / (f * SAMPLE) for f in slow], rel=1e-12)
    assert got.rate.best == pytest.approx(work * REPS / SAMPLE, rel=1e-12)   # factor 1.0
    assert got.rate.median == pytest.approx(work * REPS / (1.125 * SAMPLE), rel=1e-12)
    # median 1/1.125 of the best: 11.1 % below it -> noisy
    assert "median 11.1 % below the best" in got.rate.warning("fp64 peak")
    assert ("par_run", K.ERT, 2, FMA_PER_CALL, 1, n, REPS, 2) in clock.log
    assert got.precision == "fp64" and "value = best sample" in got.method


def test_fp32_fma_peak_counts_twice_the_lanes(fake_kernels):
    clock = fake_kernels(lambda *a: US)
    got = fma_peak("fp32", Team(1), PLAN, clock=clock)
    n = K.NVEC * K.SIMD_BITS // 32
    assert got.rate.best == pytest.approx(2 * FMA_PER_CALL * n / US, rel=1e-12)
    assert got.rate.warning("fp32 peak") is None
    assert ("par_ert", np.dtype(np.float32), (1, n), FMA_PER_CALL, 1, 1024) in clock.log


def test_a_falling_fma_peak_warns_with_the_sustained_rate(fake_kernels):
    # 15 samples, the last third taking 1.25x the time (20 % lower rate): throttling
    plan = dataclasses.replace(PLAN, min_samples=15, max_samples=15)
    clock = fake_kernels(lambda *a: US, fixed_s=CALL, sample_reps=REPS,
                         slow=(1.0,) * 10 + (1.25,) * 5)
    got = fma_peak("fp64", Team(1), plan, clock=clock)
    work = 2 * FMA_PER_CALL * (K.NVEC * K.SIMD_BITS // 64)
    ceiling = _measured(got.rate, got.method, "fp64 peak", precision="fp64")
    assert ceiling.value == pytest.approx(work * REPS / SAMPLE, rel=1e-12)
    slowed = [w for w in ceiling.warnings if "slowed" in w]
    assert len(slowed) == 1 and "last third 20 % below the first" in slowed[0]


# --- measure_clock -------------------------------------------------------------------
def test_clock_is_two_cycles_per_iteration_over_the_scripted_seconds(fake_kernels):
    # one shift+add iteration (2 cycles) every 2^-30 s (2^31 Hz = 2.147 GHz) plus CALL per
    # call: calibration reaches 8^6 reps, checks 4r, and settles on (2^-10 - 2^-14) / 2^-30
    # = 983040 iterations per 2^-10 s sample -> 2 x 983040 x 2^10 = 2.013 GHz (15/16)
    reps = 983040
    clock = fake_kernels(lambda *a: 2.0**-30, fixed_s=CALL, sample_reps=reps,
                         slow=(1, 1, 1, 2, 1))
    rate = measure_clock(Team(2), PLAN, clock=clock)
    hz = 2 * reps / SAMPLE
    assert rate.reps == reps and hz == pytest.approx(2.013265920e9, rel=1e-12)
    assert rate.samples == pytest.approx([hz] * 3 + [hz / 2, hz], rel=1e-12)
    assert rate.best == pytest.approx(hz, rel=1e-12)
    assert {e[1] for e in clock.log} == {K.ALU}


# --- intensity_sweep -----------------------------------------------------------------
def test_intensity_sweep_climbs_the_scripted_roofline(fake_kernels):
    # scripted machine: 2^35 B/s (34.4 GB/s) and 2^38 FLOP/s (275 GFLOP/s), knee at 8
    bwidth, peak = 2.0**35, 2.0**38

    def cost(kind, threads, n, k):
        return max(16 * n * threads / bwidth, 2 * k * n * threads / peak)

    clock = fake_kernels(cost)
    seen = []
    ws = 16 * 48 * 4                  # 4 blocks of 48 fp64 per thread (if the block is 48)
    pts = intensity_sweep((1, 8, 64, 256), ws, Team(2), PLAN, clock=clock,
                          progress=lambda i, n: seen.append((i, n)))
    assert [p.ai for p in pts] == [0.125, 1.0, 8.0, 32.0]            # k / 8
    assert [p.flop_per_s for p in pts] == pytest.approx(
        [2.0**32, 2.0**35, 2.0**38, 2.0**38], rel=1e-12)            # min(peak, AI x BW)
    d = [p.to_dict() for p in pts]
    assert [x["bytes_per_s"] for x in d] == pytest.approx([bwidth] * 3 + [bwidth / 4])
    assert seen == [(1, 4), (2, 4), (3, 4), (4, 4)]
    block = K.block_elements(8)
    n = max(1, ws // (16 * block)) * block
    assert {e[5] for e in clock.log} == {n}


# --- gemm_peak / torch_matmul_peak ------------------------------------------------------
def test_gemm_peak_keeps_the_fastest_size(monkeypatch):
    clock = KernelClock()
    per_call = {4: US, 8: 2 * US}        # 128 FLOP per 2^-20 s, 1024 FLOP per 2^-19 s

    def matmul(a, b, out=None):
        clock.run(1, per_call[a.shape[0]])
        return out

    monkeypatch.setattr(np, "matmul", matmul)
    got, by_size = gemm_peak("fp64", (4, 8), 1, PLAN, clock=clock)
    assert by_size == pytest.approx({4: 128 / US, 8: 1024 / (2 * US)}, rel=1e-12)
    assert got.rate.best == pytest.approx(536.870912e6, rel=1e-12)   # 2 x 8^3 / 2^-19
    assert "numpy matmul 8x8x8" in got.method and "best of sizes [4, 8]" in got.method


def test_torch_low_precision_matmul_on_the_fake_clock(monkeypatch):
    torch = pytest.importorskip("torch")
    clock = KernelClock()
    threads = torch.get_num_threads()

    def op(a, b):
        clock.run(1, US)
        return a

    monkeypatch.setattr(torch, "matmul", op)
    monkeypatch.setattr(torch, "_int_mm", op)
    for precision in ("bf16", "int8"):
        got = torch_matmul_peak(precision, 16, 1, PLAN, clock=clock)
        assert got.rate.best == pytest.approx(2 * 16**3 / US, rel=1e-12)   # 8.59 GOP/s
        assert got.rate.warning(precision) is None
    assert torch.get_num_threads() == threads


def test_torch_matmul_failure_is_a_reason_and_reads_no_clock(monkeypatch):
    torch = pytest.importorskip("torch")

    def broken(a, b):
        raise RuntimeError("no bf16 kernel for this CPU\nstack")

    def clock():
        raise AssertionError("nothing was timed")

    monkeypatch.setattr(torch, "matmul", broken)
    got = torch_matmul_peak("bf16", 16, 1, PLAN, clock=clock)
    assert got == "torch.matmul bf16 failed on this CPU: no bf16 kernel for this CPU"


# --- overhead ------------------------------------------------------------------------
def test_numba_empty_call_times_the_scripted_call(monkeypatch):
    clock = KernelClock()
    monkeypatch.setattr(K, "empty", lambda x: clock.run(1, 2.0**-22))
    timing = numba_empty_call(PLAN, clock=clock)
    assert timing.best == pytest.approx(2.0**-22, rel=1e-12)   # 0.24 us per call
    # calibration doubles to 128 calls (2^-15 s > sample / 50), then needs
    # 128 x 2^-10 / 2^-15 + 1 = 4097 calls: the next power of two
    assert timing.inner == 8192 and not timing.stats.noisy


# --- the bandwidth sweep (suite._sweep) over measure_stream --------------------------
@pytest.mark.parametrize("dip", [1.0, 0.9])
def test_sweep_finds_the_scripted_cache_plateaus(fake_kernels, monkeypatch, dip):
    # One thread; L1 16 KiB, L2 128 KiB, L3 1 MiB; scripted bandwidth 2^38 / 2^37 / 2^36
    # B/s while triad's 24 B x n fit a level, 2^34 (17.2 GB/s) beyond the L3. dip=0.9: the
    # 347 KiB point (inside the L3) reads 10 % low, within the plateau tolerance (12 %):
    # the L3 plateau holds and its ceiling is still its best point.
    caches = Caches(l1d=16 * 1024, l2=128 * 1024, l3=2**20)
    level_bw = {"L1": 2.0**38, "L2": 2.0**37, "L3": 2.0**36, "DRAM": 2.0**34}

    def bytes_per_s(ws: float) -> float:
        for level, cap in (("L1", caches.l1d), ("L2", caches.l2), ("L3", caches.l3)):
            if ws <= cap:
                return level_bw[level] * (dip if 300e3 < ws < 400e3 else 1.0)
        return level_bw["DRAM"]

    clock = fake_kernels(lambda kind, threads, n, k: 24 * n / bytes_per_s(24 * n))
    real = bw.measure_stream
    monkeypatch.setattr(bw, "measure_stream",
                        lambda *a, **kw: real(*a, **kw, clock=clock))
    spec = dataclasses.replace(get_mode("default"),
                               plan=dataclasses.replace(PLAN, warmup_s=0.0))
    dram_total = 12 * 2**20                     # 12 x the LLC
    host = type("Host", (), {"caches": caches})()
    extras, ceilings, notes = suite._sweep(host, spec, Team(1),
                                           suite._Stages(None, {"sweep": 1}), dram_total,
                                           bw.ArrayPool(dram_total))
    assert list(ceilings) == ["L1", "L2", "L3", "DRAM"]
    for level, c in ceilings.items():
        assert c.value == pytest.approx(level_bw[level], rel=1e-12), level
        assert c.provenance == "measured" and c.warnings == ()
    chosen = {p["level"]: p["chosen_bytes_per_thread"] for p in extras["plateaus"]}
    assert chosen["L2"] > 1.5 * caches.l1d and chosen["L2"] * 1.5 <= caches.l2
    assert chosen["DRAM"] >= dram_total * 0.99
    assert all(p["calibrated"] for p in extras["points"])
    low = [p["bytes_per_s"] for p in extras["points"] if 300e3 < p["ws_bytes_per_thread"] < 400e3]
    assert low == pytest.approx([dip * level_bw["L3"]], rel=1e-12)
    l3 = next(p for p in extras["plateaus"] if p["level"] == "L3")
    assert l3["first_bytes_per_thread"] < 300e3 and l3["last_bytes_per_thread"] > 400e3
    assert notes == []
