"""FLOP and compulsory bytes of PyTorch's reductions (sum, mean), from the recorded shapes.

Convention: a reduction of n elements to one is n - 1 adds, so `sum` counts (input
elements - output elements) FLOP and `mean` that plus one divide per output, which is the
input's elements. FlopCounterMode counts 0 for both; rooflab counts the adds, as the
`measure` counter does for the same ops (workloads.torch_rules.flop.reduction_flop: one
formula on both paths). Bytes: the input read once, the output written once.
"""

from __future__ import annotations

from ..units import flop_precision
from ..workloads.torch_rules.flop import reduction_flop
from .torch_ops_base import (
    COMPLEX_REAL,
    OpCall,
    OpWork,
    category,
    dtype_of,
    itemsize,
    numel,
    real_dtype,
    reduced_out,
)

# c10::ScalarType numbers, as "Concrete Inputs" records a `dtype=` argument (sum(x,
# dtype=torch.float32) -> '6'): c10/core/ScalarType.h's order.
SCALAR_TYPES = {0: "uint8", 1: "int8", 2: "int16", 3: "int32", 4: "int64", 5: "fp16",
                6: "fp32", 7: "fp64", 8: "complex32", 9: "complex64", 10: "complex128",
                11: "bool", 15: "bf16"}


def _out_dtype(call: OpCall, name: str, dt: str) -> str:
    """The result's dtype: an out= tensor's (sum.IntList_out, 5 arguments), else a dtype=
    argument's, else the input's; an integer or bool sum accumulates in int64 (torch.sum's
    docs: "integral inputs are promoted to int64")."""
    if len(call.dims) > 4 and call.dims[4] is not None and (out := dtype_of(call.types[4])):
        return out
    given = call.const(3 if len(call.dims) > 2 else 1, None)
    if isinstance(given, int) and given in SCALAR_TYPES:
        return SCALAR_TYPES[given]
    return "int64" if name == "sum" and category(dt) < 2 else dt


def _reduce(call: OpCall) -> OpWork | str | None:
    """aten::sum / aten::mean (self, dtype) over every element, or (self, dim, keepdim,
    dtype[, out]) over `dim` (None or [] reduces every dimension)."""
    if not call.dims or call.dims[0] is None:
        return None
    shape, dt = tuple(call.dims[0]), dtype_of(call.types[0])
    if dt is None:
        return None
    name = call.name.removeprefix("aten::")
    n_in = numel(shape)
    n_out = reduced_out(shape, call.const(1, None) if len(call.dims) > 2 else None)
    out_dt = _out_dtype(call, name, dt)
    cx = out_dt in COMPLEX_REAL
    flop = reduction_flop(name, n_in, n_out) * (2 if cx else 1)   # a complex add is 2
    nbytes = n_in * itemsize(dt) + n_out * itemsize(out_dt)
    return OpWork(name, float(flop), float(nbytes), flop_precision(real_dtype(out_dt)),
                  "vector", cx)


REDUCE_RULES = {"aten::sum": _reduce, "aten::mean": _reduce}
# Their FLOP depend on `dim` (a constant argument): calls of one shape over other dims
# are other groups.
ARGS_IN_KEY = frozenset(REDUCE_RULES)


def args_text(args: tuple[str, ...]) -> str:
    """'dim [1]' ('dim all' for a full reduction), ', keepdim' when kept."""
    dim = args[1] if len(args) > 2 and args[1] not in ("", "[]") else "all"
    return f"dim {dim}" + (", keepdim" if len(args) > 2 and args[2] == "True" else "")
