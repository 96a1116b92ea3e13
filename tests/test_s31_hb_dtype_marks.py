"""`whatif --precision` keeps a profiler's kernel name and marks the change (session 31 hb).

Session 30 replaced the dtype token and so invented names no library ships: cuBLAS's
'ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_nn' at fp32 read
'ampere_fp32_s16816gemm_fp32_...', and cuBLAS Hopper's 'bf16bf16' run was not read at all
(the kernel moved to fp8 under its bf16 name). The rule now (docs/whatif.md): never rewrite
a name; where it says the dtype that changed, append ' [old->new]'.

Hand numbers. H100 SXM: bf16 tensor 989.5 TFLOP/s, fp8 tensor 1979, DRAM 3.35 TB/s, launch
floor 5 us. A 4096^3 bf16 GEMM: 2 x 4096^3 = 137,438,953,472 FLOP, 3 x 4096^2 x 2 B =
100,663,296 B, timed 160 us: floor 138.9 us (compute), work 155 us after its launch; at fp8
the floor halves (69.4 us), so 5 + 155 / 2 = 82.5 us. ATen's bf16 add of 2^24 elements,
3 x 2^24 x 2 B = 100,663,296 B in 40 us (floor 30.05 us, memory), at fp8 half the bytes:
5 + 35 / 2 = 22.5 us.
A100 80GB SXM: fp16 tensor 312 TFLOP/s, no fp32 tensor ceiling, fp32 vector 19.5: the same
GEMM in fp16 timed 500 us (floor 440.5 us) moves at fp32 to 312 / 19.5 = 16x the floor:
5 + 495 x 16 = 7925 us.
"""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main
from rooflab.model.dtype_names import dtypes_said, marked_name, move_label, split_mark

SM90 = ("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_"
        "execute_segment_k_off_kernel__5x_cublas")
ATEN_ADD = ("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add"
            "<c10::BFloat16>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add"
            "<c10::BFloat16>, at::detail::Array<char*, 3>)")
INDUCTOR = "triton_poi_fused__to_copy_add_0"   # Inductor names say no dtype
AMPERE = "ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_nn"
CUTLASS_TF32 = "cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4"
GEMM_FLOP, GEMM_BYTES = 2 * 4096 ** 3, 3 * 4096 ** 2 * 2


@pytest.mark.parametrize("name, said", [
    (SM90, {"bf16", "fp32"}),                          # the run 'bf16bf16', 'bf16f32'
    ("sm80_xmma_gemm_f16f16_f16f32_f32_nn_n_tilesize128x256x32_stage3_warpsize2x2x1_"
     "tensor16x8x16_kernel", {"fp16", "fp32"}),
    (AMPERE, {"fp16"}),
    (CUTLASS_TF32, set()),                             # s1688gemm: no dtype token
    (ATEN_ADD, {"bf16"}),
    ("void at::native::elementwise_kernel<128, 2, c10::complex<c10::Half>>", {"complex32"}),
    (INDUCTOR, set()),
    ("fft_c128", {"complex128"}),
    ("maxpool_3x3_s2_n8c64_112x112_fp16", {"fp16"}),   # 'n8c64' is no complex64
    ("tf32gemm", set()),
    ("vectorized_elementwise_kernel<4, float>", set()),
])
def test_what_a_real_name_says(name, said):
    assert dtypes_said(name) == said


def test_a_mark_is_appended_never_written_into_the_name():
    assert marked_name(AMPERE, "", {"fp16"}, "fp16", "fp32") == AMPERE + " [fp16->fp32]"
    assert marked_name(SM90, "", {"bf16"}, "bf16", "fp8") == SM90 + " [bf16->fp8]"
    assert marked_name(CUTLASS_TF32, "", {"fp32"}, "fp32", "fp8") == CUTLASS_TF32
    # a torch trace's shapes in brackets are no mark: the name is kept whole
    trace = "aten::mm [64x4096, 4096x4096]"
    assert split_mark(trace) == (trace, {})
    assert move_label(AMPERE, AMPERE + " [fp16->fp32]") == AMPERE + " [fp16->fp32]"
    assert move_label("conv2d_3x3_n8c512k512_7x7_fp16", "conv2d_3x3_n32c512k512_7x7_fp16") \
        == "conv2d_3x3_n8c512k512_7x7_fp16 -> conv2d_3x3_n32c512k512_7x7_fp16"


def _file(tmp_path, kernels, name="k.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps({"schema_version": 1, "kernels": kernels}))
    return str(path)


def _whatif(capsys, *args: str) -> dict:
    capsys.readouterr()
    assert main(["whatif", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


H100_FILE = [
    {"name": SM90, "flop": {"bf16": GEMM_FLOP}, "bytes": {"DRAM": GEMM_BYTES},
     "seconds": 160e-6},
    {"name": ATEN_ADD, "flop": {"bf16": 2 ** 24}, "bytes": {"DRAM": 3 * 2 ** 24 * 2},
     "seconds": 40e-6},
    {"name": INDUCTOR, "flop": {"bf16": 2 ** 24}, "bytes": {"DRAM": 3 * 2 ** 24 * 2},
     "seconds": 40e-6},
]


def test_h100_fp8_marks_the_cublas_and_aten_names_and_times_them(tmp_path, capsys):
    d = _whatif(capsys, _file(tmp_path, H100_FILE), "--on", "H100 SXM", "--precision", "fp8")
    news = [m["new_kernel"] for m in d["moves"]]
    assert news == [SM90 + " [bf16->fp8]", ATEN_ADD + " [bf16->fp8]", INDUCTOR]
    assert [k["name"] for k in d["after"]["kernels"]] == news
    gemm, add, inductor = d["moves"]
    assert gemm["before_work_floor_s"] == pytest.approx(GEMM_FLOP / 989.5e12, 1e-6)
    assert gemm["after_work_floor_s"] == pytest.approx(GEMM_FLOP / 1979e12, 1e-6)
    assert gemm["after_s"] == pytest.approx(5e-6 + 155e-6 / 2, 1e-6)      # 82.5 us
    assert add["after_s"] == pytest.approx(5e-6 + 35e-6 / 2, 1e-6)        # 22.5 us
    assert inductor["after_s"] == pytest.approx(22.5e-6, 1e-6)            # moved, unmarked
    assert "keeps its (real) name, marked [old->new]" in d["assumption"]


def test_a100_fp32_keeps_the_ampere_name_and_chains_back(tmp_path, capsys, monkeypatch):
    kernels = [{"name": AMPERE, "flop": {"fp16": GEMM_FLOP}, "bytes": {"DRAM": GEMM_BYTES},
                "seconds": 500e-6}]
    src = _file(tmp_path, kernels)
    d = _whatif(capsys, src, "--on", "A100 80GB SXM", "--precision", "fp32")
    (move,) = d["moves"]
    assert move["new_kernel"] == AMPERE + " [fp16->fp32]"
    assert move["after_s"] == pytest.approx(5e-6 + 495e-6 * 16, 1e-6)      # 7.925 ms
    # the table shows the marked name once, and no invented 'ampere_fp32_...' anywhere
    monkeypatch.setenv("COLUMNS", "220")
    out = tmp_path / "w.json"
    capsys.readouterr()
    assert main(["whatif", src, "--on", "A100 80GB SXM", "--precision", "fp32",
                 "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert AMPERE + " [fp16->fp32]" in text and "ampere_fp32" not in text
    assert f"{AMPERE} -> " not in text
    # chained back to fp16: the mark is dropped, the time comes back (5 + 7920 / 16 us)
    back = _whatif(capsys, str(out), "--on", "A100 80GB SXM", "--precision", "fp16")
    (move,) = back["moves"]
    assert (move["kernel"], move["new_kernel"]) == (AMPERE + " [fp16->fp32]", AMPERE)
    assert move["after_s"] == pytest.approx(500e-6, 1e-6)
    # to bf16 instead: the left side stays what the name says
    bf = _whatif(capsys, str(out), "--on", "A100 80GB SXM", "--precision", "bf16")
    assert bf["moves"][0]["new_kernel"] == AMPERE + " [fp16->bf16]"
