"""`rooflab bench` end to end on a small subset (judged by a roof file, so no probe runs)."""

from __future__ import annotations

import csv
import json

import pytest

from rooflab.cli.main import main

SUBSET = "triad_fp64,gemm_fp64_64,sort"


def test_bench_json_on_a_roof_file(roof_file, capsys):
    code = main(["bench", "--quick", "--on", roof_file, "--only", SUBSET, "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert [k["name"] for k in out["kernels"]] == ["triad_fp64", "gemm_fp64_64", "sort_fp64"]
    triad = out["kernels"][0]
    n = triad["meta"]["shape"]["n"]
    assert triad["flop"] == {"fp64": 2 * n} and triad["bytes"] == {"DRAM": 24 * n}
    assert triad["provenance"]["seconds"] == "measured" and len(triad["samples"]) >= 5
    assert "floor_ratio" in triad["meta"] and isinstance(triad["meta"]["flags"], list)
    point = next(p for p in out["analysis"] if p["kernel"] == "triad_fp64")
    assert point["level"] == "DRAM" and point["ai"] == pytest.approx(2 / 24)
    assert point["floor_s"] == pytest.approx(24 * n / 4e10)
    assert point["floor_ratio"] == pytest.approx(triad["seconds"] / point["floor_s"])
    assert out["roof"]["name"] == "test roof"


def test_bench_table_chart_and_csv(roof_file, tmp_path, capsys):
    png = tmp_path / "zoo.png"
    assert main(["bench", "--quick", "--on", roof_file, "--only", "gemm_fp64_64",
                 "-o", str(png)]) == 0
    cap = capsys.readouterr()   # `wrote` on stderr, as in every verb (s22 r3 F7)
    text = cap.out
    assert "gemm_fp64_64" in text and "measured/floor" in text and f"wrote {png}" in cap.err
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    out_csv = tmp_path / "zoo.csv"
    assert main(["bench", "--quick", "--on", roof_file, "--only", "gemm_fp64_64",
                 "-o", str(out_csv)]) == 0
    rows = list(csv.DictReader(out_csv.open()))
    assert rows[0]["kernel"] == "gemm_fp64_64"
    assert float(rows[0]["flop"]) == 2 * 64**3 and float(rows[0]["bytes"]) == 8 * 3 * 64**2


def test_bench_list(capsys):
    assert main(["bench", "--list"]) == 0
    names = capsys.readouterr().out.split()
    assert "triad_fp64" in names and "fft_c128" in names


@pytest.mark.parametrize("args, message", [
    (["--only", "nope"], "unknown zoo kernel 'nope'"),
    (["--only", "copy", "-o", "zoo.gif"], "use a file ending in .png"),
    (["--on", "missing-profile.json", "--only", "copy"], "missing-profile.json: file not found"),
    (["--device", "tpu", "--only", "copy", "--on", "@ROOF"], "device must be cpu, torch-cpu"),
])
def test_bench_user_errors_exit_2(args, message, roof_file, capsys):
    args = [roof_file if a == "@ROOF" else a for a in args]
    assert main(["bench", "--quick", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and "Traceback" not in err


@pytest.mark.slow
def test_bench_quick_probes_first_without_on(quick_cpu_profile, capsys):
    pytest.importorskip("numba")
    # the probe answers with the session's real quick profile (conftest.py)
    assert main(["bench", "--quick", "--only", "triad_fp64", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["roof"]["kind"] == "measured"                 # the quick probe's roof
    assert any(c["level"] == "DRAM" for c in out["roof"]["memory"])
    (point,) = [p for p in out["analysis"] if p["kernel"] == "triad_fp64"]
    assert point["floor_ratio"] == pytest.approx(out["kernels"][0]["meta"]["floor_ratio"])
