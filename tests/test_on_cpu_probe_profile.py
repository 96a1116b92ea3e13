"""Second fresh-user audit: a CPU profile saved by `rooflab probe -o` is usable with --on.

The probe's nominal CPU roof has compute ceilings only (a CPU reports no nominal
bandwidth); the measured roof has L1...DRAM. The check that a hand-written roof has a
bandwidth must look at the roof that judges, not at the dashed nominal companion.
"""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main
from rooflab.hardware.resolve import load_roof, load_roofs

PROFILE = {
    "schema_version": 1,
    "created": "2026-11-29T17:46:00Z",
    "host": {"name": "test cpu"},
    "nominal": {"name": "cpu nominal", "kind": "nominal", "compute": [
        {"precision": "fp64", "unit": "vector", "flop_per_s": 1.18e11, "kind": "derived"}],
        "memory": []},
    "measured": {"name": "cpu measured", "kind": "measured", "compute": [
        {"precision": "fp64", "unit": "vector", "flop_per_s": 1.0e11, "kind": "measured"}],
        "memory": [{"level": "DRAM", "bytes_per_s": 5.0e10, "kind": "measured"}],
        "overhead_s": 2e-7},
    "extras": {},
}


@pytest.fixture
def profile(tmp_path):
    f = tmp_path / "me.json"
    f.write_text(json.dumps(PROFILE))
    return str(f)


def test_profile_with_memoryless_nominal_roof_loads(profile):
    measured, nominal = load_roofs(profile)
    assert measured.name == "cpu measured" and nominal.name == "cpu nominal"
    assert load_roof(profile).memory[0].value == 5.0e10
    # ridge fp64/DRAM = 1e11 / 5e10 = 2.0 FLOP/B
    assert load_roof(profile).compute[0].value / 5.0e10 == pytest.approx(2.0)


def test_report_on_a_probe_profile(profile, tmp_path, capsys):
    # y = x + 1 over 1e6 fp64: 1e6 FLOP, 16e6 B (AI 1/16); 0.5 ms -> 2 GFLOP/s;
    # attainable 5e10 * 1/16 = 3.125 GFLOP/s -> 64.0 % of roof.
    k = tmp_path / "k.csv"
    k.write_text("name,flop,bytes,seconds,precision\nx+1,1e6,1.6e7,5e-4,fp64\n")
    assert main(["report", str(k), "--on", profile, "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["analysis"]
    assert row["ai"] == pytest.approx(0.0625)
    assert row["percent_of_roof"] == pytest.approx(64.0)


def test_bare_roof_without_memory_is_still_an_error(tmp_path, capsys):
    f = tmp_path / "roof.json"
    f.write_text(json.dumps(PROFILE["nominal"]))
    assert main(["ai", "matmul", "4", "4", "4", "--on", str(f)]) == 2
    assert "has no memory ceilings" in capsys.readouterr().err


def test_record_table_row_of_an_untimed_kernel(profile, tmp_path):
    # no time: no achieved FLOP/s and no percent of roof ("- of the measured roof" before)
    k = tmp_path / "k.csv"
    k.write_text("name,flop,bytes,precision\nuntimed,1e9,1e7,fp64\n")
    md = tmp_path / "r.md"
    assert main(["report", str(k), "--on", profile, "-o", str(md)]) == 0
    text = md.read_text()
    assert "| untimed: FLOP/s | <= 118 GFLOP/s (peak; DRAM not published) | - | - |" in text
    assert "- of the" not in text
