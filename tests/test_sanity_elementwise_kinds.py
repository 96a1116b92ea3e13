"""The "abnormally high AI for a streaming op" check covers PyTorch's elementwise family.

It knew add, relu, silu and gelu only: a trace's aten::mul or aten::sigmoid_ with its
writes left out (AI 10 instead of ~0.17) passed without a word.
"""

from __future__ import annotations

import pytest

from rooflab.ingest.torch_ops import op_work
from rooflab.ingest.torch_ops_base import OpCall
from rooflab.model import Ceiling, Kernel, Roof, analyze
from rooflab.model.opkind import is_streaming
from rooflab.model.sanity import check_kernel

ROOF = Roof("toy-gpu", compute=(Ceiling(1e13, precision="fp32", unit="vector"),),
            memory=(Ceiling(1e12, level="DRAM"),))
SHAPE = (1024, 1024)
N = SHAPE[0] * SHAPE[1]

# (trace op name, input dims, input types), as torch.profiler records them
TRACE_OPS = [
    ("aten::sub", (SHAPE, SHAPE), ("float", "float")),
    ("aten::mul", (SHAPE, SHAPE), ("float", "float")),
    ("aten::mul_", (SHAPE, ()), ("float", "Scalar")),
    ("aten::div", (SHAPE, SHAPE), ("float", "float")),
    ("aten::sigmoid", (SHAPE,), ("float",)),
    ("aten::sigmoid_", (SHAPE,), ("float",)),
    ("aten::tanh", (SHAPE,), ("float",)),
    ("aten::relu_", (SHAPE,), ("float",)),
    ("aten::gelu", (SHAPE,), ("float",)),
    ("aten::silu_", (SHAPE,), ("float",)),
    ("aten::exp", (SHAPE,), ("float",)),
    ("aten::rsqrt", (SHAPE,), ("float",)),
]


def _undercounted(op_name: str, kind: str) -> Kernel:
    # 1e7 FLOP over 1e6 B = AI 10: the shape of a count that left the writes out and
    # counted FLOP several times over; no elementwise op gets near AI 4.
    return Kernel(f"{op_name} [1024x1024]", {"fp32": 1e7}, {"DRAM": 1e6}, seconds=1e-3,
                  meta={"op": kind, "source": "torch.profiler"})


@pytest.mark.parametrize("name,dims,types", TRACE_OPS)
def test_trace_elementwise_ops_are_streaming_and_checked(name, dims, types):
    work = op_work(OpCall(name, dims, types))
    assert work is not None, name
    assert is_streaming(work.op), (name, work.op)   # the kind the torch ingest records
    assert is_streaming(name)                        # and the trace's own name
    # Counted right, an elementwise op is far below the bound: no finding.
    right = Kernel(name, {work.precision: work.flop}, {"DRAM": work.bytes}, seconds=1e-3,
                   meta={"op": work.op})
    assert "ai_high" not in {f.check for f in check_kernel(analyze(ROOF, [right]), right)}
    k = _undercounted(name, work.op)
    found = {f.check: f for f in check_kernel(analyze(ROOF, [k]), k)}
    assert "AI 10 FLOP/B" in found["ai_high"].message, name


@pytest.mark.parametrize("kind", ["aten::mul", "aten::sigmoid_", "torch.tanh", "div.Tensor",
                                  "F.silu", "sub_", "mul.Scalar"])
def test_namespaced_and_overloaded_kinds(kind):
    assert is_streaming(kind)
    k = _undercounted(kind, kind)
    assert "ai_high" in {f.check for f in check_kernel(analyze(ROOF, [k]), k)}


@pytest.mark.parametrize("kind", ["aten::addmm", "aten::mm", "aten::bmm", "matmul",
                                  "aten::expand", "conv2d", "attention", "sinh_unknown",
                                  "divmod_custom", ""])
def test_matrix_and_unrelated_ops_are_not(kind):
    assert not is_streaming(kind)
    k = _undercounted(kind, kind)
    assert "ai_high" not in {f.check for f in check_kernel(analyze(ROOF, [k]), k)}
