"""Review s23 h1 F1 and F4.

F1: a Windows hybrid CPU (no cpufreq, so no E/P clock ratio from the OS) whose readings are
all-thread 3.6 GHz and one-thread 4.9 GHz (0.73x, as E-cores run): the E-cores count at
the 3.6 GHz they were measured at, not at the P-cores' 4.9 GHz. The host is fA's i7-13700K
as GetLogicalProcessorInformationEx lists it (8 Raptor Cove P-cores with SMT + 8 Gracemont
E-cores, 24 logical CPUs); the full probe result comes from assemble._assemble.

F4: caches unknown and little memory free: one note, giving the capped size and saying the
last-level cache is unknown (not "12x the last-level cache", an assumed 8 MiB)."""

from __future__ import annotations

import pytest
from test_s21_f2_topology import _raw, fp64
from test_s23_fa_windows import RAPTOR_REG, _no_caches, _windows, i7_13700k

from rooflab.hardware.cpu_detect import detect_microarch
from rooflab.hardware.windows_topology import parse_slpi_ex
from rooflab.probe.cpu import assemble
from rooflab.probe.cpu.modes import get_mode
from rooflab.probe.cpu.suite import dram_working_set

MiB, GiB = 2**20, 2**30


def _raptor(monkeypatch, tmp_path):
    h = _windows(monkeypatch, tmp_path, RAPTOR_REG, parse_slpi_ex(i7_13700k()), logical=24)
    return h, detect_microarch(h.vendor, h.family, h.model, h.flags, h.cpu_model)


# --- F1 ---------------------------------------------------------------------------------
def test_windows_hybrid_e_cores_count_at_their_measured_clock(monkeypatch, tmp_path):
    h, arch = _raptor(monkeypatch, tmp_path)
    assert h.core_split.e_clock_ratio is None   # Windows: no cpufreq maxima
    p = assemble._assemble(_raw(3.6e9, 4.9e9, range(24)), get_mode("quick"), h, arch, 24, 1.0)
    # 8 Raptor Cove x 4.9 GHz x 16 + 8 Gracemont x 3.6 GHz x 8 = 627.2 + 230.4
    # (was 941 GFLOP/s: the E-cores at 4.9 GHz too)
    assert fp64(p.nominal) == pytest.approx(857.6e9)
    assert "Gracemont (E-core) 8 cores @ 3.60 GHz" in p.nominal.name
    assert "8 cores @ 4.90 GHz" in p.nominal.name
    notes = " ".join(p.measured.notes)
    assert "E-cores at 3.60 GHz: the P-core clock (4.90 GHz) x 0.735" in notes
    assert "at the one measured clock" not in notes   # two clocks were measured
    assert "other load shared the cores" not in notes
    assert p.host["clock_hz"] == pytest.approx(4.9e9)


def test_windows_hybrid_without_an_e_reading_keeps_the_one_clock(monkeypatch, tmp_path):
    h, arch = _raptor(monkeypatch, tmp_path)
    # all/one 0.96: above what E-cores show, so the readings give no E/P ratio; both core
    # types at 4.7 GHz, the note saying so: 8 x 4.7 x 16 + 8 x 4.7 x 8
    p = assemble._assemble(_raw(4.7e9, 4.9e9, range(24)), get_mode("quick"), h, arch, 24, 1.0)
    assert fp64(p.nominal) == pytest.approx(902.4e9)
    assert "at the one measured clock" in " ".join(p.measured.notes)
    # 0.30x: other load, not E-cores; the one-thread clock for both
    p = assemble._assemble(_raw(1.5e9, 4.9e9, range(24)), get_mode("quick"), h, arch, 24, 1.0)
    assert fp64(p.nominal) == pytest.approx(8 * 4.9 * 24 * 1e9)
    assert "other load shared the cores" in " ".join(p.measured.notes)


# --- F4 ---------------------------------------------------------------------------------
def test_unknown_caches_and_little_memory_give_one_consistent_note():
    # 300 MiB available: a quarter is 75 MiB, under an X3D's 96 MiB L3
    want, notes = dram_working_set(_no_caches(2 * GiB, 300 * MiB), get_mode("default"))
    assert want == 75 * MiB
    (note,) = notes   # was two: "the DRAM working set is 1 GiB" and "shrunk ... to 75 MiB"
    assert "no cache sizes" in note and "shrunk from 1 GiB to 75 MiB" in note
    assert "75 MiB may sit in a large L3" in note
    assert "last-level cache size unknown" in note
    assert "12x the last-level cache" not in note and "working set is 1 GiB" not in note
    # 2 GiB available: 512 MiB, twice a Threadripper's 256 MiB L3
    want, (note,) = dram_working_set(_no_caches(64 * GiB, 2 * GiB), get_mode("default"))
    assert want == 512 * MiB
    assert "shrunk from 1 GiB to 512 MiB" in note and "still larger than any" in note


def test_known_caches_keep_the_llc_multiple_wording():
    # the 7950X's 2 x 32 MiB L3 known: 12 x 64 MiB = 768 MiB wanted, 1 GiB available
    from rooflab.hardware.host import Caches, HostInfo

    h = HostInfo("cpu", "AuthenticAMD", 25, 97, frozenset(), 16, 32,
                 Caches(l2=MiB, l3=32 * MiB, l3_instances=2, source="sysfs"), 64 * GiB, GiB,
                 None, "Linux", "x86_64")
    want, (note,) = dram_working_set(h, get_mode("default"))
    assert want == 256 * MiB
    assert note == ("DRAM working set shrunk from 768 MiB to 256 MiB (a quarter of the 1 GiB "
                    "available); below 12x the last-level cache the DRAM figure may include "
                    "cache hits")
