"""Host identity: /proc/cpuinfo, sysfs and lscpu cache sizes, meminfo."""

from __future__ import annotations

import pytest
from fake_sysfs import write_caches

from rooflab.hardware.host import (
    Caches,
    core_count,
    cpu_flags,
    detect_host,
    meminfo,
    parse_cpuinfo,
    parse_lscpu,
    sysfs_caches,
)
from rooflab.hardware.host_caches import parse_cache_size

X86 = """processor\t: 0
vendor_id\t: AuthenticAMD
cpu family\t: 25
model\t\t: 17
model name\t: AMD EPYC
physical id\t: 0
core id\t\t: 0
flags\t\t: fpu sse2 avx2 fma avx512f avx512_bf16 hypervisor

processor\t: 1
vendor_id\t: AuthenticAMD
cpu family\t: 25
model\t\t: 17
model name\t: AMD EPYC
physical id\t: 0
core id\t\t: 1
flags\t\t: fpu sse2 avx2 fma avx512f avx512_bf16 hypervisor
"""

ARM = """processor\t: 0
BogoMIPS\t: 243.75
Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp asimddp
CPU implementer\t: 0x41
CPU part\t: 0xd0c
"""

# `lscpu` on this machine (a 2-vCPU KVM guest): totals with instance counts.
LSCPU = """Vendor ID:                               AuthenticAMD
L1d cache:                               64 KiB (2 instances)
L1i cache:                               64 KiB (2 instances)
L2 cache:                                2 MiB (2 instances)
L3 cache:                                32 MiB (1 instance)
"""


def test_cpuinfo_x86():
    blocks = parse_cpuinfo(X86)
    assert len(blocks) == 2
    assert blocks[0]["cpu family"] == "25" and blocks[0]["model"] == "17"
    assert core_count(blocks) == 2
    assert {"avx512f", "avx512_bf16", "fma"} <= cpu_flags(X86)


def test_cpuinfo_arm_features_are_flags():
    assert {"asimd", "asimddp", "asimdhp"} <= cpu_flags(ARM)
    assert core_count(parse_cpuinfo(ARM)) == 1


def test_lscpu_totals_are_divided_by_instances():
    c = parse_lscpu(LSCPU)
    assert (c.l1d, c.l2, c.l3, c.l3_instances) == (32 * 1024, 1024**2, 32 * 1024**2, 1)


@pytest.mark.parametrize("text,want", [("32K", 32768), ("1024K", 1048576), ("32 MiB", 2**25),
                                       ("48 KiB (1 instance)", 49152), ("junk", None)])
def test_size_text(text, want):
    assert parse_cache_size(text) == want


def test_sysfs_cache_tree(tmp_path):
    write_caches(tmp_path, 0, ((1, "Data", "48K", None), (1, "Instruction", "32K", None),
                               (2, "Unified", "1024K", None), (3, "Unified", "32768K", None)))
    c = sysfs_caches(tmp_path)
    assert (c.l1d, c.l2, c.l3) == (48 * 1024, 1024**2, 32 * 1024**2)
    assert sysfs_caches(tmp_path / "absent") == Caches()


def test_meminfo():
    total, avail = meminfo("MemTotal:       24684144 kB\nMemFree: 1 kB\n"
                           "MemAvailable:   23284004 kB\n")
    assert total == 24684144 * 1024 and avail == 23284004 * 1024


def test_detect_host_on_this_machine():
    h = detect_host()
    d = h.to_dict()
    assert h.cores >= 1 and h.threads >= h.cores
    assert d["kind"] == "cpu" and d["name"] == h.cpu_model
    assert isinstance(d["flags"], list)
    assert "numpy" in h.libraries and "blas" in h.libraries
