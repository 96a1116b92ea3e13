"""Review s21 r3 F8(a): an fp32 conv/mm whose linked GPU kernel's name says TF32 tensor
cores (cuDNN's sm80_xmma_fprop_implicit_gemm_tf32f32_..., CUTLASS tensorop s1688/s16816) is
held to the tf32 tensor ceiling, not fp32 CUDA cores. Hand numbers: a 3x3 conv, N 64, C = K
256, 56x56, stride and padding 1: 2 x 64 x 256 x 256 x 9 x 56 x 56 = 2.3676e11 FLOP a call,
5 calls of 3 ms = 78.92 TFLOP/s; A100 80GB SXM tf32 tensor 156 TFLOP/s -> 50.6 % of roof
(on fp32 vector 19.5 TFLOP/s it read 405 %).
"""

from __future__ import annotations

import pytest

from rooflab.ingest.torch_trace_groups import _Group, _kernel
from rooflab.model import analyze
from rooflab.probe.gpu.catalog_match import catalog_roof

XMMA = "sm80_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nhwc"
CALL_FLOP = 2 * 64 * 256 * 256 * 9 * 56 * 56
SHAPES = ((64, 256, 56, 56), (256, 256, 3, 3), (256,))


def _conv(names: set[str], types=("float", "float", "float"), op: str = "conv2d") -> _Group:
    g = _Group("aten::convolution [64x256x56x56, 256x256x3x3, 256]", op, SHAPES, types,
               flop=5 * CALL_FLOP, bytes=5 * 4 * (2 * 64 * 256 * 56 * 56 + 256 * 256 * 9),
               precision="fp32", samples=[3e-3] * 5)
    g.gpu_kernels = set(names)
    return g


def test_an_xmma_tf32_conv_is_held_to_the_tf32_tensor_ceiling():
    k = _kernel(_conv({XMMA}), "t.json", on_gpu=True)
    assert k.flop == {"tf32": pytest.approx(1.1838003609600e12)}
    assert k.unit == "tensor"
    assert k.meta["gpu_kernel"] == XMMA
    assert "TF32 tensor cores" in k.meta["note"] and XMMA in k.meta["note"]
    roof, _ = catalog_roof("A100 80GB SXM")
    (p,) = analyze(roof, [k]).points
    assert p.peak_flop_per_s == pytest.approx(156e12)
    assert p.achieved_flop_per_s == pytest.approx(78.92e12, rel=1e-4)
    assert p.percent_of_roof == pytest.approx(50.59, abs=0.01)


@pytest.mark.parametrize("name", ["cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4",
                                  "ampere_s16816gemm_fp32_128x64_ldg8_stages_64x4_tn"])
def test_tensorop_gemm_names_of_an_fp32_mm_read_tf32(name):
    g = _conv({name}, op="mm")
    assert _kernel(g, "t.json", on_gpu=True).flop.keys() == {"tf32"}


def test_other_kernels_keep_fp32_and_no_note():
    # an implicit-GEMM fp32 kernel with no tensor-core word, an fp16 conv (already tensor
    # dtype: its precision is not fp32), an elementwise op and a CPU trace stay as read
    plain = _kernel(_conv({"implicit_convolve_sgemm"}), "t.json", on_gpu=True)
    assert plain.flop.keys() == {"fp32"} and "note" not in plain.meta
    half = _Group("c", "conv2d", SHAPES, ("c10::Half",) * 3, flop=1.0, precision="fp16",
                  samples=[1e-3])
    half.gpu_kernels = {XMMA}
    assert _kernel(half, "t.json", on_gpu=True).flop.keys() == {"fp16"}
    add = _conv({XMMA}, op="add")
    assert _kernel(add, "t.json", on_gpu=True).flop.keys() == {"fp32"}
    assert _kernel(_conv({XMMA}), "t.json", on_gpu=False).flop.keys() == {"fp32"}


def test_a_trace_carries_the_linked_kernel_name(tmp_path):
    import json

    from rooflab.ingest.torch_trace import load_torch_trace

    ev = []
    for i in range(5):
        ev.append({"ph": "X", "cat": "cpu_op", "pid": 1, "tid": 1, "name": "aten::convolution",
                   "ts": i * 10000, "dur": 50, "args": {
                       "External id": 100 + i,
                       "Input Dims": [[64, 256, 56, 56], [256, 256, 3, 3], [256], [], [], [],
                                      [], [], []],
                       "Input type": ["float", "float", "float", "ScalarList", "ScalarList",
                                      "ScalarList", "Scalar", "ScalarList", "Int"],
                       "Concrete Inputs": ["", "", "", "[1, 1]", "[1, 1]", "[1, 1]", "False",
                                           "[0, 0]", "1"]}})
        ev.append({"ph": "X", "cat": "kernel", "name": XMMA, "pid": 0, "tid": 7,
                   "ts": i * 10000 + 5, "dur": 3000, "args": {"External id": 100 + i}})
    path = tmp_path / "conv.json"
    path.write_text(json.dumps({"traceEvents": ev}))
    (k,) = load_torch_trace(str(path)).kernels
    assert k.flop == {"tf32": pytest.approx(5 * CALL_FLOP)} and k.unit == "tensor"


@pytest.mark.parametrize("name", [
    "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize128x128x8_stage3_warpsize2x2x1_ffma_aligna4",
    "ampere_sgemm_128x64_nn"])
def test_a_cuda_core_fp32_kernel_is_not_tf32(name):
    # s21 x3 F1: cuBLAS's plain fp32 GEMM (allow_tf32 off) is an "xmma" kernel on FFMA: it
    # stays on the fp32 CUDA-core ceiling (held to TF32 it read ~8x too low a % of roof)
    from rooflab.ingest.torch_trace_groups import tf32_kernel

    assert tf32_kernel(_conv({name}), "fp32") is None
    assert tf32_kernel(_conv({XMMA}), "fp32") == XMMA
