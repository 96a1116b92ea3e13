"""Session 36 F: one die of an MI250X is said alike wherever it judges, and rocprof's
occupancy note rounds as every other occupancy does.

* `rooflab report rep.json`, rep.json an analysis written `--on MI250X` (its roof "AMD
  Instinct MI250X, one die", kind derived), judged on that die (fp16 tensor 383 / 2 = 191.5
  TFLOP/s, DRAM 3276.8 / 2 = 1638.4 GB/s) but without the note `--on MI250X` prints: "the
  kernels are judged against one die's roof (the package's figures / 2)".
* `rooflab ai matmul ... --on MI250X` labelled the roof "one die (derived)" but gave no
  note either, as report does.
* rocprof's occupancy note printed '.3g' ("gemm_mfma_bf16 25 %", "triad 100 %") beside
  the advice's one decimal ("theoretical 25.0 % (8 of 32 waves)"). gemm_mfma_bf16 of
  tests/data/rocprof_occupancy: 256 VGPRs -> 512 // 256 = 2 waves per SIMD x 4 SIMDs = 8
  waves; a workgroup of 256 is 4 waves -> 2 workgroups, 8 / 32 = 25.0 %.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_inproc import quiet_out, run_cli

from rooflab.cli.main import main

JUDGED = "the kernels are judged against one die's roof (the package's figures / 2)"
MATMUL = ["ai", "matmul", "4096", "4096", "4096", "--dtype", "fp16"]
DATA = Path(__file__).parent / "data" / "rocprof_occupancy"


def _joined(text: str) -> str:
    return " ".join(text.split())


def test_ai_on_mi250x_notes_the_one_die(capsys):
    """137.4 GFLOP at AI 1365 on one die: 137.4e9 / 191.5e12 = 718 us; the note names the
    die, in the text and in --json's notes."""
    out = _joined(quiet_out([*MATMUL, "--on", "MI250X"]))
    assert "718 us" in out and JUDGED in out
    assert main([*MATMUL, "--on", "MI250X", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["compute_ceiling"] == "fp16 tensor"
    assert doc["attainable_flop_per_s"] == pytest.approx(191.5e12)
    assert any(JUDGED in n for n in doc["notes"])


def test_report_of_a_die_roof_file_says_the_die_as_on_does(tmp_path, capsys):
    """The same roof read back from the file (no --on) judges at 191.5 TFLOP/s and now says
    the one note `report --on MI250X` says, once."""
    assert main([*MATMUL, "--on", "MI250X", "--json"]) == 0
    saved = tmp_path / "ai.json"
    saved.write_text(capsys.readouterr().out)
    plain = run_cli("report", str(saved))
    assert plain.returncode == 0
    out = _joined(plain.stdout)
    assert "AMD Instinct MI250X, one die (derived: the package's / 2), from" in out
    assert out.count(JUDGED) == 1
    assert main(["report", str(saved), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [n for n in doc["notes"] if JUDGED in n] != []


def test_rocprof_occupancy_note_prints_one_decimal():
    """triad 100.0 %, gemm_mfma_bf16 25.0 %, lds_transpose 12.5 %: the note's figures as
    occupancy_words prints each kernel's ('25.0 %'), not '100 %' / '25 %'."""
    done = run_cli("rocprof", str(DATA / "results.csv"), "--on", "mi300x")
    out = _joined(done.stdout + done.stderr)
    assert "triad 100.0 % (wave slots (workgroup size), VGPRs, SGPRs)" in out
    assert "gemm_mfma_bf16 25.0 % (VGPRs)" in out and "lds_transpose 12.5 % (LDS)" in out
    assert "gemm_mfma_bf16 25 % " not in out
