"""FLOP and compulsory bytes of one PyTorch op call from the shapes the profiler recorded.

The trace gives each op's input shapes ("Input Dims"), dtypes ("Input type") and constant
arguments ("Concrete Inputs"), not its outputs; each rule infers the output's shape and
dtype (PyTorch's type promotion for elementwise ops). FLOP formulas follow rooflab.
workloads.ops (a multiply-add = 2 FLOP; a complex one = 4 real multiplies + 4 adds = 8);
bytes are compulsory traffic from the actual shapes: every tensor input read once, the
output once written (a broadcast input counts its own, smaller, size).

Ops with a rule are counted (provenance "derived": shape formulas); one with none (aten::
linear, aten::matmul) is not, but the ops it calls are (linear -> addmm). The rules of
backward ops, 0-FLOP memory ops, sum/mean, NLL loss, attention, fused RMSNorm, pooling and
group norm, and the measure table's ops live in ingest.torch_ops_* and join RULES below.

addmm / baddbmm count 2mnk, the bias add (beta·bias, m·n adds) not counted: the count of
torch.utils.flop_counter (which `rooflab.measure` uses), of the profiler's own table and
of `rooflab ai matmul`, so the three paths agree; the bias is read (its bytes count).
"""

from __future__ import annotations

import ast
import math
from collections.abc import Sequence
from dataclasses import dataclass

from ..bench.torch_flop_rules import COMPLEX_FLOP_PER_ELEMENT
from ..errors import InputError
from ..units import dtype_bytes, flop_precision
from ..workloads.ops import LAYERNORM_PLAIN_FLOP_PER_ELEMENT  # 5; gamma, beta add 1 each

# Profiler dtype spellings -> rooflab dtypes. The `fnuz` fp8 variants are MI300's (gfx942)
# fp8 formats, torch.float8_e4m3fnuz / float8_e5m2fnuz, which ROCm traces record.
TORCH_DTYPES = {
    "float": "fp32", "double": "fp64", "c10::Half": "fp16", "c10::BFloat16": "bf16",
    "c10::Float8_e4m3fn": "fp8", "c10::Float8_e5m2": "fp8",
    "c10::Float8_e4m3fnuz": "fp8", "c10::Float8_e5m2fnuz": "fp8", "long int": "int64",
    "long": "int64", "int": "int32", "short int": "int16", "signed char": "int8",
    "unsigned char": "uint8", "bool": "bool", "c10::complex<float>": "complex64",
    "c10::complex<double>": "complex128", "c10::complex<c10::Half>": "complex32",
}
# A complex element is two of its real type: its bytes are twice, its FLOP are counted in
# the real type's precision (complex64 math is fp32 math).
COMPLEX_REAL = {"complex32": "fp16", "complex64": "fp32", "complex128": "fp64"}
ELEMENTWISE_BINARY = ("add", "sub", "mul", "div", "rsub", "maximum", "minimum", "pow",
                      "where")
ELEMENTWISE_UNARY = ("relu", "gelu", "silu", "sigmoid", "tanh", "exp", "log", "neg", "abs",
                     "sqrt", "rsqrt", "reciprocal", "clamp", "hardtanh", "leaky_relu",
                     "threshold", "sin", "cos", "erf")
# Comparisons count 0 FLOP, as in `rooflab ai` and bench/torch_count.py: profilers count
# FLOP from FADD/FMUL/FFMA, not from FMNMX (docs/bench.md, "comparisons ... 0").
COMPARISONS = frozenset({"relu", "maximum", "minimum", "clamp", "hardtanh", "threshold"})
# `where(cond, a, b)` selects: no arithmetic (bench/torch_count.py lists it as movement).
SELECTS = frozenset({"where"})
# Real FLOP per element of complex elementwise ops: COMPLEX_FLOP_PER_ELEMENT, one table with
# `measure`'s counter ((a+bi)(c+di) 6, ± 2, a negation 2); other ops get no complex formula.
# Ops whose result is floating point even for integer inputs (true division, transcendental
# functions): integer inputs give the default dtype, fp32 (torch.get_default_dtype()).
FLOAT_RESULT = frozenset({"div", "gelu", "silu", "sigmoid", "tanh", "exp", "log", "sqrt",
                          "rsqrt", "reciprocal", "sin", "cos", "erf"})


@dataclass(frozen=True)
class OpCall:
    """One recorded call: op name, tensor shapes (None for non-tensors), dtypes, constants;
    lists: the shapes of each tensor-list argument (aten::cat's), in order."""

    name: str
    dims: tuple[tuple[int, ...] | None, ...]
    types: tuple[str, ...]
    concrete: tuple[str, ...] = ()
    lists: tuple[tuple[tuple[int, ...], ...], ...] = ()


@dataclass(frozen=True)
class OpWork:
    """One call's work. complex: counted from complex values (the profiler's own `flops`
    count real-valued formulas, so they do not apply). assumed: what the count assumed
    for want of the trace's data (cat's dtype), for the kernel's meta; empty if nothing."""

    op: str
    flop: float
    bytes: float
    precision: str
    unit: str | None
    complex: bool = False
    assumed: str = ""


def dtype_of(type_name: str) -> str | None:
    return TORCH_DTYPES.get(type_name.strip())


def real_dtype(dtype: str) -> str:
    """The real type of a complex dtype (complex64 -> fp32); a real dtype itself."""
    return COMPLEX_REAL.get(dtype, dtype)


def itemsize(dtype: str) -> float:
    """Bytes per element, a complex one counted as its two real halves."""
    return dtype_bytes(real_dtype(dtype)) * (2 if dtype in COMPLEX_REAL else 1)


def _numel(shape: Sequence[int]) -> int:
    return math.prod(shape) if shape else 1


def _broadcast(shapes: Sequence[Sequence[int]]) -> tuple[int, ...]:
    nd = max(len(s) for s in shapes)
    out = []
    for i in range(nd):
        dims = [s[len(s) - nd + i] for s in shapes if len(s) - nd + i >= 0]
        out.append(max(dims))
    return tuple(out)


def _tensors(call: OpCall) -> list[tuple[tuple[int, ...], str]]:
    """(shape, dtype) of each tensor input (Scalars and None are skipped)."""
    out = []
    for dims, t in zip(call.dims, call.types, strict=False):
        d = dtype_of(t)
        if dims is not None and d is not None and (len(dims) > 0 or t != "Scalar"):
            out.append((tuple(dims), d))
    return out


def _in_bytes(tensors) -> float:
    return float(sum(_numel(s) * itemsize(d) for s, d in tensors))


def _const(call: OpCall, i: int, default):
    try:
        value = ast.literal_eval(call.concrete[i])
    except (IndexError, ValueError, SyntaxError):
        return default
    return value


# Type promotion (torch.promote_types / torch.result_type), on rooflab's dtype names.
_CATEGORY = {"bool": 0, "uint8": 1, "int8": 1, "int16": 1, "int32": 1, "int64": 1}


def _category(dtype: str) -> int:
    """bool 0 < integer 1 < floating 2 < complex 3, the order of PyTorch's promotion."""
    return 3 if dtype in COMPLEX_REAL else _CATEGORY.get(dtype, 2)


def promote(a: str, b: str) -> str:
    """torch.promote_types on two dtypes: the smallest dtype that holds both."""
    if a == b:
        return a
    ca, cb = _category(a), _category(b)
    if ca == 3 or cb == 3:   # complex64 with fp64 -> complex128: the wider real part
        real = promote(real_dtype(a), real_dtype(b)) if min(ca, cb) >= 2 else (
            real_dtype(a) if ca == 3 else real_dtype(b))
        return {v: k for k, v in COMPLEX_REAL.items()}.get(real, "complex128")
    if ca != cb:
        return a if ca > cb else b
    if {a, b} in ({"fp16", "bf16"}, {"uint8", "int8"}):
        return "fp32" if ca == 2 else "int16"
    return a if dtype_bytes(a) >= dtype_bytes(b) else b


def result_dtype(tensors: Sequence[tuple[tuple[int, ...], str]]) -> str:
    """torch.result_type over tensor inputs: tensors with dimensions decide; a 0-dim tensor
    only when it is of a higher category (a float scalar times an int tensor). The trace
    records a Python number as a 0-dim `double`, so a 0-dim fp64 that raises the category
    is taken as the default float dtype, fp32, as PyTorch treats the number."""
    dim = [d for s, d in tensors if len(s) > 0]
    zero = [d for s, d in tensors if len(s) == 0]
    if not dim:
        return _promote_all(zero)
    out = _promote_all(dim)
    if zero:
        z = _promote_all(zero)
        if _category(z) > _category(out):
            out = promote(out, "fp32" if z == "fp64" else z)
    return out


def _promote_all(dtypes: Sequence[str]) -> str:
    out = dtypes[0]
    for d in dtypes[1:]:
        out = promote(out, d)
    return out


def _matmul(call: OpCall) -> OpWork | str | None:
    from ..workloads import ops

    base = call.name.removeprefix("aten::")
    ts = _tensors(call)
    bias = None
    if base in ("addmm", "baddbmm"):
        if len(ts) < 3:
            return None
        bias, ts = ts[0], ts[1:3]
    if len(ts) < 2:
        return None
    (a, dt), (b, _) = ts[0], ts[1]
    if base in ("mm", "addmm") and len(a) == 2 and len(b) == 2:
        (m, k), n, batch = a, b[1], 1
    elif base in ("bmm", "baddbmm") and len(a) == 3 and len(b) == 3:
        batch, m, k = a
        n = b[2]
        if b[0] != batch:
            return f"batch sizes disagree ({batch} != {b[0]}; is the trace cut or edited?)"
    else:
        return None
    if b[-2] != k:
        return (f"inner dimensions disagree ({'x'.join(map(str, a))} @ "
                f"{'x'.join(map(str, b))}: {k} != {b[-2]}; is the trace cut or edited?)")
    cx = dt in COMPLEX_REAL
    count = ops.matmul(m, n, k, dtype=real_dtype(dt), batch=batch)
    # complex: each multiply-add is 8 real FLOP (4x the real 2), each element 2 values
    flop, nbytes = count.flop * (4 if cx else 1), count.bytes * (2 if cx else 1)
    if bias is not None:   # out = beta * bias + alpha * (a @ b): the bias read, its add
        nbytes += _in_bytes([bias])   # not counted (module docstring: 2mnk on every path)
    return OpWork(base, flop, nbytes, count.precision, count.unit, cx)


def _matvec(call: OpCall) -> OpWork | str | None:
    """aten::mv(A[m,n], x[n]), aten::addmv(b[m], A, x, beta, alpha), aten::dot / vdot(x[n],
    y[n]): the counts of `rooflab ai gemv` (ops.gemv: FLOP 2mn, bytes s·(mn + n + m), the
    vector unit), a dot being the 1 x n case (2n FLOP, s·(2n + 1) bytes); addmv adds one
    FLOP per output element and reads its bias (beta != 0), as addmm does (review 13v
    F-D). mv, addmv: op 'gemv', the kind report and whatif read as weight-streaming."""
    from ..workloads import ops

    base = call.name.removeprefix("aten::").rstrip("_")
    ts = _tensors(call)
    bias = None
    if base == "addmv":
        if len(ts) < 3:
            return None
        bias, ts = ts[0], ts[1:3]
    if len(ts) < 2:
        return None
    (a, dt), (x, _) = ts[0], ts[1]
    if base in ("mv", "addmv"):
        if len(a) != 2 or len(x) != 1:
            return None
        (m, n) = a
    elif len(a) == 1 and len(x) == 1:   # dot, vdot
        m, n = 1, a[0]
    else:
        return None
    if x[0] != n:
        return (f"lengths disagree ({'x'.join(map(str, a))} with {x[0]}; is the trace cut "
                f"or edited?)")
    cx = dt in COMPLEX_REAL
    count = ops.gemv(m, n, dtype=real_dtype(dt))
    # complex: each multiply-add is 8 real FLOP (4x the real 2), each element 2 values
    flop, nbytes = count.flop * (4 if cx else 1), count.bytes * (2 if cx else 1)
    # out = beta * bias + alpha * (A @ x): one add per output element and the bias read,
    # unless beta is 0 (PyTorch then ignores the bias: aten::mv calls addmv_(out, A, x, 0))
    if bias is not None and _const(call, 3, 1) != 0:
        flop += m * (2 if cx else 1)
        nbytes += _in_bytes([bias])
    # a matrix-vector product is the GEMV report and whatif know (batch, int4 weights)
    return OpWork(base if base in ("dot", "vdot") else "gemv", flop, nbytes,
                  count.precision, count.unit, cx)


def _elementwise(call: OpCall) -> OpWork | str | None:
    ts = _tensors(call)
    name = call.name.removeprefix("aten::").rstrip("_")
    values = ts[1:] if name in SELECTS else ts   # where's condition is bool, not the data
    if not values:
        return None
    n = _numel(_broadcast([s for s, _ in ts]))
    if n < 1:
        return None
    dt = result_dtype(values)
    if name in FLOAT_RESULT and _category(dt) < 2:
        dt = "fp32"
    out_dt = ts[0][1] if call.name.endswith("_") else dt   # in place: written as self
    if dt in COMPLEX_REAL:
        per = COMPLEX_FLOP_PER_ELEMENT.get(name)
        if per is None:
            return f"no formula for complex {name}"
    else:
        per = 0 if name in COMPARISONS | SELECTS else 1
    nbytes = _in_bytes(ts) + n * itemsize(out_dt)
    return OpWork(name, float(per * n), nbytes, flop_precision(real_dtype(dt)), "vector",
                  dt in COMPLEX_REAL)


def _rows_cols(shape: Sequence[int], dim: int) -> tuple[int, int] | None:
    if not shape:
        return None
    dim = dim % len(shape)
    cols = shape[dim]
    return _numel(shape) // cols, cols


def _softmax(call: OpCall) -> OpWork | str | None:
    from ..workloads import ops

    ts = _tensors(call)
    if not ts:
        return None
    if ts[0][1] in COMPLEX_REAL:
        return "no formula for complex softmax"
    rc = _rows_cols(ts[0][0], int(_const(call, 1, -1)))
    if rc is None:
        return None
    c = ops.softmax(*rc, dtype=ts[0][1])
    return OpWork("softmax", c.flop, c.bytes, c.precision, c.unit)


def _layernorm(call: OpCall) -> OpWork | str | None:
    """aten::native_layer_norm(input, normalized_shape, weight?, bias?, eps): the trace
    leaves an absent weight or bias untyped, so the tensors present say what is read."""
    ts = _tensors(call)
    if not ts:
        return None
    shape, dt = ts[0]
    if dt in COMPLEX_REAL:
        return "no formula for complex layer_norm"
    affine = [(tuple(call.dims[i]), d) for i in (2, 3) if i < len(call.dims)
              and call.dims[i] and (d := dtype_of(call.types[i])) is not None]
    e = _numel(shape)
    flop = (LAYERNORM_PLAIN_FLOP_PER_ELEMENT + len(affine)) * e
    nbytes = 2 * e * itemsize(dt) + _in_bytes(affine)   # x read, y written, gamma/beta read
    return OpWork("layernorm", float(flop), nbytes, flop_precision(dt), "vector")


def _per_dim(value, spatial: int) -> list[int]:
    """A conv argument per spatial dimension: [s] is broadcast, [s1, s2] kept."""
    v = list(value) if isinstance(value, (list, tuple)) else [value]
    if len(v) == 1:
        v = v * spatial
    if len(v) != spatial or not all(isinstance(x, int) and not isinstance(x, bool) for x in v):
        raise ValueError(f"{value!r} for {spatial} spatial dimensions")
    return v


def _conv(call: OpCall) -> OpWork | str | None:
    """aten::convolution(input, weight, bias, stride, padding, dilation, transposed,
    output_padding, groups), 1-D to 3-D: FLOP 2·N·K·(output positions)·(C/groups)·(taps),
    each output size floor((H + 2p - d(R-1) - 1)/s) + 1 (torch.nn.Conv2d's docs); bytes
    input + filter + output (+ bias), no im2col. Transposed: _conv_transposed."""
    ts = _tensors(call)
    if len(ts) < 2:
        return None
    (x, dt), (wt, _) = ts[0], ts[1]
    spatial = len(wt) - 2
    if spatial < 1 or len(x) not in (spatial + 1, spatial + 2):
        return None
    if dt in COMPLEX_REAL:
        return "no formula for a complex convolution"
    stride, padding, dilation = (_per_dim(_const(call, i, [d]), spatial)
                                 for i, d in ((3, 1), (4, 0), (5, 1)))
    groups = int(_const(call, 8, 1))
    n, c, *size = x if len(x) == spatial + 2 else (1, *x)   # unbatched input: N = 1
    if _const(call, 6, False):
        return _conv_transposed(call, (n, c, size), wt, dt, (stride, padding, dilation), groups)
    k, cg, *taps = wt
    if groups < 1 or c != cg * groups or k % groups:
        return f"channels disagree: input {c}, filter {k}x{cg} in {groups} group(s)"
    out = [(h + 2 * p - d * (r - 1) - 1) // s + 1
           for h, r, s, p, d in zip(size, taps, stride, padding, dilation, strict=True)]
    if min(out) < 1 or min(stride) < 1:
        return None
    e = itemsize(dt)
    flop = 2.0 * n * k * _numel(out) * cg * _numel(taps)
    nbytes = e * (n * c * _numel(size) + k * cg * _numel(taps) + n * k * _numel(out))
    nbytes += _in_bytes(ts[2:3])   # the bias, when there is one
    return OpWork(f"conv{spatial}d", flop, nbytes, flop_precision(dt), _conv_unit(dt))


def _conv_unit(dt: str) -> str | None:
    from ..workloads.ops_common import TENSOR_DTYPES

    return "tensor" if dt in TENSOR_DTYPES else None


def _conv_transposed(call: OpCall, x, wt, dt, sizes, groups) -> OpWork | str | None:
    """A transposed convolution (weight [C_in, C_out/g, taps]): each input position
    scatters into C_out/g x taps outputs, FLOP 2·N·C_in·(input positions)·(C_out/g)·(taps)
    (FlopCounterMode's conv_flop_count, transposed); output size (H-1)s - 2p + d(R-1) +
    output_padding + 1 (torch.nn.ConvTranspose2d's docs) for the bytes written."""
    (n, c, size), (k, cg, *taps) = x, wt
    extra = _per_dim(_const(call, 7, [0]), len(taps))
    if groups < 1 or c != k or c % groups:
        return f"channels disagree: input {c}, transposed filter {k}x{cg} in {groups} group(s)"
    out = [(h - 1) * s - 2 * p + d * (r - 1) + o + 1
           for h, r, s, p, d, o in zip(size, taps, *sizes, extra, strict=True)]
    if min(out) < 1:
        return None
    flop = 2.0 * n * c * _numel(size) * cg * _numel(taps)
    nbytes = itemsize(dt) * (n * c * _numel(size) + _numel(wt) + n * cg * groups * _numel(out))
    return OpWork(f"conv{len(taps)}d", flop, nbytes + _in_bytes(_tensors(call)[2:3]),
                  flop_precision(dt), _conv_unit(dt))


RULES = {f"aten::{n}": _matmul for n in ("mm", "addmm", "bmm", "baddbmm")}
RULES.update({f"aten::{n}": _matvec for n in ("mv", "addmv", "addmv_", "dot", "vdot")})
RULES.update({f"aten::{n}{suffix}": _elementwise for n in ELEMENTWISE_BINARY + ELEMENTWISE_UNARY
              for suffix in ("", "_")})
RULES.update({"aten::_softmax": _softmax, "aten::native_layer_norm": _layernorm,
              "aten::convolution": _conv})
# Imported here, not at the top: their rules use the helpers above.
from .torch_ops_attention import ATTENTION_RULES  # noqa: E402
from .torch_ops_backward import BACKWARD_RULES  # noqa: E402
from .torch_ops_loss import LOSS_RULES  # noqa: E402
from .torch_ops_memory import MEMORY_RULES  # noqa: E402
from .torch_ops_pool import POOL_RULES  # noqa: E402
from .torch_ops_reduce import REDUCE_RULES  # noqa: E402
from .torch_ops_rmsnorm import RMSNORM_RULES  # noqa: E402

for _more in (BACKWARD_RULES, MEMORY_RULES, REDUCE_RULES, LOSS_RULES, ATTENTION_RULES,
              POOL_RULES, RMSNORM_RULES):
    RULES.update(_more)
from .torch_ops_table import TABLE_RULES  # noqa: E402  (after the rest: it checks RULES)

RULES.update(TABLE_RULES)   # last: its add/sub (alpha) replace the plain elementwise rule


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
    return "no formula for these shapes" if work is None else work


def op_work(call: OpCall) -> OpWork | None:
    """FLOP and bytes of one call, or None when the shapes do not fit (a tests' oracle)."""
    work = work_or_reason(call)
    return work if isinstance(work, OpWork) else None


def precision_of(types: Sequence[str]) -> str:
    for t in types:
        d = dtype_of(t)
        if d is not None:
            return flop_precision(real_dtype(d))
    return "fp32"
