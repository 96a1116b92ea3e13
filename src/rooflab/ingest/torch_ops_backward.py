"""FLOP and compulsory bytes of PyTorch's backward ops, from the shapes the profiler recorded.

A training step's trace holds these under autograd's wrappers (`autograd::engine::
evaluate_function: ConvolutionBackward0` -> `ConvolutionBackward0` -> the aten op); the
rules are for the aten ops. Conventions are those of ingest.torch_ops (2 FLOP per
multiply-add, one per pointwise op, comparisons 0); bytes: every tensor input read once,
each gradient the op returns written once (the `output_mask` says which it returns).
"""

from __future__ import annotations

from ..units import flop_precision
from .torch_ops import (
    COMPLEX_REAL,
    OpCall,
    OpWork,
    _const,
    _in_bytes,
    _numel,
    _rows_cols,
    _tensors,
    itemsize,
    real_dtype,
)

# Pointwise backward ops: FLOP per element. gelu/silu: the derivative counts 1 (as the
# forward counts the function 1, ingest.torch_ops) and the product with grad_output 1.
# threshold_backward (ReLU's): grad_output where input > threshold, else 0: a selection,
# 0 FLOP like relu itself. sigmoid: dy·y·(1 - y) = 3; tanh: dy·(1 - y²) = 3.
POINTWISE_BACKWARD_FLOP = {"gelu_backward": 2, "silu_backward": 2, "threshold_backward": 0,
                           "sigmoid_backward": 3, "tanh_backward": 3}
# Softmax backward per element, dx = y·(dy - Σ dy·y): the product-sum 2 (an FMA), the
# subtraction 1, the product 1 = 4. Log-softmax, dx = dy - exp(y)·Σ dy: the sum 1, exp 1,
# the product and subtraction 2 = 4. Both equal the forward's 4 (ops.SOFTMAX_FLOP_PER_ELEMENT).
SOFTMAX_BACKWARD_FLOP_PER_ELEMENT = 4
# Layer-norm backward per element (x̂ = (x - mean)·rstd, g = dy·γ,
# dx = rstd·(g - mean(g) - x̂·mean(g·x̂))): x̂ 2 whenever a gradient needs it; grad_input
# 7 more (Σg 1, Σg·x̂ 2, g - mean 1, x̂·mean(g·x̂) subtracted 2, times rstd 1) plus 1 for
# dy·γ with a weight; grad_weight Σ dy·x̂ 2; grad_bias Σ dy 1. All with weight and bias:
# 2 + 8 + 2 + 1 = 13 (the forward is 7).
LAYERNORM_XHAT_FLOP = 2
LAYERNORM_GRAD_INPUT_FLOP = 7
LAYERNORM_GRAD_WEIGHT_FLOP = 2
LAYERNORM_GRAD_BIAS_FLOP = 1


def _mask(call: OpCall, i: int, n: int = 3) -> list[bool]:
    """output_mask, the gradients the op returns ([True, True, True] when not recorded)."""
    value = _const(call, i, [True] * n)
    if not isinstance(value, (list, tuple)) or len(value) != n:
        raise ValueError(f"output_mask {value!r}")
    return [bool(v) for v in value]


def _unit(dt: str) -> str | None:
    from ..workloads.ops import TENSOR_DTYPES

    return "tensor" if dt in TENSOR_DTYPES else None


def _conv_backward(call: OpCall) -> OpWork | str | None:
    """aten::convolution_backward(grad_output, input, weight, bias_sizes, stride, padding,
    dilation, transposed, output_padding, groups, output_mask): each of grad_input and
    grad_weight is a convolution as large as the forward, 2·N·K·(output positions)·(C/g)·
    (taps) (torch.utils.flop_counter's conv_backward_flop); grad_bias sums grad_output,
    N·K·(output positions) adds (FlopCounterMode counts it 0). The output positions are
    grad_output's, so stride, padding and dilation need not be read."""
    ts = _tensors(call)
    if len(ts) < 3:
        return None
    (dy, dt), (x, _), (wt, _) = ts[:3]
    spatial = len(wt) - 2
    if spatial < 1 or len(dy) != spatial + 2 or len(x) != spatial + 2:
        return None   # unbatched convs reach the backward batched (autograd adds N = 1)
    if dt in COMPLEX_REAL:
        return "no formula for a complex convolution"
    if _const(call, 7, False):
        return "no formula for a transposed convolution"
    grad_input, grad_weight, grad_bias = _mask(call, 10)
    groups = int(_const(call, 9, 1))
    n, k, *out = dy
    c, (kw, cg, *taps) = x[1], wt
    if groups < 1 or c != cg * groups or k != kw or x[0] != n:
        return f"channels disagree: input {c}, filter {kw}x{cg} in {groups} group(s), " \
               f"grad_output {k}"
    conv = 2.0 * n * k * _numel(out) * cg * _numel(taps)
    flop = conv * (grad_input + grad_weight) + grad_bias * n * k * _numel(out)
    e = itemsize(dt)
    written = grad_input * _numel(x) + grad_weight * _numel(wt) + grad_bias * k
    return OpWork(f"conv{spatial}d_backward", flop, _in_bytes(ts[:3]) + e * written,
                  flop_precision(dt), _unit(dt))


def _layernorm_backward(call: OpCall) -> OpWork | str | None:
    """aten::native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd,
    weight?, bias?, output_mask): the per-element counts above; an absent weight or bias
    is untyped in the trace, and its gradient is not computed."""
    ts = _tensors(call)
    if len(ts) < 2:
        return None
    shape, dt = ts[0]
    if dt in COMPLEX_REAL:
        return "no formula for complex layer_norm"
    grad_input, grad_weight, grad_bias = _mask(call, 7)
    weight, bias = (call.dims[i] if i < len(call.dims) and call.dims[i] else None
                    for i in (5, 6))
    grad_weight, grad_bias = grad_weight and weight is not None, grad_bias and bias is not None
    per = (LAYERNORM_XHAT_FLOP * (grad_input or grad_weight)
           + grad_input * (LAYERNORM_GRAD_INPUT_FLOP + (weight is not None))
           + grad_weight * LAYERNORM_GRAD_WEIGHT_FLOP + grad_bias * LAYERNORM_GRAD_BIAS_FLOP)
    e = _numel(shape)
    written = (grad_input * e + grad_weight * _numel(weight or ())
               + grad_bias * _numel(bias or ()))
    return OpWork("layernorm_backward", float(per * e),
                  _in_bytes(ts) + written * itemsize(dt), flop_precision(dt), "vector")


def _pointwise_backward(call: OpCall) -> OpWork | str | None:
    """gelu_backward(grad_output, self, approximate), silu_backward(grad_output, self),
    threshold_backward(grad_output, self, threshold), sigmoid/tanh_backward(grad_output,
    output): both tensors read, grad_input (grad_output's shape and dtype) written."""
    ts = _tensors(call)
    if len(ts) < 2:
        return None
    shape, dt = ts[0]
    if dt in COMPLEX_REAL:
        return "no formula for a complex backward"
    name = call.name.removeprefix("aten::")
    n = _numel(shape)
    return OpWork(name, float(POINTWISE_BACKWARD_FLOP[name] * n),
                  _in_bytes(ts[:2]) + n * itemsize(dt), flop_precision(dt), "vector")


def _softmax_backward(call: OpCall) -> OpWork | str | None:
    """_softmax_backward_data / _log_softmax_backward_data(grad_output, output, dim,
    input_dtype): grad_output and output read, grad_input written, 4 FLOP per element."""
    ts = _tensors(call)
    if len(ts) < 2:
        return None
    shape, dt = ts[0]
    if dt in COMPLEX_REAL:
        return "no formula for a complex softmax"
    if _rows_cols(shape, int(_const(call, 2, -1))) is None:
        return None
    n = _numel(shape)
    name = "log_softmax_backward" if "log_softmax" in call.name else "softmax_backward"
    return OpWork(name, float(SOFTMAX_BACKWARD_FLOP_PER_ELEMENT * n),
                  _in_bytes(ts[:2]) + n * itemsize(dt), flop_precision(dt), "vector")


def _embedding_backward(call: OpCall) -> OpWork | str | None:
    """aten::embedding_dense_backward(grad_output [..., D], indices, num_weights,
    padding_idx, scale_grad_by_freq): each grad_output row added into its token's row of
    a zeroed [num_weights, D] gradient, 1 FLOP per grad_output element; grad_output and
    the indices read, the whole dense gradient written (it is the op's output)."""
    ts = _tensors(call)
    if len(ts) < 2:
        return None
    (dy, dt), ids = ts[0], ts[1]
    rows = int(_const(call, 2, 0))
    if not dy or rows < 1:
        return None
    n = _numel(dy)
    nbytes = _in_bytes([ts[0], ids]) + rows * dy[-1] * itemsize(dt)
    return OpWork("embedding_backward", float(n), nbytes, flop_precision(real_dtype(dt)),
                  "vector")


BACKWARD_RULES = {
    "aten::convolution_backward": _conv_backward,
    "aten::native_layer_norm_backward": _layernorm_backward,
    "aten::_softmax_backward_data": _softmax_backward,
    "aten::_log_softmax_backward_data": _softmax_backward,
    "aten::embedding_dense_backward": _embedding_backward,
    **{f"aten::{name}": _pointwise_backward for name in POINTWISE_BACKWARD_FLOP},
}
# Ops whose FLOP depend on constant arguments (output_mask): calls of one shape with
# another mask are other groups.
ARGS_IN_KEY = frozenset({"aten::convolution_backward", "aten::native_layer_norm_backward"})
