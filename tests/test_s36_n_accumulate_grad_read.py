"""--accumulate N counts the gradient's read in the dW kernels that add into it (s36 N):
micro-batches 2 to N read the gradient buffer before adding their dW (C += X^T dY), N - 1
reads of the gradient bytes per step; before, a note said the read was not counted."""

from __future__ import annotations

import pytest
from cli_inproc import json_of

BASE = ["train", "llama-2-7b", "--on", "H100 SXM", "--json"]


def _rows(doc) -> dict:
    return {k["name"]: k for k in doc["kernels"]}


def test_dw_reads_the_gradient_in_n_minus_1_micro_batches(capsys):
    """llama-2-7b q_proj.bwd_dw, bf16, --accumulate 4: 32 layers x 4 micro-batches = 128
    calls, each writing 4096 x 4096 x 2 B = 33.55 MB of gradient: 4.295 GB written, and 3
    of the 4 micro-batches read it: + 32 x 3 x 33.55 MB = 3.221 GB, 7.516 GB of `weights`
    (HEAD: 4.295 GB). norm.bwd: 64 x 4 calls, gamma 4096 x 2 B read and dgamma written
    each: 2 x 2.097 MB = 4.194 MB, + 64 x 3 x 8192 B = 1.573 MB read: 5.767 MB."""
    rows = _rows(json_of(capsys, [*BASE, "--accumulate", "4"]))
    dw = rows["q_proj.bwd_dw"]
    assert dw["calls"] == 128
    assert dw["meta"]["bytes_split"]["weights"] == pytest.approx(
        128 * 4096 * 4096 * 2 + 32 * 3 * 4096 * 4096 * 2)
    assert rows["norm.bwd"]["meta"]["bytes_split"]["weights"] == pytest.approx(
        2 * 256 * 8192 + 64 * 3 * 8192)
    # the embedding's scatter-add already reads and writes its gradient rows (2048 tokens
    # x 4096 x 2 B each way, 4 calls): as it was
    assert rows["embedding.bwd"]["meta"]["bytes_split"]["weights"] == pytest.approx(
        4 * 2 * 2048 * 4096 * 2)


def test_one_micro_batch_and_main_grad_are_as_they_were(capsys):
    """--accumulate 1: the dW writes, 32 x 33.55 MB = 1.074 GB. --grad-dtype fp32 (main_grad,
    read and written every micro-batch already: dw_passes 2): 128 x 2 x 4 B x 16.8 M =
    17.18 GB at --accumulate 4, no more."""
    one = _rows(json_of(capsys, BASE))
    assert one["q_proj.bwd_dw"]["meta"]["bytes_split"]["weights"] == pytest.approx(
        32 * 4096 * 4096 * 2)
    fp32 = _rows(json_of(capsys, [*BASE, "--accumulate", "4", "--grad-dtype", "fp32"]))
    assert fp32["q_proj.bwd_dw"]["meta"]["bytes_split"]["weights"] == pytest.approx(
        128 * 2 * 4 * 4096 * 4096)


def test_the_note_says_it_is_counted():
    """The --accumulate note: 'read in 3 of the 4 micro-batches ... counted', not 'its read
    per micro-batch is not counted'."""
    from cli_inproc import run_cli

    out = run_cli("train", "llama-2-7b", "--on", "H100 SXM", "--accumulate", "4")
    text = out.stdout + out.stderr
    assert "read in 3 of the 4 micro-batches" in text
    assert "not counted" not in text.split("--accumulate 4:")[1].split("\n")[0]
