"""FLOP and compulsory bytes of PyTorch's pooling and group norm ops, from the recorded
shapes (review r2 F4: a CNN's pooling and a GroupNorm were time in the "without a FLOP
formula" note, up to half a training step's).

The counts are workloads/torch_rules/layer.py's, one rule set with `rooflab.measure`'s
counter (review s28 R3 F2); this module reads the recorded shapes. In short:
- max pooling compares (0 FLOP, as ReLU and `maximum`: profilers count FADD/FMUL/FFMA, not
  FMNMX); its backward adds each grad_output element into grad_input at its index, 1 per
  grad_output element (embedding_dense_backward's scatter-add);
- average pooling is a mean per window: window - 1 adds and 1 divide, the window's size
  per output (mean's convention: the input elements it reads); its backward 1 divide per
  grad_output element and 1 add per window element it spreads to;
- group norm is a layer norm over each group: layer_norm's per-element counts (5, + 1 each
  for weight and bias) and its backward's (workloads.torch_rules.flop.
  layernorm_backward_per_element), mean and rstd left out of the bytes as layer_norm's are.
Bytes: every tensor input read once, each output written once (max pooling's int64 indices
too). The aten ops are the ones the CPU and CUDA traces record under the module calls
(`aten::max_pool2d` calls `aten::max_pool2d_with_indices`, `aten::adaptive_avg_pool2d`
calls `aten::_adaptive_avg_pool2d`, `aten::group_norm` calls `aten::native_group_norm`):
the outer ops have no rule, so only their own time stays under their name.
The live counter (bench/torch_pool_rules.py) reads the same counts off the tensors.
"""

from __future__ import annotations

from ..units import flop_precision
from ..workloads.torch_rules.layer import (
    adaptive_avg_pool_backward_flop,
    adaptive_geometry,
    avg_pool_backward_flop,
    avg_pool_flop,
    group_norm_backward_flop,
    group_norm_flop,
    scatter_add_flop,
    window_out,
)
from .torch_ops_base import (
    COMPLEX_REAL,
    OpCall,
    OpWork,
    dtype_of,
    in_bytes,
    itemsize,
    numel,
    per_dim,
)

INDEX_BYTES = 8   # max pooling's indices are int64


def _pool_geometry(call: OpCall, x: tuple[int, ...], at: int, dilation_at: int | None,
                   ceil_at: int) -> tuple[int, tuple[int, ...], int] | None:
    """(leading elements N·C, output spatial shape, window size) of a 2-D pool of x, from
    kernel_size at `at`, stride, padding (and dilation) after it; None when unreadable."""
    if len(x) not in (3, 4):
        return None
    k = per_dim(call.const(at, None), 2)
    s = per_dim(call.const(at + 1, None) or k, 2)   # stride [] is the kernel's
    p = per_dim(call.const(at + 2, 0), 2)
    d = per_dim(call.const(dilation_at, 1) if dilation_at else 1, 2)
    ceil = bool(call.const(ceil_at, False))
    out = tuple(window_out(n, *a, ceil) for n, a in zip(x[-2:], zip(k, s, p, d, strict=True),
                                                        strict=True))
    if min(out) < 1 or min(k) < 1:
        return None
    return numel(x[:-2]), out, numel(k)


def _real(call: OpCall, what: str):
    ts = call.tensors()
    if not ts:
        return None
    if ts[0][1] in COMPLEX_REAL:
        return f"no formula for complex {what}"
    return ts


def _max_pool(call: OpCall) -> OpWork | str | None:
    """aten::max_pool2d_with_indices(self, kernel_size, stride, padding, dilation,
    ceil_mode): 0 FLOP; input read, output and int64 indices written."""
    ts = _real(call, "max_pool2d")
    if not isinstance(ts, list):
        return ts
    x, dt = ts[0]
    geo = _pool_geometry(call, x, 1, 4, 5)
    if geo is None:
        return None
    lead, out, _ = geo
    n_out = lead * numel(out)
    return OpWork("max_pool2d", 0.0, float(numel(x) * itemsize(dt)
                                           + n_out * (itemsize(dt) + INDEX_BYTES)),
                  flop_precision(dt), None)


def _max_pool_backward(call: OpCall) -> OpWork | str | None:
    """aten::max_pool2d_with_indices_backward(grad_output, self, kernel_size, stride,
    padding, dilation, ceil_mode, indices): 1 add per grad_output element; grad_output and
    indices read, grad_input (self's shape; self is not read) written."""
    ts = _real(call, "max_pool2d_backward")
    if not isinstance(ts, list) or len(ts) < 2:
        return ts if isinstance(ts, str) else None
    (dy, dt), (x, _) = ts[0], ts[1]
    idx = [t for t in ts[2:] if t[1] == "int64"]
    n = numel(dy)
    nbytes = n * itemsize(dt) + in_bytes(idx[:1]) + numel(x) * itemsize(dt)
    return OpWork("max_pool2d_backward", scatter_add_flop(n), float(nbytes), flop_precision(dt),
                  "vector")


def _avg_pool(call: OpCall) -> OpWork | str | None:
    """aten::avg_pool2d(self, kernel_size, stride, padding, ceil_mode, count_include_pad,
    divisor_override): the window's size per output; input read, output written."""
    ts = _real(call, "avg_pool2d")
    if not isinstance(ts, list):
        return ts
    x, dt = ts[0]
    geo = _pool_geometry(call, x, 1, None, 4)
    if geo is None:
        return None
    lead, out, window = geo
    n_out = lead * numel(out)
    return OpWork("avg_pool2d", avg_pool_flop(n_out, window),
                  float((numel(x) + n_out) * itemsize(dt)), flop_precision(dt), "vector")


def _avg_pool_backward(call: OpCall) -> OpWork | str | None:
    """aten::avg_pool2d_backward(grad_output, self, kernel_size, stride, padding,
    ceil_mode, count_include_pad, divisor_override): 1 divide per grad_output element, 1
    add per window element; grad_output read, grad_input written."""
    ts = _real(call, "avg_pool2d_backward")
    if not isinstance(ts, list) or len(ts) < 2:
        return ts if isinstance(ts, str) else None
    (dy, dt), (x, _) = ts[0], ts[1]
    k = per_dim(call.const(2, None), 2)
    n = numel(dy)
    return OpWork("avg_pool2d_backward", avg_pool_backward_flop(n, numel(k)),
                  float((n + numel(x)) * itemsize(dt)), flop_precision(dt), "vector")


def _adaptive_avg_pool(call: OpCall) -> OpWork | str | None:
    """aten::_adaptive_avg_pool2d(self, output_size): each output the mean of its window
    (its size in FLOP); input read, output written."""
    ts = _real(call, "adaptive_avg_pool2d")
    if not isinstance(ts, list):
        return ts
    x, dt = ts[0]
    geo = adaptive_geometry(x, tuple(per_dim(call.const(1, None), 2)))
    if geo is None:
        return None
    n_out, windows = geo
    return OpWork("adaptive_avg_pool2d", float(windows),
                  float((numel(x) + n_out) * itemsize(dt)), flop_precision(dt), "vector")


def _adaptive_avg_pool_backward(call: OpCall) -> OpWork | str | None:
    """aten::_adaptive_avg_pool2d_backward(grad_output, self): 1 divide per grad_output
    element, 1 add per window element; grad_output read, grad_input written."""
    ts = _real(call, "adaptive_avg_pool2d_backward")
    if not isinstance(ts, list) or len(ts) < 2:
        return ts if isinstance(ts, str) else None
    (dy, dt), (x, _) = ts[0], ts[1]
    geo = adaptive_geometry(x, tuple(dy[-2:]))
    if geo is None or len(dy) != len(x):
        return None
    n_out, windows = geo
    return OpWork("adaptive_avg_pool2d_backward", adaptive_avg_pool_backward_flop(n_out, windows),
                  float((n_out + numel(x)) * itemsize(dt)), flop_precision(dt), "vector")


def _group_norm(call: OpCall) -> OpWork | str | None:
    """aten::native_group_norm(input, weight?, bias?, N, C, HxW, group, eps): layer_norm's
    per-element FLOP; x read, y written, weight and bias read (an absent one is untyped)."""
    ts = _real(call, "group_norm")
    if not isinstance(ts, list):
        return ts
    x, dt = ts[0]
    affine = [(tuple(call.dims[i]), d) for i in (1, 2) if i < len(call.dims)
              and call.dims[i] and (d := dtype_of(call.types[i])) is not None]
    e = numel(x)
    return OpWork("groupnorm", group_norm_flop(e, len(affine)),
                  2 * e * itemsize(dt) + in_bytes(affine), flop_precision(dt), "vector")


def _group_norm_backward(call: OpCall) -> OpWork | str | None:
    """aten::native_group_norm_backward(grad_out, input, mean, rstd, weight?, N, C, HxW,
    group, output_mask): layer_norm backward's per-element FLOP; the tensors read, each
    gradient the mask asks for written (grad_weight and grad_bias C elements each)."""
    ts = _real(call, "group_norm_backward")
    if not isinstance(ts, list) or len(ts) < 2:
        return ts if isinstance(ts, str) else None
    x, dt = ts[0]
    weight = call.dims[4] if len(call.dims) > 4 and call.dims[4] else None
    gi, gw, gb = call.output_mask(9)
    channels = int(call.const(6, x[1] if len(x) > 1 else 1))
    e = numel(x)
    written = gi * e + (gw + gb) * channels
    return OpWork("groupnorm_backward",
                  group_norm_backward_flop(e, gi, gw, gb, weight is not None),
                  in_bytes(ts) + written * itemsize(dt), flop_precision(dt), "vector")


POOL_RULES = {
    "aten::max_pool2d_with_indices": _max_pool,
    "aten::max_pool2d_with_indices_backward": _max_pool_backward,
    "aten::avg_pool2d": _avg_pool,
    "aten::avg_pool2d_backward": _avg_pool_backward,
    "aten::_adaptive_avg_pool2d": _adaptive_avg_pool,
    "aten::_adaptive_avg_pool2d_backward": _adaptive_avg_pool_backward,
    "aten::native_group_norm": _group_norm,
    "aten::native_group_norm_backward": _group_norm_backward,
}
# Their counts depend on constant arguments (kernel, stride, padding, output size, the
# backward's output_mask): calls of one shape with others are other groups.
ARGS_IN_KEY = frozenset(POOL_RULES)
