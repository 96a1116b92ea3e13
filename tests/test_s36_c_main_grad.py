"""`rooflab train --grad-dtype fp32` under bf16: the dW GEMM accumulates into Megatron-LM's
fp32 main_grad (gradient_accumulation_fusion: wgrad_gemm_accum_fp32, C += X^T dY), so it
reads the 4 B gradient as well as writing it (s36 C; s35 counted the write only).

Hand figures: llama-2-7b on H100 SXM (3.35 TB/s), --batch 1 --seq 512.
  * q_proj.bwd_dw: 4096 x 4096 x 32 layers = 536,870,912 fp32 gradients read and written,
    8 B each = 4,294,967,296 B (s35: 2,147,483,648); X and dY, 2 x 512 x 4096 x 2 B x 32 =
    268,435,456 B. At --seq 512 it is memory-bound: 4,563,402,752 B / 3.35e12 = 1.3622 ms
    (17.4 us of FLOP per call).
  * every linear's dW (q, k, v, o, gate, up, down x 32, lm_head) together: the linear
    parameters, P - embedding - norms = 6,738,415,616 - 131,072,000 - 65 x 4096 =
    6,607,077,376, x 8 B = 52,856,619,008 B.
  * all of them memory-bound before and after, so the step floor grows by the read:
    4 x 6,607,077,376 B / 3.35e12 = 7.8890 ms: 85.273 -> 93.162 ms.
  * bf16 gradients (no --grad-dtype) are written only: q_proj.bwd_dw 2 B x 536,870,912 =
    1,073,741,824 B, as before.
"""

from __future__ import annotations

import pytest
from cli_inproc import json_of

BW = 3.35e12
L_LIN = 6_738_415_616 - 131_072_000 - 65 * 4096
ARGS = ["train", "llama-2-7b", "--on", "H100 SXM", "--batch", "1", "--seq", "512"]


def _kernels(doc: dict) -> dict:
    return {k["name"]: k for k in doc["kernels"]}


def test_dw_reads_and_writes_the_fp32_main_grad(capsys):
    """q_proj.bwd_dw moves 8 B per gradient (4,294,967,296 B), all dW rows 8 x L_LIN."""
    doc = json_of(capsys, [*ARGS, "--grad-dtype", "fp32", "--json"])
    ks = _kernels(doc)
    q = ks["q_proj.bwd_dw"]
    assert q["meta"]["bytes_split"]["weights"] == 4_294_967_296
    assert q["meta"]["bytes_split"]["activations"] == 268_435_456
    row = next(k for k in doc["train"]["kernels"] if k["name"] == "q_proj.bwd_dw")
    assert row["bound"] == "memory"
    assert row["floor_s"] * 1e3 == pytest.approx(4_563_402_752 / BW * 1e3, rel=1e-9)
    dw = sum(k["meta"]["bytes_split"]["weights"] for n, k in ks.items()
             if n.endswith(".bwd_dw"))
    assert dw == 8 * L_LIN == 52_856_619_008


def test_step_floor_grows_by_the_read(capsys):
    """85.273 ms (s35) + 4 x L_LIN / 3.35e12 = 7.8890 ms -> 93.162 ms."""
    t = json_of(capsys, [*ARGS, "--grad-dtype", "fp32", "--json"])["train"]
    assert t["floor_s"] * 1e3 == pytest.approx(85.2731 + 4 * L_LIN / BW * 1e3, abs=1e-3)


def test_bf16_gradients_are_written_only_and_the_notes_say_which(capsys):
    """Without --grad-dtype the dW writes 2 B (1,073,741,824 B); the --accumulate note says
    the main_grad's read is counted under fp32, and at the weights' width in micro-batches
    2 to N (s36 N)."""
    ks = _kernels(json_of(capsys, [*ARGS, "--json"]))
    assert ks["q_proj.bwd_dw"]["meta"]["bytes_split"]["weights"] == 1_073_741_824
    fp32 = json_of(capsys, [*ARGS, "--grad-dtype", "fp32", "--accumulate", "2", "--json"])
    notes = " ".join(fp32["train"]["notes"])
    assert ("each micro-batch's dW adds into the gradient buffer (the fp32 main_grad read "
            "and written by every micro-batch's dW GEMM, counted)") in notes
    assert "the backward's dW, which reads and writes the main_grad it accumulates into" \
        in notes
    bf16 = json_of(capsys, [*ARGS, "--accumulate", "2", "--json"])
    # s36 N: counted at the weights' width too (train_ops.accumulated)
    assert ("(read in 1 of the 2 micro-batches by the dW GEMM and norm that add into it, "
            "counted)") in " ".join(bf16["train"]["notes"])
