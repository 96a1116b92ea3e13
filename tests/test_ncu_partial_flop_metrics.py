"""An ncu CSV with only some of a precision's instruction metrics: say the FLOP may read low.

`ncu --metrics dram__bytes.sum,gpu__time_duration.sum,...ffma_pred_on.sum` (fadd and fmul
forgotten) gave 2 x ffma FLOP with no word that adds and multiplies were not counted.
"""

from __future__ import annotations

import pytest
from tests.test_ncu_csv import BASIC, DETAILS_HEAD, details_rows

from rooflab.cli.main import main
from rooflab.ingest.ncu_files import load_ncu

FFMA_ONLY = [r for r in BASIC if "fadd" not in r[0] and "fmul" not in r[0]]
MISSING = ("sm__sass_thread_inst_executed_op_fadd_pred_on.sum, "
           "sm__sass_thread_inst_executed_op_fmul_pred_on.sum not collected")


def test_ffma_only_counts_2_per_fma_and_says_what_is_missing(tmp_path, capsys):
    path = tmp_path / "ffma.csv"
    path.write_text("\n".join([DETAILS_HEAD] + details_rows(0, FFMA_ONLY)) + "\n")
    imp = load_ncu([str(path)])
    (k,) = imp.kernels
    assert k.flop == {"fp32": pytest.approx(2 * 1_048_576)}       # 2 FLOP per FFMA
    (note,) = imp.notes
    assert note.startswith("saxpy: fp32 FLOP from ffma only: ") and MISSING in note
    assert main(["ncu", str(path), "--on", "a100"]) == 0
    assert "fp32 FLOP from ffma only" in capsys.readouterr().out


def test_all_three_collected_gives_no_note(tmp_path):
    path = tmp_path / "all.csv"
    path.write_text("\n".join([DETAILS_HEAD] + details_rows(0, BASIC)) + "\n")
    assert load_ncu([str(path)]).notes == ()
