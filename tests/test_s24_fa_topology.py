"""s24 r2 F6: a thin /proc/cpuinfo (gVisor: GKE Sandbox, Cloud Run gen1, Modal) names no
cores: sysfs topology counts them where it exists, else the core count is unknown (no
nominal compute roof) rather than one core per logical CPU. F1 addendum: the DRAM working
set counts the L3 instances of the CPUs this process may use, not the host's."""

from __future__ import annotations

import os

import pytest
from fake_sysfs import write_caches

from rooflab.hardware import host as H
from rooflab.hardware.cpu_detect import detect_microarch
from rooflab.probe.cpu.assemble import _nominal
from rooflab.probe.cpu.modes import get_mode
from rooflab.probe.cpu.suite import dram_working_set

MiB = 2**20


def _gvisor_cpuinfo(cpus: int) -> str:
    """gVisor's /proc/cpuinfo: processor, vendor, family/model, 'unknown' model name, flags;
    no physical id, core id, siblings or cpu cores (pkg/sentry/hostcpu and fs/proc)."""
    block = ("processor\t: {i}\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 1\n"
             "model name\t: unknown\nstepping\t: unknown\ncpu MHz\t\t: 3193.999\n"
             "fpu\t\t: yes\nfpu_exception\t: yes\ncpuid level\t: 13\nwp\t\t: yes\n"
             "flags\t\t: fpu sse2 avx avx2 fma hypervisor\nbogomips\t: 6387.99\n"
             "clflush size\t: 64\ncache_alignment\t: 64\n"
             "address sizes\t: 46 bits physical, 48 bits virtual\npower management:\n")
    return "\n".join(block.format(i=i) for i in range(cpus))


def _isolate(monkeypatch, tmp_path, sys_cpu):
    monkeypatch.setattr(H, "SYS_CPU", sys_cpu)
    monkeypatch.setattr(H, "PMU_DEVICES", tmp_path / "no-pmu")
    monkeypatch.setattr(H, "lscpu_text", lambda: "")
    monkeypatch.setattr(H, "sysfs_caches", lambda *a: H.Caches())
    monkeypatch.setattr(H, "numa_nodes", lambda *a: {})
    monkeypatch.setattr(H, "library_versions", lambda: {})
    monkeypatch.setattr(H, "blas_info", lambda: "")


def test_thin_cpuinfo_without_topology_leaves_the_cores_unknown(monkeypatch, tmp_path):
    _isolate(monkeypatch, tmp_path, tmp_path / "no-sys-cpu")
    h = H.detect_host(_gvisor_cpuinfo(4))
    # was (4, 4, True): every logical CPU a core, the nominal 2x on an SMT host
    assert (h.cores, h.threads, h.cores_known) == (4, 4, False)
    arch = detect_microarch(h.vendor, h.family, h.model, h.flags, h.cpu_model)
    roof, (note,) = _nominal(h, arch, 3.19, 4)
    assert roof is None and "did not say how many physical cores" in note


def _smt_sysfs(root, pairs):
    for cpus in pairs:
        for c in cpus:
            top = root / f"cpu{c}" / "topology"
            top.mkdir(parents=True)
            (top / "core_cpus_list").write_text(",".join(map(str, cpus)) + "\n")
            (top / "core_id").write_text(f"{min(cpus)}\n")
    return root


def test_thin_cpuinfo_with_sysfs_topology_counts_smt_pairs_once(monkeypatch, tmp_path):
    # 4 vCPUs that are two cores' hyperthreads (Linux numbering: siblings 0,2 and 1,3)
    _isolate(monkeypatch, tmp_path, _smt_sysfs(tmp_path / "cpu", [(0, 2), (1, 3)]))
    h = H.detect_host(_gvisor_cpuinfo(4))
    assert (h.cores, h.threads, h.cores_known) == (2, 4, True)   # was 4 cores
    assert H.core_count(H.parse_cpuinfo(_gvisor_cpuinfo(4)), tmp_path / "cpu") == 2


# --- the L3s this process's CPUs reach ------------------------------------------------------
def _ccd_sysfs(root, ccds: int, per_ccd: int):
    """A 12-CCD EPYC's sysfs: each CPU's L1d/L2 and its CCD's 32 MiB L3."""
    for c in range(ccds * per_ccd):
        first = c // per_ccd * per_ccd
        write_caches(root, c, (("1", "Data", "32K", f"{c}"), ("2", "Unified", "1024K", f"{c}"),
                               ("3", "Unified", "32768K", f"{first}-{first + per_ccd - 1}")))
    return root


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity"), reason="Linux affinity masks")
def test_a_cpuset_counts_only_the_l3s_its_cpus_reach(monkeypatch, tmp_path):
    sys_cpu = _ccd_sysfs(tmp_path / "cpu", 12, 8)
    real = H.sysfs_caches
    monkeypatch.setattr(H, "sysfs_caches", lambda *a: real(sys_cpu))
    monkeypatch.setattr(H, "lscpu_text", lambda: "")
    monkeypatch.setattr(H, "SYS_CPU", sys_cpu)
    # Slurm --cpus-per-task=4 on one CCD
    monkeypatch.setattr(H.os, "sched_getaffinity", lambda pid: {8, 9, 10, 11})
    c = H.detect_caches(96)
    assert (c.l3, c.l3_instances) == (32 * MiB, 1)   # was 12
    h = H.HostInfo("AMD EPYC 9654", "AuthenticAMD", 25, 17, frozenset(), 48, 96, c, 2**40,
                   2**40, None, "Linux", "x86_64")
    # --quick: 12 x 32 MiB = 384 MiB, not 12 x 384 MiB = 4.5 GiB (~8.5 GB resident)
    assert dram_working_set(h, get_mode("quick"), None, 4)[0] == 384 * MiB
    # two CPUs on two CCDs reach two L3s; the whole host all twelve
    monkeypatch.setattr(H.os, "sched_getaffinity", lambda pid: {0, 8})
    assert H.detect_caches(96).l3_instances == 2
    monkeypatch.setattr(H.os, "sched_getaffinity", lambda pid: set(range(96)))
    assert H.detect_caches(96).l3_instances == 12


def test_l3_reach_says_nothing_when_sysfs_lacks_some_cpus(tmp_path):
    from rooflab.hardware.cpu_topology import l3_reach

    sys_cpu = _ccd_sysfs(tmp_path / "cpu", 2, 4)
    assert l3_reach(sys_cpu, {0, 1}) == 1 and l3_reach(sys_cpu, {3, 4}) == 2
    # a sysfs copy with fewer CPUs than the mask: no answer, the host's count stands
    assert l3_reach(sys_cpu, {0, 9}) is None and l3_reach(sys_cpu, ()) is None
