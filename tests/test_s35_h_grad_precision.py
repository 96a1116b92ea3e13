"""`rooflab whatif --precision fp8` on a `rooflab train --grad-dtype fp32` file keeps the
weight gradients at 4 B: only the math's operands move to fp8 (s35 H; the dW writes and
the embedding's backward were halved as if they were bf16).

llama-2-7b on H100, --batch 1 --seq 4096 (4096 tokens), 32 layers, bf16 training:
  * q_proj.bwd_dw reads X and dY, 2 x 4096 x 4096 x 32 = 1,073,741,824 elements, and
    writes dW, 4096 x 4096 x 32 = 536,870,912 fp32 gradients: 2,147,483,648 B + 4 x
    536,870,912 = 4,294,967,296 B. Under fp8: 1,073,741,824 x 1 B + 2,147,483,648 B (kept)
    = 3,221,225,472 B (it read 2,147,483,648: the gradients halved too). Since s36 C the
    fp32 main_grad is read and written (Megatron-LM's fused accumulation): 2,147,483,648 B
    more, kept too: 5,368,709,120 B.
  * q_proj.bwd_dx (no gradient): 3,221,225,472 -> 1,610,612,736 B, halved as before.
  * embedding.bwd reads and writes the gathered rows of the table's gradient, 2 x 4096 x
    4096 x 4 B = 134,217,728 B, and reads dY (33,587,200 B, kept at the model dtype):
    167,804,928 B before and after (it read 100,696,064).
  * without --grad-dtype the gradients are bf16, and fp8 recipes keep them at 2 B (the
    collective's rule, comm_in_precision): q_proj.bwd_dw 1,073,741,824 x 2 B + 1,073,741,824
    x 1 B = 3,221,225,472 -> 1,073,741,824 + 1,073,741,824 = 2,147,483,648 B; under
    --precision fp32 they follow the math: 1,073,741,824 x 4 + 536,870,912 x 4 =
    6,442,450,944 B (a guard: as before); embedding.bwd keeps its 2 B gradient rows,
    33,587,200 + 67,108,864 = 100,696,064 B (it read 67,141,632).
  * a train CSV (-o g.csv) reads back the dW rows' weight_bytes/activations_bytes as
    their bytes_split, so it keeps the gradients as the JSON does (it halved the whole
    row: 2,147,483,648 B)."""

from __future__ import annotations

import json

import pytest
from cli_inproc import quiet_out as _quiet

BASE = ["train", "llama-2-7b", "--on", "H100", "--batch", "1", "--seq", "4096"]




@pytest.fixture(scope="module")
def files(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("s35hg")
    fp32, bf16, table = str(tmp / "g.json"), str(tmp / "b.json"), str(tmp / "g.csv")
    _quiet([*BASE, "--grad-dtype", "fp32", "-o", fp32])
    _quiet([*BASE, "--grad-dtype", "fp32", "-o", table])
    _quiet([*BASE, "-o", bf16])
    return {"fp32": fp32, "bf16": bf16, "csv": table}


def _after(path: str, precision: str, *on: str) -> dict:
    doc = json.loads(_quiet(["whatif", path, *on, "--precision", precision, "--json"]))
    return {k["name"]: k for k in doc["after"]["kernels"]}


def test_fp32_gradients_stay_4_bytes_under_fp8(files):
    after = _after(files["fp32"], "fp8")
    dw = after["q_proj.bwd_dw"]
    # s36 C: the fp32 main_grad read and written: 2 x 2,147,483,648 B, kept
    assert dw["bytes"]["DRAM"] == pytest.approx(5_368_709_120, rel=1e-12)
    assert dw["meta"]["bytes_split"]["weights"] == pytest.approx(4_294_967_296, rel=1e-12)
    assert dw["meta"]["bytes_split"]["activations"] == pytest.approx(1_073_741_824)
    assert after["embedding.bwd"]["bytes"]["DRAM"] == pytest.approx(167_804_928, rel=1e-12)
    # the math's operands move: dX has no gradient of the weights
    assert after["q_proj.bwd_dx"]["bytes"]["DRAM"] == pytest.approx(1_610_612_736)


def test_bf16_gradients_stay_2_bytes_under_fp8(files):
    after = _after(files["bf16"], "fp8")
    assert after["q_proj.bwd_dw"]["bytes"]["DRAM"] == pytest.approx(2_147_483_648,
                                                                     rel=1e-12)
    assert after["embedding.bwd"]["bytes"]["DRAM"] == pytest.approx(100_696_064, rel=1e-12)


def test_fp32_math_widens_bf16_gradients(files):
    after = _after(files["bf16"], "fp32")
    assert after["q_proj.bwd_dw"]["bytes"]["DRAM"] == pytest.approx(6_442_450_944,
                                                                     rel=1e-12)


def test_the_file_says_the_gradients_width(files):
    with open(files["fp32"]) as f:
        kernels = {k["name"]: k for k in json.load(f)["kernels"]}
    assert kernels["q_proj.bwd_dw"]["meta"]["grad_bytes"] == 4
    assert kernels["embedding.bwd"]["meta"]["grad_bytes"] == 4
    assert "grad_bytes" not in kernels["q_proj.bwd_dx"]["meta"]


def test_a_train_csv_keeps_them_as_the_json_does(files):
    after = _after(files["csv"], "fp8", "--on", "H100")
    assert after["q_proj.bwd_dw"]["bytes"]["DRAM"] == pytest.approx(5_368_709_120,
                                                                     rel=1e-12)
    assert after["embedding.bwd"]["bytes"]["DRAM"] == pytest.approx(167_804_928, rel=1e-12)
