"""FLOP and compulsory bytes of one PyTorch op call from the shapes the profiler recorded.

The trace gives each op's input shapes ("Input Dims"), dtypes ("Input type") and constant
arguments ("Concrete Inputs"), not its outputs; each rule infers the output shape. FLOP
formulas come from rooflab.workloads.ops (one multiply-add = 2 FLOP); bytes are compulsory
traffic from the actual shapes: every tensor input read once, the output written once
(broadcast inputs count their own, smaller, size).

Ops with a rule here are "counted"; an op that has none (aten::linear, aten::matmul, ...)
is not, but the counted ops it calls are (linear -> addmm, matmul -> mm).
"""

from __future__ import annotations

import ast
import math
from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import InputError
from ..units import dtype_bytes, flop_precision

# Profiler dtype spellings -> rooflab dtypes. The `fnuz` fp8 variants are MI300's (gfx942)
# fp8 formats, torch.float8_e4m3fnuz / float8_e5m2fnuz, which ROCm traces record.
TORCH_DTYPES = {
    "float": "fp32", "double": "fp64", "c10::Half": "fp16", "c10::BFloat16": "bf16",
    "c10::Float8_e4m3fn": "fp8", "c10::Float8_e5m2": "fp8",
    "c10::Float8_e4m3fnuz": "fp8", "c10::Float8_e5m2fnuz": "fp8", "long int": "int64",
    "long": "int64", "int": "int32", "short int": "int16", "signed char": "int8",
    "unsigned char": "uint8", "bool": "bool", "c10::complex<float>": "fp32",
}
ELEMENTWISE_BINARY = ("add", "sub", "mul", "div", "rsub", "maximum", "minimum", "pow",
                      "where")
ELEMENTWISE_UNARY = ("relu", "gelu", "silu", "sigmoid", "tanh", "exp", "log", "neg", "abs",
                     "sqrt", "rsqrt", "reciprocal", "clamp", "hardtanh", "leaky_relu",
                     "threshold", "sin", "cos", "erf")
# Comparisons count 0 FLOP, as in `rooflab ai` and bench/torch_count.py: profilers count
# FLOP from FADD/FMUL/FFMA, not from FMNMX (docs/bench.md, "comparisons ... 0").
COMPARISONS = frozenset({"relu", "maximum", "minimum", "clamp", "hardtanh", "threshold"})


@dataclass(frozen=True)
class OpCall:
    """One recorded call: op name, tensor shapes (None for non-tensors), dtypes, constants."""

    name: str
    dims: tuple[tuple[int, ...] | None, ...]
    types: tuple[str, ...]
    concrete: tuple[str, ...] = ()


@dataclass(frozen=True)
class OpWork:
    op: str
    flop: float
    bytes: float
    precision: str
    unit: str | None


def dtype_of(type_name: str) -> str | None:
    return TORCH_DTYPES.get(type_name.strip())


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
    return float(sum(_numel(s) * dtype_bytes(d) for s, d in tensors))


def _const(call: OpCall, i: int, default):
    try:
        value = ast.literal_eval(call.concrete[i])
    except (IndexError, ValueError, SyntaxError):
        return default
    return value


def _matmul(call: OpCall) -> OpWork | None:
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
    else:
        return None
    count = ops.matmul(m, n, k, dtype=dt, batch=batch)
    flop, nbytes = count.flop, count.bytes
    if bias is not None:   # out = beta * bias + alpha * (a @ b): one add per output element
        flop += batch * m * n
        nbytes += _in_bytes([bias])
    return OpWork(base, flop, nbytes, count.precision, count.unit)


def _elementwise(call: OpCall) -> OpWork | None:
    from ..workloads import ops

    ts = _tensors(call)
    if not ts:
        return None
    out_shape = _broadcast([s for s, _ in ts])
    dt = ts[0][1]
    n = _numel(out_shape)
    if n < 1:
        return None
    name = call.name.removeprefix("aten::").rstrip("_")
    count = ops.elementwise(n, dtype=dt, inputs=1, outputs=1,
                            flop_per_element=0 if name in COMPARISONS else 1)
    nbytes = _in_bytes(ts) + n * dtype_bytes(dt)
    return OpWork(name, count.flop, nbytes, count.precision, "vector")


def _rows_cols(shape: Sequence[int], dim: int) -> tuple[int, int] | None:
    if not shape:
        return None
    dim = dim % len(shape)
    cols = shape[dim]
    return _numel(shape) // cols, cols


def _softmax(call: OpCall) -> OpWork | None:
    from ..workloads import ops

    ts = _tensors(call)
    if not ts:
        return None
    rc = _rows_cols(ts[0][0], int(_const(call, 1, -1)))
    if rc is None:
        return None
    c = ops.softmax(*rc, dtype=ts[0][1])
    return OpWork("softmax", c.flop, c.bytes, c.precision, c.unit)


def _layernorm(call: OpCall) -> OpWork | None:
    from ..workloads import ops

    ts = _tensors(call)
    if not ts:
        return None
    shape, dt = ts[0]
    norm = _const(call, 1, None)
    cols = _numel(norm) if isinstance(norm, (list, tuple)) and norm else shape[-1]
    c = ops.layernorm(_numel(shape) // cols, cols, dtype=dt)
    return OpWork("layernorm", c.flop, c.bytes, c.precision, c.unit)


def _conv(call: OpCall) -> OpWork | None:
    from ..workloads import ops

    ts = _tensors(call)
    if len(ts) < 2 or len(ts[0][0]) != 4 or len(ts[1][0]) != 4:
        return None
    (n, c, h, w), dt = ts[0]
    k, _, r, s = ts[1][0]
    stride, padding = _const(call, 3, [1, 1]), _const(call, 4, [0, 0])
    dilation, transposed = _const(call, 5, [1, 1]), _const(call, 6, False)
    groups = int(_const(call, 8, 1))
    sym = all(isinstance(v, (list, tuple)) and len(set(v)) == 1
              for v in (stride, padding, dilation))
    if transposed or not sym or dilation[0] != 1:
        return None   # no formula for these: reported as not counted
    count = ops.conv2d(n, c, h, w, k, r, s, stride=stride[0], padding=padding[0], dtype=dt,
                       groups=groups)
    nbytes = count.bytes + (_in_bytes([ts[2]]) if len(ts) > 2 else 0.0)
    return OpWork("conv2d", count.flop, nbytes, count.precision, count.unit)


def _attention(call: OpCall) -> OpWork | None:
    """aten::scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal, ...):
    q [B, H, Lq, D], k and v [B, Hkv, Lkv, D]; flash byte model (scores stay on chip)."""
    from ..workloads import ops

    dims = call.dims
    if len(dims) < 3 or any(d is None or len(d) != 4 for d in dims[:3]):
        return None
    (b, h, lq, d), (_, hkv, lkv, _) = dims[0], dims[1]
    dt = dtype_of(call.types[0])
    if dt is None:
        return None
    causal = bool(_const(call, 5, False))
    c = ops.attention(b, h, lq, lkv, d, kv_heads=hkv, dtype=dt, flash=True, causal=causal)
    mask = dims[3] if len(dims) > 3 and dims[3] else None
    extra = _numel(mask) * dtype_bytes(dtype_of(call.types[3]) or dt) if mask else 0.0
    return OpWork("attention", c.flop, c.bytes + extra, c.precision, c.unit)


RULES = {f"aten::{n}": _matmul for n in ("mm", "addmm", "bmm", "baddbmm")}
RULES.update({f"aten::{n}{suffix}": _elementwise for n in ELEMENTWISE_BINARY + ELEMENTWISE_UNARY
              for suffix in ("", "_")})
RULES.update({"aten::_softmax": _softmax, "aten::native_layer_norm": _layernorm,
              "aten::convolution": _conv, "aten::scaled_dot_product_attention": _attention})


def has_rule(name: str) -> bool:
    return name in RULES


def op_work(call: OpCall) -> OpWork | None:
    """FLOP and bytes of one call, or None when the shapes do not fit the rule."""
    rule = RULES.get(call.name)
    if rule is None:
        return None
    try:
        return rule(call)
    except (InputError, TypeError, ValueError, IndexError, ZeroDivisionError):
        return None


def precision_of(types: Sequence[str]) -> str:
    for t in types:
        d = dtype_of(t)
        if d is not None:
            return flop_precision(d)
    return "fp32"
