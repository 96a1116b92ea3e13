"""measure's counter charges an expanded (stride-0) tensor the storage it spans; the trace
rule, which sees shapes only, charges its logical size (bench/torch_bytes._span).
BatchNorm2d(32), x[8, 32, 16, 16] fp32, training backward (native_batch_norm_backward):

    E = 8 x 32 x 16 x 16 = 65,536 elements, 262,144 B per full tensor
    read  grad_out, input 2 x 262,144 + five [32] tensors (weight, running mean / var,
          save_mean, save_invstd) 5 x 128 = 524,928 B
    write grad_input 262,144 + grad_weight, grad_bias 2 x 128 = 262,400 B
    trace rule: 524,928 + 262,400 = 787,328 B
    .sum().backward(): grad_out is ones expanded from one stored fp32 element, 4 B:
          787,328 - 262,144 + 4 = 525,188 B
    a real grad_out (y.backward(torch.randn_like(y))): 787,328 B, as the trace.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from rooflab.bench.torch_count import FlopCounter  # noqa: E402
from rooflab.ingest.torch_ops import op_work  # noqa: E402
from rooflab.ingest.torch_ops_base import OpCall  # noqa: E402

E = 8 * 32 * 16 * 16
FULL = E * 4                          # 262,144 B
TRACE = 2 * FULL + 5 * 128 + FULL + 2 * 128
assert TRACE == 787_328


def _bn_backward_bytes(real_grad: bool) -> float:
    torch.manual_seed(0)
    bn = torch.nn.BatchNorm2d(32).train(True)
    x = torch.randn(8, 32, 16, 16, requires_grad=True)
    with FlopCounter() as counter:
        y = bn(x)
        y.backward(torch.randn_like(y)) if real_grad else y.sum().backward()
    (op,) = [o for o in counter.result.ops if o.op == "aten.native_batch_norm_backward"]
    return op.bytes


def test_the_trace_rule_charges_the_full_grad():
    dims = ((8, 32, 16, 16), (8, 32, 16, 16)) + ((32,),) * 5 + ((), (), ())
    types = ("float",) * 7 + ("Scalar", "Scalar", "ScalarList")
    call = OpCall("aten::native_batch_norm_backward", dims, types,
                  ("",) * 7 + ("True", "1e-05", "[True, True, True]"))
    assert op_work(call).bytes == TRACE


def test_sum_backward_grad_is_one_stored_element():
    assert _bn_backward_bytes(real_grad=False) == TRACE - FULL + 4 == 525_188


def test_a_real_grad_agrees_with_the_trace():
    assert _bn_backward_bytes(real_grad=True) == TRACE


def test_any_expanded_input_reads_its_storage_once():
    # x[1024] fp32 + ones(1) expanded to 1024: read 4,096 + 4 B, write 4,096 B = 8,196 B
    x, b = torch.randn(1024), torch.ones(1).expand(1024)
    with FlopCounter() as counter:
        torch.add(x, b)
    (op,) = [o for o in counter.result.ops if o.op == "aten.add"]
    assert op.bytes == 4096 + 4 + 4096
