"""rooflab torch: the time of ops without a formula (review r2 F3, F4) and the pooling and
group norm rules (F4). Values by hand."""

from __future__ import annotations

import json

import pytest
from torch_trace_events import cpu_event as _event
from torch_trace_events import write_trace as _write

from rooflab.cli.main import main
from rooflab.ingest.torch_ops import op_work
from rooflab.ingest.torch_ops_base import OpCall
from rooflab.ingest.torch_trace import load_torch_trace

F, L = "float", "long int"
SL = "ScalarList"


def _mm_and_uncounted(t0=0):
    # an mm of 100 us, then 300 us in ops without a formula: 2 calls of aten::view (100 us
    # each), 1 of aten::_unique2 (100 us; _transform_bias_rescale_qkv was the example
    # until it got a rule: review s28 R3 F12)
    return [_event("aten::mm", t0, 100, [[64, 64], [64, 64]], [F, F]),
            _event("aten::view", t0 + 200, 100, [[64, 64], []], [F, SL]),
            _event("aten::view", t0 + 400, 100, [[64, 64], []], [F, SL]),
            _event("aten::_unique2", t0 + 600, 100, [[8, 16, 48]], [F])]


# --- F3: the share is of all op time -------------------------------------------------------

def test_share_counts_the_uncounted_op_time(tmp_path, capsys):
    path = _write(tmp_path, _mm_and_uncounted())
    imp = load_torch_trace(path)
    (mm,) = imp.kernels
    assert mm.meta["uncounted_s"] == pytest.approx(300e-6)
    assert main(["torch", path, "--json", "--on", "h100"]) == 0
    data = json.loads(capsys.readouterr().out)
    (row,) = data["analysis"]
    # 100 us of 400 us of op time: 25 %, not 100 % (was the share of the counted ops)
    assert row["time_share"] == pytest.approx(0.25)
    note = next(n for n in data["import_notes"] if "without a FLOP formula" in n)
    assert note.startswith("75.0 % of op time is in ops without a FLOP formula")


def test_share_read_back_by_report_stays(tmp_path, capsys):
    path = _write(tmp_path, _mm_and_uncounted())
    saved = str(tmp_path / "a.json")
    assert main(["torch", path, "--on", "h100", "-o", saved]) == 0
    capsys.readouterr()
    assert main(["report", saved, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["analysis"]
    assert rows[0]["time_share"] == pytest.approx(0.25)


def test_two_traces_each_add_their_own_uncounted_time(tmp_path):
    from rooflab import analyze, load_roof

    a = _write(tmp_path, _mm_and_uncounted(), "a.json")
    b = _write(tmp_path, _mm_and_uncounted()[:2], "b.json")   # mm 100 us + view 100 us
    kernels = load_torch_trace([a, b]).kernels
    shares = [p.time_share for p in analyze(load_roof("h100"), kernels).points]
    # of 100 + 300 + 100 + 100 = 600 us of op time, each mm 100 us
    assert shares == [pytest.approx(1 / 6)] * 2


# --- F4: the uncounted ops, listed ------------------------------------------------------------

def test_uncounted_ops_are_listed_with_calls_and_seconds(tmp_path):
    path = _write(tmp_path, _mm_and_uncounted())
    got = load_torch_trace(path).uncounted
    assert [(u["name"], u["calls"]) for u in got] == [
        ("aten::view", 2), ("aten::_unique2", 1)]
    assert got[0]["seconds"] == pytest.approx(200e-6) and got[0]["file"] == path
    assert got[1]["seconds"] == pytest.approx(100e-6)


# --- F4: pooling and group norm -------------------------------------------------------------

POOL_ARGS = (F, SL, SL, SL, SL, "Scalar")


def test_max_pool_forward_and_backward_by_hand():
    # nn.MaxPool2d(2) on 8x16x32x32, as torch 2.13 records it (stride [] = the kernel)
    fwd = op_work(OpCall("aten::max_pool2d_with_indices", ((8, 16, 32, 32),) + ((),) * 5,
                         POOL_ARGS, ("", "[2, 2]", "[]", "[0, 0]", "[1, 1]", "False")))
    # comparisons: 0 FLOP; 131,072 fp32 read, 32,768 fp32 + 32,768 int64 indices written
    assert (fwd.flop, fwd.bytes) == (0, 4 * 131_072 + 32_768 * (4 + 8))
    bwd = op_work(OpCall("aten::max_pool2d_with_indices_backward",
                         ((8, 16, 16, 16), (8, 16, 32, 32)) + ((),) * 5 + ((8, 16, 16, 16),),
                         (F, F, SL, SL, SL, SL, "Scalar", L),
                         ("", "", "[2, 2]", "[]", "[0, 0]", "[1, 1]", "False", "")))
    # 1 add per grad_output element; grad_output + indices read, grad_input written
    assert (bwd.flop, bwd.bytes) == (32_768, 4 * 32_768 + 8 * 32_768 + 4 * 131_072)
    # 3x3, stride 2, padding 1, ceil_mode on 1x1x7x7: out ceil((7+2-3)/2)+1 = 4 per side
    odd = op_work(OpCall("aten::max_pool2d_with_indices", ((1, 1, 7, 7),) + ((),) * 5,
                         POOL_ARGS, ("", "[3, 3]", "[2, 2]", "[1, 1]", "[1, 1]", "True")))
    assert odd.bytes == 4 * 49 + 16 * 12


def test_avg_pools_by_hand():
    # F.avg_pool2d(x, 3, stride=2) on 2x4x9x9: out 4x4, window 9 -> 9 FLOP per output
    avg = op_work(OpCall("aten::avg_pool2d", ((2, 4, 9, 9),) + ((),) * 6,
                         (F, SL, SL, SL, "Scalar", "Scalar", ""),
                         ("", "[3, 3]", "[2, 2]", "[0, 0]", "False", "True", "")))
    assert (avg.flop, avg.bytes) == (128 * 9, 4 * (648 + 128))
    back = op_work(OpCall("aten::avg_pool2d_backward", ((2, 4, 4, 4), (2, 4, 9, 9))
                          + ((),) * 6, (F, F, SL, SL, SL, "Scalar", "Scalar", ""),
                          ("", "", "[3, 3]", "[2, 2]", "[0, 0]", "False", "True", "")))
    assert (back.flop, back.bytes) == (128 * (1 + 9), 4 * (128 + 648))
    # adaptive 8x32x8x8 -> 8x8 (the review's CNN): one element per window
    ad = op_work(OpCall("aten::_adaptive_avg_pool2d", ((8, 32, 8, 8), ()), (F, SL),
                        ("", "[8, 8]")))
    assert (ad.flop, ad.bytes) == (16_384, 4 * 2 * 16_384)
    adb = op_work(OpCall("aten::_adaptive_avg_pool2d_backward", ((8, 32, 8, 8), (8, 32, 8, 8)),
                         (F, F)))
    assert (adb.flop, adb.bytes) == (2 * 16_384, 4 * 2 * 16_384)
    # 5 -> 3 per side: windows [0,2) [1,4) [3,5), lengths 2+3+2 = 7; 7·7 = 49 per (N, C)
    odd = op_work(OpCall("aten::_adaptive_avg_pool2d", ((1, 2, 5, 5), ()), (F, SL),
                         ("", "[3, 3]")))
    assert (odd.flop, odd.bytes) == (2 * 49, 4 * (50 + 18))


def test_group_norm_forward_and_backward_by_hand():
    # nn.GroupNorm(4, 32) on 8x32x100 (the review's mixed_train_b8)
    fwd = op_work(OpCall("aten::native_group_norm", ((8, 32, 100), (32,), (32,)) + ((),) * 5,
                         (F, F, F) + ("Scalar",) * 5,
                         ("", "", "", "8", "32", "100", "4", "1e-05")))
    # layer_norm's 7 per element; x read, y written, weight and bias read
    assert (fwd.flop, fwd.bytes) == (7 * 25_600, 4 * (2 * 25_600 + 64))
    bwd = op_work(OpCall("aten::native_group_norm_backward",
                         ((8, 32, 100), (8, 32, 100), (8, 4), (8, 4), (32,)) + ((),) * 5,
                         (F,) * 5 + ("Scalar",) * 4 + (SL,),
                         ("",) * 5 + ("8", "32", "100", "4", "[True, True, True]")))
    # 13 per element; grad_out, x, mean, rstd, weight read; grad_input + 2 x 32 written
    assert bwd.flop == 13 * 25_600
    assert bwd.bytes == 4 * (2 * 25_600 + 2 * 32 + 32) + 4 * (25_600 + 64)


def test_pooling_counted_inside_its_module_op(tmp_path):
    # aten::max_pool2d (no rule) keeps its own 10 us; the inner op is counted
    args = ("", "[2, 2]", "[]", "[0, 0]", "[1, 1]", "False")
    dims = [[8, 16, 32, 32], [], [], [], [], []]
    events = [_event("aten::max_pool2d", 0, 100, dims, list(POOL_ARGS), list(args)),
              _event("aten::max_pool2d_with_indices", 5, 90, dims, list(POOL_ARGS),
                     list(args))]
    imp = load_torch_trace(_write(tmp_path, events))
    (k,) = imp.kernels
    assert k.name == "aten::max_pool2d_with_indices [8x16x32x32]"
    assert k.bytes == {"DRAM": 917_504} and k.seconds == pytest.approx(90e-6)
    assert [(u["name"], u["calls"]) for u in imp.uncounted] == [("aten::max_pool2d", 1)]
    assert imp.uncounted[0]["seconds"] == pytest.approx(10e-6)


def test_uncounted_ops_in_the_json(tmp_path, capsys):
    path = _write(tmp_path, _mm_and_uncounted())
    assert main(["torch", path, "--json", "--on", "h100"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [(u["name"], u["calls"]) for u in data["uncounted"]] == [
        ("aten::view", 2), ("aten::_unique2", 1)]
    assert data["uncounted"][0]["seconds"] == pytest.approx(200e-6)
