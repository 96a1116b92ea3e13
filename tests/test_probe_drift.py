"""Samples that slow down as a measurement goes on (clock, power or thermal throttling; seed
004: a T4 at its 70 W cap slows after seconds of matmul) are told from random scatter:
probe.stats.slowdown on synthetic samples, the CPU probe's ceilings through the fake-clock
runner, and the GPU probe on PyTorch's CPU device with a device clock that slows."""

from __future__ import annotations

import math
import random
import sys
from pathlib import Path

import pytest

from rooflab.model.ceiling import Ceiling
from rooflab.probe.cpu import suite
from rooflab.probe.cpu.flops import Measured
from rooflab.probe.cpu.modes import get_mode
from rooflab.probe.cpu.runner import measure_rate
from rooflab.probe.stats import (
    MIN_SLOWDOWN_SAMPLES,
    rates_warning,
    slowdown,
    slowdown_warning,
    summarize,
)
from rooflab.probe.timer import FakeClock, Timing, TimingPlan
from rooflab.units import fmt_rate

sys.path.insert(0, str(Path(__file__).resolve().parent))
import cpu_probe_fakes as fakes  # noqa: E402


def _gflops(v: float) -> str:
    return fmt_rate(v, "fp32")


# 30 samples falling steadily from 100 to 85 GFLOP/s (15/29 GFLOP/s a sample).
DECLINE = [1e9 * (100 - 15 * i / 29) for i in range(30)]


def test_a_steady_decline_warns_with_the_fall_and_the_sustained_rate():
    s = slowdown(DECLINE)
    # first third i = 0..9: median at i = 4.5 -> 100 - 15 * 4.5 / 29 = 97.672 GFLOP/s;
    # last third i = 20..29: median at i = 24.5 -> 100 - 15 * 24.5 / 29 = 87.328
    assert s.first == pytest.approx(97.672e9, rel=1e-4)
    assert s.last == pytest.approx(87.328e9, rel=1e-4)
    assert s.drop == pytest.approx(1 - 87.328 / 97.672, rel=1e-3)       # 10.6 %
    assert s.n == 10
    w = slowdown_warning("fp32 FMA", DECLINE, _gflops)
    assert w == ("fp32 FMA: samples slowed during the run (last third 11 % below the first): "
                 "clock, power or thermal throttling, or other work that started meanwhile; "
                 "the figure is the best (burst) rate, the sustained one is 87.3 GFLOP/s")


def test_first_third_fast_last_third_fifteen_percent_slower():
    steps = [100e9] * 10 + [92.5e9] * 10 + [85e9] * 10
    s = slowdown(steps)
    assert s.drop == pytest.approx(0.15)
    assert "last third 15 % below the first" in slowdown_warning("fp64 peak", steps)
    assert "sustained one is 8.5e+10/s" in slowdown_warning("fp64 peak", steps)


def test_the_spread_tests_cannot_tell_the_decline_from_its_shuffle():
    # what the probe said before: rates_warning sees a set, the same for both orders
    shuffled = DECLINE[:]
    random.Random(0).shuffle(shuffled)
    assert rates_warning("x", DECLINE) == rates_warning("x", shuffled)


@pytest.mark.parametrize("seed", range(20))
def test_the_same_samples_shuffled_do_not_warn(seed):
    xs = DECLINE[:]
    random.Random(seed).shuffle(xs)
    assert slowdown(xs) is None
    assert slowdown_warning("fp32 FMA", xs) is None


def test_one_slow_sample_at_the_end_does_not_warn():
    steady = [1e9 * (1 + 0.01 * ((i * 7) % 5 - 2)) for i in range(29)]   # +-2 % scatter
    assert slowdown(steady + [0.5e9]) is None
    # two slow ones of the last third's ten: its median stays, nor the order test passes
    assert slowdown(steady[:28] + [0.5e9, 0.5e9]) is None
    # five of ten at the end, 50 % slow: the last third's median falls 26 % (a median
    # rule alone would warn), but half of it still runs as fast as the start: U = 75 of
    # 100 pairs, one-sided p = 0.032 > 0.01
    five = steady[:25] + [0.5e9] * 5
    head, tail = sorted(five[:10]), sorted(five[-10:])
    assert 1 - (tail[4] + tail[5]) / (head[4] + head[5]) == pytest.approx(0.26)
    assert slowdown(five) is None


def test_too_few_samples_never_warn():
    # a fall of 30 % over 14 samples: thirds of 4, whose least one-sided p is 1/C(8, 4)
    fall = [1e9 * (1 - 0.3 * i / 13) for i in range(14)]
    assert MIN_SLOWDOWN_SAMPLES == 15
    assert slowdown(fall) is None
    assert slowdown([1e9, 0.5e9, 0.4e9, 0.3e9, 0.2e9, 0.1e9]) is None
    # 15 samples: thirds of 5 wholly apart, p = 1/C(10, 5) = 1/252
    fall15 = [1e9 * (1 - 0.3 * i / 14) for i in range(15)]
    s = slowdown(fall15)
    assert s is not None and s.p_value == pytest.approx(1 / math.comb(10, 5))


def test_a_rise_or_a_small_fall_does_not_warn():
    assert slowdown(DECLINE[::-1]) is None                       # faster at the end
    small = [1e9 * (1 - 0.04 * i / 29) for i in range(30)]         # 2.8 % between thirds
    assert slowdown(small) is None


# --- the CPU probe: the fake-clock runner, assembled into a profile -----------------------

def _slowing_rate(slope: float):
    """measure_rate on a kernel whose repetition costs 1 ns x (1 + slope x call index): the
    clock falls as the run goes on. 1000 reps a call, 30 samples after one warm-up call."""
    clock = FakeClock(0.0)

    def call(reps: int) -> None:
        clock.now += reps * 1e-9 * (1 + slope * clock.calls)
        clock.calls += 1

    plan = TimingPlan(warmup_s=0.0, sample_s=1e-6, budget_s=0.0, min_samples=30,
                      max_samples=30)
    return measure_rate(call, 2.0, plan, clock=clock, reps=1000)


def _cpu_profile(fp64_rate):
    fma = Measured("fp64", "FMA", fp64_rate)
    fma32 = Measured("fp32", "FMA", fakes.rate(4e9))
    raw = suite._Raw(
        clock0=fakes.rate(3e9), clock_1t=fakes.rate(3e9), peaks={"fp64": fma, "fp32": fma32},
        sweep_extras={}, mem_ceilings={"DRAM": Ceiling(2e10, level="DRAM")}, stream={},
        ws_intensity=1e6, intensity=(), gemm={"fp64": fma, "fp32": fma32}, gemm_by_size={},
        lowp=[], not_measured={"bf16": "skipped"},
        overhead={"call": Timing(samples=(1e-6,) * 3, inner=1,
                                       stats=summarize((1e-6,) * 3))},
        peak_end=fma, clock1=fakes.rate(3e9), notes=[], load=None)
    host, arch = _host_arch()      # cpu_probe_fakes' host: one Zen 4 core
    return suite._assemble(raw, get_mode("quick"), host, arch, 1, 10.0)


def _host_arch():
    from rooflab.hardware.cpu_detect import detect_microarch
    from rooflab.hardware.host import Caches, HostInfo

    host = HostInfo(cpu_model="cpu", vendor="AuthenticAMD", family=25, model=17,
                    flags=frozenset({"avx2", "fma", "avx512f"}), cores=1, threads=1,
                    caches=Caches(32768, 2**20, 2**25), memory_bytes=2**34,
                    memory_available_bytes=2**33, hypervisor=None, os="Linux",
                    machine="x86_64")
    return host, detect_microarch(host.vendor, host.family, host.model, host.flags,
                                  host.cpu_model)


def test_cpu_probe_ceiling_warns_when_the_fake_clock_slows():
    rate = _slowing_rate(0.005)
    # sample j is call 1 + j (one warm-up call): 2000 FLOP / (1 us x (1 + 0.005 (1 + j)))
    assert rate.samples[0] == pytest.approx(2e9 / 1.005)
    first = (2e9 / 1.025 + 2e9 / 1.030) / 2          # j = 4, 5
    last = (2e9 / 1.125 + 2e9 / 1.130) / 2           # j = 24, 25
    fp64 = _cpu_profile(rate).measured.find_compute("fp64")
    assert fp64.value == pytest.approx(2e9 / 1.005)   # the figure stays the best sample
    slowed = [w for w in fp64.warnings if "slowed" in w]
    assert slowed == [f"fp64 peak: samples slowed during the run (last third "
                      f"{100 * (1 - last / first):.0f} % below the first): clock, power or thermal "
                      f"throttling, or other work that started meanwhile; the figure is the "
                      f"best (burst) rate, the sustained one is {fmt_rate(last, 'fp64')}"]
    assert "last third 9 % below" in slowed[0] and "1.77 GFLOP/s" in slowed[0]


def test_cpu_probe_ceiling_with_a_steady_fake_clock_does_not():
    fp64 = _cpu_profile(_slowing_rate(0.0)).measured.find_compute("fp64")
    assert not any("slowed" in w for w in fp64.warnings)


# --- the GPU probe on PyTorch's CPU device, its device clock slowing -----------------------

class SlowingDeviceClock:
    """A device clock for the GPU probe's timer: each reading advances it by 100 us x
    (1 + slope x readings since the last synchronize), so within one measurement every
    timed call lasts longer than the one before (time_calls synchronizes before its timed
    calls; call i's end mark is reading 2i + 2)."""

    def __init__(self, slope: float):
        self.slope, self.now, self.reads = slope, 0.0, 0

    def __call__(self) -> float:
        self.reads += 1
        self.now += 1e-4 * (1 + self.slope * self.reads)
        return self.now

    def sync(self) -> None:
        self.reads = 0


def _gpu_profile(monkeypatch, slope: float):
    torch = pytest.importorskip("torch")
    from dataclasses import replace

    import rooflab.probe.gpu as gpu
    from rooflab.probe.gpu import compute
    from rooflab.probe.gpu import context as C
    from rooflab.probe.gpu.timing import clock_timer

    clock = SlowingDeviceClock(slope)
    monkeypatch.setattr(gpu, "_make_timer",
                        lambda torch, dev, host: clock_timer(clock, sync=clock.sync))
    # The quick plan (30 timed calls) and matmul size (96) as they are; the cache sweep and
    # launch loop at their smallest and no fp8 matmul (torch's CPU _scaled_mm took ~0.3 s a
    # call, half of the ~13 CPU-s each probe cost): the fake clock sets every sample anyway.
    monkeypatch.setitem(C.CPU_SIZES, "quick", replace(
        C.CPU_SIZES["quick"], sweep_lo=8 << 10, sweep_hi_l2=0.05, sweep_step=1.4,
        sweep_call_bytes=1 << 20, launch_calls=5))
    monkeypatch.setattr(compute, "MATMUL_PRECISIONS",
                        tuple(p for p in compute.MATMUL_PRECISIONS if p != "fp8"))
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return gpu.probe_gpu("cpu", "quick")
    finally:
        torch.set_num_threads(threads)


def test_gpu_probe_on_the_cpu_device_warns_when_its_clock_slows(monkeypatch):
    p = _gpu_profile(monkeypatch, 0.005)
    fp32 = p.measured.find_compute("fp32")
    # quick CPU-device plan: 30 timed calls; call i lasts 100 us x (1 + 0.005 (2i + 2))
    assert len(fp32.samples) == 30
    assert fp32.samples[0] / fp32.samples[29] == pytest.approx(1.3 / 1.01)
    first = (1 / 1.05 + 1 / 1.06) / 2                # calls 4 and 5 of the first ten
    last = (1 / 1.25 + 1 / 1.26) / 2                 # calls 24 and 25 of the last ten
    slowed = [w for w in fp32.warnings if "slowed" in w]
    assert len(slowed) == 1
    assert slowed[0].startswith(f"fp32 vector: samples slowed during the run (last third "
                                f"{100 * (1 - last / first):.0f} % below the first)")
    assert "16 % below" in slowed[0]
    sustained = 2 * 96 ** 3 / 1e-4 * last
    assert slowed[0].endswith(f"the sustained one is {fmt_rate(sustained, 'fp32')}")
    dram = p.measured.find_memory("DRAM")
    assert any("slowed" in w for w in dram.warnings)
    # the profile's list of warnings carries them too
    assert slowed[0] in p.extras["gpu"]["warnings"]


def test_gpu_probe_on_the_cpu_device_with_a_steady_clock_does_not(monkeypatch):
    p = _gpu_profile(monkeypatch, 0.0)
    assert not any("slowed" in w for c in p.measured.compute + p.measured.memory
                   for w in c.warnings)


def test_a_gpu_clock_reading_under_load_is_named_in_the_same_warning():
    from rooflab.probe.gpu.context import clocks_seen, measured_ceiling

    seconds = tuple(1e-3 * (1 + 0.01 * i) for i in range(30))
    timing = Timing(samples=seconds, inner=1, stats=summarize(seconds))
    t4 = {"sm_clock_mhz": 1110, "max_sm_clock_mhz": 1590, "clock_event_reasons": 0x4}
    assert clocks_seen(t4) == ("the SM clock read 1110 of 1590 MHz right after; clock "
                               "event reasons: sw power cap")
    assert clocks_seen({"sm_clock_mhz": 1590, "max_sm_clock_mhz": 1590,
                        "clock_event_reasons": 0x1}) == ""
    assert clocks_seen({"cpu_mhz_mean": 3000.0}) == "" and clocks_seen(None) == ""
    c = measured_ceiling(2 * 4096 ** 3, timing, method="m", source="s", precision="fp16",
                         unit="tensor", clocks=t4)
    slowed = [w for w in c.warnings if "slowed" in w]
    assert len(slowed) == 1
    assert ("clock, power or thermal throttling (the SM clock read 1110 of 1590 MHz right "
            "after; clock event reasons: sw power cap)") in slowed[0]
