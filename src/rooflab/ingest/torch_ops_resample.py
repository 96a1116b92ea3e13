"""FLOP and compulsory bytes of PyTorch's resampling ops from the recorded shapes:
upsampling (nearest, linear / bilinear / trilinear) and its backward, pixel_shuffle /
pixel_unshuffle, adaptive max pooling and its backward, reflect / replicate padding and its
backward (review s28 R3 F5: an SD UNet's `upsample_bilinear2d_backward` took more time than
its GroupNorm, in "without a FLOP formula"). The counts are workloads/torch_rules/layer.py's,
one rule set with `rooflab.measure`'s counter; bytes: every tensor input read once, each
output written once (adaptive max pooling's int64 indices too), as torch_ops_pool's.

The profiler records aten::upsample_nearest2d twice per call: the outer (.vec) overload
with scale factors and no output size, and the inner one with the output size. Both are
read (the output size, else floor(size x scale)); the outer one is counted with the inner
one's work (torch_trace's re-dispatch rule).
"""

from __future__ import annotations

import math

from ..units import flop_precision
from ..workloads.torch_rules.layer import (
    LINEAR_MODES,
    NEAREST_MODES,
    PADS,
    pad_backward_flop,
    scatter_add_flop,
    upsample_backward_flop,
    upsample_flop,
)
from .torch_ops_base import COMPLEX_REAL, OpCall, OpWork, in_bytes, itemsize, numel
from .torch_ops_pool import INDEX_BYTES


def _ints(value, n: int) -> list[int] | None:
    """value as n whole sizes, or None."""
    if not isinstance(value, (list, tuple)) or len(value) != n:
        return None
    if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in value):
        return None
    return list(value)


def _upsampled(call: OpCall, x: tuple[int, ...], dims: int) -> list[int] | None:
    """The output's spatial size: the output_size argument (1), else floor(size x scale)
    from the last list of scale factors recorded (the .vec overload's)."""
    size = _ints(call.const(1, None), dims)
    if size is not None:
        return size
    for i in range(len(call.concrete) - 1, 1, -1):
        scales = call.const(i, None)
        if (isinstance(scales, (list, tuple)) and len(scales) == dims
                and all(isinstance(s, (int, float)) and s > 0 for s in scales)):
            return [math.floor(n * s) for n, s in zip(x[-dims:], scales, strict=True)]
    return None


def _upsample(call: OpCall) -> OpWork | str | None:
    """aten::upsample_<mode><d>d(self, output_size, [align_corners,] scales...): input
    read, output written; FLOP layer.upsample_flop (nearest 0, bilinear 9 per output)."""
    op = call.name.removeprefix("aten::")
    dims = LINEAR_MODES.get(op) or NEAREST_MODES[op]
    ts = call.tensors()
    if not ts or len(ts[0][0]) != dims + 2:
        return None
    x, dt = ts[0]
    if dt in COMPLEX_REAL:
        return f"no formula for complex {op}"
    out = _upsampled(call, x, dims)
    if out is None:
        return None
    n_out = numel(x[:2]) * numel(out)
    flop = upsample_flop(op, n_out)
    return OpWork(op, float(flop), float((numel(x) + n_out) * itemsize(dt)),
                  flop_precision(dt), "vector" if flop else None)


def _upsample_backward(call: OpCall) -> OpWork | str | None:
    """aten::upsample_<mode><d>d_backward(grad_output, output_size, input_size, ...):
    grad_output read, grad_input (input_size) written; FLOP layer.upsample_backward_flop."""
    op = call.name.removeprefix("aten::").removesuffix("_backward")
    ts = call.tensors()
    if not ts:
        return None
    dy, dt = ts[0]
    size = _ints(call.const(2, None), len(dy))
    if size is None or dt in COMPLEX_REAL:
        return None if size is None else f"no formula for complex {op}_backward"
    n = numel(dy)
    return OpWork(f"{op}_backward", float(upsample_backward_flop(op, n)),
                  float((n + numel(size)) * itemsize(dt)), flop_precision(dt), "vector")


def _moved(call: OpCall) -> OpWork | str | None:
    """pixel_shuffle / pixel_unshuffle(self, factor): the same elements rearranged, 0 FLOP;
    input read, output written."""
    ts = call.tensors()
    if not ts:
        return None
    x, dt = ts[0]
    return OpWork(call.name.removeprefix("aten::"), 0.0, float(2 * numel(x) * itemsize(dt)),
                  flop_precision(dt), None)


def _pad(call: OpCall) -> OpWork | str | None:
    """reflection_pad<d>d / replication_pad<d>d(self, padding): 0 FLOP; input read, the
    padded output written (padding: (left, right[, top, bottom[, front, back]]), last
    dimension first, as F.pad takes it)."""
    ts = call.tensors()
    pads = call.const(1, None)
    if not ts or not isinstance(pads, (list, tuple)) or len(pads) % 2:
        return None
    x, dt = ts[0]
    k = len(pads) // 2
    if k > len(x):
        return None
    out = list(x)
    for i in range(k):
        out[-1 - i] += pads[2 * i] + pads[2 * i + 1]
    if min(out) < 1:
        return None
    return OpWork(call.name.removeprefix("aten::"), 0.0,
                  float((numel(x) + numel(out)) * itemsize(dt)), flop_precision(dt), None)


def _pad_backward(call: OpCall) -> OpWork | str | None:
    """<pad>_backward(grad_output, self, padding): the border added back in,
    layer.pad_backward_flop; grad_output read, grad_input (self's shape) written."""
    ts = call.tensors()
    if len(ts) < 2:
        return None
    (dy, dt), (x, _) = ts[0], ts[1]
    return OpWork(call.name.removeprefix("aten::"), pad_backward_flop(numel(dy), numel(x)),
                  float((numel(dy) + numel(x)) * itemsize(dt)), flop_precision(dt), "vector")


def _adaptive_max_pool(call: OpCall) -> OpWork | str | None:
    """adaptive_max_pool2d(self, output_size): 0 FLOP (comparisons); input read, output
    and int64 indices written."""
    ts = call.tensors()
    out = _ints(call.const(1, None), 2)
    if not ts or out is None or len(ts[0][0]) not in (3, 4):
        return None
    x, dt = ts[0]
    n_out = numel(x[:-2]) * numel(out)
    return OpWork("adaptive_max_pool2d", 0.0,
                  float(numel(x) * itemsize(dt) + n_out * (itemsize(dt) + INDEX_BYTES)),
                  flop_precision(dt), None)


def _adaptive_max_pool_backward(call: OpCall) -> OpWork | str | None:
    """adaptive_max_pool2d_backward(grad_output, self, indices): 1 add per grad_output
    element; grad_output and indices read, grad_input written."""
    ts = call.tensors()
    if len(ts) < 2:
        return None
    (dy, dt), (x, _) = ts[0], ts[1]
    idx = [t for t in ts[2:] if t[1] == "int64"]
    n = numel(dy)
    return OpWork("adaptive_max_pool2d_backward", scatter_add_flop(n),
                  float(n * itemsize(dt) + in_bytes(idx[:1]) + numel(x) * itemsize(dt)),
                  flop_precision(dt), "vector")


RESAMPLE_RULES = {
    **{f"aten::{op}": _upsample for op in (*LINEAR_MODES, *NEAREST_MODES)},
    **{f"aten::{op}_backward": _upsample_backward for op in (*LINEAR_MODES, *NEAREST_MODES)},
    "aten::pixel_shuffle": _moved, "aten::pixel_unshuffle": _moved,
    **{f"aten::{op}": _pad for op in PADS},
    **{f"aten::{op}_backward": _pad_backward for op in PADS},
    "aten::adaptive_max_pool2d": _adaptive_max_pool,
    "aten::adaptive_max_pool2d_backward": _adaptive_max_pool_backward,
}
# constants (output size, scales, padding) change the counts: other groups
ARGS_IN_KEY = frozenset(RESAMPLE_RULES)
