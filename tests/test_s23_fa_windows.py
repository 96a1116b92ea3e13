"""Windows CPU identity (review s23 r3 F1, F2): physical cores, core types, caches and
memory from GetLogicalProcessorInformationEx / GlobalMemoryStatusEx, parsed from buffers
laid out as Windows lays them out (rooflab/hardware/windows_topology.py documents the
layout); no nominal where the cores stay uncounted; a DRAM working set that leaves any
L3 when the cache sizes are unknown."""

from __future__ import annotations

import platform
import struct
import sys

import pytest

from rooflab.hardware import host
from rooflab.hardware.cpu_detect import detect_microarch
from rooflab.hardware.host import Caches, HostInfo
from rooflab.hardware.windows_topology import (
    parse_memorystatusex,
    parse_slpi_ex,
    windows_memory,
    windows_topology,
)
from rooflab.probe.cpu.assemble import _nominal
from rooflab.probe.cpu.modes import get_mode
from rooflab.probe.cpu.suite import dram_working_set

KiB, MiB, GiB = 2**10, 2**20, 2**30


# --- buffers as GetLogicalProcessorInformationEx(RelationAll) fills them -----------------
def _affinity(mask: int, group: int = 0, ptr: int = 8) -> bytes:
    """GROUP_AFFINITY: KAFFINITY Mask (pointer-sized), WORD Group, WORD Reserved[3]."""
    return struct.pack("<Q" if ptr == 8 else "<I", mask) + struct.pack("<H", group) + bytes(6)


def _core(mask: int, eff: int = 0, ptr: int = 8) -> bytes:
    """RelationProcessorCore (0): PROCESSOR_RELATIONSHIP Flags, EfficiencyClass,
    Reserved[20], GroupCount, GroupMask[1]."""
    body = bytes([1 if bin(mask).count("1") > 1 else 0, eff]) + bytes(20)
    body += struct.pack("<H", 1) + _affinity(mask, 0, ptr)
    return struct.pack("<II", 0, 8 + len(body)) + body


def _cache(level: int, size: int, ctype: int, mask: int, ptr: int = 8,
           group_count: int = 1) -> bytes:
    """RelationCache (2): CACHE_RELATIONSHIP Level, Associativity, LineSize, CacheSize,
    Type (0 unified, 1 instruction, 2 data), Reserved[18], GroupCount, GroupMask."""
    body = struct.pack("<BBHII", level, 8, 64, size, ctype) + bytes(18)
    body += struct.pack("<H", group_count) + _affinity(mask, 0, ptr)
    return struct.pack("<II", 2, 8 + len(body)) + body


def _other(rel: int, n: int = 72) -> bytes:
    """A record the parser skips (RelationGroup 4, RelationProcessorPackage 3...): its body
    is junk so that reading it as a core or cache would show."""
    return struct.pack("<II", rel, 8 + n) + b"\xff" * n


def ryzen_7950x(ptr: int = 8, group_count: int = 1) -> bytes:
    """16 cores x 2 SMT threads (logical CPUs 2i, 2i+1 on core i); L1d 32 KiB and L2 1 MiB
    per core; two CCDs with a 32 MiB L3 each (AMD's 7950X page: 64 MiB L3, 16 MiB L2)."""
    out = _other(4)
    for i in range(16):
        two = 0b11 << (2 * i)
        out += _core(two, 0, ptr)
        out += _cache(1, 32 * KiB, 2, two, ptr, group_count)
        out += _cache(1, 32 * KiB, 1, two, ptr, group_count)   # L1i: not a data cache
        out += _cache(2, 1 * MiB, 0, two, ptr, group_count)
    for ccd in range(2):
        out += _cache(3, 32 * MiB, 0, 0xFFFF << (16 * ccd), ptr, group_count)
    return out + _other(3, 48) + _other(1, 40)


def i7_13700k() -> bytes:
    """8 P-cores with SMT (CPUs 0-15, EfficiencyClass 1) + 8 E-cores (CPUs 16-23, class 0):
    24 logical CPUs, 16 cores. L2: 2 MiB per P-core, 4 MiB per cluster of 4 E-cores."""
    out = b""
    for i in range(8):
        out += _core(0b11 << (2 * i), 1) + _cache(2, 2 * MiB, 0, 0b11 << (2 * i))
    for i in range(8):
        out += _core(1 << (16 + i), 0)
    out += _cache(2, 4 * MiB, 0, 0xF << 16) + _cache(2, 4 * MiB, 0, 0xF << 20)
    return out + _cache(3, 30 * MiB, 0, (1 << 24) - 1)


def memorystatusex(total: int, avail: int) -> bytes:
    """MEMORYSTATUSEX: dwLength, dwMemoryLoad, ullTotalPhys, ullAvailPhys, then 5 more."""
    return struct.pack("<IIQQQQQQQ", 64, 25, total, avail, 0, 0, 0, 0, 0)


def _padded(record: bytes, extra: int = 8) -> bytes:
    """The record with `extra` junk bytes at its end and its Size grown to match, and its
    Reserved bytes junk too: a later Windows may lengthen a record, and the parser must
    step by Size and read the fields at their winnt.h offsets, not at guessed ones."""
    rel, size = struct.unpack_from("<II", record)
    body = bytearray(record[8:] + b"\xee" * extra)
    if rel == 0:
        body[2:22] = b"\xee" * 20    # PROCESSOR_RELATIONSHIP Reserved[20] (+10..+29)
    else:
        body[12:30] = b"\xee" * 18   # CACHE_RELATIONSHIP Reserved[18] (+20..+37)
    return struct.pack("<II", rel, size + extra) + bytes(body)


def test_parser_steps_by_record_size_and_reads_winnt_offsets():
    # (replaces a check of this file's own builders, s23 h1 F5) the 7950X with every core
    # record 56 bytes (48 + 8 junk) and every cache record 64 (56 + 8 junk): still 16
    # cores, 32 threads, and the caches' sizes, sharing and instances
    out = _other(4)
    for i in range(16):
        two = 0b11 << (2 * i)
        out += _padded(_core(two)) + _padded(_cache(1, 32 * KiB, 2, two))
        out += _padded(_cache(2, 1 * MiB, 0, two))
    for ccd in range(2):
        out += _padded(_cache(3, 32 * MiB, 0, 0xFFFF << (16 * ccd)), 24)
    assert struct.unpack_from("<I", out, 80 + 4)[0] == 56   # the first core record's Size
    t = parse_slpi_ex(out)
    assert (t.cores, t.threads) == (16, 32)
    l1, l2, l3 = (t.caches[k] for k in ("L1", "L2", "L3"))
    assert (l1.size, l1.sharing, l1.instances) == (32 * KiB, 2, 16)
    assert (l2.size, l2.sharing, l2.instances) == (1 * MiB, 2, 16)
    assert (l3.size, l3.sharing, l3.instances) == (32 * MiB, 16, 2)
    # the hybrid 13700K padded the same way keeps its 8 P + 8 E split (EfficiencyClass +9)
    buf = b"".join(_padded(_core(0b11 << (2 * i), 1)) for i in range(8))
    buf += b"".join(_padded(_core(1 << (16 + i), 0)) for i in range(8))
    assert parse_slpi_ex(buf).p_e_split() == (8, 8)


@pytest.mark.parametrize("ptr,group_count", [(8, 1), (4, 1), (8, 0)])
def test_ryzen_buffer_gives_16_cores_32_threads_and_the_caches(ptr, group_count):
    # ptr 4: 32-bit Python (12-byte GROUP_AFFINITY); GroupCount 0: Windows 10's cache
    # records, written before the field existed (one mask follows all the same)
    t = parse_slpi_ex(ryzen_7950x(ptr, group_count), ptr)
    assert (t.cores, t.threads) == (16, 32)
    assert t.p_e_split() is None
    l1, l2, l3 = (t.caches[k] for k in ("L1", "L2", "L3"))
    assert (l1.size, l1.sharing, l1.instances) == (32 * KiB, 2, 16)
    assert (l2.size, l2.sharing, l2.instances) == (1 * MiB, 2, 16)
    assert (l3.size, l3.sharing, l3.instances) == (32 * MiB, 16, 2)


def test_hybrid_buffer_splits_p_and_e_cores_by_efficiency_class():
    t = parse_slpi_ex(i7_13700k())
    assert (t.cores, t.threads) == (16, 24)
    assert t.p_e_split() == (8, 8)
    # cpu0's L2 (a P-core's 2 MiB, 2 threads), as Linux reads sysfs cpu0/cache
    assert (t.caches["L2"].size, t.caches["L2"].sharing, t.caches["L2"].instances) == (
        2 * MiB, 2, 10)


def test_truncated_or_empty_buffers_give_nothing():
    assert parse_slpi_ex(b"") is None
    buf = ryzen_7950x()
    cut = parse_slpi_ex(buf[: len(buf) // 2 + 3])   # a record cut short: stop there
    assert cut is not None and cut.cores < 16
    assert parse_memorystatusex(memorystatusex(64 * GiB, 48 * GiB)) == (64 * GiB, 48 * GiB)
    assert parse_memorystatusex(b"\0" * 8) == (None, None)


def test_kernel32_is_called_only_on_windows():
    # on Linux, and under a sys.platform that is not win32, no ctypes call is made
    assert sys.platform != "win32"
    assert windows_topology() is None and windows_memory() == (None, None)


# --- detect_host on Windows ------------------------------------------------------------------
class _Winreg:
    HKEY_LOCAL_MACHINE = "HKLM"

    def __init__(self, values):
        self.values = values

    def OpenKey(self, root, path):  # noqa: N802
        return self

    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False

    def QueryValueEx(self, key, name):  # noqa: N802
        return self.values[name], 1


RYZEN_REG = {"ProcessorNameString": "AMD Ryzen 9 7950X 16-Core Processor          ",
             "VendorIdentifier": "AuthenticAMD",
             "Identifier": "AMD64 Family 25 Model 97 Stepping 2"}
RAPTOR_REG = {"ProcessorNameString": "13th Gen Intel(R) Core(TM) i7-13700K",
              "VendorIdentifier": "GenuineIntel",
              "Identifier": "Intel64 Family 6 Model 183 Stepping 1"}


def _windows(monkeypatch, tmp_path, reg, topo, mem=(None, None), logical=32) -> HostInfo:
    """detect_host as on Windows: no /proc/cpuinfo, the registry, kernel32's answers."""
    import os

    monkeypatch.setitem(sys.modules, "winreg", _Winreg(reg))
    monkeypatch.setattr(platform, "system", lambda: "Windows")
    monkeypatch.setattr(host, "CPUINFO", tmp_path / "no-cpuinfo")
    monkeypatch.setattr(host, "MEMINFO", tmp_path / "no-meminfo")
    monkeypatch.setattr(host, "windows_topology", lambda: topo)
    monkeypatch.setattr(host, "windows_memory", lambda: mem)
    monkeypatch.setattr(host, "sysfs_caches", lambda *a: Caches())
    monkeypatch.setattr(host, "lscpu_text", lambda: "")
    monkeypatch.setattr(os, "cpu_count", lambda: logical)
    return host.detect_host()


def _fp64(roof) -> float:
    return next(c.value for c in roof.compute if c.precision == "fp64")


def test_windows_ryzen_counts_16_cores_and_reads_caches_and_memory(monkeypatch, tmp_path):
    mem = parse_memorystatusex(memorystatusex(64 * GiB, 48 * GiB))
    h = _windows(monkeypatch, tmp_path, RYZEN_REG, parse_slpi_ex(ryzen_7950x()), mem)
    assert (h.cores, h.threads, h.cores_known) == (16, 32, True)
    c = h.caches
    assert (c.l1d, c.l2, c.l3, c.l3_instances, c.l1d_sharing) == (32 * KiB, MiB, 32 * MiB, 2, 2)
    assert (h.memory_bytes, h.memory_available_bytes) == (64 * GiB, 48 * GiB)
    arch = detect_microarch(h.vendor, h.family, h.model, h.flags, h.cpu_model)
    roof, notes = _nominal(h, arch, 4.5, 32)
    # 16 cores x 4.5 GHz x 4 fp64 lanes x 2 FMA pipes x 2 FLOP (Zen 4) = 1152 GFLOP/s,
    # not the 2304 of 32 "cores"
    assert _fp64(roof) == pytest.approx(1152e9)
    # the DRAM sweep: 12 x 2 x 32 MiB = 768 MiB, not 12 x an assumed 8 MiB
    assert dram_working_set(h, get_mode("quick"))[0] == 768 * MiB


def test_windows_hybrid_counts_p_and_e_cores_each_at_its_rate(monkeypatch, tmp_path):
    h = _windows(monkeypatch, tmp_path, RAPTOR_REG, parse_slpi_ex(i7_13700k()), logical=24)
    assert (h.cores, h.threads) == (16, 24)
    assert (h.core_split.p_cores, h.core_split.e_cores) == (8, 8)
    arch = detect_microarch(h.vendor, h.family, h.model, h.flags, h.cpu_model)
    roof, notes = _nominal(h, arch, 4.5, 24)
    # 8 Raptor Cove x 4.5 x 16 + 8 Gracemont x 4.5 x 8 (2 x 128-bit FMA) = 576 + 288
    assert _fp64(roof) == pytest.approx(864e9)
    assert any("no E-core maximum clock" in n for n in notes)
    assert not any("cpufreq shows" in n for n in notes)


def test_uncounted_cores_give_no_nominal_rather_than_smt_threads(monkeypatch, tmp_path):
    # kernel32 unreadable: 32 logical CPUs are all that is known
    h = _windows(monkeypatch, tmp_path, RYZEN_REG, None, logical=32)
    assert h.cores_known is False
    arch = detect_microarch(h.vendor, h.family, h.model, h.flags, h.cpu_model)
    assert arch.nominal_known   # Zen 4 from the registry: only the core count is missing
    roof, notes = _nominal(h, arch, 4.5, 32)
    assert roof is None
    (note,) = notes
    assert "32 logical CPUs" in note and "no nominal compute peak" in note


# --- the DRAM working set with no cache sizes --------------------------------------------
def _no_caches(total=None, avail=None) -> HostInfo:
    return HostInfo("cpu", "AuthenticAMD", 25, 97, frozenset(), 16, 32,
                    Caches(source="unknown"), total, avail, None, "Windows 11", "AMD64")


def test_unknown_llc_gives_a_working_set_beyond_any_desktop_l3():
    # was 96 MiB (128 MiB in --full), inside a 9800X3D's 96 MiB L3; now 1 GiB, and
    # 512 MiB in --quick (its time bounded: 5x an X3D's L3, 2x a Threadripper's)
    for mode, ws in (("quick", 512 * MiB), ("default", GiB), ("full", GiB)):
        want, notes = dram_working_set(_no_caches(), get_mode(mode))
        assert want == ws
        assert "no cache sizes" in notes[0]
    # only the total known (a Mac's hw.memsize): at most an eighth of it
    assert dram_working_set(_no_caches(total=4 * GiB), get_mode("default"))[0] == 512 * MiB
    # the available memory known: the usual quarter of it
    want, notes = dram_working_set(_no_caches(64 * GiB, 2 * GiB), get_mode("default"))
    assert want == 512 * MiB and "shrunk" in notes[-1]


def test_x3d_dram_ceiling_is_dram_not_l3_when_sizes_are_unknown():
    # the reviewer's synthetic quiet 9800X3D (96 MiB L3, 16 threads), caches unknown: the
    # old 96 MiB set took the L3-assisted 350 GB/s for DRAM; DRAM is 75 GB/s
    from rooflab.probe.cpu import bandwidth as bw
    from rooflab.probe.cpu.suite import sweep_sizes_for

    def curve(per_thread):
        total = per_thread * 16
        if per_thread <= 24 * KiB:
            return 3.0e12
        if per_thread <= 512 * KiB:
            return 1.6e12
        if total <= 90 * MiB:
            return 0.9e12
        return 0.35e12 if total <= 130 * MiB else 0.075e12

    spec, caches = get_mode("quick"), Caches(source="unknown")
    sizes = sweep_sizes_for(spec, dram_working_set(_no_caches(avail=60e9), spec)[0], 16)
    vals = [curve(s) for s in sizes]
    levels, chosen, _ = bw.label_levels(vals, sizes, caches, 16, medians=vals)
    assert vals[chosen["DRAM"]] == 0.075e12


def test_kernel32_calls_size_the_buffer_then_parse_it(monkeypatch):
    # the ctypes plumbing, with a kernel32 that behaves as Windows' does: a first call with
    # no buffer fails and says the size needed; MEMORYSTATUSEX needs dwLength set first
    import ctypes

    data, mem = ryzen_7950x(ctypes.sizeof(ctypes.c_void_p)), memorystatusex(64 * GiB, 5 * GiB)
    calls = []

    def slpi(rel, buf, need):
        calls.append((rel, buf is None))
        if buf is None or need._obj.value < len(data):
            need._obj.value = len(data)
            return 0   # ERROR_INSUFFICIENT_BUFFER
        ctypes.memmove(buf, data, len(data))
        return 1

    def gmse(ref):
        if struct.unpack_from("<I", bytes(ref._obj), 0)[0] != 64:
            return 0   # dwLength unset: Windows fails the call
        ctypes.memmove(ref._obj, mem, len(mem))
        return 1

    class Kernel32:
        GetLogicalProcessorInformationEx = staticmethod(slpi)
        GlobalMemoryStatusEx = staticmethod(gmse)

    monkeypatch.setattr(ctypes, "WinDLL", lambda *a, **k: Kernel32(), raising=False)
    monkeypatch.setattr(sys, "platform", "win32")
    t = windows_topology()
    assert calls == [(0xFFFF, True), (0xFFFF, False)]   # RelationAll, sized, then filled
    assert (t.cores, t.threads, t.caches["L3"].instances) == (16, 32, 2)
    assert windows_memory() == (64 * GiB, 5 * GiB)
