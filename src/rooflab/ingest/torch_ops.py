"""FLOP and compulsory bytes of one PyTorch op call from the shapes the profiler recorded.

The trace gives each op's input shapes ("Input Dims"), dtypes ("Input type") and constant
arguments ("Concrete Inputs"), not its outputs; each rule infers the output's shape and
dtype (PyTorch's type promotion for elementwise ops). FLOP formulas follow rooflab.
workloads.ops (a multiply-add = 2 FLOP; a complex one = 4 real multiplies + 4 adds = 8);
bytes are compulsory traffic from the actual shapes: every tensor input read once, the
output once written (a broadcast input counts its own, smaller, size).

Ops with a rule are counted (provenance "derived": shape formulas); one with none (aten::
linear, aten::matmul) is not, but the ops it calls are (linear -> addmm). The rules live in
ingest.torch_ops_*: the core ops (matmul, elementwise, softmax, layer norm, conv) in
torch_ops_core, backward ops, 0-FLOP memory ops, sum/mean, NLL loss, attention, fused
RMSNorm, pooling and group norm, and the measure table's ops in their own modules, all on
the vocabulary of torch_ops_base (OpCall, OpWork, the dtype and shape helpers). This
module joins their tables into RULES and applies them.

addmm / baddbmm count 2mnk, the bias add (beta·bias, m·n adds) not counted: the count of
torch.utils.flop_counter (which `rooflab.measure` uses), of the profiler's own table and
of `rooflab ai matmul`, so the three paths agree; the bias is read (its bytes count).
"""

from __future__ import annotations

from ..errors import InputError
from .torch_ops_attention import ATTENTION_RULES
from .torch_ops_backward import BACKWARD_RULES
from .torch_ops_base import OpCall, OpWork, dtype_of
from .torch_ops_core import CORE_RULES
from .torch_ops_loss import LOSS_RULES
from .torch_ops_memory import MEMORY_RULES
from .torch_ops_pool import POOL_RULES
from .torch_ops_reduce import REDUCE_RULES
from .torch_ops_resample import RESAMPLE_RULES
from .torch_ops_rmsnorm import RMSNORM_RULES
from .torch_ops_table import table_rules

RULES = dict(CORE_RULES)
for _more in (BACKWARD_RULES, MEMORY_RULES, REDUCE_RULES, LOSS_RULES, ATTENTION_RULES,
              POOL_RULES, RESAMPLE_RULES, RMSNORM_RULES):
    RULES.update(_more)
# last, given the rest: a rule for each table op without one, and its add/sub (alpha)
# replace the plain elementwise rule
RULES.update(table_rules(RULES))


def has_rule(name: str) -> bool:
    return name in RULES


def work_or_reason(call: OpCall) -> OpWork | str:
    """FLOP and bytes of one call, or why the shapes have no formula."""
    rule = RULES.get(call.name)
    if rule is None:
        return "no rule for this op"
    try:
        work = rule(call)
    except (InputError, TypeError, ValueError, IndexError, ZeroDivisionError):
        work = None
    if work is not None:
        return work
    # the shapes may be fine and something else missing: say what (review r7 F5)
    if not any(d is not None for d in call.dims) and not call.lists:
        return "no input shapes recorded ('Input Dims')"
    if not any(dtype_of(t) is not None for t in call.types):
        return "no dtypes recorded ('Input type': torch 1.8-era traces lack it)"
    return "no formula for these shapes"


def op_work(call: OpCall) -> OpWork | None:
    """FLOP and bytes of one call, or None when the shapes do not fit (a tests' oracle)."""
    work = work_or_reason(call)
    return work if isinstance(work, OpWork) else None
