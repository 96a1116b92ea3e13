"""The op kind read off a kernel's name when no op is given (seed 000 §6.2: an elementwise
kernel's AI cannot be raised, so it must not be told to tile), and a kernel JSON's
top-level "op" (as a kernel CSV's `op` column).

Hand numbers: seed 000 §4.2's table, elementwise_add 2.1e6 FLOP over 8.4e6 B = AI 0.25 at
120 GFLOP/s (17.5 us); softmax 5.6e6 FLOP over 1.1e7 B = AI 0.509 at 95 GFLOP/s.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rooflab.cli.main import main
from rooflab.errors import ParseError
from rooflab.ingest.kernelfile import load_kernels
from rooflab.model import Ceiling, Kernel, Roof, analyze
from rooflab.model.advice import advise
from rooflab.model.opkind import kernel_kind, kind_from_name

ROOF = Roof("seed 000 GPU", "measured",
            compute=(Ceiling(280e12, precision="fp16", unit="tensor"),),
            memory=(Ceiling(1800e9, level="DRAM"),))
FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "fixtures"


@pytest.mark.parametrize("name, kind", [
    ("elementwise_add", "elementwise"), ("vectorAdd", "add"), ("relu_kernel", "relu"),
    ("softmax", "softmax"), ("cunn_SoftMaxForward", "softmax"), ("layernorm", "layernorm"),
    ("vectorized_layer_norm_kernel", "layernorm"), ("RMSNorm", "rmsnorm"),
    ("gemv", "gemv"), ("gemv2T_kernel_val", "gemv"), ("sgemm", "gemm"),
    ("volta_sgemm_128x64_nn", "gemm"), ("triton_poi_fused_add_mul_0", "elementwise"),
    ("triton_red_fused_sum_0", "reduction"), ("triton_tem_fused_mm_0", "mm"),
    ("Cijk_Ailk_Bljk_HHS_BH_MT128x128x32", "gemm"), ("__amd_rocclr_copyBuffer", "copy"),
    ("flash_fwd_kernel", "attention"), ("implicit_convolve_sgemm", "gemm"),
    # matrix words win over an epilogue's or a prefix's elementwise word
    ("gemm_bias_relu", "gemm"), ("aten::addmm", "addmm"), ("mul_mat_q4_K", "matmul"),
    ("mul_mat_vec_q", "gemv"), ("decode b=1", "decode"),
    # ATen's upsample kernel: a resampling kind (session 30), and its 'bilinear2d' word is
    # no matrix 'linear' (it was pinned to '' for that while upsample had no kind)
    ("upsample_bilinear2d", "upsample"),
])
def test_kind_from_name(name, kind):
    assert kind_from_name(name) == kind


@pytest.mark.parametrize("name", [
    # whole words only: none of these is an elementwise or matrix op by its name
    "sigma_gpp_gpu_34", "sigma_gpp_gpu_34_gpu__red", "ncclKernel_AllReduce_RING_LL_Sum_float",
    "convert_fp16", "gate_up", "x + 1", "bilinear2d", "sadd", "expand", "kernel", "",
])
def test_kind_from_name_does_not_misfire(name):
    assert kind_from_name(name) == ""


def test_real_ncu_kernel_names_get_no_kind():
    # the NERSC GPP recordings' sigma kernels (fp64, AI ~ 1-10) are none of the kinds
    folder = FIXTURES / "ncu" / "nersc-gpp"
    if not folder.is_dir():
        pytest.skip(f"fixtures not present at {folder}")
    kernels = [k for f in sorted(folder.glob("output[0-7].csv")) for k in load_kernels(str(f))]
    assert kernels
    assert {kernel_kind(k) for k in kernels} == {("", False)}


def _advice(k: Kernel):
    (p,) = analyze(ROOF, [k]).points
    return advise(p, ROOF, k)


@pytest.mark.parametrize("name, flop, nbytes, gflops", [
    ("elementwise_add", 2.1e6, 8.4e6, 120), ("softmax", 5.6e6, 1.1e7, 95),
    ("vectorAdd", 2.1e6, 8.4e6, 120), ("relu_kernel", 2.1e6, 8.4e6, 120),
    ("triton_poi_fused_add_mul_0", 2.1e6, 8.4e6, 120)])
def test_streaming_by_name_is_not_told_to_tile(name, flop, nbytes, gflops):
    k = Kernel(name, {"fp16": flop}, {"DRAM": nbytes}, seconds=flop / (gflops * 1e9))
    items = _advice(k)
    assert items, name
    assert not any("tile" in a.action for a in items), [a.action for a in items]
    # fusion stays: bytes / 2 is the lever an elementwise op has
    assert any(a.action.startswith("fuse") for a in items)
    # and every piece says where the kind came from
    assert all(f"op kind '{kind_from_name(name)}' read off the name '{name}'" in a.assumption
               for a in items)


def test_without_a_name_rule_tiling_stays_and_nothing_is_said():
    # a name no rule knows: no word on the kind. At AI 0.25 it streams whatever it is
    # (review 12a #4: "tile 4x" was offered before), so no tiling; at AI 2 (no matrix
    # kind known, over 1 FLOP/B) the old advice, tiling 4x, stays.
    k = Kernel("k17", {"fp16": 2.1e6}, {"DRAM": 8.4e6}, seconds=2.1e6 / 120e9)
    items = _advice(k)
    assert not any("tile" in a.action for a in items)
    assert not any("read off the name" in a.assumption for a in items)
    k2 = Kernel("k17", {"fp16": 16.8e6}, {"DRAM": 8.4e6}, seconds=16.8e6 / 120e9)
    tile = [a for a in _advice(k2) if "tile" in a.action]
    assert tile and tile[0].new_ai == pytest.approx(8.0)   # 2 x 4


def test_gemv_by_name_is_offered_batching_not_tiling():
    # a decode b=1 GEMV: 2 FLOP per 2-byte fp16 weight, AI 1, at 50 % of the slope
    k = Kernel("gemv", {"fp16": 2.2e9}, {"DRAM": 2.2e9}, seconds=2 * 2.2e9 / 1800e9)
    actions = [a.action for a in _advice(k)]
    assert any(a.startswith("batch 8 vectors per matrix read") for a in actions), actions
    assert not any("tile" in a for a in actions), actions


def test_meta_op_beats_the_name():
    # named softmax, told it is a matmul: tiling up to the ridge (AI 155.6), no name note.
    # AI 50.9: the seed's 0.509 would read as a GEMV's AI (under 1 in fp16: M = 1, review
    # 12a #1), which tiling cannot raise.
    k = Kernel("softmax", {"fp16": 5.6e8}, {"DRAM": 1.1e7}, seconds=5.6e8 / 95e9,
               meta={"op": "matmul"})
    items = _advice(k)
    tile = next(a for a in items if "tile" in a.action)
    assert tile.new_ai == pytest.approx(280e12 / 1800e9)
    assert not any("read off the name" in a.assumption for a in items)


def _file(tmp_path, kernel: dict) -> str:
    path = tmp_path / "k.json"
    path.write_text(json.dumps({"kernels": [kernel]}))
    return str(path)


SEED_ADD = {"name": "k1", "flop": {"fp16": 2.1e6}, "bytes": {"DRAM": 8.4e6},
            "seconds": 1.75e-5}


def test_top_level_op_in_kernel_json(tmp_path):
    (k,) = load_kernels(_file(tmp_path, {**SEED_ADD, "op": "elementwise"}))
    assert k.meta == {"op": "elementwise"}
    assert kernel_kind(k) == ("elementwise", False)
    assert not any("tile" in a.action for a in _advice(k))
    # the same op in meta too is fine; another one is refused, naming both
    (k,) = load_kernels(_file(tmp_path, {**SEED_ADD, "op": "add", "meta": {"op": "add"}}))
    assert k.meta["op"] == "add"
    with pytest.raises(ParseError, match="'op' 'add' and meta 'op' 'matmul' differ"):
        load_kernels(_file(tmp_path, {**SEED_ADD, "op": "add", "meta": {"op": "matmul"}}))
    with pytest.raises(ParseError, match="field 'op' must be the op's kind as text"):
        load_kernels(_file(tmp_path, {**SEED_ADD, "op": 3}))


def test_report_reads_top_level_op(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    path = _file(tmp_path, {**SEED_ADD, "op": "elementwise"})
    assert main(["report", path, "--on", "A100", "--json"]) == 0
    (d,) = json.loads(capsys.readouterr().out)["diagnosis"]
    assert d["advice"] and not any("tile" in a["action"] for a in d["advice"])
