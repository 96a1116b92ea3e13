"""Review s24 r2 F5 (+ addendum): under a CPU quota below one CPU (docker --cpus=0.5, k8s
`limits.cpu: 500m`) the one thread the probe runs is throttled each CFS period, so its
best-of samples are burst rates: 51.3 GFLOP/s fp64 against a nominal of 25.5 that counts
0.5 cores (201 %). The quota note advised "--threads 1 or fewer" after a 1-thread run and
the overshoot flag blamed the CPU's identity. Now: the note says the figures are burst
rates and what sustained work gets, with no impossible advice; the overshoot flag names
the quota; extras.quota_sustained records the derived sustained figures.

Figures from the reviewer's run (cpuhalf.json, an EPYC Zen 3 at 3.19 GHz, cgroup v1
cpu.cfs_quota_us 50000 / cpu.cfs_period_us 100000)."""

from __future__ import annotations

import pytest

from rooflab.hardware import cgroup
from rooflab.hardware.cgroup import CpuQuota, cpu_quota
from rooflab.hardware.cpu_detect import detect_microarch
from rooflab.hardware.host import Caches, HostInfo
from rooflab.model.ceiling import Ceiling
from rooflab.probe.cpu import assemble
from rooflab.probe.cpu.flops import Measured
from rooflab.probe.cpu.modes import get_mode
from rooflab.probe.cpu.runner import Rate
from rooflab.probe.stats import summarize
from rooflab.probe.timer import Timing

HALF = "/sys/fs/cgroup/cpu/r2test/cpu.cfs_quota_us: 50000, cpu.cfs_period_us: 100000"
EPYC = dict(cpu_model="AMD EPYC 7B13", vendor="AuthenticAMD", family=0x19, model=0x01,
            flags=frozenset("sse2 avx avx2 fma".split()), cores=2, threads=2,
            caches=Caches(32768, 2**19, 2**25), memory_bytes=2**34,
            memory_available_bytes=2**34, hypervisor="KVM", os="Linux", machine="x86_64")


def _write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_the_half_cpu_quota_is_read_from_v1_files(tmp_path):
    _write(tmp_path / "proc", "1:cpu:/r2test\n")
    _write(tmp_path / "cg" / "cpu" / "r2test" / "cpu.cfs_quota_us", "50000\n")
    _write(tmp_path / "cg" / "cpu" / "r2test" / "cpu.cfs_period_us", "100000\n")
    q = cpu_quota(tmp_path / "proc", tmp_path / "cg")
    assert (q.cpus, q.threads, q.fits) == (0.5, 1, 1)


def test_the_note_says_burst_and_sustained_without_impossible_advice():
    note = cgroup.quota_note(CpuQuota(50000, 100000, HALF), 1, 2)
    assert "limits it to 0.5 CPU of time" in note
    # 50 ms of CPU time per 100 ms period, which one thread spends in 50 ms
    assert "run 50 ms of CPU time in each 100 ms period, which 1 thread spends in 50 ms" in note
    assert "burst rates of 1 thread" in note
    assert "sustained work (running longer than one period) gets 50 % of them" in note
    assert "--threads 1 or fewer" not in note          # it ran 1 thread already
    assert "no --threads setting avoids it" in note


def test_a_quota_above_one_cpu_still_advises_the_threads_that_fit():
    # k8s 1500m with 'all' = 2 threads: 150 ms per period, 75 ms of wall each, 75 % kept
    note = cgroup.quota_note(CpuQuota(150000, 100000, "cpu.max: '150000 100000'"), 2, 64)
    assert "which 2 threads spend in 75 ms" in note and "gets 75 % of them" in note
    assert "(measure with --threads 1 or fewer)" in note


def _rate(v):
    return Rate(samples=(v, v, v), reps=1, seconds=(1.0, 1.0, 1.0))


def _profile(fp64, fp32, quota=CpuQuota(50000, 100000, HALF)):
    fma, fma32 = Measured("fp64", "FMA", _rate(fp64)), Measured("fp32", "FMA", _rate(fp32))
    t = (1e-6,) * 5
    raw = assemble._Raw(
        clock0=_rate(3.19e9), clock_1t=_rate(3.19e9), peaks={"fp64": fma, "fp32": fma32},
        sweep_extras={}, stream={}, ws_intensity=1e6, intensity=(),
        mem_ceilings={"DRAM": Ceiling(value=2e10, level="DRAM", provenance="measured",
                                      samples=(2e10,) * 3)},
        gemm={"fp64": fma, "fp32": fma32}, gemm_by_size={}, lowp=[], not_measured={},
        overhead={"x": Timing(samples=t, inner=1, stats=summarize(t))}, peak_end=fma,
        clock1=_rate(3.19e9), notes=[],
        affinity={"cpu_list": [0, 1], "pinned": False,
                  "cpu_quota": quota.to_dict() if quota else None})
    h = HostInfo(**EPYC)
    arch = detect_microarch(h.vendor, h.family, h.model, h.flags, h.cpu_model)
    return assemble._assemble(raw, get_mode("quick"), h, arch, 1, 1.0)


def test_the_overshoot_names_the_quota_not_the_cpu():
    p = _profile(51.3e9, 103e9)
    # Zen 3: 16 fp64 FLOP/cycle per core; 0.5 CPU x 3.19 GHz x 16 = 25.52 GFLOP/s
    assert p.nominal.find_compute("fp64").value == pytest.approx(25.52e9)
    c = p.measured.find_compute("fp64", "vector")
    assert c.value == 51.3e9                               # the measured figure is kept
    (w,) = [w for w in c.warnings if "nominal" in w]
    assert "201 % of the nominal 25.5 GFLOP/s" in w
    assert "cgroup CPU quota of 0.5 CPU" in w and "burst rate" in w
    assert "51 GFLOP/s" in w                               # 1 core x 3.19 x 16 = 51.04
    assert "sustained work gets 50 % of it, 25.6 GFLOP/s" in w   # 51.3 x 0.5 = 25.65
    assert "may not be what it reports" not in w


def test_the_sustained_figures_are_recorded_as_derived():
    p = _profile(51.3e9, 103e9)
    s = p.extras["quota_sustained"]
    assert s["provenance"] == "derived" and s["share"] == 0.5
    assert s["ceilings"]["fp64 vector"] == pytest.approx(25.65e9)
    assert s["ceilings"]["fp32 vector"] == pytest.approx(51.5e9)
    assert s["ceilings"]["DRAM"] == pytest.approx(1e10)


def test_beyond_the_burst_rate_the_cpu_is_still_suspected():
    # 3x the quota's nominal is 1.5x even one whole core's: the quota does not explain it
    c = _profile(76.6e9, 103e9).measured.find_compute("fp64", "vector")
    (w,) = [w for w in c.warnings if "nominal" in w]
    assert "300 %" in w and "may not be what it reports" in w


def test_no_quota_no_sustained_record():
    p = _profile(51.3e9, 103e9, quota=None)
    assert "quota_sustained" not in p.extras
