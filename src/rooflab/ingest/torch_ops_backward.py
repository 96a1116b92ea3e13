"""FLOP and compulsory bytes of PyTorch's backward ops, from the shapes the profiler recorded.

A training step's trace holds these under autograd's wrappers (`autograd::engine::
evaluate_function: ConvolutionBackward0` -> `ConvolutionBackward0` -> the aten op); the
rules are for the aten ops. Conventions are those of ingest.torch_ops_core (2 FLOP per
multiply-add, one per pointwise op, comparisons 0); bytes: every tensor input read once,
each gradient the op returns written once (the `output_mask` says which it returns).
"""

from __future__ import annotations

from ..units import flop_precision
from ..workloads.ops_conv import conv_unit
from ..workloads.torch_rules.flop import (
    BACKWARD_PER_ELEMENT,
    POINTWISE_BACKWARD_FLOP,
    layernorm_backward_per_element,
)
from ..workloads.torch_rules.layer import BATCH_NORM_BACKWARDS, batchnorm_backward_per_element
from .torch_ops_base import (
    COMPLEX_REAL,
    OpCall,
    OpWork,
    in_bytes,
    itemsize,
    numel,
    real_dtype,
    rows_cols,
)

# The per-element counts (pointwise, softmax, layer norm, embedding) are one table with
# the measure counter's (workloads.torch_rules), so the trace and rooflab.measure agree.


def _conv_backward(call: OpCall) -> OpWork | str | None:
    """aten::convolution_backward(grad_output, input, weight, bias_sizes, stride, padding,
    dilation, transposed, output_padding, groups, output_mask): each of grad_input and
    grad_weight is a convolution as large as the forward, 2·N·K·(output positions)·(C/g)·
    (taps) (torch.utils.flop_counter's conv_backward_flop). grad_bias, a sum of grad_output,
    counts 0 FLOP as FlopCounterMode and the measure counter count it (as addmm's bias add
    is not counted): one convention across verbs; its bytes are counted. The output
    positions are grad_output's, so stride, padding and dilation need not be read; a
    transposed one's are the input's (FlopCounterMode's conv_backward_flop, transposed)."""
    ts = call.tensors()
    if len(ts) < 3:
        return None
    (dy, dt), (x, _), (wt, _) = ts[:3]
    spatial = len(wt) - 2
    if spatial < 1 or len(dy) != spatial + 2 or len(x) != spatial + 2:
        return None   # unbatched convs reach the backward batched (autograd adds N = 1)
    if dt in COMPLEX_REAL:
        return "no formula for a complex convolution"
    grad_input, grad_weight, grad_bias = call.output_mask(10)
    groups = int(call.const(9, 1))
    n, k, *out = dy
    c, (kw, cg, *taps) = x[1], wt
    if call.const(7, False):   # transposed: weight [C_in, C_out/g], the forward's MACs
        if groups < 1 or c != kw or k != cg * groups or x[0] != n:
            return f"channels disagree: input {c}, transposed filter {kw}x{cg} in " \
                   f"{groups} group(s), grad_output {k}"
        conv = 2.0 * n * c * numel(x[2:]) * cg * numel(taps)
    elif groups < 1 or c != cg * groups or k != kw or x[0] != n:
        return f"channels disagree: input {c}, filter {kw}x{cg} in {groups} group(s), " \
               f"grad_output {k}"
    else:
        conv = 2.0 * n * k * numel(out) * cg * numel(taps)
    flop = conv * (grad_input + grad_weight)
    e = itemsize(dt)
    written = grad_input * numel(x) + grad_weight * numel(wt) + grad_bias * k
    return OpWork(f"conv{spatial}d_backward", flop, in_bytes(ts[:3]) + e * written,
                  flop_precision(dt), conv_unit(dt, wt, groups, bool(call.const(7, False))))


def _grad_and_input(call: OpCall, what: str):
    """(tensors, grad_output's shape, its dtype) of a backward op that takes grad_output and
    one more tensor; None when the trace lacks them, "no formula for WHAT" for complex."""
    ts = call.tensors()
    if len(ts) < 2:
        return None
    shape, dt = ts[0]
    if dt in COMPLEX_REAL:
        return f"no formula for {what}"
    return ts, shape, dt


def _layernorm_backward(call: OpCall) -> OpWork | str | None:
    """aten::native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd,
    weight?, bias?, output_mask): the per-element counts above; an absent weight or bias
    is untyped in the trace, and its gradient is not computed."""
    got = _grad_and_input(call, "complex layer_norm")
    if not isinstance(got, tuple):
        return got
    ts, shape, dt = got
    grad_input, grad_weight, grad_bias = call.output_mask(7)
    weight, bias = (call.dims[i] if i < len(call.dims) and call.dims[i] else None
                    for i in (5, 6))
    grad_weight, grad_bias = grad_weight and weight is not None, grad_bias and bias is not None
    per = layernorm_backward_per_element(grad_input, grad_weight, grad_bias, weight is not None)
    e = numel(shape)
    written = (grad_input * e + grad_weight * numel(weight or ())
               + grad_bias * numel(bias or ()))
    return OpWork("layernorm_backward", float(per * e),
                  in_bytes(ts) + written * itemsize(dt), flop_precision(dt), "vector")


def _batchnorm_backward(call: OpCall) -> OpWork | str | None:
    """native_batch_norm_backward / batch_norm_backward(grad_out, input, weight?, running
    mean and var?, save_mean?, save_invstd?, train, eps, output_mask[, reserve]) and
    cudnn / miopen_batch_norm_backward(input, grad_output, ...: training, all three
    gradients): workloads.torch_rules.layer's per-element count (9 in training, 1-5 in eval);
    every tensor read, grad_input (the input's size) and grad_weight / grad_bias (C
    each) written."""
    got = _grad_and_input(call, "a complex batch norm")
    if not isinstance(got, tuple):
        return got
    ts, shape, dt = got
    if len(shape) < 2:
        return None
    native = call.name.removeprefix("aten::") in ("native_batch_norm_backward",
                                                   "batch_norm_backward")
    train = bool(call.const(7, True)) if native else True
    mask = call.output_mask(9) if native else [True, True, True]
    e = numel(shape)
    written = mask[0] * e + (mask[1] + mask[2]) * shape[1]
    return OpWork("batchnorm_backward",
                  float(batchnorm_backward_per_element(train, *mask) * e),
                  in_bytes(ts) + written * itemsize(dt), flop_precision(dt), "vector")


def _pointwise_backward(call: OpCall) -> OpWork | str | None:
    """gelu_backward(grad_output, self, approximate), silu_backward(grad_output, self),
    threshold_backward(grad_output, self, threshold), sigmoid/tanh_backward(grad_output,
    output): both tensors read, grad_input (grad_output's shape and dtype) written."""
    got = _grad_and_input(call, "a complex backward")
    if not isinstance(got, tuple):
        return got
    ts, shape, dt = got
    name = call.name.removeprefix("aten::")
    n = numel(shape)
    return OpWork(name, BACKWARD_PER_ELEMENT[name] * n,
                  in_bytes(ts[:2]) + n * itemsize(dt), flop_precision(dt), "vector")


def _softmax_backward(call: OpCall) -> OpWork | str | None:
    """_softmax_backward_data / _log_softmax_backward_data(grad_output, output, dim,
    input_dtype): grad_output and output read, grad_input written, 4 FLOP per element."""
    got = _grad_and_input(call, "a complex softmax")
    if not isinstance(got, tuple):
        return got
    ts, shape, dt = got
    if rows_cols(shape, int(call.const(2, -1))) is None:
        return None
    n = numel(shape)
    name = "log_softmax_backward" if "log_softmax" in call.name else "softmax_backward"
    return OpWork(name, BACKWARD_PER_ELEMENT[call.name.removeprefix("aten::")] * n,
                  in_bytes(ts[:2]) + n * itemsize(dt), flop_precision(dt), "vector")


def _embedding_backward(call: OpCall) -> OpWork | str | None:
    """aten::embedding_dense_backward(grad_output [..., D], indices, num_weights,
    padding_idx, scale_grad_by_freq): each grad_output row added into its token's row of
    a zeroed [num_weights, D] gradient, 1 FLOP per grad_output element; grad_output and
    the indices read, the whole dense gradient written (it is the op's output)."""
    ts = call.tensors()
    if len(ts) < 2:
        return None
    (dy, dt), ids = ts[0], ts[1]
    rows = int(call.const(2, 0))
    if not dy or rows < 1:
        return None
    n = numel(dy)
    nbytes = in_bytes([ts[0], ids]) + rows * dy[-1] * itemsize(dt)
    return OpWork("embedding_backward", BACKWARD_PER_ELEMENT["embedding_dense_backward"] * n,
                  nbytes, flop_precision(real_dtype(dt)),
                  "vector")


BACKWARD_RULES = {
    "aten::convolution_backward": _conv_backward,
    "aten::native_layer_norm_backward": _layernorm_backward,
    "aten::_softmax_backward_data": _softmax_backward,
    "aten::_log_softmax_backward_data": _softmax_backward,
    "aten::embedding_dense_backward": _embedding_backward,
    **{f"aten::{name}": _batchnorm_backward for name in BATCH_NORM_BACKWARDS},
    **{f"aten::{name}": _pointwise_backward for name in POINTWISE_BACKWARD_FLOP},
}
# Ops whose FLOP depend on constant arguments (output_mask): calls of one shape with
# another mask are other groups.
ARGS_IN_KEY = frozenset({"aten::convolution_backward", "aten::native_layer_norm_backward",
                         "aten::native_batch_norm_backward", "aten::batch_norm_backward"})
