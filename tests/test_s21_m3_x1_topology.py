"""Review s21 x1, F3/F4/F5/F6/F8: the hybrid clock note names the clock it used, a
fractional quota advises floor(quota) threads, device-tree Arm clusters are not merged into
one core, a pre-5.13 kernel's plain `cpu` PMU does not count as "not hybrid", and the
folded core/L3/file helpers keep their numbers.

The 13900K inputs are r2's (test_s21_f2_topology: P-cores 0-15 as SMT pairs, E-cores 16-31,
cpufreq maxima 5.8 / 4.3 GHz). The device-tree layout is a 12-core 3-cluster SoC as
Linux >= 6.0 shows it without socket nodes in /cpu-map (arch_topology parse_cluster):
package 0 everywhere and core_id 0-3 restarting in each cluster."""

from __future__ import annotations

import dataclasses

import pytest
from test_s21_f2_topology import I9_13900K, SPR_2S, _rate, _raw, fake_host, fp64, rpl_sysfs

from rooflab.hardware import cgroup
from rooflab.hardware import cpu_topology as topo
from rooflab.hardware import host as H
from rooflab.hardware.cgroup import CpuQuota
from rooflab.probe.cpu import assemble
from rooflab.probe.cpu.modes import get_mode


def _hybrid_note(raw, h) -> str:
    use = assemble.core_use(h, 32, tuple(range(32)))
    return assemble._clock_for(raw, h, 32, use)[2]


# --- F3: the hybrid note names the clock it used --------------------------------------
def test_contended_hybrid_note_names_the_stand_in_clock(monkeypatch, tmp_path):
    h, arch = fake_host(monkeypatch, tmp_path, I9_13900K, *rpl_sysfs(tmp_path))
    # all-thread 3.0 GHz vs one-thread 5.8: 0.52 < 0.75 x 0.741 -> other load; the stand-in
    # is 5.8 x 4.3/5.8 = 4.30 GHz, not the 3.00 GHz reading
    raw = _raw(3.0e9, 5.8e9, range(32))
    note = _hybrid_note(raw, h)
    assert "all-thread clock reading (4.30 GHz)" not in note   # the old wording
    assert note.startswith("hybrid CPU: the E-cores' clock is taken as 4.30 GHz (the "
                           "one-thread clock x the E/P ratio")
    assert "4.30 / 0.741 (E/P cpufreq maximum ratio) = 5.80 GHz" in note
    p = assemble._assemble(raw, get_mode("quick"), h, arch, 32, 1.0)
    assert fp64(p.nominal) == pytest.approx(1292.8e9)   # 8 x 5.8 x 16 + 16 x 4.3 x 8


def test_failed_reading_note_names_the_end_reading(monkeypatch, tmp_path):
    h, _ = fake_host(monkeypatch, tmp_path, I9_13900K, *rpl_sysfs(tmp_path))
    # a failed 0.1 GHz reading; the one-thread stand-in 4.30 GHz and the end repeat 4.40
    # GHz: clock_estimate takes the larger, the end reading
    raw = dataclasses.replace(_raw(0.1e9, 5.8e9, range(32)), clock1=_rate(4.4e9))
    note = _hybrid_note(raw, h)
    assert note.startswith("hybrid CPU: the E-cores' clock is taken as 4.40 GHz (the "
                           "all-thread reading repeated at the end")
    assert "= 5.93 GHz" in note   # 4.4 / (4.3/5.8)


def test_quiet_hybrid_note_still_names_the_reading(monkeypatch, tmp_path):
    h, _ = fake_host(monkeypatch, tmp_path, I9_13900K, *rpl_sysfs(tmp_path))
    note = _hybrid_note(_raw(4.3e9, 5.8e9, range(32)), h)
    assert note.startswith("hybrid CPU: the all-thread clock reading (4.30 GHz) is the "
                           "E-cores'")


# --- F4: a fractional quota advises the threads that fit -------------------------------
def test_a_1_5_cpu_quota_advises_one_thread():
    q = CpuQuota(150000, 100000, "/sys/fs/cgroup/cpu.max: '150000 100000'")
    note = cgroup.quota_note(q, 2, 2)
    assert "'all' threads means 2" in note
    assert "(measure with --threads 1 or fewer)" in note   # was --threads 2
    assert [CpuQuota(n, 100000, "").fits for n in (50000, 150000, 200000, 250000)] == [1, 1, 2, 2]


# --- F5: device-tree Arm clusters -------------------------------------------------------
def dt_sysfs(root, siblings_file="core_cpus_list", smt=1):
    """12 CPUs / smt cores in 3 clusters, package 0, core_id restarting per cluster."""
    per = 4 * smt
    for cpu in range(12):
        top = root / f"cpu{cpu}" / "topology"
        top.mkdir(parents=True)
        core = (cpu % per) // smt
        first = cpu - cpu % smt
        (top / "physical_package_id").write_text("0\n")
        (top / "core_id").write_text(f"{core}\n")
        if siblings_file:
            (top / siblings_file).write_text(
                (f"{first}-{first + smt - 1}" if smt > 1 else f"{cpu}") + "\n")
    return root


def test_three_clusters_of_four_are_twelve_cores(tmp_path):
    cores = topo.core_map([], dt_sysfs(tmp_path / "cpu"))
    assert topo.physical_cores(range(12), cores) == 12   # was 4 ('0/0'..'0/3')
    assert topo.physical_cores((0, 4, 8), cores) == 3    # core_id 0 of each cluster


def test_older_kernels_sibling_list_is_used_too(tmp_path):
    # before Linux 5.4 there is no core_cpus_list; thread_siblings_list is the same group
    cores = topo.core_map([], dt_sysfs(tmp_path / "cpu", "thread_siblings_list"))
    assert topo.physical_cores(range(12), cores) == 12


def test_smt_pairs_in_sysfs_are_still_one_core(tmp_path):
    # 12 CPUs as 6 two-thread cores (core_cpus_list '0-1', '2-3', ...): 6 cores
    cores = topo.core_map([], dt_sysfs(tmp_path / "cpu", smt=2))
    assert topo.physical_cores(range(12), cores) == 6
    assert topo.physical_cores((0, 1), cores) == 1


def test_a_dt_board_gets_no_false_smt_note(monkeypatch, tmp_path):
    arm = "\n".join(f"processor\t: {i}\nBogoMIPS\t: 62.50\nFeatures\t: fp asimd\n"
                    f"CPU implementer\t: 0x41\nCPU part\t: 0xd42\n" for i in range(12))
    h, _ = fake_host(monkeypatch, tmp_path, arm, sys_cpu=dt_sysfs(tmp_path / "cpu"))
    use = assemble.core_use(h, 12, tuple(range(12)))
    assert (h.cores, use.cores, use.notes) == (12, 12, ())   # was 4 cores + an SMT note


# --- F6: a plain `cpu` PMU means "one core type" only on kernels >= 5.13 ---------------
@pytest.mark.parametrize("release, want", [
    ("5.10.0-23-amd64", None), ("4.18.0-513.el8.x86_64", None), ("5.4.0-42-generic", None),
    ("5.13.0", False), ("5.15.0-91-generic", False), ("6.1.0-13-amd64", False),
    ("unknown", None)])
def test_plain_pmu_trusted_from_5_13(tmp_path, release, want):
    (tmp_path / "cpu").mkdir()
    assert topo.hybrid_pmu(tmp_path, release) is want
    (tmp_path / "cpu_core").mkdir()
    assert topo.hybrid_pmu(tmp_path, release) is True


def test_a_13900k_on_debian_11_keeps_the_unknown_split_note(monkeypatch, tmp_path):
    (tmp_path / "pmu" / "cpu").mkdir(parents=True)
    monkeypatch.setattr(H.platform, "release", lambda: "5.10.0-23-amd64")
    h, arch = fake_host(monkeypatch, tmp_path, I9_13900K, pmu=tmp_path / "pmu")
    roof, notes = assemble._nominal(h, arch, 5.8, 32)
    assert h.hybrid_pmu is None
    assert "P/E split is unknown" in notes[0] and "(an upper bound)" in notes[0]
    monkeypatch.setattr(H.platform, "release", lambda: "6.1.0-13-amd64")
    h, arch = fake_host(monkeypatch, tmp_path, I9_13900K, pmu=tmp_path / "pmu")
    assert h.hybrid_pmu is False and assemble._nominal(h, arch, 5.8, 32)[1] == []


# --- F8: the folded helpers keep their numbers ------------------------------------------
def test_one_core_counter_for_host_split_and_sets(monkeypatch, tmp_path):
    h, _ = fake_host(monkeypatch, tmp_path, SPR_2S)
    assert h.cores == 112 and h.cores_in((0, 112)) == 1 and h.cores_in(range(224)) == 112
    h, _ = fake_host(monkeypatch, tmp_path, I9_13900K, *rpl_sysfs(tmp_path))
    # 8 two-thread P-cores + 16 E-cores, counted by the one physical_cores
    assert (h.cores, h.core_split.p_cores, h.core_split.e_cores) == (24, 8, 16)
    assert h.cores_in(range(16, 32)) == 16 and h.cores_in(range(4)) == 2


def test_one_file_reader(tmp_path):
    from rooflab.hardware import os_files

    assert cgroup._read is topo._read is H._read is os_files.read
    (tmp_path / "f").write_text(" 0-3\n")
    assert os_files.read(tmp_path / "f") == "0-3" and os_files.read(tmp_path / "no") == ""
    assert os_files.to_int("0xd42", 0) == 0xD42 and os_files.to_int(None) is None
    assert not hasattr(topo, "_cpulist")
