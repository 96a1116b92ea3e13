"""Review s19 r1 (`rooflab ai`): F9 bf16 on a GPU without bf16 math, F7 depthwise convs on
the vector ceiling, F3 no ridge for an op without FLOP, F6 errors naming the options, F2
the causal FLOP wording. Hand numbers from the review."""

from __future__ import annotations

import pytest
from cli_inproc import json_of as _json
from cli_inproc import one_line_error as _error

from rooflab.cli.main import main
from rooflab.workloads import ops

# --- F9: bf16 where the GPU has no bf16 math runs at the fp32 rate -------------------------

def test_f9_v100_bf16_matmul(capsys):
    d = _json(capsys, ["ai", "matmul", "4096", "4096", "4096", "--dtype", "bf16", "--on",
                       "NVIDIA V100 SXM2 32GB", "--json"])
    assert d["compute_ceiling"] == "fp32 vector"
    assert d["time_floor_s"] == pytest.approx(1.374e11 / 15.7e12, rel=1e-3)   # 8.75 ms
    assert any("runs at the fp32 rate" in n for n in d["notes"])


def test_f9_t4_bf16_attention(capsys):
    d = _json(capsys, ["ai", "attention", "--heads", "32", "--q-len", "2048", "--kv-len",
                       "2048", "--head-dim", "64", "--dtype", "bf16", "--on", "NVIDIA T4",
                       "--json"])
    assert d["compute_ceiling"] == "fp32 vector"
    assert d["time_floor_s"] == pytest.approx(3.436e10 / 8.1e12, rel=1e-2)    # 4.2 ms


def test_f9_a100_bf16_keeps_its_tensor_ceiling(capsys):
    d = _json(capsys, ["ai", "matmul", "4096", "4096", "4096", "--dtype", "bf16", "--on",
                       "NVIDIA A100 80GB SXM", "--json"])
    assert d["compute_ceiling"] == "bf16 tensor"


# --- F7: depthwise conv on the vector ceiling ---------------------------------------------

DEPTHWISE = ["ai", "conv2d", "--n", "64", "--c", "512", "--h", "14", "--w", "14", "--k", "512",
             "--r", "31", "--s", "31", "--padding", "15", "--groups", "512"]


def test_f7_depthwise_vector(capsys):
    d = _json(capsys, DEPTHWISE + ["--on", "NVIDIA H100 SXM", "--json"])
    assert d["unit"] == "vector" and d["kernels"][0]["unit"] == "vector"
    assert d["compute_ceiling"] == "fp16 vector"
    assert d["flop"] == pytest.approx(1.2344e10, rel=1e-4)
    assert d["time_floor_s"] == pytest.approx(1.2344e10 / 133.8e12, rel=5e-3)   # 92 us
    assert "cuDNN's depthwise kernels" in d["byte_model"]


def test_f7_grouped_not_depthwise_stays_tensor():
    assert ops.conv2d(1, 64, 8, 8, 64, 3, 3, groups=32).unit == "tensor"     # 2 per group


# --- F3: no ridge or compute ceiling without FLOP ------------------------------------------

@pytest.mark.parametrize("argv", [["ai", "embedding", "8", "2048"],
                                  ["ai", "reduction", "1"]])
def test_f3_no_flop_json(capsys, argv):
    d = _json(capsys, argv + ["--on", "NVIDIA H100 SXM", "--json"])
    assert d["flop"] == 0
    assert d["ridge"] is None and d["compute_ceiling"] is None
    assert d["compute_ceiling_precision"] is None and d["roof_side"] is None


# --- F6: errors name the options and the fix -----------------------------------------------

def test_f6_option_names(capsys):
    err = _error(capsys, ["ai", "attention", "--heads", "8", "--kv-heads", "3", "--q-len",
                          "1", "--kv-len", "4", "--head-dim", "64"])
    assert "--kv-heads 3 must divide --heads 8" in err and "1 = MQA, 8 = MHA" in err
    err = _error(capsys, ["ai", "attention", "--heads", "8", "--q-len", "0", "--kv-len", "4",
                          "--head-dim", "64"])
    assert err == "error: --q-len must be a positive whole number; got 0"
    err = _error(capsys, ["ai", "conv2d", "--n", "1", "--c", "3", "--h", "8", "--w", "8",
                          "--k", "4", "--groups", "2"])
    assert "--groups 2 must divide both --c 3 and --k 4" in err
    assert "depthwise: --groups = --c" in err


# --- F2: causal flash FLOP are a lower bound on a tile-skipping kernel ---------------------

def test_f2_causal_wording():
    op = ops.attention(1, 32, 512, 512, 128, causal=True)
    assert op.flop == 4 * 32 * 128 * (512 * 513 // 2)
    assert "a lower bound" in op.byte_model and "diagonal tile" in op.byte_model


# --- F4: integer work on an integer ceiling reads OP/byte, as its ceiling's OP/s ----------

def test_f4_int8_ridge_and_ai_in_op(capsys):
    assert main(["ai", "conv2d", "--n", "8", "--c", "64", "--h", "56", "--w", "56", "--k",
                 "64", "--padding", "1", "--dtype", "int8", "--on", "NVIDIA H100 SXM"]) == 0
    out = capsys.readouterr().out
    assert "int8 tensor 1.98 POP/s" in out
    assert "ridge       591 OP/byte" in out and "AI          569 OP/byte" in out
    assert main(["ai", "matmul", "64", "64", "64", "--on", "NVIDIA H100 SXM"]) == 0
    assert "ridge       295 FLOP/byte" in capsys.readouterr().out
