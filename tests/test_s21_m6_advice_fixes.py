"""Review s21 x2 F1-F5 and F7: the advice fixes of r3, reread.

F1: a what-if that changes nothing predicts the measured time (retime adds back the launch
share efficiency_of took out, not calls x 5 us), and report and whatif agree. F2: only
KNOWN non-matrix kinds lose tensor-core advice. F3: the tensor check compares a precision
with its own vector rate. F4: whatif's "measured below calls x the launch floor" only for
times below it. F5: no launch floor for a GPU-side time in the chart cap or the hover. F7:
an above-roof kernel's advice says what its pricing does, without a jump at the tolerance.
Catalog: A100 80GB SXM (DRAM 2.039 TB/s, fp32 vector 19.5, fp16 vector 78, fp64 vector
9.7, fp64 tensor 19.5 TFLOP/s), H100 SXM (DRAM 3.35 TB/s); 5 us a launch.
"""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main
from rooflab.hardware.catalog import lookup_roof
from rooflab.model.advice_kind import known_non_matrix
from rooflab.model.analysis import analyze
from rooflab.model.kernel import Kernel
from rooflab.report.chart_parts import launch_cap
from rooflab.report.html_hover import floor_words

A100, H100 = "A100 80GB SXM", "H100 SXM"
A100_BW, H100_BW, FP32, FP16_VEC, LAUNCH = 2.039e12, 3.35e12, 19.5e12, 78e12, 5e-6
TENSOR_CHECK = "check that it runs on tensor cores (sm__inst_executed_pipe_tensor)"
GEMV = {"name": "gemv_decode", "flop": {"fp16": 33554432.0}, "bytes": {"DRAM": 33570816.0},
        "seconds": 1.25e-05, "meta": {"op": "gemv", "shape": {"m": 4096, "n": 4096}}}
ADD100 = {"name": "add100", "flop": {"fp32": 3.06e8}, "bytes": {"DRAM": 3.672e9},
          "seconds": 0.002, "calls": 100, "meta": {"op": "elementwise"}}


def _write(tmp_path, kernels: list[dict]) -> str:
    f = tmp_path / "k.json"
    f.write_text(json.dumps({"schema_version": 1, "kernels": kernels}))
    return str(f)


def _json(capsys, args: list[str]) -> dict:
    assert main([*args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _advice(capsys, path: str, roof: str) -> dict:
    d = _json(capsys, ["report", path, "--on", roof, "--top", "0"])
    return {k["kernel"]: {a["action"]: a for a in k["advice"]} for k in d["diagnosis"]}


def _moves(capsys, path: str, roof: str, *change: str) -> dict:
    d = _json(capsys, ["whatif", path, "--on", roof, *change])
    return {r["kernel"]: r for r in d["moves"]}


# --- F1 -------------------------------------------------------------------------------

@pytest.mark.parametrize("kernel, roof, bw", [(GEMV, H100, H100_BW), (ADD100, A100, A100_BW)])
def test_identity_whatif_keeps_the_measured_time(capsys, tmp_path, kernel, roof, bw):
    path = _write(tmp_path, [kernel])
    row = _moves(capsys, path, roof, "--bytes-scale", "1")[kernel["name"]]
    # was 12.5 -> 15 us (0.83x) and 2 -> 2.3 ms (0.87x): the full calls x 5 us added back
    assert row["after_s"] == pytest.approx(kernel["seconds"], rel=1e-9)
    assert row["speedup"] == pytest.approx(1.0, rel=1e-9)
    # halving the bytes: the launch share the time holds (time - floor, under calls x
    # 5 us) stays, the work floor halves at ratio 1. gemv: floor 33.57 MB / 3.35 TB/s =
    # 10.02 us, share 2.48 us, 2.48 + 5.01 = 7.49 us (1.67x; was 1.25x); add100: floor
    # 1.801 ms, share 0.199 ms (of 0.5 ms), 0.199 + 0.900 = 1.100 ms (1.82x; was 1.43x)
    floor = kernel["bytes"]["DRAM"] / bw
    half = _moves(capsys, path, roof, "--bytes-scale", "0.5")[kernel["name"]]
    assert half["after_s"] == pytest.approx(kernel["seconds"] - floor / 2, rel=1e-3)


def test_report_and_whatif_agree_on_halving_the_bytes(capsys, tmp_path):
    path = _write(tmp_path, [ADD100])
    lever = _advice(capsys, path, A100)["add100"]["use fp16 instead of fp32"]
    row = _moves(capsys, path, A100, "--bytes-scale", "0.5")["add100"]
    assert lever["speedup"] == pytest.approx(row["speedup"], rel=1e-6)
    assert row["speedup"] == pytest.approx(0.002 / (0.002 - 3.672e9 / A100_BW / 2), rel=1e-3)


def test_gemv_fp8_whatif_matches_the_report(capsys, tmp_path):
    path = _write(tmp_path, [GEMV])
    row = _moves(capsys, path, H100, "--precision", "fp8")["gemv_decode"]
    lever = _advice(capsys, path, H100)["gemv_decode"]
    fp8 = next(a for k, a in lever.items() if k.startswith("use fp8 instead of fp16"))
    # 12.5 / (12.5 - 10.02 / 2) = 1.67x both (whatif said 1.25x)
    assert row["speedup"] == pytest.approx(12.5e-6 / (12.5e-6 - 33570816 / H100_BW / 2),
                                           rel=1e-3)
    assert fp8["speedup"] == pytest.approx(row["speedup"], rel=1e-3)


# --- F2 -------------------------------------------------------------------------------

NAMES = ("fc1", "qkv_proj", "mlp", "ffn", "dense", "sdpa", "flash_attn_fwd",
         "aten::_scaled_mm", "aten::_int_mm", "tensordot", "custom_kernel")


def test_unknown_op_names_keep_the_tensor_core_levers(capsys, tmp_path):
    kernels = [{"name": f"k_{op}", "flop": {"fp32": 4e10}, "bytes": {"DRAM": 2e8},
                "seconds": 0.0025, "meta": {"op": op}} for op in NAMES]
    got = _advice(capsys, _write(tmp_path, kernels), A100)
    for op in NAMES:
        # was: every one lost both, its best lever "use fp16 instead of fp32: 3.98x"
        assert "use tensor cores / matrix units (tf32 tensor)" in got[f"k_{op}"], op
        assert "use bf16 instead of fp32 on tensor cores" in got[f"k_{op}"], op
        assert not known_non_matrix(op), op


def test_known_non_matrix_kinds_still_lose_them():
    for kind in ("stencil", "nbody", "jacobi7", "7pt", "spmv", "fft_r2c", "radix_sort",
                 "elementwise", "aten::add", "softmax", "triton_poi_fused_add"):
        assert known_non_matrix(kind), kind
    for kind in ("", "gemv", "conv2d", "cudnn_convolution", "einsum", "sparse_attention",
                 "aten::_scaled_dot_product_flash_attention"):
        assert not known_non_matrix(kind), kind


# --- F3 -------------------------------------------------------------------------------

def test_fp64_gemm_on_dmma_is_not_sent_to_check_the_tensor_pipe(capsys, tmp_path):
    # 2 x 4096^3 = 137.4 GFLOP in 9.16 ms = 15 TFLOP/s: above the fp64 vector 9.7, so it
    # runs on DMMA; under fp32 vector 19.5, which the check compared with
    dgemm = {"name": "dgemm_tc", "flop": {"fp64": 1.37438953472e11},
             "bytes": {"DRAM": 4.02653184e8}, "seconds": 0.0091626,
             "meta": {"op": "matmul", "shape": {"m": 4096, "n": 4096, "k": 4096}}}
    # seed 000's gemm_1024 in fp16 at 4.2 TFLOP/s: under fp16 vector 78, still checked
    gemm = {"name": "gemm_1024", "flop": {"fp16": 2.147483648e9},
            "bytes": {"DRAM": 6.291456e6}, "seconds": 0.000511, "meta": {"op": "matmul"}}
    got = _advice(capsys, _write(tmp_path, [dgemm, gemm]), A100)
    assert TENSOR_CHECK not in got["dgemm_tc"]
    assert "fp16 vector rate 78 TFLOP/s" in got["gemm_1024"][TENSOR_CHECK]["detail"]


# --- F4 -------------------------------------------------------------------------------

def test_gpu_side_time_above_the_floor_is_not_called_below_it(capsys, tmp_path):
    # 25.6 ms over 10 ncu launches is far above 10 x 5 us; 1 ms over 1000 is below 5 ms
    path = _write(tmp_path, [
        {"name": "mm", "flop": {"fp32": 4e11}, "bytes": {"DRAM": 2e8}, "seconds": 0.0256,
         "calls": 10, "meta": {"source": "ncu"}},
        {"name": "tiny", "flop": {"fp32": 1e6}, "bytes": {"DRAM": 1e6}, "seconds": 0.001,
         "calls": 1000, "meta": {"source": "ncu"}}])
    d = _json(capsys, ["whatif", path, "--on", A100, "--bytes-scale", "1"])
    said = [n for n in d["warnings"] if "measured at or below half of calls x" in n]
    assert len(said) == 1 and "tiny (1 ms over 1000 calls)" in said[0]
    assert "mm (" not in said[0]


# --- F5 -------------------------------------------------------------------------------

def test_gpu_side_point_has_no_launch_floor_in_hover_or_cap():
    roof = lookup_roof(A100)
    k = Kernel(name="small_kernel", flop={"fp32": 2e8}, bytes={"DRAM": 8e8},
               seconds=1.02e-3, calls=200, meta={"source": "ncu"})
    (p,) = analyze(roof, [k]).primary()
    assert p.gpu_side
    # was "time floor 1 ms (launch); work floor 392 us"
    words = floor_words(p)
    assert "(launch)" not in words and "floor 392 us" in words
    # was drawn: "launch cap 200 GFLOP/s" just above the 196 GFLOP/s point
    assert launch_cap(k.name, p.level, p.ai, p.flop, p.calls, roof.overhead_s,
                      p.achieved_flop_per_s, "", p.seconds, gpu_side=True) is None
    user = k.with_(meta={})
    (q,) = analyze(roof, [user]).primary()
    assert "time floor 1 ms (launch)" in floor_words(q)
    assert launch_cap(k.name, q.level, q.ai, q.flop, q.calls, roof.overhead_s,
                      q.achieved_flop_per_s, "", q.seconds) is not None


# --- F7 -------------------------------------------------------------------------------

def _fp16_speedup(flop: float, seconds: float, eff: float) -> float:
    """fp32 -> fp16 vector for a compute-bound stencil timed under its floor: the 5 us
    launch stays, the work is priced at `eff` of the fp16 vector roof."""
    return seconds / (LAUNCH + flop / FP16_VEC / eff)


def test_above_roof_pricing_slides_and_says_so(capsys, tmp_path):
    kernels = [{"name": f"st_{pct}", "flop": {"fp32": flop}, "bytes": {"DRAM": 1e8},
                "seconds": 0.01, "meta": {"op": "stencil"}}
               for pct, flop in ((104, 2.028e11), (106, 2.067e11))]
    got = _advice(capsys, _write(tmp_path, kernels), A100)
    # st_104: work floor 2.028e11 / 19.5e12 = 10.4 ms over 9.995 ms of work = 104.05 %:
    # 0.81 of the 5 % tolerance, priced at 1 - 0.2 x 0.81 = 83.8 % (was 100 %: 3.84x)
    r = 2.028e11 / FP32 / (0.01 - LAUNCH)
    eff = 1 - 0.2 * (r - 1) / 0.05
    a104 = got["st_104"]["use fp16 instead of fp32"]
    assert a104["speedup"] == pytest.approx(_fp16_speedup(2.028e11, 0.01, eff), rel=1e-6)
    assert a104["speedup"] == pytest.approx(3.22, abs=0.005)
    a106 = got["st_106"]["use fp16 instead of fp32"]
    assert a106["speedup"] == pytest.approx(_fp16_speedup(2.067e11, 0.01, 0.8), rel=1e-6)
    for a in (a104, a106):
        # was "the kernel keeps its current efficiency (80% (priced so: ...) of roof)"
        assert "keeps its current efficiency" not in a["assumption"]
        assert "it runs above its roof now" in a["assumption"]
    assert "priced at 84 % of the new roof" in a104["assumption"]
    assert "(106 % of it" in a106["assumption"] and "priced at 80 %" in a106["assumption"]


def test_above_roof_tensor_line_does_not_say_efficiency_unchanged(capsys, tmp_path):
    # r3's conv.json: fp32 conv at 40 TFLOP/s, 205 % of the fp32 vector roof
    got = _advice(capsys, _write(tmp_path, [
        {"name": "conv2d_fp32", "flop": {"fp32": 4e11}, "bytes": {"DRAM": 4e8},
         "seconds": 0.01, "meta": {"op": "conv2d"}}]), A100)["conv2d_fp32"]
    tc = got["use tensor cores / matrix units (tf32 tensor)"]
    assert "efficiency unchanged" not in tc["assumption"]
    assert "priced at 80 % of the new roof" in tc["assumption"]
    # 4e11 / 156e12 / 0.8 + 5 us = 3.21 ms: 3.12x
    assert tc["speedup"] == pytest.approx(0.01 / (LAUNCH + 4e11 / 156e12 / 0.8), rel=1e-6)


# --- F9 (the model's half: the reader that sets meta sms is the lead's edit) ----------

def test_sm_count_would_tighten_gemm_1024_tile_bound():
    from rooflab.model.advice_tensor_check import sms_would_bound, tile_fraction

    g = Kernel(name="gemm_1024", flop={"fp16": 2.147483648e9}, bytes={"DRAM": 6.291456e6},
               seconds=0.000511, meta={"op": "matmul", "shape": {"m": 1024, "n": 1024}})
    # 64 tiles of 128 x 128 fill every tile: no bound without an SM count
    assert tile_fraction(g) is None
    assert sms_would_bound(g, 108)
    assert not sms_would_bound(g, 64)       # one full wave on 64 SMs
    with_sms = g.with_(meta={**g.meta, "sms": 108, "sms_source": "catalog: --on A100"})
    frac, words = tile_fraction(with_sms)
    assert frac == pytest.approx(64 / 108)
    assert "on 108 SMs (catalog: --on A100)" in words
    assert not sms_would_bound(with_sms, 108)   # it has one already
