"""`rooflab torch` rules for sum/mean, fill_/zero_, nll_loss (forward and backward) and cat's
dtype, on real traces recorded here with the CPU torch (record_shapes=True); every number
by hand. Conventions: a reduction of n to 1 is n - 1 adds (mean + 1 divide per output);
memory ops write once, read nothing; NLL from ATen's LossNLL.cpp (ingest/torch_ops_loss.py).
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional

from rooflab.ingest.torch_ops import op_work  # noqa: E402
from rooflab.ingest.torch_ops_base import OpCall  # noqa: E402
from rooflab.ingest.torch_trace import load_torch_trace  # noqa: E402


def _trace(tmp_path, fn, name="t.json"):
    """The kernels of a trace of fn() recorded by torch.profiler (record_shapes=True)."""
    from torch.profiler import profile

    with profile(record_shapes=True) as prof:
        fn()
    path = tmp_path / name
    prof.export_chrome_trace(str(path))
    return load_torch_trace(str(path))


def _only(kernels, op, shapes=None):
    got = [k for k in kernels if k.meta["op"] == op
           and (shapes is None or k.meta["shapes"][:len(shapes)] == shapes)]
    assert len(got) == 1, [k.name for k in kernels]
    return got[0]


def test_sum_and_mean_count_n_minus_1_adds_per_output(tmp_path):
    y = torch.randn(3, 5, 7)
    i = torch.ones(4, 6, dtype=torch.int32)
    h = torch.randn(8, 16, dtype=torch.float16)

    def run():
        y.sum()                       # 105 -> 1: 104 adds; 105·4 + 4 = 424 B
        y.sum(dim=1)                  # 105 -> 21: 84 adds; 420 + 84 = 504 B
        y.sum(dim=-1, keepdim=True)   # 105 -> 15: 90 adds; 420 + 60 = 480 B
        y.mean(dim=(0, 2))            # 105 -> 5: 100 adds + 5 divides = 105; 420 + 20
        i.sum()                       # int32 -> int64: 23 adds; 24·4 + 8 = 104 B
        h.sum(dim=1, dtype=torch.float32)   # 8 x 15 adds; 128·2 + 8·4 = 288 B

    ks = _trace(tmp_path, run).kernels
    sums = sorted((*k.flop.items(), k.bytes["DRAM"]) for k in ks if k.meta["op"] == "sum")
    # an int64 sum counts in rooflab's integer precision, int32 (units.flop_precision)
    assert sums == [(("fp32", 84.0), 504.0), (("fp32", 90.0), 480.0),
                    (("fp32", 104.0), 424.0), (("fp32", 120.0), 288.0),
                    (("int32", 23.0), 104.0)]
    mean = _only(ks, "mean")
    assert (mean.flop, mean.bytes["DRAM"]) == ({"fp32": 105.0}, 440.0)
    # the sum that mean calls (into its out=) is part of mean, not a kernel of its own
    assert not any(k.meta["op"] == "sum" and len(k.meta["shapes"]) == 5 for k in ks)
    names = {k.name for k in ks}
    assert "aten::sum [3x5x7] (dim [1])" in names
    assert "aten::sum [3x5x7] (dim [-1], keepdim)" in names


def test_sum_flop_agree_with_the_measure_counter():
    """One convention on both paths: the counter's sum(dim=1) of 3x5x7 is 84, not 105."""
    from rooflab.bench.torch_count import FlopCounter

    y = torch.randn(3, 5, 7)
    with FlopCounter() as c:
        y.sum(dim=1)
        y.mean(dim=(0, 2))
        y.sum()
    assert [r.flop for r in c.result.ops] == [84.0, 105.0, 104.0]
    traced = op_work(OpCall("aten::sum", ((3, 5, 7), (), (), ()),
                            ("float", "ScalarList", "Scalar", ""), ("", "[1]", "False", "")))
    assert traced.flop == 84.0


def test_fill_and_zero_write_once(tmp_path):
    z = torch.empty(6, 4, dtype=torch.float16)
    g = torch.empty(16, 10)

    def run():
        z.fill_(2.0)   # 24 fp16 written: 48 B
        g.zero_()      # 160 fp32 written: 640 B

    ks = _trace(tmp_path, run).kernels
    fill, zero = _only(ks, "fill"), _only(ks, "zero")
    assert (fill.flop, fill.bytes["DRAM"]) == ({"fp16": 0.0}, 48.0)
    assert (zero.flop, zero.bytes["DRAM"]) == ({"fp32": 0.0}, 640.0)


def test_nll_loss_forward_and_backward(tmp_path):
    x = torch.randn(16, 10, requires_grad=True)
    t = torch.randint(0, 10, (16,))
    w = torch.rand(10)

    def run():
        F.nll_loss(x, t).backward()             # mean
        F.nll_loss(x.detach(), t, reduction="none")
        F.nll_loss(x.detach(), t, weight=w, reduction="sum")

    imp = _trace(tmp_path, run)
    fwd = {k.name.rsplit("(", 1)[-1].rstrip(")"): k for k in imp.kernels
           if k.meta["op"] == "nll_loss" and not k.meta["shapes"][2]}
    fwd["weighted sum"] = _only(imp.kernels, "nll_loss", [[16, 10], [16], [10]])
    # mean: 16 adds + 1 divide; 16 looked-up fp32 (64 B) + 16 int64 targets (128 B) +
    # output and total_weight (8 B)
    assert (fwd["reduction mean"].flop, fwd["reduction mean"].bytes["DRAM"]) == (
        {"fp32": 17.0}, 200.0)
    # none: 16 negations; 64 + 128 + 16 outputs + total_weight (68 B) = 260
    assert (fwd["reduction none"].flop, fwd["reduction none"].bytes["DRAM"]) == (
        {"fp32": 16.0}, 260.0)
    # weighted sum: 16 x (FMA 2 + weight add 1) = 48; + the 10 weights looked up (40 B)
    assert (fwd["weighted sum"].flop, fwd["weighted sum"].bytes["DRAM"]) == (
        {"fp32": 48.0}, 240.0)
    bwd = _only(imp.kernels, "nll_loss_backward")
    # -(grad / total_weight): 2 FLOP; grad_output + total_weight 8 B, targets 128 B,
    # grad_input zero-filled 640 B + 16 scattered 64 B = 840 B
    assert (bwd.flop, bwd.bytes["DRAM"]) == ({"fp32": 2.0}, 840.0)
    # the zero_ the backward calls is part of it
    assert not any(k.meta["op"] == "zero" for k in imp.kernels)


def test_nll_loss2d_counts_each_target(tmp_path):
    x = torch.randn(2, 10, 3, 3)
    t = torch.randint(0, 10, (2, 3, 3))
    ks = _trace(tmp_path, lambda: F.nll_loss(x, t)).kernels
    k = _only(ks, "nll_loss")
    # 18 targets: 18 adds + 1 divide; 18·4 + 18·8 + 8 = 224 B
    assert (k.flop, k.bytes["DRAM"]) == ({"fp32": 19.0}, 224.0)


def test_cat_uses_the_out_dtype_and_says_when_it_assumes(tmp_path):
    a = torch.randn(4, 8, dtype=torch.float16)
    b = torch.randn(2, 8, dtype=torch.float16)
    out = torch.empty(6, 8, dtype=torch.float16)
    imp = _trace(tmp_path, lambda: torch.cat([a, b], out=out))
    k = _only(imp.kernels, "cat")
    # 48 fp16 read and 48 written: 192 B (not the 384 B of fp32)
    assert (k.flop, k.bytes["DRAM"]) == ({"fp16": 0.0}, 192.0)
    assert "assumed" not in k.meta
    assert not any("aten::cat" in n for n in imp.notes)

    imp = _trace(tmp_path, lambda: torch.cat([a, b]), "plain.json")
    k = _only(imp.kernels, "cat")
    assert (k.flop, k.bytes["DRAM"]) == ({"fp32": 0.0}, 384.0)
    assert "fp32 assumed" in k.meta["assumed"]
    assert any("aten::cat" in n and "fp32" in n for n in imp.notes)
