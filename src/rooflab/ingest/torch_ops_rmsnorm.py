"""Trace rules for PyTorch's fused RMS norm (review r2_torch F11): aten::_fused_rms_norm is
one kernel on CUDA (and, on the CPU, a parent whose pow/mean/rsqrt/mul children the trace's
nesting then leaves uncounted), so without a rule `nn.RMSNorm` / `F.rms_norm` count 0 there.
FLOP: workloads/ops.py's rmsnorm_flop (`ai rmsnorm`'s) and workloads/torch_rules/layer.py's
rmsnorm_backward_per_element, one count with `rooflab.measure`. Bytes: x and γ read, y
written (the saved rstd left out, as the layer-norm rule leaves mean and rstd:
docs/python.md). Registered by ingest/torch_ops.py (RULES.update(RMSNORM_RULES)).
"""

from __future__ import annotations

from ..units import flop_precision
from ..workloads.ops import rmsnorm_flop
from ..workloads.torch_rules.layer import rmsnorm_backward_per_element
from .torch_ops_base import COMPLEX_REAL, OpCall, OpWork, in_bytes, itemsize, numel


def _rows(call: OpCall, shape: tuple[int, ...], at: int, weight) -> int | None:
    """Rows normalised: elements over the normalized_shape (argument `at`), else the
    weight's size, else the last dimension."""
    norm = call.const(at, None)
    if isinstance(norm, int):
        norm = [norm]
    size = (numel(norm) if isinstance(norm, (list, tuple)) and norm
            else numel(weight[0]) if weight else shape[-1] if shape else 0)
    return numel(shape) // size if size else None


def _weight(call: OpCall, i: int):
    ts = OpCall(call.name, call.dims[i:i + 1], call.types[i:i + 1]).tensors()
    return ts[0] if i < len(call.dims) and ts else None


def _rmsnorm(call: OpCall) -> OpWork | str | None:
    """aten::_fused_rms_norm(input, normalized_shape, weight?, eps) -> (y, rstd)."""
    ts = call.tensors()
    if not ts or not ts[0][0]:
        return None
    (shape, dt), weight = ts[0], _weight(call, 2)
    if dt in COMPLEX_REAL:
        return "no formula for complex rms_norm"
    rows = _rows(call, shape, 1, weight)
    if rows is None:
        return None
    e = numel(shape)
    nbytes = 2 * e * itemsize(dt) + (in_bytes([weight]) if weight else 0.0)
    return OpWork("rmsnorm", rmsnorm_flop(e, rows, weight is not None), nbytes,
                  flop_precision(dt), "vector")


def _rmsnorm_backward(call: OpCall) -> OpWork | str | None:
    """aten::_fused_rms_norm_backward(grad_out, input, normalized_shape, rstd, weight?,
    output_mask) -> (grad_input, grad_weight): all tensors read, the asked gradients
    written."""
    ts = call.tensors()
    if len(ts) < 2 or not ts[1][0]:
        return None
    shape, dt = ts[1]
    if dt in COMPLEX_REAL:
        return "no formula for complex rms_norm"
    weight = _weight(call, 4)
    mask = call.const(5, [True, True])
    if not isinstance(mask, (list, tuple)) or len(mask) != 2:
        return None
    grad_input, grad_weight = bool(mask[0]), bool(mask[1]) and weight is not None
    e = numel(shape)
    per = rmsnorm_backward_per_element(grad_input, grad_weight, weight is not None)
    written = grad_input * e + (grad_weight * numel(weight[0]) if weight else 0)
    return OpWork("rmsnorm_backward", float(per * e), in_bytes(ts) + written * itemsize(dt),
                  flop_precision(dt), "vector")


RMSNORM_RULES = {"aten::_fused_rms_norm": _rmsnorm,
                 "aten::_fused_rms_norm_backward": _rmsnorm_backward}
# Their FLOP depend on constant arguments (normalized_shape, output_mask): other groups.
ARGS_IN_KEY = frozenset(RMSNORM_RULES)
