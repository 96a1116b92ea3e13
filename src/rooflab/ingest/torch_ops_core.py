"""The trace rules of the core PyTorch ops: matmuls (mm, addmm, bmm, baddbmm), matrix-vector
products and dots, elementwise ops with PyTorch's type promotion, softmax, layer norm and
convolutions (1-D to 3-D, transposed too), from the shapes the profiler recorded. The
conventions are ingest/torch_ops.py's module docstring; ingest/torch_ops_table.py builds
on matmul_rule, elementwise_rule and softmax_rule.
"""

from __future__ import annotations

from ..units import flop_precision
from ..workloads import ops
from ..workloads.count import OpCount
from ..workloads.ops import LAYERNORM_PLAIN_FLOP_PER_ELEMENT  # 5; gamma, beta add 1 each
from ..workloads.ops_conv import conv_input_elements, conv_unit
from ..workloads.torch_rules.flop import COMPARISONS, COMPLEX_FLOP_PER_ELEMENT
from .torch_ops_base import (
    COMPLEX_REAL,
    OpCall,
    OpWork,
    broadcast,
    category,
    dtype_of,
    in_bytes,
    itemsize,
    numel,
    per_dim,
    real_dtype,
    result_dtype,
    rows_cols,
)

ELEMENTWISE_BINARY = ("add", "sub", "mul", "div", "rsub", "maximum", "minimum", "pow",
                      "where")
ELEMENTWISE_UNARY = ("relu", "gelu", "silu", "sigmoid", "tanh", "exp", "log", "neg", "abs",
                     "sqrt", "rsqrt", "reciprocal", "clamp", "hardtanh", "leaky_relu",
                     "threshold", "sin", "cos", "erf")
# Comparisons (relu, maximum, clamp, ...) count 0 FLOP: torch_rules.flop.COMPARISONS, the
# live counter's list (profilers count FLOP from FADD/FMUL/FFMA, not from FMNMX).
# `where(cond, a, b)` selects: no arithmetic (bench/torch_count.py lists it as movement).
SELECTS = frozenset({"where"})
# Real FLOP per element of complex elementwise ops: COMPLEX_FLOP_PER_ELEMENT, one table with
# `measure`'s counter ((a+bi)(c+di) 6, ± 2, a negation 2); other ops get no complex formula.
# Ops whose result is floating point even for integer inputs (true division, transcendental
# functions): integer inputs give the default dtype, fp32 (torch.get_default_dtype()).
FLOAT_RESULT = frozenset({"div", "gelu", "silu", "sigmoid", "tanh", "exp", "log", "sqrt",
                          "rsqrt", "reciprocal", "sin", "cos", "erf"})


def matmul_rule(call: OpCall) -> OpWork | str | None:
    base = call.name.removeprefix("aten::")
    operands = _operands(call, base in ("addmm", "baddbmm"))
    if operands is None:
        return None
    bias, (a, dt), (b, _) = operands
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
    flop, nbytes = _real_terms(count, cx)
    if bias is not None:   # out = beta * bias + alpha * (a @ b): the bias read, its add
        nbytes += in_bytes([bias])   # not counted (module docstring: 2mnk on every path)
    return OpWork(base, flop, nbytes, count.precision, count.unit, cx)


def _matvec(call: OpCall) -> OpWork | str | None:
    """aten::mv(A[m,n], x[n]), aten::addmv(b[m], A, x, beta, alpha), aten::dot / vdot(x[n],
    y[n]): the counts of `rooflab ai gemv` (ops.gemv: FLOP 2mn, bytes s·(mn + n + m), the
    vector unit), a dot being the 1 x n case (2n FLOP, s·(2n + 1) bytes); addmv adds one
    FLOP per output element and reads its bias (beta != 0), as addmm does (review 13v
    F-D). mv, addmv: op 'gemv', the kind report and whatif read as weight-streaming."""
    base = call.name.removeprefix("aten::").rstrip("_")
    operands = _operands(call, base == "addmv")
    if operands is None:
        return None
    bias, (a, dt), (x, _) = operands
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
    flop, nbytes = _real_terms(count, cx)
    # out = beta * bias + alpha * (A @ x): one add per output element and the bias read,
    # unless beta is 0 (PyTorch then ignores the bias: aten::mv calls addmv_(out, A, x, 0))
    if bias is not None and call.const(3, 1) != 0:
        flop += m * (2 if cx else 1)
        nbytes += in_bytes([bias])
    # a matrix-vector product is the GEMV report and whatif know (batch, int4 weights)
    return OpWork(base if base in ("dot", "vdot") else "gemv", flop, nbytes,
                  count.precision, count.unit, cx)


def _operands(call: OpCall, biased: bool) -> tuple | None:
    """(bias or None, first operand, second operand) of a matrix product's recorded
    tensors, each (shape, dtype): addmm's, baddbmm's and addmv's bias comes first; None
    where fewer tensors were recorded (a cut or edited trace)."""
    ts = call.tensors()
    if biased:
        return (ts[0], ts[1], ts[2]) if len(ts) >= 3 else None
    return (None, ts[0], ts[1]) if len(ts) >= 2 else None


def _real_terms(count: OpCount, cx: bool) -> tuple[float, float]:
    """(FLOP, bytes) of a matrix product counted at its real dtype, in real terms for a
    complex one (cx): each multiply-add is 8 real FLOP (4x the real 2), each element 2
    values."""
    return count.flop * (4 if cx else 1), count.bytes * (2 if cx else 1)


def elementwise_rule(call: OpCall) -> OpWork | str | None:
    ts = call.tensors()
    name = call.name.removeprefix("aten::").rstrip("_")
    values = ts[1:] if name in SELECTS else ts   # where's condition is bool, not the data
    if not values:
        return None
    n = numel(broadcast([s for s, _ in ts]))
    if n < 1:
        return None
    dt = result_dtype(values)
    if name in FLOAT_RESULT and category(dt) < 2:
        dt = "fp32"
    out_dt = ts[0][1] if call.name.endswith("_") else dt   # in place: written as self
    if dt in COMPLEX_REAL:
        per = COMPLEX_FLOP_PER_ELEMENT.get(name)
        if per is None:
            return f"no formula for complex {name}"
    else:
        per = 0 if name in COMPARISONS | SELECTS else 1
    nbytes = in_bytes(ts) + n * itemsize(out_dt)
    return OpWork(name, float(per * n), nbytes, flop_precision(real_dtype(dt)), "vector",
                  dt in COMPLEX_REAL)


def softmax_rule(call: OpCall) -> OpWork | str | None:
    ts = call.tensors()
    if not ts:
        return None
    if ts[0][1] in COMPLEX_REAL:
        return "no formula for complex softmax"
    rc = rows_cols(ts[0][0], int(call.const(1, -1)))
    if rc is None:
        return None
    c = ops.softmax(*rc, dtype=ts[0][1])
    return OpWork("softmax", c.flop, c.bytes, c.precision, c.unit)


def _layernorm(call: OpCall) -> OpWork | str | None:
    """aten::native_layer_norm(input, normalized_shape, weight?, bias?, eps): the trace
    leaves an absent weight or bias untyped, so the tensors present say what is read."""
    ts = call.tensors()
    if not ts:
        return None
    shape, dt = ts[0]
    if dt in COMPLEX_REAL:
        return "no formula for complex layer_norm"
    affine = [(tuple(call.dims[i]), d) for i in (2, 3) if i < len(call.dims)
              and call.dims[i] and (d := dtype_of(call.types[i])) is not None]
    e = numel(shape)
    flop = (LAYERNORM_PLAIN_FLOP_PER_ELEMENT + len(affine)) * e
    nbytes = 2 * e * itemsize(dt) + in_bytes(affine)   # x read, y written, gamma/beta read
    return OpWork("layernorm", float(flop), nbytes, flop_precision(dt), "vector")


def _conv(call: OpCall) -> OpWork | str | None:
    """aten::convolution(input, weight, bias, stride, padding, dilation, transposed,
    output_padding, groups), 1-D to 3-D: FLOP 2·N·K·(output positions)·(C/groups)·(taps),
    each output size floor((H + 2p - d(R-1) - 1)/s) + 1 (torch.nn.Conv2d's docs); bytes
    the input elements some output reads (a 1x1 stride-2 conv reads a quarter: ops_conv.
    conv_input_elements, as `rooflab ai conv2d` counts them) + filter + output (+ bias), no
    im2col. A depthwise conv (one channel per group) is vector work: cuDNN's depthwise
    kernels do not use tensor cores (ai conv2d holds it the same). Transposed:
    _conv_transposed."""
    ts = call.tensors()
    if len(ts) < 2:
        return None
    (x, dt), (wt, _) = ts[0], ts[1]
    spatial = len(wt) - 2
    if spatial < 1 or len(x) not in (spatial + 1, spatial + 2):
        return None
    if dt in COMPLEX_REAL:
        return "no formula for a complex convolution"
    stride, padding, dilation = (per_dim(call.const(i, [d]), spatial)
                                 for i, d in ((3, 1), (4, 0), (5, 1)))
    groups = int(call.const(8, 1))
    n, c, *size = x if len(x) == spatial + 2 else (1, *x)   # unbatched input: N = 1
    if call.const(6, False):
        return _conv_transposed(call, (n, c, size), wt, dt, (stride, padding, dilation), groups)
    k, cg, *taps = wt
    if groups < 1 or c != cg * groups or k % groups:
        return f"channels disagree: input {c}, filter {k}x{cg} in {groups} group(s)"
    out = [(h + 2 * p - d * (r - 1) - 1) // s + 1
           for h, r, s, p, d in zip(size, taps, stride, padding, dilation, strict=True)]
    if min(out) < 1 or min(stride) < 1:
        return None
    e = itemsize(dt)
    flop = 2.0 * n * k * numel(out) * cg * numel(taps)
    read = conv_input_elements(n, c, size, taps, stride, padding, dilation, out)
    nbytes = e * (read + k * cg * numel(taps) + n * k * numel(out))
    nbytes += in_bytes(ts[2:3])   # the bias, when there is one
    return OpWork(f"conv{spatial}d", flop, nbytes, flop_precision(dt),
                  conv_unit(dt, wt, groups))


def _conv_transposed(call: OpCall, x, wt, dt, sizes, groups) -> OpWork | str | None:
    """A transposed convolution (weight [C_in, C_out/g, taps]): each input position
    scatters into C_out/g x taps outputs, FLOP 2·N·C_in·(input positions)·(C_out/g)·(taps)
    (FlopCounterMode's conv_flop_count, transposed); output size (H-1)s - 2p + d(R-1) +
    output_padding + 1 (torch.nn.ConvTranspose2d's docs) for the bytes written."""
    (n, c, size), (k, cg, *taps) = x, wt
    extra = per_dim(call.const(7, [0]), len(taps))
    if groups < 1 or c != k or c % groups:
        return f"channels disagree: input {c}, transposed filter {k}x{cg} in {groups} group(s)"
    out = [(h - 1) * s - 2 * p + d * (r - 1) + o + 1
           for h, r, s, p, d, o in zip(size, taps, *sizes, extra, strict=True)]
    if min(out) < 1:
        return None
    flop = 2.0 * n * c * numel(size) * cg * numel(taps)
    nbytes = itemsize(dt) * (n * c * numel(size) + numel(wt) + n * cg * groups * numel(out))
    return OpWork(f"conv{len(taps)}d", flop, nbytes + in_bytes(call.tensors()[2:3]),
                  flop_precision(dt), conv_unit(dt, wt, groups, transposed=True))


CORE_RULES = {f"aten::{n}": matmul_rule for n in ("mm", "addmm", "bmm", "baddbmm")}
CORE_RULES.update({f"aten::{n}": _matvec for n in ("mv", "addmv", "addmv_", "dot", "vdot")})
CORE_RULES.update({f"aten::{n}{suffix}": elementwise_rule
                   for n in ELEMENTWISE_BINARY + ELEMENTWISE_UNARY for suffix in ("", "_")})
CORE_RULES.update({"aten::_softmax": softmax_rule, "aten::native_layer_norm": _layernorm,
                   "aten::convolution": _conv})
