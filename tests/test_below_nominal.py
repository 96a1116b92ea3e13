"""Measured ceilings far below nominal are said on the measured roof (probe/nominal.py),
for the GPU and the CPU probe alike; the table's ratio alone said nothing (seed 004: a
healthy run reaches 75-90 % of the datasheet bandwidth, 70-90 % of the compute peak)."""

from __future__ import annotations

import json

import pytest
from cpu_probe_fakes import assembled_profile

from rooflab.cli import probe as probe_cli
from rooflab.cli.main import main
from rooflab.hardware.profile import MachineProfile
from rooflab.model.ceiling import Ceiling, Roof
from rooflab.probe import nominal as nom
from rooflab.probe.gpu import compare_to_nominal

T4 = Roof("NVIDIA T4", compute=(Ceiling(65e12, precision="fp16", unit="tensor"),
                                Ceiling(8.1e12, precision="fp32", unit="vector")),
          memory=(Ceiling(320e9, level="DRAM"), Ceiling(15.75e9, level="PCIe")))


def _gpu(dram, fp16, fp32=7.5e12, pcie=12e9):
    return Roof("NVIDIA T4", kind="measured",
                compute=(Ceiling(fp16, precision="fp16", unit="tensor"),
                         Ceiling(fp32, precision="fp32", unit="vector")),
                memory=(Ceiling(dram, level="DRAM"), Ceiling(pcie, level="PCIe")))


def test_thresholds_are_the_documented_ones():
    assert nom.BANDWIDTH_FLOOR == 0.60 and nom.COMPUTE_FLOOR == 0.50


def test_a_healthy_t4_says_nothing():
    # seed 004's own measured T4: 270 of 320 GB/s (84 %), 50 of 65 TFLOP/s (77 %)
    roof, rows = compare_to_nominal(_gpu(270e9, 50e12), T4)
    assert roof.notes == ()
    assert not any(r["below_nominal"] for r in rows)


def test_just_above_the_floors_says_nothing():
    roof, _ = compare_to_nominal(_gpu(0.61 * 320e9, 0.51 * 65e12, pcie=0.61 * 15.75e9), T4)
    # no "far below" (disturbed probe) note; a 51 % fp16 peak gets only the quieter
    # 50-70 % note of seed 000 §3.2 (review 18a F5), a 61 % DRAM the quieter 60-75 % one
    # (review 19a N6)
    assert not any(n.startswith("far below") for n in roof.notes)
    low, low_bw = roof.notes
    assert low.startswith("low against nominal") and "= 51 % of 65 TFLOP/s" in low
    assert low_bw.startswith("low against nominal") and "DRAM 195 GB/s = 61 % of 320" in low_bw


def test_dram_far_below_is_named_with_ratio_and_causes():
    roof, rows = compare_to_nominal(_gpu(144e9, 50e12), T4)        # 45 % of 320 GB/s
    (note,) = roof.notes
    assert "DRAM 144 GB/s = 45 % of 320 GB/s" in note
    assert "'NVIDIA T4'" in note and "flagged under 60 %" in note
    assert "power or thermal throttling" in note and "another process on the GPU" in note
    assert {r["ceiling"]: r["below_nominal"] for r in rows}["DRAM"] is True
    assert {r["ceiling"]: r["below_nominal"] for r in rows}["fp16 tensor"] is False


def test_compute_and_link_get_their_own_notes():
    roof, _ = compare_to_nominal(_gpu(300e9, 26e12, fp32=3e12, pcie=6e9), T4)
    link, compute = roof.notes                        # memory first, then link, compute
    assert "PCIe 6 GB/s = 38 % of 15.8 GB/s" in link and "slot narrower" in link
    assert "fp16 tensor 26 TFLOP/s = 40 %" in compute
    assert "fp32 vector 3 TFLOP/s = 37 %" in compute
    assert "matrices too small" in compute and "flagged under 50 %" in compute


def test_no_nominal_no_note():
    assert compare_to_nominal(_gpu(1e9, 1e9), None) == (_gpu(1e9, 1e9), [])
    assert nom.below_nominal_notes(_gpu(1e9, 1e9), None, "gpu") == []


CPU_NOMINAL = Roof("Zen 4 (2 cores @ 3.69 GHz)", compute=(
    Ceiling(118e9, precision="fp64", unit="vector"),
    Ceiling(236e9, precision="fp32", unit="vector"),
    Ceiling(472e9, precision="bf16", unit="vector"),
    Ceiling(944e9, precision="int8", unit="vector")))


def test_cpu_notes_name_cpu_causes_and_skip_what_was_not_measured():
    measured = Roof("cpu measured (2 threads)", kind="measured", compute=(
        Ceiling(40e9, precision="fp64", unit="vector"),          # 34 %
        Ceiling(200e9, precision="fp32", unit="vector")),        # 85 %: fine
        memory=(Ceiling(30e9, level="DRAM"),))                    # no nominal DRAM
    roof, notes = nom.add_below_nominal_notes(measured, CPU_NOMINAL, "cpu")
    (note,) = notes
    assert roof.notes == (note,)
    assert "fp64 vector 40 GFLOP/s = 34 % of 118 GFLOP/s" in note
    assert "fp32" not in note.split(";")[0]
    # bf16/int8 have nominal figures but were not measured: not flagged as 0 %
    assert "bf16" not in note and "int8" not in note and "DRAM" not in note
    assert "a VM or container CPU quota" in note and "narrower SIMD" in note
    # the CPU's nominal is at the measured clock: healthy is ~100 %, not a GPU's 70-90 %
    assert "healthy run reaches 85-100 %" in note and "70-90" not in note
    # a CPU with a nominal DRAM figure (memory channels matter there)
    with_dram = Roof("cpu", compute=CPU_NOMINAL.compute, memory=(Ceiling(80e9, level="DRAM"),))
    (note,) = nom.below_nominal_notes(_healthy_fp64(measured), with_dram, "cpu")
    assert "DRAM 30 GB/s = 38 % of 80 GB/s" in note and "memory channels" in note


def _healthy_fp64(roof: Roof) -> Roof:
    from dataclasses import replace

    return replace(roof, compute=(Ceiling(118e9, precision="fp64", unit="vector"),))


def test_the_cpu_probe_puts_the_note_on_its_measured_roof():
    # 1 Zen 4 core at 3 GHz: nominal fp64 48 GFLOP/s; measured 20 (42 %)
    profile = assembled_profile(20e9, 9e10)
    below = [n for n in profile.measured.notes if n.startswith("far below nominal")]
    assert len(below) == 1 and "fp64 vector 20 GFLOP/s = 42 % of 48 GFLOP/s" in below[0]
    assert "fp32" not in below[0]                     # 90 of 96: fine
    assert profile.extras["below_nominal"] == {"notes": below, "bandwidth_floor": 0.6,
                                               "compute_floor": 0.5,
                                               "quiet_compute_floor": 0.7,
                                               "quiet_bandwidth_floor": 0.75}
    # the ceiling keeps its own (75 %) warning too
    fp64 = next(c for c in profile.measured.compute if c.precision == "fp64")
    assert any("only 42 %" in w for w in fp64.warnings)


def _profile_with_a_low_dram():
    measured, checks = compare_to_nominal(_gpu(100e9, 50e12), T4)
    below = list(measured.notes)
    return MachineProfile(host={"name": "NVIDIA T4"}, nominal=T4, measured=measured,
                          extras={"gpu": {"wall_s": 1.0, "nominal_checks": checks},
                                  "below_nominal": nom.below_nominal_extras(below)})


@pytest.fixture()
def low_dram(monkeypatch):
    monkeypatch.setattr(probe_cli, "run_probe",
                        lambda dev, mode, threads, progress: _profile_with_a_low_dram())
    monkeypatch.setattr(probe_cli, "warn_if_busy", lambda *a, **k: None)


def test_probe_prints_the_note_under_its_table(low_dram, capsys, tmp_path, monkeypatch):
    pytest.importorskip("numba", reason="the CPU probe needs numba (the [cpu] extra)")
    monkeypatch.chdir(tmp_path)
    assert main(["probe", "--quick", "-q"]) == 0
    out = capsys.readouterr().out.replace("\n", " ")
    assert "note: far below nominal ('NVIDIA T4'): DRAM 100 GB/s = 31 % of 320 GB/s" in \
        " ".join(out.split())


def test_probe_json_says_it_on_stderr(low_dram, capsys, tmp_path, monkeypatch):
    pytest.importorskip("numba", reason="the CPU probe needs numba (the [cpu] extra)")
    monkeypatch.chdir(tmp_path)
    assert main(["probe", "--quick", "--json"]) == 0
    cap = capsys.readouterr()
    d = json.loads(cap.out)
    assert d["extras"]["below_nominal"]["notes"][0].startswith("far below nominal")
    assert "far below nominal ('NVIDIA T4'): DRAM" in " ".join(cap.err.split())
