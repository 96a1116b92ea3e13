"""A depthwise conv (one channel per group) is vector work forward and backward, by one
rule (workloads.ops_conv.conv_unit) read by `rooflab ai conv2d`, the torch trace's forward
and backward rules and the live counter (review s19 x1 F5: the trace's backward held the
same conv to the tensor ceiling its forward was not held to). Traces and counts recorded
here with the CPU torch in bf16, a tensor-unit dtype."""

from __future__ import annotations

import pytest

from rooflab.workloads import ops
from rooflab.workloads.ops_conv import conv_unit

torch = pytest.importorskip("torch")
F = torch.nn.functional
BF = torch.bfloat16


def _tensors(weight_shape):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(2, 4, 6, 6, generator=g).to(BF).requires_grad_()
    w = torch.randn(*weight_shape, generator=g).to(BF).requires_grad_()
    return x, w


def _step(x, w, groups, transposed=False):
    conv = F.conv_transpose2d if transposed else F.conv2d
    y = conv(x, w, groups=groups)
    y.backward(torch.ones_like(y))


def _trace_units(tmp_path, fn):
    from torch.profiler import profile

    from rooflab.ingest.torch_trace import load_torch_trace

    with profile(record_shapes=True) as prof:
        fn()
    path = tmp_path / "t.json"
    prof.export_chrome_trace(str(path))
    return {k.name.split(" [")[0]: k.unit for k in load_torch_trace(str(path)).kernels
            if "convolution" in k.name.split(" [")[0]}


def test_the_rule():
    assert conv_unit("bf16", (32, 1, 3, 3), 32) == "vector"            # depthwise
    assert conv_unit("bf16", (64, 1, 3, 3), 32) == "vector"            # multiplier 2
    assert conv_unit("bf16", (32, 4, 3, 3), 8) == "tensor"             # grouped, 4 a group
    assert conv_unit("fp32", (32, 4, 3, 3), 8) is None                 # no tensor unit
    assert conv_unit("bf16", (32, 1, 3, 3), 32, transposed=True) == "vector"
    # transposed [C_in 32, C_out/g 1] in 4 groups: 8 input channels a group
    assert conv_unit("bf16", (32, 1, 3, 3), 4, transposed=True) == "tensor"
    assert ops.conv2d(1, 32, 8, 8, 32, 3, 3, dtype="bf16", groups=32).unit == "vector"


def test_trace_holds_depthwise_forward_and_backward_to_vector(tmp_path):
    x, w = _tensors((4, 1, 3, 3))
    got = _trace_units(tmp_path, lambda: _step(x, w, groups=4))
    assert got == {"aten::convolution": "vector", "aten::convolution_backward": "vector"}
    x, w = _tensors((4, 4, 3, 3))
    got = _trace_units(tmp_path, lambda: _step(x, w, groups=1))
    assert got == {"aten::convolution": "tensor", "aten::convolution_backward": "tensor"}


def test_trace_transposed_depthwise_is_vector(tmp_path):
    x, w = _tensors((4, 1, 3, 3))
    got = _trace_units(tmp_path, lambda: _step(x, w, groups=4, transposed=True))
    assert got == {"aten::convolution": "vector", "aten::convolution_backward": "vector"}


def test_live_counter_holds_depthwise_to_vector():
    from rooflab.bench.torch_count import count_call

    x, w = _tensors((4, 1, 3, 3))
    _, c = count_call(lambda: _step(x, w, groups=4))
    units = {r.op: r.unit for r in c.ops if "convolution" in r.op}
    assert units == {"aten.convolution": "vector", "aten.convolution_backward": "vector"}
    x, w = _tensors((4, 4, 3, 3))
    _, c = count_call(lambda: _step(x, w, groups=1))
    units = {r.op: r.unit for r in c.ops if "convolution" in r.op}
    assert units == {"aten.convolution": "tensor", "aten.convolution_backward": "tensor"}
