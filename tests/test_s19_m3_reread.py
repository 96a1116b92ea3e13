"""Reread x2 (s19) of cli/ and report/: F15 the envelope roof's "no roof" in report and
plot --json as in ncu --json, F6 a FLOP-less kernel that sets the envelope's bandwidth
ceiling reads "no roof" too, F13 `ai --json` always has notes, F1 the conv1d padding note
at --stride 2, F2 compare names `specs compare` only for two machine files, F3 int8 work
in OP on every line. Seed 000's timed ncu export: sgemm 2.15 GFLOP in 1.1 ms is the
envelope's compute ceiling, copyKernel (no FLOP, 1.78 TB/s) its DRAM ceiling."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_inproc import json_of, one_line_error, run_cli

SEEDS = Path(__file__).resolve().parents[1] / "examples" / "seeds"
CSV = str(SEEDS / "seed000_ncu_timed.csv")


@pytest.mark.parametrize("verb", ["report", "plot", "ncu"])
def test_f15_f6_envelope_no_roof_in_every_verbs_json(verb):
    r = run_cli(verb, CSV, "--json")
    assert r.returncode == 0, r.stderr
    pts = {p["kernel"]: p for p in json.loads(r.stdout)["analysis"]}
    assert pts["sgemm"]["percent_of_roof"] == 100.0
    assert pts["sgemm"]["bound"] == "no roof"
    # copyKernel has no FLOP: 100 % of the envelope's DRAM ceiling, which it set
    assert pts["copyKernel"]["percent_of_roof"] is None
    assert pts["copyKernel"]["percent_of_bandwidth"] == 100.0
    assert pts["copyKernel"]["bound"] == "no roof"
    assert all("relative" not in p for p in pts.values())


def test_f6_table_says_no_roof_for_the_copy():
    table = run_cli("ncu", CSV).stdout
    row = next(line for line in table.splitlines() if "copyKernel" in line and "DRAM" in line)
    assert "no roof (give --on)" in row and "relative" not in row


def test_f15_real_roof_keeps_the_class():
    for verb in ("report", "plot"):
        r = run_cli(verb, CSV, "--json", "--on", "A100 40GB SXM")
        pts = {p["kernel"]: p for p in json.loads(r.stdout)["analysis"]}
        assert pts["sgemm"]["bound"] == "compute"
        assert pts["copyKernel"]["bound"] == "memory"


def test_f13_ai_json_without_on_has_notes(capsys):
    d = json_of(capsys, ["ai", "matmul", "64", "64", "64", "--dtype", "fp32", "--json"])
    assert d["notes"] == []


CONV1D = ["ai", "conv2d", "--n", "1", "--c", "64", "--h", "1", "--w", "1000", "--k", "64",
          "--r", "1", "--s", "3", "--padding", "1", "--dtype", "fp32", "--json"]


def test_f1_conv1d_note_counts_zero_rows_at_stride_2(capsys):
    # stride 2, padding 1: P = 2 output rows at padded rows -1 and +1, both zeros (the
    # one real row, 0, is never read: input 0 B)
    d = json_of(capsys, [*CONV1D, "--stride", "2"])
    assert d["shape"]["p"] == 2 and d["bytes_split"]["input"] == 0
    assert any("P = 2 rows, 2 of them zero padding" in n for n in d["notes"])
    # stride 1: rows -1, 0, +1: two zeros
    d = json_of(capsys, CONV1D)
    assert any("P = 3 rows, 2 of them zero padding" in n for n in d["notes"])


def test_f2_compare_kernels_with_a_profile_says_on_only(capsys):
    err = one_line_error(capsys, ["compare", str(SEEDS / "pts.json"),
                                  str(SEEDS / "t4p.json")])
    assert "specs compare" not in err and "--on" in err and "t4p.json" in err


def test_f2_compare_two_profiles_says_specs_compare(capsys):
    t4 = str(SEEDS / "t4p.json")
    err = one_line_error(capsys, ["compare", t4, t4])
    assert f"rooflab specs compare {t4} {t4}" in err


def test_f3_int8_work_in_op_on_every_line():
    out = run_cli("ai", "matmul", "4096", "4096", "4096", "--dtype", "int8", "--tile",
                  "128x128x32").stdout
    assert "  OP          137 GOP  (1.37439e+11)" in out
    assert "AI          120 OP/byte" in out
    assert "compulsory  AI 1365 OP/byte, 101 MB" in out    # 2*4096^3 / (3 * 4096^2 ...)
    assert "FLOP" not in out.split("byte model")[0]
