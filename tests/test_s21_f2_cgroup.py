"""Review s21 r2 F1: a cgroup CPU quota (`docker run --cpus=2`, Kubernetes `limits.cpu: 2`)
leaves the affinity mask whole; the probe reads cpu.max (v2) or cpu.cfs_quota_us /
cpu.cfs_period_us (v1), runs ceil(quota / period) threads for 'all', says so, and the
nominal roof counts the quota's CPUs, not the host's cores.

File formats: Linux Documentation/admin-guide/cgroup-v2.rst ("cpu.max ... $MAX $PERIOD",
"max" for no limit) and scheduler/sched-bwc.rst (v1: cfs_quota_us -1 for no limit)."""

from __future__ import annotations

import os

import pytest

from rooflab.hardware import cgroup
from rooflab.hardware.cgroup import CpuQuota, cpu_quota, parse_cpu_max
from rooflab.hardware.cpu_detect import detect_microarch
from rooflab.hardware.host import Caches, HostInfo
from rooflab.probe.cpu import assemble


def _write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_cpu_max_parsing():
    assert parse_cpu_max("200000 100000") == (200000, 100000)
    assert parse_cpu_max("max 100000") is None
    assert parse_cpu_max("150000") == (150000, 100000)   # period omitted: the default
    q = CpuQuota(150000, 100000, "x")
    assert q.cpus == 1.5 and q.threads == 2


def test_v2_quota_inside_a_container(tmp_path):
    # a container with its own cgroup namespace: /proc/self/cgroup says "0::/", the mount
    # is the container's cgroup and holds the docker --cpus=2 limit
    _write(tmp_path / "proc", "0::/\n")
    _write(tmp_path / "cg" / "cpu.max", "200000 100000\n")
    q = cpu_quota(tmp_path / "proc", tmp_path / "cg")
    assert (q.cpus, q.threads) == (2.0, 2) and "cpu.max" in q.source


def test_v2_the_tightest_ancestor_wins(tmp_path):
    _write(tmp_path / "proc", "0::/kubepods/pod1/ctr\n")
    _write(tmp_path / "cg" / "kubepods" / "cpu.max", "max 100000\n")
    _write(tmp_path / "cg" / "kubepods" / "pod1" / "cpu.max", "350000 100000\n")
    _write(tmp_path / "cg" / "kubepods" / "pod1" / "ctr" / "cpu.max", "max 100000\n")
    q = cpu_quota(tmp_path / "proc", tmp_path / "cg")
    assert q.cpus == 3.5 and q.threads == 4


def test_v1_quota(tmp_path):
    _write(tmp_path / "proc", "4:memory:/docker/abc\n3:cpu,cpuacct:/docker/abc\n")
    _write(tmp_path / "cg" / "cpu,cpuacct" / "docker" / "abc" / "cpu.cfs_quota_us", "50000\n")
    _write(tmp_path / "cg" / "cpu,cpuacct" / "docker" / "abc" / "cpu.cfs_period_us",
           "100000\n")
    q = cpu_quota(tmp_path / "proc", tmp_path / "cg")
    assert q.cpus == 0.5 and q.threads == 1


def test_no_quota(tmp_path):
    _write(tmp_path / "proc", "3:cpu,cpuacct:/\n")
    _write(tmp_path / "cg" / "cpu,cpuacct" / "cpu.cfs_quota_us", "-1\n")
    assert cpu_quota(tmp_path / "proc", tmp_path / "cg") is None
    assert cpu_quota(tmp_path / "absent", tmp_path / "cg") is None


def test_all_threads_is_the_quota(monkeypatch):
    pytest.importorskip("numba")
    from rooflab.probe.cpu import suite

    seen = {}

    def fake(spec, counts, host, allowed, pinned, *rest):
        seen.update(counts=counts, quota=rest[-1])
        return "profile"

    monkeypatch.setattr(suite, "_probe", fake)
    monkeypatch.setattr(cgroup, "cpu_quota", lambda: CpuQuota(100000, 100000, "cpu.max"))
    assert suite.probe_cpu("quick") == "profile"
    # a 1-CPU quota: 'all' is one thread whatever the mask (was len(sched_getaffinity))
    assert seen["counts"] == (1,) and seen["quota"].cpus == 1.0
    suite.probe_cpu("quick", threads=(1, "all"))
    assert seen["counts"] == (1,)


EPYC = dict(cpu_model="AMD EPYC 7713P 64-Core Processor", vendor="AuthenticAMD", family=0x19,
            model=0x01, flags=frozenset("sse2 avx avx2 fma".split()), cores=64, threads=128,
            caches=Caches(32768, 2**19, 2**25), memory_bytes=2**39,
            memory_available_bytes=2**39, hypervisor=None, os="Linux", machine="x86_64")


def test_nominal_counts_the_quota_not_the_host():
    h = HostInfo(**EPYC)
    arch = detect_microarch(h.vendor, h.family, h.model, h.flags, h.cpu_model)
    allowed = tuple(range(128))
    roof, _ = assemble._nominal(h, arch, 3.0, 2, cpus=allowed, quota_cpus=2.0)
    # Zen 3: 2 x 256-bit FMA = 16 fp64 FLOP/cycle (AMD Zen 3 software optimization guide);
    # 2 CPUs of quota x 3.0 GHz x 16 = 96 GFLOP/s (the host's 64 cores: 3072)
    assert roof.find_compute("fp64").value == pytest.approx(96e9)
    roof, _ = assemble._nominal(h, arch, 3.0, 2, cpus=allowed, quota_cpus=1.5)
    assert roof.find_compute("fp64").value == pytest.approx(72e9)   # 1.5 x 3.0 x 16


def test_the_note_names_the_quota_and_the_host():
    q = CpuQuota(200000, 100000, "/sys/fs/cgroup/cpu.max: '200000 100000'")
    note = cgroup.quota_note(q, 2, 64)
    assert "2 CPUs of time" in note and "64 CPUs" in note and "cpu.max" in note
    assert "burst" not in note
    assert "burst rate" in cgroup.quota_note(q, 8, 64)   # --threads 8 under 2 CPUs


def test_this_machine_reads_without_error():
    # whatever this machine's cgroup says, reading it never raises
    q = cpu_quota()
    assert q is None or (q.cpus > 0 and q.threads <= (os.cpu_count() or 1) * 64)


def test_the_assembled_profile_counts_the_quota():
    from rooflab.model.ceiling import Ceiling
    from rooflab.probe.cpu.flops import Measured
    from rooflab.probe.cpu.modes import get_mode
    from rooflab.probe.cpu.runner import Rate
    from rooflab.probe.stats import summarize
    from rooflab.probe.timer import Timing

    def rate(v):
        return Rate(samples=(v, v, v), reps=1, seconds=(1.0, 1.0, 1.0))

    fma, fma32 = Measured("fp64", "FMA", rate(80e9)), Measured("fp32", "FMA", rate(160e9))
    t = (1e-6,) * 5
    raw = assemble._Raw(
        clock0=rate(3e9), clock_1t=rate(3e9), peaks={"fp64": fma, "fp32": fma32},
        sweep_extras={}, stream={}, ws_intensity=1e6, intensity=(),
        mem_ceilings={"DRAM": Ceiling(value=2e10, level="DRAM", provenance="measured",
                                      samples=(2e10,) * 3)},
        gemm={"fp64": fma, "fp32": fma32}, gemm_by_size={}, lowp=[], not_measured={},
        overhead={"x": Timing(samples=t, inner=1, stats=summarize(t))}, peak_end=fma,
        clock1=rate(3e9), notes=[],
        affinity={"cpu_list": list(range(128)), "pinned": False,
                  "cpu_quota": CpuQuota(200000, 100000, "cpu.max").to_dict()})
    h = HostInfo(**EPYC)
    arch = detect_microarch(h.vendor, h.family, h.model, h.flags, h.cpu_model)
    p = assemble._assemble(raw, get_mode("quick"), h, arch, 2, 1.0)
    assert p.nominal.find_compute("fp64").value == pytest.approx(96e9)   # 2 x 3.0 x 16
    assert p.host["nominal_cores"] == 2


def test_a_quota_above_the_mask_changes_nothing(monkeypatch):
    pytest.importorskip("numba")
    from rooflab.probe.cpu import suite

    seen = {}
    monkeypatch.setattr(suite, "_probe", lambda *a: seen.update(counts=a[1], quota=a[-1]))
    monkeypatch.setattr(cgroup, "cpu_quota", lambda: CpuQuota(10**9, 100000, "cpu.max"))
    suite.probe_cpu("quick")
    assert seen["quota"] is None and seen["counts"] == (len(os.sched_getaffinity(0)),)
