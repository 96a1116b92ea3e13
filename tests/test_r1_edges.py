"""Review r1 (--json and exit codes), the edges: F5 oversized `ai` sizes, F10 the ncu roof
line's warnings apart from `roof_source`, F12 `specs import --json` and `specs compare
--json`'s ratios and ridges."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rooflab.cli.main import main
from rooflab.errors import InputError
from rooflab.workloads import ops

SEEDS = Path(__file__).resolve().parents[1] / "examples" / "seeds"
TOO_BIG = "larger than rooflab takes (at most 2**63 - 1 = 9.22e+18, the largest tensor dimension)"


# --- F5: a 120-160-digit size exited 70 (OverflowError: int too large to convert to float)
def test_ai_matmul_with_huge_sizes_is_a_user_error(capsys):
    m, n, k = "1" + "0" * 120, "1" + "0" * 150, "1" + "0" * 160
    assert main(["ai", "matmul", m, n, k, "--on", "A100", "--json"]) == 2
    got = capsys.readouterr()
    assert json.loads(got.out)["error"]["kind"] == "input"   # the error document only
    assert "Traceback" not in got.err and "internal error" not in got.err
    assert f"error: m is 1e+120, {TOO_BIG}" in got.err


def test_a_size_past_a_float_names_its_argument(capsys):
    # 400 digits reads as float inf: the message says how large, not 'not a whole number'
    assert main(["ai", "matmul", "4096", "1" + "0" * 400, "4096"]) == 2
    assert f"error: n is beyond 1e308, {TOO_BIG}" in capsys.readouterr().err


def test_ops_refuse_sizes_past_int64_and_take_the_largest():
    with pytest.raises(InputError, match=r"^k is 1e\+150, larger than rooflab takes"):
        ops.matmul(4, 4, 10**150)
    # 2**63 - 1 is taken: FLOP 2 x (2**63 - 1) x 4 x 4 = 2.95e20, bytes 2 x 4 x (2**63 - 1)
    # x 2 (A and C) + 2 x 16 (B) = 1.48e20, both finite and inside Kernel's range
    op = ops.matmul(2**63 - 1, 4, 4)
    assert op.flop == pytest.approx(2 * (2**63 - 1) * 16)
    assert op.bytes == pytest.approx(2 * ((2**63 - 1) * 4 * 2 + 16))
    with pytest.raises(InputError, match=r"^m is 9.22e\+18, larger"):
        ops.matmul(2**63, 4, 4)


# --- F10: the wrong-device warning and the clock note were inside `roof_source`
def test_ncu_json_roof_source_is_the_roof_line_alone(fixtures_dir, capsys):
    csv = fixtures_dir / "ncu" / "nersc-gpp" / "output1.csv"
    assert main(["ncu", str(csv), "--on", "H200 SXM", "--json"]) == 0
    got = capsys.readouterr()
    doc = json.loads(got.out)
    assert doc["roof_source"] == "roof: NVIDIA H200 SXM (nominal), from --on H200 SXM"
    warning = ("warning: the kernels were profiled on a compute capability 8.9 GPU, but "
               "NVIDIA H200 SXM is 9.0 — its ceilings may not apply")
    # the file's clock 1.62 GHz is not the H200's (another GPU): no clock note (s33 C)
    assert doc["notes"][0] == warning
    assert not any("the kernels ran at 1.62 GHz" in n for n in doc["notes"])
    # the analysis' own notes follow it, none lost
    assert any("has no L2 ceiling" in n for n in doc["notes"][1:])
    # and stderr says it, as every verb's --json says its warnings
    assert got.err.splitlines()[:1] == doc["notes"][:1]


def test_ncu_json_note_of_peaks_not_added_leaves_roof_source(fixtures_dir, capsys):
    rep = fixtures_dir / "ncu" / "nersc-gpp" / "output1.ncu-rep"
    pytest.importorskip("ncu_report")
    # the report ran on an RTX 4060 Laptop GPU: its L2/L1 peaks are not an H100's
    assert main(["ncu", str(rep), "--on", "H100", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["roof_source"] == "roof: NVIDIA H100 SXM (nominal), from --on H100"
    assert doc["notes"][0].startswith("warning: the kernels were profiled on a compute "
                                      "capability 8.9 GPU, but NVIDIA H100 SXM is 9.0")
    # another GPU's roof: no clock note (s33 C)
    assert doc["notes"][1] == ("note: output1.ncu-rep recorded L2/L1 peaks of NVIDIA GeForce "
                               "RTX 4060 Laptop GPU, not of NVIDIA H100 SXM: not added to its "
                               "roof")


def test_ncu_terminal_roof_line_still_holds_the_warning(fixtures_dir, capsys):
    csv = fixtures_dir / "ncu" / "nersc-gpp" / "output5.csv"
    assert main(["ncu", str(csv), "--on", "T4"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert ("roof: NVIDIA T4 (nominal), from --on T4; warning: the kernels were profiled on "
            "a compute capability 8.9 GPU, but NVIDIA T4 is 7.5 — its ceilings may not "
            "apply") in out


def test_ncu_json_without_a_warning_has_no_roof_notes(fixtures_dir, capsys):
    csv = fixtures_dir / "ncu" / "nersc-gpp" / "output5.csv"
    assert main(["ncu", str(csv), "--json"]) == 0
    got = capsys.readouterr()
    doc = json.loads(got.out)
    assert doc["roof_source"].startswith("roof: none known")
    assert not any(n.startswith(("warning: ", "note: ")) for n in doc.get("notes", []))
    assert got.err == ""


# --- F12: specs import refused --json; specs compare --json dropped the ratio column
def test_specs_import_takes_json(tmp_path, capsys):
    args = ["specs", "import", "--dram", "83GB/s", "--fp64", "355GFLOP/s", "--name", "edison"]
    assert main([*args, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["name"] == "edison"
    assert doc["memory"][0]["bytes_per_s"] == 83e9
    assert doc["compute"][0]["flop_per_s"] == 355e9
    out = tmp_path / "edison.json"
    assert main([*args, "--json", "-o", str(out)]) == 0
    got = capsys.readouterr()
    assert json.loads(got.out) == json.loads(out.read_text())   # stdout = the file
    assert got.err.startswith(f"wrote {out}: edison (nominal)")


def test_specs_compare_json_has_the_ratios_and_the_files_ridges(capsys):
    t4p = str(SEEDS / "t4p.json")
    assert main(["specs", "compare", "T4", t4p, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    ratios = doc["ratios"]
    assert ratios["numerator"] == f"{t4p} (measured)"
    assert ratios["denominator"] == "NVIDIA T4"
    assert ratios["measured_over_nominal"] is True
    rows = {r["quantity"]: r for r in ratios["rows"]}
    # seed 004's T4: DRAM 270 / 320 GB/s = 0.84375 (the table's 84 %), fp16 tensor
    # 50 / 65 TFLOP/s = 0.769 (77 %)
    assert rows["DRAM"] == {"quantity": "DRAM", "unit": "B/s", "numerator": 2.7e11,
                            "denominator": 3.2e11, "ratio": 0.84375}
    assert rows["fp16 tensor"]["ratio"] == pytest.approx(50 / 65)
    assert rows["int8 tensor"] == {"quantity": "int8 tensor", "unit": "OP/s",
                                   "numerator": None, "denominator": 1.3e14, "ratio": None}
    # the measured roof's ridge: 50 TFLOP/s / 270 GB/s = 185.19 FLOP/byte (the table's 185)
    (ridge,) = doc["devices"][1]["ridges"]
    assert (ridge["precision"], ridge["unit"], ridge["level"]) == ("fp16", "tensor", "DRAM")
    assert ridge["ridge"] == pytest.approx(5e13 / 2.7e11)


def test_specs_compare_json_of_two_catalog_devices_has_no_ratios(capsys):
    assert main(["specs", "compare", "T4", "L4", "--json"]) == 0
    assert "ratios" not in json.loads(capsys.readouterr().out)   # the table has none either
