"""Review s33 F1: `rooflab ai matmul 64 64 64 --dtype uint8` was counted with no tensor unit
and C written as uint8. A uint8 GEMM is int8 math (units.flop_precision) on the tensor unit
(the IMMA takes u8 operands, mma.sync ...s32.u8.u8.s32) and accumulates in int32, as int8.

Hand count, 64 x 64 x 64: 2 x 64^3 = 524,288 OP; A 64 x 64 x 1 B = 4,096 B, B 4,096 B,
C 64 x 64 x 4 B (int32) = 16,384 B: 24,576 B, AI 524,288 / 24,576 = 21.33 OP/byte
(the old count, C at 1 B: 12,288 B, AI 42.67).
"""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main


def _ai(capsys, *args) -> dict:
    assert main(["ai", "matmul", "64", "64", "64", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_uint8_matmul_is_int8_tensor_math_with_an_int32_c(capsys):
    d = _ai(capsys, "--dtype", "uint8")
    assert (d["precision"], d["unit"]) == ("int8", "tensor")
    assert d["flop"] == 2 * 64**3 == 524_288
    assert d["bytes_split"] == {"a": 4096.0, "b": 4096.0, "c": 16384.0}
    assert d["ai"] == pytest.approx(524_288 / 24_576)           # 21.33
    assert d["shape"]["out_dtype"] == "int32"
    assert "uint8 GEMMs return int32" in d["byte_model"]
    assert d["name"] == "matmul_64x64x64_uint8_outint32"


def test_uint8_matches_int8_on_a_roof(capsys):
    u8 = _ai(capsys, "--dtype", "uint8", "--on", "NVIDIA H100 SXM")
    i8 = _ai(capsys, "--dtype", "int8", "--on", "NVIDIA H100 SXM")
    assert u8["compute_ceiling"] == i8["compute_ceiling"] == "int8 tensor"
    assert u8["kernels"][0]["unit"] == "tensor"
    # AI 21.33 x 3.35 TB/s = 71.5 TOP/s, memory-bound below the 591 ridge, as int8's
    assert u8["attainable_flop_per_s"] == pytest.approx(i8["attainable_flop_per_s"])
    assert u8["attainable_flop_per_s"] == pytest.approx(524_288 / 24_576 * 3.35e12)


def test_out_dtype_uint8_keeps_a_requantizing_c(capsys):
    d = _ai(capsys, "--dtype", "uint8", "--out-dtype", "uint8")
    assert d["bytes_split"]["c"] == 4096.0 and d["unit"] == "tensor"
