"""Review 12b/12d findings on `rooflab torch`'s trace rules, checked against hand math.

Each test fails on the rules before the fix: complex values counted as real, `where` typed by
its bool condition, one name for two dtypes, bottom-right causal for PyTorch's top-left
is_causal, uncounted ops losing their time, convs without a formula, mismatched mm dims
counted, negative durations called "zero time", layer_norm without gamma/beta counted as 7.
"""

from __future__ import annotations

import json

import pytest
from test_torch_trace import _event  # one trace-event builder for both files

from rooflab.cli.main import main
from rooflab.ingest.torch_ops import op_work, work_or_reason
from rooflab.ingest.torch_ops_base import OpCall, promote, result_dtype
from rooflab.ingest.torch_trace import load_torch_trace
from rooflab.workloads import ops


def _trace(tmp_path, events, name="t.json"):
    path = tmp_path / name
    path.write_text(json.dumps({"traceEvents": events}))
    return str(path)


def _conv_call(x, w, stride, padding, dilation, groups=1, transposed=False, dtype="float"):
    return OpCall("aten::convolution", (x, w) + ((),) * 7,
                  (dtype, dtype, "", "ScalarList", "ScalarList", "ScalarList", "Scalar",
                   "ScalarList", "Scalar"),
                  ("", "", "", str(stride), str(padding), str(dilation), str(transposed),
                   "[0]", str(groups)))


# --- 12b C: complex values ----------------------------------------------------------------

def test_complex64_mm_is_8_flop_per_multiply_add_and_8_byte_elements():
    w = op_work(OpCall("aten::mm", ((64, 128), (128, 32)), ("c10::complex<float>",) * 2))
    assert w.flop == 8 * 64 * 128 * 32 == 2_097_152          # was 524,288 (real 2mnk)
    assert w.bytes == 8 * (64 * 128 + 128 * 32 + 64 * 32) == 114_688   # was 57,344
    assert w.precision == "fp32" and w.complex


def test_complex128_mm_and_addmm_bias():
    w = op_work(OpCall("aten::mm", ((64, 128), (128, 32)), ("c10::complex<double>",) * 2))
    assert (w.flop, w.bytes, w.precision) == (2_097_152, 229_376, "fp64")
    a = op_work(OpCall("aten::addmm", ((32,), (64, 128), (128, 32), (), ()),
                       ("c10::complex<float>",) * 3 + ("Scalar", "Scalar")))
    # the bias add is not counted (2mnk, as FlopCounterMode; review 16b #7, was
    # + 2 * 64 * 32 real FLOP); bias 32 x 8 B read
    assert a.flop == 2_097_152
    assert a.bytes == 114_688 + 8 * 32


def test_complex_elementwise_add_2_mul_6_and_no_formula_for_others():
    cx = ("c10::complex<float>",) * 2
    add = op_work(OpCall("aten::add", ((64, 128), (64, 128), ()), cx + ("Scalar",), ("", "", "1")))
    mul = op_work(OpCall("aten::mul", ((64, 128), (64, 128)), cx))
    n = 64 * 128
    assert (add.flop, add.bytes, add.precision) == (2 * n, 8 * 3 * n, "fp32")
    assert (mul.flop, mul.bytes) == (6 * n, 8 * 3 * n)
    assert work_or_reason(OpCall("aten::exp", ((64, 128),), cx[:1])) == (
        "no formula for complex exp")


def test_profiler_flops_do_not_override_a_complex_count(tmp_path):
    # torch.profiler's with_flops count is real-valued (2mnk for any mm)
    ev = _event("aten::mm", 0, 10, 1, [[64, 128], [128, 32]], ["c10::complex<float>"] * 2)
    ev["args"]["flops"] = 2 * 64 * 128 * 32
    (k,) = load_torch_trace(_trace(tmp_path, [ev])).kernels
    assert k.flop == {"fp32": 2_097_152} and k.provenance["flop"] == "derived"


# --- 12b D / 12d D / 12b K3: dtype of elementwise ops ----------------------------------------

def test_where_is_a_select_at_the_values_dtype():
    w = op_work(OpCall("aten::where", ((64, 32),) * 3, ("bool", "float", "float")))
    # inputs 2048 x (1 + 4 + 4) B, output fp32 2048 x 4 B; no arithmetic
    assert (w.flop, w.bytes, w.precision) == (0.0, 26_624, "fp32")
    big = op_work(OpCall("aten::where", ((1_000_000,),) * 3, ("bool", "float", "float")))
    assert big.bytes == 13_000_000                      # 12d D: 1 + 4 + 4 MB read, 4 written


def test_zero_dim_tensor_first_does_not_decide_the_dtype():
    # torch.mul(torch.tensor(2.0, dtype=torch.float64), x), x fp32 256x256: the result is fp32
    w = op_work(OpCall("aten::mul", ((), (256, 256)), ("double", "float")))
    assert w.precision == "fp32"
    assert w.bytes == 8 + 4 * 65_536 + 4 * 65_536 == 524_296    # was 786,440 (fp64 output)


def test_type_promotion_over_inputs():
    n = 1024
    bf = op_work(OpCall("aten::mul", ((n,), (n,)), ("c10::BFloat16", "float")))
    assert (bf.precision, bf.bytes) == ("fp32", 2 * n + 4 * n + 4 * n)
    idx = op_work(OpCall("aten::add", ((n,), (n,), ()), ("long int", "float", "Scalar")))
    assert (idx.precision, idx.bytes) == ("fp32", 8 * n + 4 * n + 4 * n)
    inplace = op_work(OpCall("aten::add_", ((n,), (n,), ()), ("c10::Half", "float", "Scalar")))
    assert (inplace.precision, inplace.bytes) == ("fp32", 2 * n + 4 * n + 2 * n)  # self: fp16
    # torch.promote_types / torch.result_type, checked in torch 2.13
    assert promote("fp16", "bf16") == "fp32" and promote("uint8", "int8") == "int16"
    assert promote("complex64", "fp64") == "complex128"
    assert result_dtype([((4,), "int64"), ((), "fp64")]) == "fp32"   # int tensor * 2.0


# --- 12b B: one display name per group -------------------------------------------------------

def test_two_dtypes_of_one_shape_get_two_names(tmp_path, capsys):
    events = []
    for i, t in enumerate(["float", "double", "float", "double"]):
        events.append(_event("aten::mm", 100 * i, 10 + 10 * (t == "double"), i,
                             [[256, 256], [256, 256]], [t, t]))
    path = _trace(tmp_path, events)
    imp = load_torch_trace(path)
    names = {k.name: k for k in imp.kernels}
    assert set(names) == {"aten::mm [256x256, 256x256] (fp32)",
                          "aten::mm [256x256, 256x256] (fp64)"}
    assert names["aten::mm [256x256, 256x256] (fp64)"].seconds == pytest.approx(40e-6)
    assert main(["torch", path, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["analysis"]
    assert sorted(r["kernel"] for r in rows) == sorted(names)


def test_one_shape_with_two_strides_is_two_convs(tmp_path):
    x, w = [1, 16, 64, 64], [16, 16, 3, 3]
    types = ["float", "float", "", "ScalarList", "ScalarList", "ScalarList", "Scalar",
             "ScalarList", "Scalar"]
    dims = [x, w] + [[]] * 7
    events = [_event("aten::convolution", 0, 30, 1, dims, types,
                     concrete=["", "", "", "[1, 1]", "[2, 2]", "[2, 2]", "False", "[0, 0]", "1"]),
              _event("aten::convolution", 100, 30, 2, dims, types,
                     concrete=["", "", "", "[1, 2]", "[1, 1]", "[1, 1]", "False", "[0, 0]", "1"])]
    flops = {k.name: k.flop["fp32"] for k in load_torch_trace(_trace(tmp_path, events)).kernels}
    base = "aten::convolution [1x16x64x64, 16x16x3x3]"
    assert flops == {f"{base} (stride 1x1, padding 2x2, dilation 2x2)": 18_874_368,
                     f"{base} (stride 1x2, padding 1x1, dilation 1x1)": 9_437_184}


def test_causal_and_full_attention_of_one_shape_are_two_groups(tmp_path):
    dims = [[1, 2, 8, 16]] * 3 + [[]] * 5
    types = ["float"] * 3 + ["", "Scalar", "Scalar", "", "Scalar"]
    events = [_event("aten::scaled_dot_product_attention", 100 * i, 10, i, dims, types,
                     concrete=["", "", "", "", "0.", causal, "", "False"])
              for i, causal in enumerate(["True", "False"])]
    flops = {k.name: k.flop["fp32"] for k in load_torch_trace(_trace(tmp_path, events)).kernels}
    base = "aten::scaled_dot_product_attention [1x2x8x16, 1x2x8x16, 1x2x8x16]"
    assert flops == {f"{base} (causal)": 4 * 2 * 16 * 36, f"{base} (not causal)": 4 * 2 * 16 * 64}


# --- 12d B3: PyTorch's is_causal is top-left -----------------------------------------------

def test_sdpa_is_causal_counts_the_top_left_mask():
    call = OpCall("aten::scaled_dot_product_attention",
                  ((1, 8, 16, 64), (1, 8, 4096, 64), (1, 8, 4096, 64)) + ((),) * 5,
                  ("float",) * 3 + ("", "Scalar", "Scalar", "", "Scalar"),
                  ("", "", "", "", "0.", "True", "", "False"))
    # query i sees keys 0..i: 16·17/2 = 136 pairs per head, 4·d FLOP each
    assert op_work(call).flop == 4 * 8 * 64 * 136 == 278_528     # was 133,971,968


def test_attention_alignment_parameter_keeps_the_decode_default():
    assert ops.attention_scores(16, 4096, True) == 16 * 4080 + 136      # bottom-right
    assert ops.attention_scores(16, 4096, True, "top-left") == 136
    assert ops.attention_scores(10, 4, True, "top-left") == 10 + 6 * 4  # queries past kv_len
    c = ops.attention(1, 8, 16, 4096, 64, dtype="fp32", causal=True)
    assert c.flop == 4 * 8 * 64 * (16 * 4080 + 136) and "causal_align" not in c.shape
    t = ops.attention(1, 8, 16, 4096, 64, dtype="fp32", causal=True, causal_align="top-left")
    assert t.flop == 278_528 and t.shape["causal_align"] == "top-left"


def test_torch_sdpa_is_causal_is_top_left():
    torch = pytest.importorskip("torch")
    import torch.nn.functional as F

    q, k = torch.randn(1, 2, 4, 8), torch.randn(1, 2, 10, 8)
    out = F.scaled_dot_product_attention(q, k, k, is_causal=True)
    top_left = torch.ones(4, 10, dtype=torch.bool).tril(0)
    assert torch.allclose(out, F.scaled_dot_product_attention(q, k, k, attn_mask=top_left))


# --- 12d J: time of ops without a formula; conv formulas -------------------------------------

def test_uncounted_op_keeps_its_time_when_its_children_are_allocations(tmp_path):
    x, w = [1, 16, 64, 64], [16, 16, 3, 3]
    cx = "c10::complex<float>"
    conv_types = [cx, cx, "", "ScalarList", "ScalarList", "ScalarList", "Scalar",
                  "ScalarList", "Scalar"]
    events = [
        _event("aten::mm", 0, 100, 1, [[64, 64], [64, 64]], ["float", "float"]),
        # a complex conv (no formula) whose kernel op calls only an allocation
        _event("aten::conv2d", 200, 1000, 2, [x, w], [cx, cx]),
        _event("aten::convolution", 205, 990, 3, [x, w] + [[]] * 7, conv_types,
               concrete=["", "", "", "[1, 1]", "[0, 0]", "[1, 1]", "False", "[0, 0]", "1"]),
        _event("aten::_convolution", 210, 970, 4, [x, w], [cx, cx]),
        _event("aten::empty", 215, 5, 5, [[]], ["ScalarList"]),
    ]
    imp = load_torch_trace(_trace(tmp_path, events))
    (note,) = [n for n in imp.notes if "without a FLOP formula" in n]
    # 1000 us of 1100: before, only the 5 us of aten::empty (4.8 %)
    assert note.startswith("90.9 % of op time") and "aten::conv2d 1 ms" in note
    assert "complex" in " ".join(str(s) for s in imp.skips)


def test_self_time_of_an_op_above_a_counted_one(tmp_path):
    events = [
        _event("aten::linear", 0, 100, 1, [[8, 16], [4, 16], [4]], ["float"] * 3),
        _event("aten::addmm", 10, 60, 2, [[4], [8, 16], [16, 4], [], []],
               ["float"] * 3 + ["Scalar", "Scalar"]),
    ]
    imp = load_torch_trace(_trace(tmp_path, events))
    (k,) = imp.kernels
    assert k.seconds == pytest.approx(60e-6)
    # linear's own 40 us (was lost): 40 / 100
    assert any(n.startswith("40.0 % of op time") and "aten::linear 40 us" in n
               for n in imp.notes)


@pytest.mark.parametrize(("x", "w", "stride", "padding", "dilation", "flop", "nbytes"), [
    # 12d J: F.conv2d(x, w, padding=2, dilation=2): output 64x64
    ((1, 16, 64, 64), (16, 16, 3, 3), [1, 1], [2, 2], [2, 2], 2 * 16 * 64 * 64 * 16 * 9,
     4 * (16 * 4096 + 16 * 16 * 9 + 16 * 4096)),
    # FlopCounterMode's figure for the [1, 16, 32, 32] dilated conv, checked in 12d
    ((1, 16, 32, 32), (16, 16, 3, 3), [1, 1], [2, 2], [2, 2], 4_718_592, None),
    # stride (1, 2), padding 1: output 64 x floor((64 + 2 - 3)/2) + 1 = 64 x 32
    ((1, 16, 64, 64), (16, 16, 3, 3), [1, 2], [1, 1], [1, 1], 2 * 16 * 64 * 32 * 16 * 9,
     4 * (16 * 4096 + 16 * 16 * 9 + 16 * 64 * 32)),
    # conv1d, padding 1: output 4096 positions
    ((1, 16, 4096), (16, 16, 3), [1], [1], [1], 2 * 16 * 4096 * 16 * 3,
     4 * (16 * 4096 + 16 * 16 * 3 + 16 * 4096)),
    # conv3d, no padding: 6x6x6 outputs, 4 x 27 taps each
    ((1, 4, 8, 8, 8), (8, 4, 3, 3, 3), [1, 1, 1], [0, 0, 0], [1, 1, 1], 2 * 8 * 216 * 4 * 27,
     4 * (4 * 512 + 8 * 4 * 27 + 8 * 216)),
    # grouped (depthwise) 2-D, stride 2: output floor((32 + 2 - 3)/2) + 1 = 16 per side
    ((2, 8, 32, 32), (8, 1, 3, 3), [2, 2], [1, 1], [1, 1], 2 * 2 * 8 * 256 * 1 * 9,
     4 * (2 * 8 * 1024 + 8 * 9 + 2 * 8 * 256)),
])
def test_conv_formulas(x, w, stride, padding, dilation, flop, nbytes):
    groups = x[1] // w[1]
    work = op_work(_conv_call(x, w, stride, padding, dilation, groups))
    assert work.flop == flop and work.op == f"conv{len(w) - 2}d"
    if nbytes is not None:
        assert work.bytes == nbytes


def test_transposed_conv_counts_from_the_input_positions():
    call = _conv_call((1, 16, 8, 8), (16, 16, 3, 3), [1, 1], [0, 0], [1, 1], transposed=True)
    work = work_or_reason(call)
    # review r2_torch F5: 2·N·C_in·(8·8 input positions)·C_out·9 = 2·16·64·16·9 = 294,912;
    # output (8 - 1) + (3 - 1) + 1 = 10 per side: bytes 4·(16·64 + 16·16·9 + 16·100) = 19,712
    assert (work.op, work.flop, work.bytes) == ("conv2d", 294_912.0, 19_712.0)


# --- 12b K: mismatched mm, negative durations -------------------------------------------------

def test_mm_with_inner_dims_that_disagree_is_a_warning_not_a_count(tmp_path):
    events = [
        _event("aten::addmm", 0, 50, 1, [[1024], [1024, 1024], [512, 1024], [], []],
               ["float"] * 3 + ["Scalar", "Scalar"]),
        _event("aten::mm", 100, 10, 2, [[4, 8], [8, 2]], ["float", "float"]),
    ]
    imp = load_torch_trace(_trace(tmp_path, events))
    assert [k.meta["op"] for k in imp.kernels] == ["mm"]
    skips = " ".join(str(s) for s in imp.skips)
    assert "aten::addmm" in skips and "inner dimensions disagree" in skips
    assert "1024 != 512" in skips
    bmm = OpCall("aten::bmm", ((4, 8, 16), (2, 16, 2)), ("float", "float"))
    assert work_or_reason(bmm).startswith("batch sizes disagree (4 != 2")


def test_negative_duration_is_named_not_zero_time(tmp_path):
    events = [
        _event("aten::mm", 0, 100, 7, [[4, 8], [8, 2]], ["float", "float"]),
        _event("gemm_kernel", 200, -5, 7, cat="kernel"),
        _event("aten::add", 300, 10, 8, [[4], [4]], ["float", "float"]),
        _event("add_kernel", 400, 2, 8, cat="kernel"),
    ]
    imp = load_torch_trace(_trace(tmp_path, events))
    skips = [str(s) for s in imp.skips]
    assert any("event #1 (gemm_kernel, kernel): negative duration (dur -5 us)" in s
               for s in skips)
    assert not any("zero time" in s and "event #1" in s for s in skips)


# --- 12d L10: layer_norm without gamma/beta ---------------------------------------------------

def test_layer_norm_without_affine_is_5_flop_and_no_gamma_beta_bytes():
    e = 16 * 256
    plain = op_work(OpCall("aten::native_layer_norm", ((1, 16, 256), (), (), (), ()),
                           ("float", "ScalarList", "", "", "Scalar"), ("", "[256]", "", "", "")))
    assert (plain.flop, plain.bytes) == (5 * e, 4 * 2 * e)            # was 7 e, +2 KB
    full = op_work(OpCall("aten::native_layer_norm", ((1, 16, 256), (), (256,), (256,), ()),
                          ("float", "ScalarList", "float", "float", "Scalar")))
    assert (full.flop, full.bytes) == (7 * e, 4 * (2 * e + 2 * 256))  # ops.layernorm's count
    weight = op_work(OpCall("aten::native_layer_norm", ((1, 16, 256), (), (256,), (), ()),
                            ("float", "ScalarList", "float", "", "Scalar")))
    assert (weight.flop, weight.bytes) == (6 * e, 4 * (2 * e + 256))


# --- the same rules on a trace PyTorch wrote -------------------------------------------------

SCRIPT = """
import torch, torch.nn.functional as F
x = torch.randn(1, 16, 64, 64); w = torch.randn(16, 16, 3, 3)
F.conv2d(x, w, padding=2, dilation=2)
F.conv1d(torch.randn(1, 16, 256), torch.randn(16, 16, 3), padding=1)
F.layer_norm(torch.randn(1, 16, 256), (256,))
c = torch.rand(64, 32) > 0.5
torch.where(c, torch.randn(64, 32), torch.randn(64, 32))
a = torch.randn(64, 128, dtype=torch.complex64)
a @ torch.randn(128, 32, dtype=torch.complex64)
F.scaled_dot_product_attention(torch.randn(1, 8, 16, 64), torch.randn(1, 8, 4096, 64),
                               torch.randn(1, 8, 4096, 64), is_causal=True)
"""


def test_rules_on_a_real_cpu_trace(tmp_path):
    pytest.importorskip("torch")
    from rooflab.ingest.torch_run import run_script

    script = tmp_path / "model.py"
    script.write_text(SCRIPT)
    imp = load_torch_trace(run_script(str(script), trace_path=str(tmp_path / "t.json")))
    got = {(k.meta["op"], tuple(map(tuple, filter(None, k.meta["shapes"])))):
           (k.flop, k.bytes["DRAM"]) for k in imp.kernels}
    assert got[("conv2d", ((1, 16, 64, 64), (16, 16, 3, 3)))][0] == {"fp32": 18_874_368}
    assert got[("conv1d", ((1, 16, 256), (16, 16, 3)))][0] == {"fp32": 2 * 16 * 256 * 16 * 3}
    assert got[("layernorm", ((1, 16, 256),))] == ({"fp32": 5 * 4096}, 4 * 2 * 4096)
    assert got[("where", ((64, 32),) * 3)] == ({"fp32": 0.0}, 26_624)
    assert got[("mm", ((64, 128), (128, 32)))] == ({"fp32": 2_097_152}, 114_688)
    attention = ((1, 8, 16, 64), (1, 8, 4096, 64), (1, 8, 4096, 64))
    assert got[("attention", attention)][0] == {"fp32": 278_528}
