"""`rooflab train --grad-dtype fp32` moves the gradients at 4 B in the kernels too, not only
in the memory line and the collectives (s35 E; Megatron-LM accumulates dW into its fp32
main_grad).

llama-2-7b, one H100 SXM (3.35 TB/s), --batch 1 --seq 4096, bf16, AdamW.
P = 6,738,415,616 parameters.
  * optimizer.adamw: 14 B read + 14 B written per parameter at bf16 gradients (28 P =
    188,675,637,248 B); with fp32 gradients it reads 4 B of gradient, not 2: 30 P =
    202,152,468,480 B, 2P = 13,476,831,232 B more, 13.48 GB / 3.35 TB/s = 4.023 ms more.
  * q_proj.bwd_dw writes dW: 4096 x 4096 per layer x 32 layers = 536,870,912 elements,
    2 B = 1,073,741,824 B -> 4 B = 2,147,483,648 B, read and written since s36 C (the fp32
    main_grad accumulated into): 4,294,967,296 B; its activations (X and dY, 2 x 4096 x
    4096 x 2 B x 32 = 2,147,483,648 B) unchanged; q_proj.bwd_dx (reads W at 2 B) unchanged.
  * embedding.bwd scatter-adds into the table's gradient rows (read and written): 2 x 4096
    tokens x 4096 x 2 B = 67,108,864 B -> at 4 B 134,217,728 B.
  * norm.bwd: gamma read at 2 B and dgamma written at 4 B: 64 x 4096 x (2 + 4) = 1,572,864 B
    (bf16: 64 x 4096 x 4 = 1,048,576 B).
  * the step floor grows by the memory-bound rows only (the dW GEMMs are compute-bound):
    (13,476,831,232 + 67,108,864 + 524,288) B / 3.35e12 B/s = 4.0431 ms.
  * --clip-grad: clip_grad_norm_'s norm reads every gradient (1 pass), its scale reads and
    writes them (2): tinyllama-1.1b, 1,100,048,384 parameters x 4 B = 4,400,193,536 B and
    8,800,387,072 B.
"""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main

P = 6_738_415_616
BW = 3.35e12
ARGS = ("llama-2-7b", "--on", "H100 SXM", "--batch", "1", "--seq", "4096")


def _train(*args) -> dict:
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        assert main(["train", *args, "--json"]) == 0
    return json.loads(out.getvalue())["train"]


@pytest.fixture(scope="module")
def steps() -> tuple[dict, dict]:
    return _train(*ARGS), _train(*ARGS, "--grad-dtype", "fp32")


def _k(t: dict, name: str) -> dict:
    return next(k for k in t["kernels"] if k["name"] == name)


def test_optimizer_reads_the_fp32_gradient(steps):
    bf16, fp32 = steps
    assert _k(bf16, "optimizer.adamw")["bytes"] == 28 * P               # 188.68 GB
    assert _k(fp32, "optimizer.adamw")["bytes"] == 30 * P               # 202.15 GB
    assert (_k(fp32, "optimizer.adamw")["floor_s"] - _k(bf16, "optimizer.adamw")["floor_s"]
            == pytest.approx(2 * P / BW, rel=1e-9))                     # 4.023 ms


def test_dw_writes_at_4_bytes_and_dx_reads_w_at_2(steps):
    bf16, fp32 = steps
    assert _k(bf16, "q_proj.bwd_dw")["bytes_split"]["weights"] == 1_073_741_824
    # s36 C: the fp32 main_grad is read and written (Megatron-LM's fused accumulation)
    assert _k(fp32, "q_proj.bwd_dw")["bytes_split"]["weights"] == 2 * 2_147_483_648
    assert _k(fp32, "q_proj.bwd_dw")["bytes_split"]["activations"] == 2_147_483_648
    assert _k(fp32, "q_proj.bwd_dx")["bytes"] == _k(bf16, "q_proj.bwd_dx")["bytes"]
    assert _k(bf16, "embedding.bwd")["bytes_split"]["weights"] == 67_108_864
    assert _k(fp32, "embedding.bwd")["bytes_split"]["weights"] == 134_217_728
    assert _k(bf16, "norm.bwd")["bytes_split"]["weights"] == 1_048_576
    assert _k(fp32, "norm.bwd")["bytes_split"]["weights"] == 1_572_864


def test_step_floor_and_note(steps):
    bf16, fp32 = steps
    extra = (2 * P + 67_108_864 + 524_288) / BW                         # 4.0431 ms
    assert fp32["floor_s"] - bf16["floor_s"] == pytest.approx(extra, rel=1e-6)
    assert fp32["memory"]["grads_bytes"] == 4 * P
    note = next(n for n in fp32["notes"] if n.startswith("--grad-dtype fp32"))
    assert ("the kernels' gradient traffic (the backward's dW, which reads and writes the "
            "main_grad it accumulates into, the optimizer's read) moves them at 4 B too, "
            "the weights and activations at --dtype bf16's 2 B") in note
    assert "is counted at --dtype" not in note


def test_clip_grad_passes_at_the_gradients_width():
    t = _train("tinyllama-1.1b", "--on", "H100 SXM", "--batch", "1", "--seq", "512",
               "--clip-grad", "--grad-dtype", "fp32")
    p = 1_100_048_384
    assert _k(t, "optimizer.clip_grad.norm")["bytes"] == 4 * p
    assert _k(t, "optimizer.clip_grad.scale")["bytes"] == 8 * p
    note = next(n for n in t["notes"] if n.startswith("--grad-dtype fp32"))
    assert "--clip-grad's two passes) moves them at 4 B too" in note
