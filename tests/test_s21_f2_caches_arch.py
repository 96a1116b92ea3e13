"""Review s21 r2 F5/F6/F10: the L3 instance count from sysfs (lscpu before util-linux 2.37
prints totals with no instance count), family 0x1a models outside Linux's Zen 5 ranges
(Zen 6) get no nominal, and avx512f on a 256-bit table design keeps the table's
FLOP/cycle.

The EPYC 7713P inputs are cut from the reviewer's: lscpu 2.36 on kernel 5.10 (LKML k10temp
thread) and cpu0's sysfs cache directories (32K / 512K / 32768K, shared_cpu_list 0,64 and
0-7,64-71: 8 CCDs x 32 MiB = 256 MiB of L3, AMD EPYC 7713P product page)."""

from __future__ import annotations

import pytest
from fake_sysfs import write_caches

from rooflab.hardware import host as H
from rooflab.hardware.cpu_detect import detect_microarch
from rooflab.probe.cpu.modes import get_mode
from rooflab.probe.cpu.suite import dram_working_set

MIB = 2**20
EPYC_LSCPU_236 = """Thread(s) per core:              2
Core(s) per socket:              64
Socket(s):                       1
Vendor ID:                       AuthenticAMD
CPU family:                      25
Model:                           1
Model name:                      AMD EPYC 7713P 64-Core Processor
L1d cache:                       2 MiB
L1i cache:                       2 MiB
L2 cache:                        32 MiB
L3 cache:                        256 MiB
NUMA node0 CPU(s):               0-127
"""
EPYC_CPUINFO = "\n".join(
    f"processor\t: {i}\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 1\n"
    f"model name\t: AMD EPYC 7713P 64-Core Processor\nphysical id\t: 0\n"
    f"core id\t\t: {i % 64}\nflags\t\t: fpu sse2 avx avx2 fma\n" for i in range(128))


def epyc_sysfs(root, cpus=(0,)):
    """cpuN/cache/index{0,2,3} as the kernel writes them; each CPU's L3 list is its CCD's
    8 cores and their SMT siblings (cpu c and c+64)."""
    for c in cpus:
        ccd = (c % 64) // 8
        l3 = f"{ccd * 8}-{ccd * 8 + 7},{ccd * 8 + 64}-{ccd * 8 + 71}"
        write_caches(root, c, (("1", "Data", "32K", f"{c % 64},{c % 64 + 64}"),
                               ("2", "Unified", "512K", f"{c % 64},{c % 64 + 64}"),
                               ("3", "Unified", "32768K", l3)))
    return root


def _detect(monkeypatch, tmp_path, sysfs_root):
    monkeypatch.setattr(H, "lscpu_text", lambda: EPYC_LSCPU_236)
    monkeypatch.setattr(H, "sysfs_caches", lambda root=None: _real_sysfs(sysfs_root))
    monkeypatch.setattr(H, "numa_nodes", lambda root=None: {})
    monkeypatch.setattr(H, "meminfo", lambda text=None: (2**39, 2**39))
    monkeypatch.setattr(H, "library_versions", lambda: {})
    monkeypatch.setattr(H, "blas_info", lambda: "")
    monkeypatch.setattr(H, "SYS_CPU", tmp_path / "none")
    monkeypatch.setattr(H, "PMU_DEVICES", tmp_path / "none")
    return H.detect_host(cpuinfo=EPYC_CPUINFO)


_real_sysfs = H.sysfs_caches


@pytest.mark.parametrize("cpus", [(0,), tuple(range(128))], ids=["cpu0-only", "every-cpu"])
def test_l3_instances_from_sysfs_with_an_old_lscpu(monkeypatch, tmp_path, cpus):
    h = _detect(monkeypatch, tmp_path, epyc_sysfs(tmp_path / "sys", cpus))
    c = h.caches
    assert (c.l1d, c.l2, c.l3) == (32 * 1024, 512 * 1024, 32 * MIB)
    # 128 CPUs / 16 sharing cpu0's L3 = 8 instances (every-cpu: 8 distinct lists); was 1
    assert c.l3_instances == 8
    # DRAM working set: 12 x the L3 total (default mode's llc_multiple) = 12 x 256 MiB
    spec = get_mode("default")
    assert dram_working_set(h, spec)[0] == spec.llc_multiple * 256 * MIB == 3 * 2**30


def test_old_lscpu_totals_are_not_per_core_sizes():
    c = H.parse_lscpu(EPYC_LSCPU_236)
    # 2 MiB / 64 cores = 32 KiB L1d, 32 MiB / 64 = 512 KiB L2 (was 2 MiB and 32 MiB);
    # L3 kept as the 256 MiB total in one instance (the total is what the DRAM set needs)
    assert (c.l1d, c.l2, c.l3, c.l3_instances) == (32 * 1024, 512 * 1024, 256 * MIB, 1)
    # without a core count a total cannot be split: no per-core size at all
    no_cores = "\n".join(ln for ln in EPYC_LSCPU_236.splitlines() if "Core(s)" not in ln)
    assert H.parse_lscpu(no_cores).l1d is None
    # lscpu >= 2.37 and old per-instance lscpu are read as before
    new = "L1d:   2 MiB (64 instances)\nL3:   256 MiB (8 instances)\n"
    assert H.parse_lscpu(new).l1d == 32 * 1024 and H.parse_lscpu(new).l3_instances == 8
    assert H.parse_lscpu("L1d cache:   32K\nL3 cache:  32768K\n").l1d == 32 * 1024


ZEN5_FLAGS = frozenset("sse2 avx avx2 fma avx512f avx512_bf16 avx512_vnni".split())


@pytest.mark.parametrize("model", [0x50, 0x5F, 0x80, 0x90, 0xA0, 0xC0, 0xE0])
def test_zen6_models_get_no_nominal(model):
    # Linux arch/x86/kernel/cpu/amd.c: X86_FEATURE_ZEN6 for family 0x1a models 0x50-0x5f,
    # 0x80-0xaf, 0xc0-0xef; the name must not pick Zen 5 either
    arch = detect_microarch("AuthenticAMD", 0x1A, model, ZEN5_FLAGS,
                            "AMD Ryzen 9 9950X 16-Core Processor")
    assert not arch.nominal_known and arch.fp64_flop_per_cycle == 0
    assert any("Zen 6" in n and "amd.c" in n for n in arch.notes)


@pytest.mark.parametrize("model,name,fp64", [
    (0x02, "Zen 5", 32), (0x11, "Zen 5", 32), (0x44, "Zen 5", 32), (0x70, "Zen 5", 32),
    (0x24, "Zen 5 (256-bit datapath)", 16), (0x60, "Zen 5 (256-bit datapath)", 16)])
def test_zen5_ranges_stay(model, name, fp64):
    # Turin 0x02/0x11, Granite Ridge 0x44, Strix Halo 0x70: 2 x 512-bit FMA = 32 fp64;
    # Strix Point 0x24, Krackan 0x60: 256-bit datapath, 16 (AMD Zen 5 optimization guide)
    arch = detect_microarch("AuthenticAMD", 0x1A, model, ZEN5_FLAGS, "AMD")
    assert arch.name == name and arch.fp64_flop_per_cycle == fp64


def test_avx512f_does_not_double_a_256_bit_design():
    # Zen 3 with avx512f in the flags (a VM's odd CPUID): 2 x 256-bit FMA = 16 fp64
    # FLOP/cycle stays (was 512 x 2 = 32)
    arch = detect_microarch("AuthenticAMD", 0x19, 0x01,
                            frozenset({"avx2", "fma", "avx512f"}), "AMD EPYC 7713")
    assert arch.fp64_flop_per_cycle == 16 and arch.vector_isa_bits == 512
    assert any("keeps 256-bit x 2 pipes" in n for n in arch.notes)


def test_cache_capacities_of_one_ccd_pinned(monkeypatch, tmp_path):
    """F7: --cpus 0-7 on the EPYC 7713P is 8 cores of one CCD, one thread each: 32 KiB L1d,
    512 KiB L2 and 32 MiB / 8 = 4 MiB of L3 per thread (was 16 KiB, 256 KiB, 32 MiB: SMT
    sharing and all 8 CCDs assumed), and clean plateaus at those sizes get no VM note."""
    from rooflab.probe.cpu import bandwidth as bw
    from rooflab.probe.cpu import suite

    h = _detect(monkeypatch, tmp_path, epyc_sysfs(tmp_path / "sys", range(128)))
    monkeypatch.setattr(H, "SYS_CPU", tmp_path / "sys")
    where = suite.placement(h, tuple(range(128)), tuple(range(8)), 8)
    assert where == (bw.Placement(cores=8, l3_groups=1), False)
    caps = bw.capacities(h.caches, 8, where[0])
    assert caps == {"L1": 32 * 1024, "L2": 512 * 1024, "L3": 4 * MIB}
    sizes = suite.sweep_sizes_for(get_mode("default"), 12 * 256 * MIB, 8)
    vals = [1000e9 if s <= 32 * 1024 else 500e9 if s <= 512 * 1024 else 250e9
            if s <= 4 * MIB else 45e9 for s in sizes]
    _, _, notes = bw.label_levels(vals, sizes, h.caches, 8, placement=where[0])
    assert not any("OS reports" in n for n in notes), notes
    # unpinned with fewer threads than CPUs: the placement is unknown, and a mismatch
    # note says so instead of blaming a VM alone
    assert suite.placement(h, tuple(range(128)), None, 8) == (None, True)
    _, _, notes = bw.label_levels(vals, sizes, h.caches, 8, unpinned=True)
    assert notes and all("not pinned" in n for n in notes if "OS reports" in n)
    # every allowed CPU busy: 64 cores, 8 L3 instances, as before
    full = suite.placement(h, tuple(range(128)), None, 128)[0]
    assert full == bw.Placement(cores=64, l3_groups=8)
    assert bw.capacities(h.caches, 128, full)["L1"] == 16 * 1024   # SMT pairs share
