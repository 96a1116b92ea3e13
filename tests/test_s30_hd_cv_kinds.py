"""Pooling and upsampling kernels read by their real names (session 30 hd): ATen's
max_pool_forward_nchw / upsample_bilinear2d_out_frame, cuDNN's pooling_fw_4d_kernel, TF's
MaxPoolForwardNHWC get the op kinds `pool` / `upsample`, so the advice is a streaming op's
(fusion, narrower data, access efficiency in channels-last layout), never tiling or tensor
cores. Before: an upsample name had no kind ('tile for data reuse: 3.37x' at AI 3.6) and
a compute-bound fp32 upsample was told 'use tensor cores (tf32 tensor): 5.93x'.

Hand numbers, A100 80GB SXM (catalog: DRAM 2,039 GB/s, fp32 vector 19.5 TFLOP/s, fp16
vector 78, launch floor 5 us):
- ResNet stem max pool, 32x64x112x112 fp32 -> 56x56: 102,760,448 B read + 25,690,112 B
  written = 128,450,560 B, 0 FLOP (comparisons), 100 us. Bilinear 2x upsample 8x256x56x56
  fp32 -> 112x112: the same 128,450,560 B, 9 FLOP per output x 25,690,112 outputs =
  231,211,008 FLOP (AI 1.8), 120 us.
- ncu's times are GPU-side (no launch in them), so fusion, which keeps half the bytes on
  chip at the same efficiency, halves the time: 2.00x; so does fp16 data (half the bytes):
  2.00x for both.
- Access efficiency to 80 % of the roof: floor 128,450,560 / 2.039e12 = 63.00 us, / 0.8 =
  78.75 us: 100 / 78.75 = 1.270x, 120 / 78.75 = 1.524x.
"""

from __future__ import annotations

import json

import pytest

from rooflab import load_roof
from rooflab.cli.main import main
from rooflab.ingest.kernelfile import load_kernels
from rooflab.ingest.ncu_files import load_ncu
from rooflab.model import Kernel, analyze
from rooflab.model.advice import advise
from rooflab.model.advice_kind import known_non_matrix
from rooflab.model.opkind import is_matrix, is_resample, kernel_kind, kind_from_name

A100 = "A100 80GB SXM"
DRAM = 2.039e12          # A100 80GB SXM, B/s
LAUNCH = 5e-6            # the catalog's launch floor
CUDNN_POOL = ("void cudnn::detail::pooling_fw_4d_kernel<float, float, "
              "cudnn::detail::maxpooling_func<float, (cudnnNanPropagation_t)0>, 0, false>("
              "cudnnTensorStruct, float const*, cudnnTensorStruct, float*, cudnnPoolingStruct, "
              "float, float, int, cudnn::reduced_divisor, cudnn::reduced_divisor)")
ATEN_UPSAMPLE = ("void at::native::(anonymous namespace)::upsample_bilinear2d_out_frame<float, "
                 "float>(int, float, float, bool, at::GenericPackedTensorAccessor<float, 4ul, "
                 "at::DefaultPtrTraits, long>, at::GenericPackedTensorAccessor<float, 4ul, "
                 "at::DefaultPtrTraits, long>)")
NBYTES = 102_760_448 + 25_690_112     # either kernel's input + output, fp32


@pytest.mark.parametrize("name, kind", [
    ("max_pool_forward_nchw", "pool"), ("max_pool_backward_nchw", "pool"),
    ("avg_pool2d_out_cuda_frame", "pool"), ("adaptive_avg_pool2d", "pool"),
    ("pooling_fw_4d_kernel", "pool"), (CUDNN_POOL, "pool"),
    ("MaxPoolForwardNHWC", "pool"), ("AvePoolForwardNCHW", "pool"),
    ("upsample_bilinear2d_out_frame", "upsample"), (ATEN_UPSAMPLE, "upsample"),
    ("upsample_nearest2d_nhwc_out_frame", "upsample"),
    ("upsample_bilinear2d_backward_out_frame", "upsample"),
    # a matrix word still wins: a conv fused after an upsample is a conv
    ("upsample_conv2d_fused", "conv"),
])
def test_real_pool_and_upsample_names_have_kinds(name, kind):
    assert kind_from_name(name) == kind
    assert is_resample(kind) == (kind != "conv")


@pytest.mark.parametrize("name, non_matrix", [
    ("max_pool_forward_nchw", True), ("upsample_bilinear2d_out_frame", True),
    ("max_pool2d", True), ("upsample_nearest", True), ("pixel_shuffle", True),   # meta ops
    # no kind, but not matrix work either: an image resize, an interpolation
    ("ResizeBilinearKernel", True), ("resize_nearest_kernel", True),
    ("interpolate_kernel", True),
    # nn.Bilinear is a matmul (aten::_trilinear); ResNet's 'downsample' is a 1x1 conv
    ("bilinear", False), ("aten::_trilinear", False), ("layer1.0.downsample.0", False),
    ("upsample_conv2d_fused", False),
])
def test_non_matrix_by_name(name, non_matrix):
    assert known_non_matrix(kind_from_name(name) or name) == non_matrix


def test_bilinear_in_a_name_is_no_linear_layer():
    # the reason upsample_bilinear2d was pinned to no kind (session 12): 'bilinear2d' is
    # one word, so no 'linear' matrix kind is read off it
    assert kind_from_name("bilinear2d") == ""
    assert not is_matrix(kind_from_name("upsample_bilinear2d"))


def _ncu_csv(tmp_path) -> str:
    """An ncu details page of the two kernels (the real cuDNN / ATen demangled names)."""
    head = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream",'
            '"Block Size","Grid Size","Device","CC","Section Name","Metric Name",'
            '"Metric Unit","Metric Value"')
    inst = "sm__sass_thread_inst_executed_op_{}_pred_on.sum"
    rows = [head]
    for i, name, us, ffma, fadd in ((0, CUDNN_POOL, "100", "0", "0"),
                                    (1, ATEN_UPSAMPLE, "120", "77,070,336", "77,070,336")):
        ident = (f'"{i}","4242","train.py","host","{name}","1","7","(256, 1, 1)",'
                 f'"(4096, 1, 1)","0","8.0","Command line profiler metrics"')
        for metric, unit, value in (("dram__bytes.sum", "byte", f"{NBYTES:,}"),
                                    ("gpu__time_duration.sum", "usecond", us),
                                    (inst.format("ffma"), "inst", ffma),
                                    (inst.format("fadd"), "inst", fadd),
                                    (inst.format("fmul"), "inst", "0")):
            rows.append(f'{ident},"{metric}","{unit}","{value}"')
    path = tmp_path / "cnn.csv"
    path.write_text("\n".join(rows) + "\n")
    return str(path)


def test_ncu_pool_and_upsample_are_read_by_their_full_names(tmp_path):
    got = {k.meta["full_name"]: k for k in load_ncu([_ncu_csv(tmp_path)]).kernels}
    pool, up = got[CUDNN_POOL], got[ATEN_UPSAMPLE]
    assert pool.total_flop == 0 and pool.bytes["DRAM"] == NBYTES
    assert up.flop == {"fp32": pytest.approx(231_211_008)}   # 2 x 77,070,336 + 77,070,336
    assert kernel_kind(pool) == ("pool", True) and kernel_kind(up) == ("upsample", True)


def _actions(capsys, path: str) -> dict[str, dict[str, float]]:
    capsys.readouterr()
    assert main(["report", path, "--on", A100, "--json"]) == 0
    diag = json.loads(capsys.readouterr().out)["diagnosis"]
    return {d["kernel"]: {a["action"]: a["speedup"] for a in d["advice"]} for d in diag}


def test_report_gives_streaming_levers_not_matmul_ones(tmp_path, capsys):
    got = _actions(capsys, _ncu_csv(tmp_path))
    pool, up = got["cudnn::detail::pooling_fw_4d_kernel<…>"], \
        got["at::native::upsample_bilinear2d_out_frame<…>"]
    coalesce = ("coalesce accesses (contiguous, aligned, vectorised loads), in "
                "channels-last (NHWC) layout")
    floor = NBYTES / DRAM
    assert pool["fuse with the neighbouring pass"] == pytest.approx(2.0)
    assert up["fuse with the neighbouring pass"] == pytest.approx(2.0)
    assert pool["store the data in a narrower type"] == pytest.approx(2.0)   # 0 FLOP
    assert up["use fp16 instead of fp32"] == pytest.approx(2.0)
    assert pool[coalesce] == pytest.approx(100e-6 / (floor / 0.8), 1e-3)   # 1.270
    assert up[coalesce] == pytest.approx(120e-6 / (floor / 0.8), 1e-3)     # 1.524
    for actions in (pool, up):
        assert not any("tile" in a or "tensor cores" in a for a in actions), actions


def test_an_nhwc_kernel_is_not_told_to_go_channels_last(tmp_path, capsys):
    path = tmp_path / "k.json"
    kernels = [{"name": n, "flop": {"fp16": 0}, "bytes": {"DRAM": 64_225_280},
                "seconds": 7e-5, **extra}
               for n, extra in (("upsample_nearest2d_nhwc_out_frame", {}),
                                ("max_pool_forward_nchw", {}),
                                ("max_pool2d", {"meta": {"memory_format": "channels_last"}}))]
    path.write_text(json.dumps({"kernels": kernels}))
    assert [kernel_kind(k)[0] for k in load_kernels(str(path))] == ["upsample", "pool", "pool"]
    got = _actions(capsys, str(path))
    plain = "coalesce accesses (contiguous, aligned, vectorised loads)"
    assert plain in got["upsample_nearest2d_nhwc_out_frame"]
    assert plain in got["max_pool2d"]
    assert f"{plain}, in channels-last (NHWC) layout" in got["max_pool_forward_nchw"]


def test_the_slope_line_says_tiling_cannot_help_a_pool(tmp_path, capsys):
    # the bilinear upsample at AI 1.8: a streaming op's slope levers, not a matmul's
    capsys.readouterr()
    assert main(["report", _ncu_csv(tmp_path), "--on", A100, "--json"]) == 0
    diag = json.loads(capsys.readouterr().out)["diagnosis"]
    up = next(d for d in diag if "upsample" in d["kernel"])
    slope = next(x for x in up["distances"] if x["name"] == "along slope")["words"]
    assert "tiling and batching cannot" in slope and "data reuse (tiling)" not in slope


def test_compute_bound_upsample_lowers_precision_on_the_vector_units():
    # fp32 bicubic upsample, 1 GFLOP over 10 MB in 100 us on an A100: compute-bound (AI
    # 100 > ridge 9.56). fp16 on the vector units (78 TFLOP/s, 4x the fp32 19.5) at the
    # same efficiency: (100 - 5) / 4 + 5 = 28.75 us, 3.478x; no tensor-core advice (it was
    # 'use tensor cores (tf32 tensor): 5.93x' and 'bf16 on tensor cores: 9.14x')
    roof = load_roof(A100)
    k = Kernel("upsample_bicubic2d_out_frame", {"fp32": 1e9}, {"DRAM": 1e7}, seconds=1e-4)
    (p,) = analyze(roof, [k]).points
    items = advise(p, roof, k)
    assert not any("tensor" in a.action for a in items), [a.action for a in items]
    low = next(a for a in items if a.action.startswith("use fp16 instead of fp32"))
    assert low.speedup == pytest.approx(100e-6 / ((100e-6 - LAUNCH) / 4 + LAUNCH), 1e-3)
