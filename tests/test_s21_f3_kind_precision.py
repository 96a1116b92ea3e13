"""Review s21 r3 F2 and F3: tensor-core advice only for matrix-shaped work (a stencil or
an n-body loop lowers its precision on the vector units), and no lower precision the roof
lacks (an A100 has no fp8: bf16 -> fp16 where fp16 is faster there). Catalog A100 80GB
SXM: fp32 vector 19.5, fp16 vector 78, bf16 vector 39, tf32/bf16/fp16 tensor 156/312/312
TFLOP/s, DRAM 2.039 TB/s, 5 us a launch.
"""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main
from rooflab.model.advice_kind import known_non_matrix

A100_BW, FP32, FP16_VEC, BF16_VEC, LAUNCH = 2.039e12, 19.5e12, 78e12, 39e12, 5e-6


def _advice(capsys, tmp_path, kernels: list[dict], roof: str = "A100 80GB SXM") -> dict:
    f = tmp_path / "k.json"
    f.write_text(json.dumps({"schema_version": 1, "kernels": kernels}))
    assert main(["report", str(f), "--on", roof, "--top", "0", "--json"]) == 0
    return {d["kernel"]: {a["action"]: a for a in d["advice"]}
            for d in json.loads(capsys.readouterr().out)["diagnosis"]}


def _compute_bound_lower(flop: float, nbytes: float, seconds: float) -> float:
    """Speed-up of fp32 -> fp16 on the vector units at the same efficiency: the 5 us launch
    stays (the time above the floor holds it), the work runs at floor / (time - 5 us)."""
    floor = max(flop / FP32, nbytes / A100_BW)
    eff = floor / (seconds - LAUNCH)
    new = max(flop / FP16_VEC, nbytes / 2 / A100_BW) / eff
    return seconds / (LAUNCH + new)


def test_stencil_and_nbody_get_no_tensor_cores(capsys, tmp_path):
    got = _advice(capsys, tmp_path, [
        {"name": "stencil_25pt_hi_order", "flop": {"fp32": 4e10}, "bytes": {"DRAM": 2e9},
         "seconds": 0.0025, "meta": {"op": "stencil"}},
        {"name": "nbody_forces", "flop": {"fp32": 4e10}, "bytes": {"DRAM": 1e8},
         "seconds": 0.0025, "meta": {"op": "nbody"}}])
    for name, nbytes in (("stencil_25pt_hi_order", 2e9), ("nbody_forces", 1e8)):
        actions = got[name]
        # was: "use bf16 instead of fp32 on tensor cores: 4.16x" (15.53x for nbody) and
        # "use tensor cores / matrix units (tf32 tensor)"
        assert not any("tensor" in a for a in actions), (name, list(actions))
        low = actions["use fp16 instead of fp32"]
        # 4e10 / 19.5e12 = 2.051 ms floor, eff 2.051 / 2.495 = 0.822; fp16 vector:
        # 4e10 / 78e12 = 0.513 ms / 0.822 + 5 us = 0.629 ms: 3.98x
        assert low["speedup"] == pytest.approx(_compute_bound_lower(4e10, nbytes, 0.0025))
        assert low["speedup"] == pytest.approx(3.98, abs=0.005)
        assert "fp16 vector 78 TFLOP/s" in low["detail"]


def test_memory_bound_stencil_halves_its_bytes_off_the_tensor_unit(capsys, tmp_path):
    got = _advice(capsys, tmp_path, [
        {"name": "jacobi7", "flop": {"fp32": 8e9}, "bytes": {"DRAM": 8e9}, "seconds": 0.006,
         "meta": {"op": "stencil"}}])["jacobi7"]
    # was "use bf16 instead of fp32 on tensor cores": the number (bytes halve) was right
    assert "use bf16 instead of fp32 on tensor cores" not in got
    low = got["use fp16 instead of fp32"]
    floor = 8e9 / A100_BW
    eff = floor / (0.006 - LAUNCH)
    assert low["speedup"] == pytest.approx(0.006 / (LAUNCH + floor / 2 / eff))


def test_unknown_and_matrix_kinds_keep_tensor_cores(capsys, tmp_path):
    got = _advice(capsys, tmp_path, [
        {"name": "mystery", "flop": {"fp32": 4e10}, "bytes": {"DRAM": 1e8}, "seconds": 0.0025},
        {"name": "conv", "flop": {"fp32": 4e10}, "bytes": {"DRAM": 1e8}, "seconds": 0.0025,
         "meta": {"op": "conv2d"}}])
    for name in ("mystery", "conv"):
        assert "use tensor cores / matrix units (tf32 tensor)" in got[name]
        assert "use bf16 instead of fp32 on tensor cores" in got[name]
    assert known_non_matrix("stencil") and known_non_matrix("nbody")
    assert not known_non_matrix("") and not known_non_matrix("conv2d")
    assert not known_non_matrix("aten::_scaled_dot_product_flash_attention")
    assert not known_non_matrix("gemv")


def test_no_fp8_on_an_a100(capsys, tmp_path):
    got = _advice(capsys, tmp_path, [
        {"name": "bf16_gemm_vector", "flop": {"bf16": 1.1e12}, "bytes": {"DRAM": 4.03e8},
         "seconds": 0.03667, "unit": "vector", "meta": {"op": "matmul"}},
        {"name": "bf16_eltwise", "flop": {"bf16": 1e9}, "bytes": {"DRAM": 6e9},
         "seconds": 0.004, "meta": {"op": "elementwise"}},
        {"name": "fp8gemm", "flop": {"fp8": 1.1e12}, "bytes": {"DRAM": 2.0e8},
         "seconds": 0.00733, "unit": "tensor", "meta": {"op": "matmul"}}])
    every = [a for k in got.values() for a in k]
    assert not any("fp8 instead" in a for a in every), every       # was 2.00x twice
    assert not any("int4 instead of fp8" in a for a in every), every   # was 3.99x
    # bf16 vector 39 -> fp16 vector 78 TFLOP/s, same bytes: 1.1e12 / 39e12 = 28.2 ms floor,
    # eff 28.205 / (36.67 - 0.005); fp16: 1.1e12 / 78e12 = 14.1 ms / eff + 5 us: 2.00x
    low = got["bf16_gemm_vector"]["use fp16 instead of bf16"]
    eff = (1.1e12 / BF16_VEC) / (0.03667 - LAUNCH)
    assert low["speedup"] == pytest.approx(0.03667 / (LAUNCH + 1.1e12 / FP16_VEC / eff))
    assert "fp16 vector 78 TFLOP/s" in low["detail"]
    # bf16 -> fp16 moves no bytes: a memory-bound elementwise pass gains nothing (dropped)
    assert "use fp16 instead of bf16" not in got["bf16_eltwise"]


def test_h100_keeps_fp8(capsys, tmp_path):
    got = _advice(capsys, tmp_path, [
        {"name": "hgemm", "flop": {"bf16": 1.099511627776e12}, "bytes": {"DRAM": 4.02653184e8},
         "seconds": 0.0018325, "unit": "tensor", "meta": {"op": "matmul"}}], "H100 SXM")
    assert "use fp8 instead of bf16 on tensor cores" in got["hgemm"]
