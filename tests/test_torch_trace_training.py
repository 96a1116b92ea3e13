"""rooflab torch on training steps, compiled code and memory ops (review 16b #5, #14, #6, #7).

Traces are built here in the layout torch 2.13's CPU profiler writes (checked against a
real trace of Conv2d(32,64,3,p=1) -> GELU -> LayerNorm, .sum().backward()); numbers by hand.
"""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main
from rooflab.errors import ParseError
from rooflab.ingest.torch_ops import op_work
from rooflab.ingest.torch_ops_base import OpCall
from rooflab.ingest.torch_trace import load_torch_trace
from rooflab.workloads import ops

F = "float"
# aten::convolution_backward of Conv2d(32, 64, 3, padding=1) on 8x32x32x32, as recorded:
# grad_out, input, weight; bias_sizes, stride, padding, dilation, transposed,
# output_padding, groups, output_mask
CONV_BWD_DIMS = ((8, 64, 32, 32), (8, 32, 32, 32), (64, 32, 3, 3)) + ((),) * 8
CONV_BWD_TYPES = (F,) * 3 + ("ScalarList",) * 4 + ("Scalar", "ScalarList", "Scalar",
                                                    "ScalarList")


def conv_bwd_concrete(mask="[False, True, True]", groups="1"):
    return ("", "", "", "[64]", "[1, 1]", "[1, 1]", "[1, 1]", "False", "[0, 0]", groups,
            mask)


# 2·N·K·P·Q·C·R·S: one gradient of the conv (FlopCounterMode's conv_backward_flop)
CONV_GRAD = 2 * 8 * 64 * 32 * 32 * 32 * 9
assert CONV_GRAD == 301_989_888
# grad_bias (a sum of grad_output over N, P, Q) counts 0 FLOP, as in FlopCounterMode
READ = 4 * (8 * 64 * 32 * 32 + 8 * 32 * 32 * 32 + 64 * 32 * 9)


def _event(name, ts, dur, dims=None, types=None, concrete=None, cat="cpu_op"):
    args = {"External id": ts}
    if dims is not None:
        args.update({"Input Dims": dims, "Input type": types,
                     "Concrete Inputs": concrete or [""] * len(dims)})
    return {"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": dur,
            "args": args}


def _write(tmp_path, events, name="t.json"):
    path = tmp_path / name
    path.write_text(json.dumps({"traceEvents": events}))
    return str(path)


def by_op(imp):
    return {k.meta["op"]: k for k in imp.kernels}


# --- #5: backward ops ------------------------------------------------------------------

def test_conv_backward_per_output_mask():
    w = op_work(OpCall("aten::convolution_backward", CONV_BWD_DIMS, CONV_BWD_TYPES,
                       conv_bwd_concrete()))
    # x does not require grad: grad_weight + grad_bias; all three inputs read, grad_weight
    # (64x32x3x3) and grad_bias (64) written; the bias sum counts 0 FLOP (FlopCounterMode's
    # convention, as the measure counter's; was + 8·64·32·32 = 302,514,176)
    assert w.flop == CONV_GRAD == 301_989_888
    assert w.bytes == READ + 4 * (64 * 32 * 9 + 64) == 3_293_440
    assert (w.op, w.precision) == ("conv2d_backward", "fp32")
    full = op_work(OpCall("aten::convolution_backward", CONV_BWD_DIMS, CONV_BWD_TYPES,
                          conv_bwd_concrete("[True, True, False]")))
    assert full.flop == 2 * CONV_GRAD
    assert full.bytes == READ + 4 * (8 * 32 * 32 * 32 + 64 * 32 * 9)


def test_conv_backward_groups_and_1d():
    # Conv2d(4, 8, 3, groups=2) on 2x4x6x6: C/g = 2
    dims = ((2, 8, 6, 6), (2, 4, 6, 6), (8, 2, 3, 3)) + ((),) * 8
    w = op_work(OpCall("aten::convolution_backward", dims, CONV_BWD_TYPES,
                       conv_bwd_concrete("[True, True, True]", "2")))
    assert w.flop == 2 * (2 * 2 * 8 * 36 * 2 * 9)   # grad_bias 0 FLOP
    # Conv1d(4, 6, 3, stride=2) on 2x4x9: grad_out 2x6x4, as recorded by torch 2.13
    dims1 = ((2, 6, 4), (2, 4, 9), (6, 4, 3)) + ((),) * 8
    c1 = ("", "", "", "[6]", "[2]", "[0]", "[1]", "False", "[0]", "1", "[True, True, True]")
    w1 = op_work(OpCall("aten::convolution_backward", dims1, CONV_BWD_TYPES, c1))
    assert w1.op == "conv1d_backward"
    assert w1.flop == 2 * (2 * 2 * 6 * 4 * 4 * 3)   # grad_bias 0 FLOP


def test_conv_backward_agrees_with_flop_counter_mode():
    torch = pytest.importorskip("torch")
    from torch.utils.flop_counter import FlopCounterMode

    conv = torch.nn.Conv2d(4, 8, 3, padding=1, bias=False)
    x = torch.randn(2, 4, 6, 6, requires_grad=True)
    y = conv(x)
    fc = FlopCounterMode(display=False)
    with fc:
        y.backward(torch.ones_like(y))
    counted = fc.get_flop_counts()["Global"][torch.ops.aten.convolution_backward]
    dims = ((2, 8, 6, 6), (2, 4, 6, 6), (8, 4, 3, 3)) + ((),) * 8
    w = op_work(OpCall("aten::convolution_backward", dims, CONV_BWD_TYPES,
                       conv_bwd_concrete("[True, True, False]")))
    assert w.flop == counted == 2 * (2 * 2 * 8 * 36 * 4 * 9)


def test_other_backward_rules_by_hand():
    n = 8 * 64 * 32 * 32
    e = 64 * 32 * 32
    ln = op_work(OpCall(
        "aten::native_layer_norm_backward",
        ((8, 64, 32, 32), (8, 64, 32, 32), (), (8, 1, 1, 1), (8, 1, 1, 1), (64, 32, 32),
         (64, 32, 32), ()),
        (F, F, "ScalarList", F, F, F, F, "ScalarList"),
        ("", "", "[64, 32, 32]", "", "", "", "", "[True, True, True]")))
    # x̂ 2 + grad_input 7 + dy·γ 1 + grad_weight 2 + grad_bias 1 = 13 per element
    assert ln.flop == 13 * n
    assert ln.bytes == 4 * (2 * n + 2 * 8 + 2 * e) + 4 * (n + 2 * e)
    gelu = op_work(OpCall("aten::gelu_backward", ((4, 16), (4, 16), ()), (F, F, "")))
    assert (gelu.flop, gelu.bytes) == (2 * 64, 4 * 3 * 64)
    silu = op_work(OpCall("aten::silu_backward", ((4, 16), (4, 16)), (F, F)))
    assert silu.flop == 2 * 64
    relu = op_work(OpCall("aten::threshold_backward", ((4, 16), (4, 16), ()),
                          (F, F, "Scalar"), ("", "", "0")))
    assert (relu.flop, relu.bytes) == (0, 4 * 3 * 64)   # a selection, like relu
    sm = op_work(OpCall("aten::_softmax_backward_data", ((3, 5, 16), (3, 5, 16), (), ()),
                        (F, F, "Scalar", "Scalar"), ("", "", "-1", "6")))
    assert (sm.flop, sm.bytes) == (4 * 240, 4 * 3 * 240)
    # Embedding(50, 16) on 3x5 ids: 240 adds, grad_out + int64 ids read, 50x16 written
    emb = op_work(OpCall("aten::embedding_dense_backward", ((3, 5, 16), (3, 5), (), (), ()),
                         (F, "long int", "Scalar", "Scalar", "Scalar"),
                         ("", "", "50", "-1", "False")))
    assert (emb.flop, emb.bytes) == (240, 4 * 240 + 8 * 15 + 4 * 50 * 16)


def _training_step():
    """One conv backward under autograd's wrappers, and an index_select backward whose
    aten op (index_add_) has no rule, under its wrappers."""
    return [
        _event("autograd::engine::evaluate_function: ConvolutionBackward0", 0, 1000),
        _event("ConvolutionBackward0", 5, 990, [[8, 64, 32, 32]], [F]),
        _event("aten::convolution_backward", 10, 980, [list(d) for d in CONV_BWD_DIMS],
               list(CONV_BWD_TYPES), list(conv_bwd_concrete())),
        _event("autograd::engine::evaluate_function: IndexSelectBackward0", 2000, 500),
        _event("IndexSelectBackward0", 2010, 480, [[2, 5, 16]], [F]),
        _event("aten::index_add_", 2020, 400, [[3, 5, 16], [], [2], [2, 5, 16], []],
               [F, "Scalar", "long int", F, "Scalar"]),
    ]


def test_training_trace_counts_conv_backward_and_names_the_aten_op(tmp_path):
    imp = load_torch_trace(_write(tmp_path, _training_step()))
    conv = by_op(imp)["conv2d_backward"]
    assert conv.flop == {"fp32": CONV_GRAD}
    assert conv.seconds == pytest.approx(980e-6)
    assert conv.calls == 1 and conv.name.startswith("aten::convolution_backward [8x64x32x32")
    note = next(n for n in imp.notes if "without a FLOP formula" in n)
    # the aten op the profiler's table lists, with its whole time; the wrappers keep only
    # their own time (20 + 80 us), not the 400 us of the op they call
    assert "aten::index_add_ 400 us" in note
    assert "IndexSelectBackward0 80 us" in note
    assert "evaluate_function: IndexSelectBackward0 20 us" in note


# --- #14: torch.compile'd code -----------------------------------------------------------

def _compiled_events():
    return [
        _event("TorchDynamo Cache Lookup", 0, 35),
        _event("Torch-Compiled Region: 0/0", 40, 35_000),
        _event("Pregraph bytecode", 45, 6),
        _event("## Call CompiledFxGraph f4zocob2t5cpwroankbem2paxwvp7g5rsqlj ##", 60, 34_000,
               cat="user_annotation"),
        _event("Torch-Compiled Region: 0/0", 40_000, 33_000),
    ]


def test_compiled_trace_is_named_not_blamed_on_record_shapes(tmp_path, capsys):
    path = _write(tmp_path, _compiled_events())
    with pytest.raises(ParseError) as info:
        load_torch_trace(path)
    msg = str(info.value)
    assert "torch.compile'd code" in msg and "record_shapes" not in msg
    assert "Torch-Compiled Region: 0/0 2 calls 68 ms" in msg
    assert "rooflab.measure(f, x, flop=..., bytes=...)" in msg and "eager model" in msg
    assert main(["torch", path]) == 2
    err = capsys.readouterr().err
    assert "torch.compile'd code" in err and "Traceback" not in err


def test_compiled_trace_with_only_uncounted_eager_ops_is_named_too(tmp_path):
    events = _compiled_events() + [
        _event("aten::randn", 80_000, 100, [[], [], [], [], []],
               ["ScalarList", "", "", "", "Scalar"])]
    with pytest.raises(ParseError, match="torch.compile'd code"):
        load_torch_trace(_write(tmp_path, events))


def test_compiled_region_beside_eager_ops_gets_a_note(tmp_path):
    events = _compiled_events() + [
        _event("aten::mm", 80_000, 100, [[4, 8], [8, 2]], [F, F])]
    imp = load_torch_trace(_write(tmp_path, events))
    assert "mm" in by_op(imp)
    assert any("torch.compile'd regions (Torch-Compiled Region: 0/0 2 calls 68 ms)" in n
               for n in imp.notes)


# --- #6: memory ops with no FLOP -----------------------------------------------------------

def test_memory_op_rules_by_hand():
    emb = op_work(OpCall("aten::embedding", ((1000, 256), (100,), (), (), ()),
                         (F, "long int", "Scalar", "Scalar", "Scalar"),
                         ("", "", "-1", "False", "False")))
    # ai embedding's byte model: rows 100x256 read, ids 100 x 8 B, output 100x256 written
    assert (emb.flop, emb.bytes) == (0, 205_600)
    assert emb.bytes == ops.embedding(100, 256, dtype="fp32").bytes
    # more tokens than table rows: each row read at most once (the counter's gather rule)
    big = op_work(OpCall("aten::embedding", ((10, 4), (100,)), (F, "long int")))
    assert big.bytes == 4 * 10 * 4 + 8 * 100 + 4 * 100 * 4
    sel = op_work(OpCall("aten::index_select", ((1000, 256), (), (100,)),
                         (F, "Scalar", "long int"), ("", "0", "")))
    assert (sel.flop, sel.bytes) == (0, 205_600)
    gat = op_work(OpCall("aten::gather", ((3, 5, 16), (), (3, 5, 2), ()),
                         (F, "Scalar", "long int", "Scalar"), ("", "2", "", "False")))
    assert gat.bytes == 4 * 30 + 8 * 30 + 4 * 30
    cat = op_work(OpCall("aten::cat", (None, ()), ("TensorList", "Scalar"), ("", "0"),
                         lists=(((240,), (576,), (48,)),)))
    assert (cat.flop, cat.bytes) == (0, 4 * 2 * 864)
    cp = op_work(OpCall("aten::copy_", ((3, 5, 16), (3, 5, 16), ()),
                        ("double", F, "Scalar"), ("", "", "False")))
    assert cp.bytes == 4 * 240 + 8 * 240   # fp32 read, fp64 written (not read)


def test_memory_ops_on_the_memory_ceiling(tmp_path, capsys):
    events = [
        _event("aten::embedding", 0, 100, [[1000, 256], [100], [], [], []],
               [F, "long int", "Scalar", "Scalar", "Scalar"], ["", "", "-1", "False", "False"]),
        _event("aten::index_select", 5, 90, [[1000, 256], [], [100]],
               [F, "Scalar", "long int"], ["", "0", ""]),
        _event("aten::cat", 200, 50, [[[240], [576], [48]], []], ["TensorList", "Scalar"],
               ["", "0"]),
        _event("aten::mm", 300, 100, [[64, 64], [64, 64]], [F, F]),
    ]
    path = _write(tmp_path, events)
    imp = load_torch_trace(path)
    k = by_op(imp)
    assert k["embedding"].bytes == {"DRAM": 205_600} and k["embedding"].calls == 1
    assert "index_select" not in k   # inside embedding: counted once, as embedding
    assert k["cat"].name == "aten::cat [240, 576, 48]"
    assert any("aten::cat" in n and "fp32" in n for n in imp.notes)
    assert main(["torch", path, "--json", "--on", "h100"]) == 0
    rows = {r["kernel"]: r for r in json.loads(capsys.readouterr().out)["analysis"]}
    row = rows["aten::embedding [1000x256, 100]"]
    assert row["achieved_bytes_per_s"] == pytest.approx(205_600 / 100e-6)
    assert row["flop"] == 0 and row["binding"] == "DRAM" and row["bytes_per_s"] > 1e12
    assert main(["torch", path, "--on", "h100"]) == 0
    out = capsys.readouterr().out
    assert "no FLOP, so achieved is the bytes/s it moved" in out and "aten::embedding" in out


# --- #7: addmm counts 2mnk on every path -----------------------------------------------------

def test_addmm_is_2mnk_like_flop_counter_mode():
    a = op_work(OpCall("aten::addmm", ((256,), (4, 4096), (4096, 256), (), ()),
                       (F, F, F, "Scalar", "Scalar")))
    assert a.flop == 2 * 4 * 4096 * 256 == 8_388_608          # was 8,389,632 (+ mn)
    assert a.bytes == 4 * (256 + 4 * 4096 + 4096 * 256 + 4 * 256)   # the bias still read
    torch = pytest.importorskip("torch")
    from torch.utils.flop_counter import FlopCounterMode

    fc = FlopCounterMode(display=False)
    with fc:
        torch.nn.Linear(4096, 256)(torch.randn(4, 4096))
    assert fc.get_total_flops() == a.flop


def test_real_training_trace_counts_backward(tmp_path):
    """A training step profiled here with torch's own profiler: backward ops are counted."""
    torch = pytest.importorskip("torch")
    from torch.profiler import ProfilerActivity, profile

    m = torch.nn.Sequential(torch.nn.Conv2d(4, 8, 3, padding=1), torch.nn.GELU(),
                            torch.nn.LayerNorm([8, 6, 6]))
    x = torch.randn(2, 4, 6, 6)
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        m(x).sum().backward()
    path = str(tmp_path / "train.json")
    prof.export_chrome_trace(path)
    k = by_op(load_torch_trace(path))
    assert {"conv2d_backward", "layernorm_backward", "gelu_backward"} <= set(k)
    # grad_weight (x needs no grad) 2·2·8·36·4·9; grad_bias 0 FLOP (FlopCounterMode's)
    assert k["conv2d_backward"].flop == {"fp32": 2 * 2 * 8 * 36 * 4 * 9}
