"""Review 13v F-I, F-J, F-E, F-K and F-L (CPU): advice for fused-epilogue names, decode-shaped
and weight-quantized GEMMs, MoE experts and tiny CPU eager ops.

Hand numbers:
- F-I: 12a's conv numbers, 3.7e9 FLOP over 1.4e7 B = AI 264 (a conv, not a relu); 12a's fc,
  2.2e11 / 1.3e8 = AI 1692. A matrix word anywhere in the name makes a matrix kind.
- F-J: seed 004 Q6's W4A16 lm_head, 131e6 FLOP over 33.8e6 B = AI 3.876; with 0.5-byte
  weights that is 3.876 x 0.5 / 2 = 0.97 rows (a GEMV: each weight once per request), so no
  tiling (was 19.31x), no fusion (was 1.94x), no int4 (the weights are int4 already).
- F-E: `ai matmul 16 4096 4096` fp16: weights 4096^2 x 2 = 33,554,432 B of 33,816,576 B
  (99.2 %; activations (16 x 4096 x 2) x 2 = 262,144 B), AI 15.9, left of A100's ridge 153.
  Batch 8: the activations grow 8x, the weights do not: 8 x 33,816,576 / (33,554,432 +
  8 x 262,144) = 7.588x per request. int4: 262,144 + 33,554,432 / 4 = 8,650,752 B; untimed
  on A100-80GB (2.039 TB/s, 5 us launches): 16.585 us -> max(4.243 us, 5 us): 3.317x.
- F-K: Mixtral (top-2 of 8), one token: 8 tokens touch 8 (1 - (6/8)^8) = 7.1990 experts,
  3.5995x the 2 read now: 8 / 3.5995 = 2.2225x per request (`whatif --batch 8`: 2.22x).
  DeepSeek-V3 (top-8 of 256): 256 (1 - (248/256)^8) = 57.41 experts, 7.176x the 8: 1.1148x.
  V3's expert_down_proj (m 8, n 7168, k 2048, fp8) reads 8 matrices once each: compulsory
  AI 2 x 8 x 7168 x 2048 / (8 x 2048 + 8 x 7168 x 2048 + 8 x 7168) = 1.9987, not 15.9.
- F-L: 200 calls of an 8 kB `x + b` on an EPYC 9654 (460.8 GB/s, no dispatch floor), 3.9 us
  a call: spreading a call costs a fork/join (THREAD_FORK_S 5 us) > 3.9 us, so no
  "spread over every core" (was 87.07x).
"""

import pytest

from rooflab.hardware.resolve import load_roof
from rooflab.model import Kernel, analyze
from rooflab.model.advice_compute import THREAD_FORK_S
from rooflab.model.advice_memory import weight_share, weight_streaming
from rooflab.model.diagnose import diagnose
from rooflab.model.opkind import is_streaming, kind_from_name
from rooflab.model.sanity import check_ai_high
from rooflab.model.weight_traffic import experts_touched, shape_ai
from rooflab.workloads import ops

BATCH = "batch 8 requests per weight read"
INT4 = "store weights in int4 (dequantize on the fly)"


def _advice(roof, kernel):
    return {a.action: a for a in diagnose(analyze(roof, [kernel]))[0].advice}


# --- F-I: a matrix word anywhere wins over the epilogue ---------------------------------

@pytest.mark.parametrize("name, kind", [
    ("conv2d_relu", "conv"), ("relu_conv2d", "conv"), ("conv2d_bias_relu", "conv"),
    ("depthwise_conv2d_relu6", "conv"), ("dense_relu", "gemm"), ("fc_relu", "gemm"),
    ("fused_nn_dense_add_nn_relu", "gemm"), ("Conv2D_BiasAdd_Relu", "conv"),
    ("tvmgen_default_fused_nn_conv2d_add_nn_relu_kernel", "conv"), ("conv2d", "conv"),
    # unchanged: streaming names stay streaming
    ("elementwise_add", "elementwise"), ("vectorAdd", "add"), ("relu_kernel", "relu"),
])
def test_epilogue_names_keep_their_matrix_kind(name, kind):
    assert kind_from_name(name) == kind


def test_fused_conv_and_dense_raise_no_ai_high_and_keep_their_advice():
    a100 = load_roof("A100")
    conv = Kernel("conv2d_relu", {"fp16": 3.7e9}, {"DRAM": 1.4e7}, seconds=40e-6)
    res = analyze(a100, [conv])
    assert res.points[0].ai == pytest.approx(264.3, abs=0.1)
    assert check_ai_high(conv, res.points) is None           # was "abnormally high for a relu"
    fc = Kernel("dense_relu", {"fp16": 2.2e11}, {"DRAM": 1.3e8}, seconds=1e-3)
    got = _advice(a100, fc)
    assert not any(a.startswith("recount") for a in got), got   # was the only advice, 1.00x


def test_name_kind_is_cached():
    kind_from_name.cache_clear()
    is_streaming.cache_clear()
    for _ in range(3):
        kind_from_name("fused_nn_conv2d_add_nn_relu")
        is_streaming("relu")
    assert kind_from_name.cache_info().hits == 2
    assert is_streaming.cache_info().hits == 2


# --- F-J: a W4A16 decode GEMM is a GEMV ---------------------------------------------------

def test_w4a16_lm_head_gets_batching_not_tiling_fusion_or_int4():
    k = Kernel("lm_head gemm w4a16", {"fp16": 131e6}, {"DRAM": 33.8e6}, seconds=150e-6)
    got = _advice(load_roof("T4"), k)
    assert not any(a.startswith("tile") for a in got), got          # was 19.31x
    assert "fuse with the neighbouring pass" not in got              # was 1.94x
    assert INT4 not in got                                           # int4 already
    assert got[BATCH].speedup > 1.01
    assert "4-bit weights" in got[BATCH].assumption
    # the same AI with fp16 weights is 3.88 rows' worth: a GEMM that tiling can help
    assert weight_streaming(Kernel("gemm", {"fp16": 131e6}, {"DRAM": 33.8e6}), "gemm",
                            131e6 / 33.8e6, "fp16") == ""
    # meta weight_dtype says it too
    km = Kernel("gemm", {"fp16": 131e6}, {"DRAM": 33.8e6}, meta={"weight_dtype": "int4"})
    assert weight_share(km, "gemm", 131e6 / 33.8e6, "fp16")[0] == 1.0


# --- F-E: no cliff at 8 rows ---------------------------------------------------------------

def test_decode_gemm_at_16_rows_gets_batching_and_int4():
    k = ops.matmul(16, 4096, 4096).kernel()
    assert k.bytes["DRAM"] == 33_816_576
    share, _ = weight_share(k, "matmul", 15.9, "fp16")
    assert share == pytest.approx(33_554_432 / 33_816_576)           # 99.2 %
    why = weight_streaming(k, "matmul", 15.9, "fp16")
    assert "16 rows on its narrow side" in why and "99.2 %" in why    # was '' (cut at 8)
    got = _advice(load_roof("a100-80gb"), k)
    assert got[BATCH].speedup == pytest.approx(8 * 33_816_576 / (33_554_432 + 8 * 262_144))
    assert got[BATCH].speedup == pytest.approx(7.588, abs=0.001)
    assert got[INT4].speedup == pytest.approx((33_816_576 / 2.039e12) / 5e-6)   # 3.317x
    assert not any(a.startswith("tile") for a in got)                # compulsory already


def test_counted_gemm_far_below_its_shape_ai_keeps_tiling_and_no_batching():
    # m 64 at AI 8 (counted bytes 8x the weights): reuse misses, tiling is the lever
    shape = {"m": 64, "n": 4096, "k": 4096}
    k = Kernel("fc", {"fp16": 2.0 * 64 * 4096 * 4096}, {"DRAM": 2.0 * 64 * 4096 * 4096 / 8},
               seconds=1e-3, provenance={"bytes": "counted"},
               meta={"op": "matmul", "shape": shape})
    assert weight_share(k, "matmul", 8.0, "fp16")[0] == pytest.approx(0.125)
    assert weight_streaming(k, "matmul", 8.0, "fp16") == ""
    got = _advice(load_roof("T4"), k)
    assert any(a.startswith("tile") for a in got) and BATCH not in got


# --- F-K: MoE experts are priced by the experts a batch touches ----------------------------

def _expert(m, n, k, experts, top_k, dtype="fp16"):
    size = {"fp16": 2, "fp8": 1}[dtype]
    weights = float(top_k * n * k * size)
    return Kernel("expert_down_proj", {dtype: 2.0 * m * n * k}, {"DRAM": weights},
                  provenance={"flop": "derived", "bytes": "derived"},
                  meta={"op": "linear", "bytes_split": {"weights": weights},
                        "shape": {"m": m, "n": n, "k": k, "experts": experts,
                                  "top_k": top_k, "dtype": dtype}})


def test_mixtral_expert_batching_is_priced_by_experts_touched():
    k = _expert(2, 4096, 14336, 8, 2)
    assert experts_touched(k, 8) == pytest.approx(8 * (1 - 0.75 ** 8))   # 7.199
    got = _advice(load_roof("H100"), k)
    assert got[BATCH].speedup == pytest.approx(8 / (8 * (1 - 0.75 ** 8) / 2))   # was 8.00x
    assert got[BATCH].speedup == pytest.approx(2.2225, abs=1e-4)
    assert "8 tokens touch 7.2 of 8 experts" in got[BATCH].detail


def test_deepseek_v3_expert_batching_and_shape():
    k = _expert(8, 7168, 2048, 256, 8, "fp8")
    touched = 256 * (1 - (248 / 256) ** 8)                           # 57.41
    got = _advice(load_roof("H200"), k)
    assert got[BATCH].speedup == pytest.approx(8 / (touched / 8))    # 1.1148x, was 8.00x
    # 8 rows over 8 different experts: each expert's weights once, not "8 rows"
    assert shape_ai(k, "fp8") == pytest.approx(
        2 * 8 * 7168 * 2048 / (8 * 2048 + 8 * 7168 * 2048 + 8 * 7168))   # 1.9987, was 15.9
    why = weight_streaming(k, "linear", 2.0, "fp8")
    assert "rows on its narrow side" not in why


# --- F-L: no "spread over every core" for an op below a thread's fork/join ---------------

def test_tiny_cpu_eager_op_gets_no_parallelism_advice():
    epyc = load_roof("EPYC 9654")
    assert epyc.overhead_s is None and THREAD_FORK_S == 5e-6
    k = Kernel("aten::add", {"fp32": 200 * 2048.0}, {"DRAM": 200 * 16_512.0},
               seconds=200 * 3.9e-6, calls=200)
    d = diagnose(analyze(epyc, [k]))[0]
    assert d.point.bound == "latency"
    assert not any(a.action.startswith("spread") for a in d.advice)   # was 87.07x
    # a call of 100 us with the same 36 ns of work: spreading can save most of it, but
    # not below one fork/join per call: 100 us / 5 us = 20x, not 100 / 0.045
    slow = Kernel("aten::add", {"fp32": 200 * 2048.0}, {"DRAM": 200 * 16_512.0},
                  seconds=200 * 100e-6, calls=200)
    spread = next(a for a in diagnose(analyze(epyc, [slow]))[0].advice
                  if a.action.startswith("spread"))
    assert spread.speedup == pytest.approx(100e-6 / 5e-6)


def test_linear_whose_bytes_are_mostly_not_weights_gets_no_batching():
    # a linear kind whose split says 25 % weights (8,388,608 of 33,554,432 B): batching
    # cannot share the other 75 % (old: "batch 8 ... 8.00x", all bytes taken for weights)
    k = Kernel("q_proj", {"fp16": 16_777_216.0}, {"DRAM": 33_554_432.0}, seconds=200e-6,
               meta={"op": "linear", "bytes_split": {"weights": 8_388_608.0,
                                                     "activations": 25_165_824.0}})
    assert weight_share(k, "linear", 0.5, "fp16") == (0.25, "meta bytes_split")
    got = _advice(load_roof("T4"), k)
    assert BATCH not in got and INT4 not in got
    # the same kernel at 95 % weights keeps it, priced with the 5 % growing 8x:
    # 8 / (0.95 + 0.05 x 8) = 5.93x per request at the same efficiency
    k95 = Kernel("q_proj", {"fp16": 16_777_216.0}, {"DRAM": 33_554_432.0}, seconds=200e-6,
                 meta={"op": "linear", "bytes_split": {"weights": 0.95 * 33_554_432,
                                                       "activations": 0.05 * 33_554_432}})
    got95 = _advice(load_roof("T4"), k95)
    e = (33_554_432 / 320e9) / (200e-6 - 5e-6)
    new = 5e-6 + 33_554_432 * (0.95 + 0.05 * 8) / 320e9 / e
    assert got95[BATCH].speedup == pytest.approx(8 * 200e-6 / new)
