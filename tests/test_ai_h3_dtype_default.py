"""`rooflab ai OP` without --dtype says which dtype it assumed (task H3).

Seed 000 (§2.2) works its matmul in fp32, "(M×K + K×N + M×N) × 4 字节（FP32）", and its
table (§4.2) gives gemm_1024 as 2.1e9 FLOP, 1.2e7 B, AI 175 and softmax as 5.6e6 FLOP,
1.1e7 B, AI 0.51. `rooflab ai matmul 1024 1024 1024` counts fp16 (2 B per element), half
those bytes and twice the AI: before H3 the output said so nowhere but in the op's name.
Now a default dtype is said once (a `dtype` line; in --json the shape's dtype_source and
dtype_note), and --dtype fp32 reproduces the seed by hand.
"""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main

ML_NOTE = "dtype fp16 (default; --dtype fp32 for 4-byte elements)"
HPC_NOTE = "dtype fp64 (default, HPC's precision; --dtype fp32 for 4-byte elements)"


def _json(capsys, argv):
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _text(capsys, argv):
    assert main(argv) == 0
    return capsys.readouterr().out


# --- the seed's fp32 numbers, by hand ----------------------------------------------------

def test_seed000_fp32_matmul_1024_by_hand(capsys):
    d = _json(capsys, ["ai", "matmul", "1024", "1024", "1024", "--dtype", "fp32"])
    # FLOP 2·1024³ = 2,147,483,648; bytes (1024² + 1024² + 1024²) x 4 B = 12,582,912;
    # AI 2·1024³ / (3·1024²·4) = 1024 / 6 = 170.67
    assert d["flop"] == 2 * 1024**3 == 2_147_483_648
    assert d["bytes"] == 3 * 1024**2 * 4 == 12_582_912
    assert d["ai"] == pytest.approx(1024 / 6)
    # the seed's table row gemm_1024: 2.1e9 FLOP, 1.2e7 B, both cut to two figures
    # (1.258e7 B truncated); its AI 175 is 2.1e9 / 1.2e7 of the cut numbers, unrounded 170.7
    assert f"{d['flop']:.1e}" == "2.1e+09" and 1.2e7 <= d["bytes"] < 1.3e7
    assert d["shape"]["dtype"] == "fp32" and d["shape"]["dtype_source"] == "given"
    assert "dtype_note" not in d["shape"]


def test_default_matmul_says_fp16_and_its_ai_is_twice_the_seeds(capsys):
    out = _text(capsys, ["ai", "matmul", "1024", "1024", "1024"])
    # fp16: 3·1024²·2 B = 6,291,456 B; AI 2·1024³ / 6,291,456 = 1024 / 3 = 341.33
    assert "(6.29146e+06;" in out and "(341.333)" in out
    assert out.splitlines()[1] == "  dtype       fp16 (default; --dtype fp32 for 4-byte elements)"
    d = _json(capsys, ["ai", "matmul", "1024", "1024", "1024"])
    assert d["ai"] == pytest.approx(2 * (1024 / 6))     # twice the seed's fp32 170.67
    assert d["shape"]["dtype_source"] == "default" and d["shape"]["dtype_note"] == ML_NOTE


def test_seed000_fp32_elementwise_by_hand(capsys):
    # §2.2: an elementwise op (ReLU, add) reads each element once and writes it once.
    # y = x + 1 over 1e6 fp32 elements: 1e6 FLOP; bytes 1e6 x (4 + 4) = 8e6; AI 1/8
    d = _json(capsys, ["ai", "elementwise", "1e6", "--dtype", "fp32"])
    assert (d["flop"], d["bytes"], d["ai"]) == (1e6, 8e6, 0.125)
    assert d["bytes_split"] == {"read": 4e6, "write": 4e6}
    # left at the default the same op is fp16, 4e6 B, AI 0.25, and says so
    d = _json(capsys, ["ai", "elementwise", "1e6"])
    assert (d["bytes"], d["ai"]) == (4e6, 0.25) and d["shape"]["dtype_note"] == ML_NOTE


def test_seed000_fp32_softmax_row(capsys):
    # the table's softmax: 5.6e6 FLOP, 1.1e7 B (AI 0.51). 4 FLOP per element and one read
    # plus one write of 4 B: 1.4e6 elements -> 5.6e6 FLOP, 1.4e6 x 8 = 1.12e7 B, AI 0.5
    d = _json(capsys, ["ai", "softmax", "1", "1.4e6", "--dtype", "fp32"])
    assert d["flop"] == pytest.approx(5.6e6) and d["bytes"] == pytest.approx(1.12e7)
    assert d["ai"] == pytest.approx(0.5)


# --- every op with a default dtype says it, once ------------------------------------------

ML_OPS = [
    ["matmul", "64", "64", "64"],
    ["gemm", "64", "64", "64"],
    ["gemv", "64", "64"],
    ["elementwise", "1000"],
    ["reduction", "1000"],
    ["softmax", "8", "64"],
    ["layernorm", "8", "64"],
    ["rmsnorm", "8", "64"],
    ["conv2d", "--n", "1", "--c", "8", "--h", "8", "--w", "8", "--k", "8"],
    ["attention", "--heads", "4", "--q-len", "16", "--kv-len", "64", "--head-dim", "64"],
    ["embedding", "8", "64"],
]
HPC_OPS = [
    ["stencil", "32x32x32", "--points", "7"],
    ["spmv", "1000", "5000"],
    ["dot", "1000"],
    ["axpy", "1000"],
]
CASES = [(argv, ML_NOTE, "fp16") for argv in ML_OPS] + \
        [(argv, HPC_NOTE, "fp64") for argv in HPC_OPS]


@pytest.mark.parametrize("argv,note,dtype", CASES, ids=[c[0][0] for c in CASES])
def test_default_dtype_is_said_once(capsys, argv, note, dtype):
    out = _text(capsys, ["ai", *argv])
    row = "  dtype       " + note.removeprefix("dtype ")
    assert out.splitlines().count(row) == 1 and out.count("(default") == 1
    d = _json(capsys, ["ai", *argv])
    assert d["shape"]["dtype"] == dtype
    assert (d["shape"]["dtype_source"], d["shape"]["dtype_note"]) == ("default", note)
    assert json.dumps(d).count("(default") == 1       # once in the document too


@pytest.mark.parametrize("argv", ML_OPS + HPC_OPS, ids=[a[0] for a in ML_OPS + HPC_OPS])
def test_a_given_dtype_is_not_called_default(capsys, argv):
    out = _text(capsys, ["ai", *argv, "--dtype", "fp32"])
    assert "  dtype " not in out and "(default" not in out
    d = _json(capsys, ["ai", *argv, "--dtype", "fp32"])
    assert d["shape"]["dtype"] == "fp32" and d["shape"]["dtype_source"] == "given"
    # --dtype fp16 given explicitly is not "default" either, though it equals it
    d = _json(capsys, ["ai", *argv, "--dtype", "fp16"])
    assert d["shape"]["dtype_source"] == "given" and "dtype_note" not in d["shape"]


def test_note_stays_once_with_a_roof(capsys):
    # with --on the answer grows notes and a roof section; the dtype is still said once
    out = _text(capsys, ["ai", "gemv", "2048", "2048", "--on", "t4"])
    assert out.count("(default; --dtype fp32") == 1
    # fp16 gemv 2048²: bytes 2·(2048² + 2048) + 2·2048 = 8,396,800 -> "8.4 MB"
    assert "(8.3968e+06;" in out
