"""FLOP per element of the fused PyTorch layer ops rooflab counts (batch norm and RMS norm,
forward and backward), the attention backward kernels' names and the attention core of
the encoder fast path, as pure counts: one definition for the live counter
(bench/torch_layer_rules.py reads the tensors) and the trace rules
(ingest/torch_ops_backward.py, torch_ops_table.py, torch_ops_rmsnorm.py). Moved from
bench/torch_layer_rules.py.

Pooling, group norm, resampling and padding (review s28 R3 F2, F5), one rule set for the
trace rules (ingest/torch_ops_pool.py, ingest/torch_ops_resample.py) and the live counter
(bench/torch_pool_rules.py):

Conventions (those of ingest.torch_ops_core and its reductions):
- max pooling compares: 0 FLOP, as ReLU and `maximum` (profilers count FADD/FMUL/FFMA, not
  FMNMX): in flop.COMPARISONS for the live counter. Its backward (and adaptive
  max pooling's) adds each grad_output element into grad_input at its index: 1 per
  grad_output element (embedding_dense_backward's scatter-add).
- average pooling is a mean per window: window - 1 adds and 1 divide, the window's size
  per output; its backward 1 divide per grad_output element and 1 add per window element
  it spreads to. Adaptive pooling's windows: ATen's start_index / end_index.
- group norm is a layer norm over each group: layer_norm's per-element counts (5, + 1
  each for weight and bias) and its backward's (flop.layernorm_backward_per_element).
- nearest upsampling, pixel_shuffle and constant/reflect/replicate padding move data:
  0 FLOP (flop.MOVEMENT), placed by their bytes as cat and copy_ are. A nearest
  upsample's backward adds each grad_output element into its source: 1 per grad_output
  element; a reflect/replicate pad's backward adds the padded border back in: 1 per
  grad_output element beyond grad_input's (numel(dy) - numel(x)).
- linear interpolation (linear, bilinear, trilinear): per output element, one lerp per
  pair of neighbours along each axis, nested as PyTorch's CUDA kernel writes it
  (h0·(w0·x00 + w1·x01) + h1·(w0·x10 + w1·x11)): 2 multiplies and 1 add per lerp,
  3·(2^d - 1) FLOP, linear 3, bilinear 9, trilinear 21. The weights are per output
  position, shared by every channel: left out, as index arithmetic is. Its backward
  spreads each grad_output element to its 2^d neighbours, a multiply by the tap's weight
  and an add each: 2·2^d (bilinear 8). Bicubic and antialiased modes: no rule.
"""

from __future__ import annotations

import math

from ..ops import LAYERNORM_PLAIN_FLOP_PER_ELEMENT, SOFTMAX_FLOP_PER_ELEMENT
from .flop import PER_ELEMENT, layernorm_backward_per_element

# Scaled-dot-product-attention backward kernels (q, k, v are arguments 1-3 of each).
SDPA_BACKWARD = frozenset({
    "_scaled_dot_product_flash_attention_for_cpu_backward",
    "_scaled_dot_product_flash_attention_backward",
    "_scaled_dot_product_efficient_attention_backward",
    "_scaled_dot_product_cudnn_attention_backward"})
# Batch norm per element. Inference (running statistics): subtract, scale, weight, bias =
# 4 (PER_ELEMENT's _native_batch_norm_legit_no_training). Training adds the batch
# statistics, counted as var's 3 per element (subtract the mean, square, add; the mean's
# add folded in as var's count folds it): 7, the count of the trace rule
# (ingest/torch_ops_table.py), and layer norm's affine 7 for the same steps over another
# axis. The per-channel running-stat update is left out (C elements, not N·C·H·W). One
# count for the live counter and the trace rule (ingest/torch_ops_table.py).
BATCHNORM_INFERENCE_FLOP_PER_ELEMENT = PER_ELEMENT["_native_batch_norm_legit_no_training"]
BATCHNORM_STATS_FLOP_PER_ELEMENT = PER_ELEMENT["var"]
BATCH_NORMS = frozenset({"native_batch_norm", "_native_batch_norm_legit", "cudnn_batch_norm",
                         "miopen_batch_norm", "_native_batch_norm_legit_functional"})


def batchnorm_per_element(training: bool) -> float:
    """FLOP per input element of a batch norm forward: 4 in eval, 7 in training."""
    return BATCHNORM_INFERENCE_FLOP_PER_ELEMENT + training * BATCHNORM_STATS_FLOP_PER_ELEMENT


# Batch norm backward per element, from torch/_decomp/decompositions.py's
# native_batch_norm_backward (torch 2.13): Σ dy 1 (grad_bias, and grad_mean in training);
# dot_p = Σ dy·(x - mean) 3 (grad_weight, and the projection in training); grad_input in
# training (x - mean)·proj_scale 2 and ((dy - proj) - grad_mean)·grad_scale 3, in eval
# dy·grad_scale 1. Training with all three gradients: 1 + 3 + 5 = 9 per element; eval 1
# for grad_input alone (5 with weight and bias). Per-channel work (C values) left out, as
# for the forward. One count for the live counter and the trace rule
# (ingest/torch_ops_backward.py).
BATCHNORM_BACKWARD_SUM_FLOP = 1
BATCHNORM_BACKWARD_DOT_FLOP = 3
BATCHNORM_BACKWARD_INPUT_FLOP = {True: 5, False: 1}   # by training
# Ops whose training flag (`train`, or `update` for batch_norm_backward) and output_mask
# are arguments; cudnn's and miopen's run in training only and return all three gradients
# (autograd calls them for a training forward; an eval forward's backward is
# native_batch_norm_backward).
BATCH_NORM_BACKWARDS = frozenset({"native_batch_norm_backward", "batch_norm_backward",
                                  "cudnn_batch_norm_backward", "miopen_batch_norm_backward"})


def batchnorm_backward_per_element(train: bool, grad_input: bool, grad_weight: bool,
                                   grad_bias: bool) -> int:
    """FLOP per input element of a batch norm backward for the gradients it returns."""
    dot = grad_weight or (grad_input and train)
    total = grad_bias or (grad_input and train)
    return (BATCHNORM_BACKWARD_SUM_FLOP * total + BATCHNORM_BACKWARD_DOT_FLOP * dot
            + BATCHNORM_BACKWARD_INPUT_FLOP[bool(train)] * grad_input)


# RMS norm forward: workloads.ops.rmsnorm_flop, 4·E + 2·rows (3·E + 2·rows without a
# weight), as its CPU decomposition counts it; one count for `ai`/`llm`, the live counter
# and the trace rule (ingest/torch_ops_rmsnorm.py).
# Backward, dx = rstd·(g - x̂·mean(g·x̂)) with g = dy·γ, x̂ = x·rstd: x̂ 1 whenever a
# gradient is asked; grad_input Σ g·x̂ 2, x̂·mean(g·x̂) 1, g minus it 1, times rstd 1 = 5
# (+1 for dy·γ with a weight); grad_weight Σ dy·x̂ 2: 9 for both. From the math, not the
# CPU's autograd decomposition (11/elem: it recomputes).
RMSNORM_XHAT_FLOP = 1
RMSNORM_GRAD_INPUT_FLOP = 5
RMSNORM_GRAD_WEIGHT_FLOP = 2


def rmsnorm_backward_per_element(grad_input: bool, grad_weight: bool, has_weight: bool) -> int:
    """FLOP per input element of _fused_rms_norm_backward for the gradients it returns."""
    grad_weight = grad_weight and has_weight
    return (RMSNORM_XHAT_FLOP * (grad_input or grad_weight)
            + grad_input * (RMSNORM_GRAD_INPUT_FLOP + has_weight)
            + grad_weight * RMSNORM_GRAD_WEIGHT_FLOP)


def attention_core_flop(batch: int, heads: int, q_len: int, kv_len: int, head_dim: int
                        ) -> float:
    """Scores and weighted sum (4·pairs·D per head) plus the softmax over the scores: the
    attention of nn.TransformerEncoderLayer's and nn.MultiheadAttention's fast paths."""
    pairs = batch * heads * q_len * kv_len
    return 4.0 * pairs * head_dim + SOFTMAX_FLOP_PER_ELEMENT * pairs



# interpolation modes with a rule: spatial dims by op name (upsample_<mode><d>d)
LINEAR_MODES = {"upsample_linear1d": 1, "upsample_bilinear2d": 2, "upsample_trilinear3d": 3}
NEAREST_MODES = {"upsample_nearest1d": 1, "upsample_nearest2d": 2, "upsample_nearest3d": 3,
                 "_upsample_nearest_exact1d": 1, "_upsample_nearest_exact2d": 2,
                 "_upsample_nearest_exact3d": 3}
# padding ops whose backward folds the border back in (their forward is MOVEMENT)
PADS = frozenset({f"{kind}_pad{d}d" for kind in ("reflection", "replication")
                  for d in (1, 2, 3)})


def window_out(size: int, k: int, s: int, p: int, d: int, ceil: bool) -> int:
    """One dimension's pooled output size (torch's pooling_output_shape)."""
    span = size + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil else 0)
    out = span // s + 1
    if ceil and (out - 1) * s >= size + p:
        out -= 1
    return out


def adaptive_windows(size: int, out: int) -> int:
    """Summed window lengths of adaptive pooling along one dimension: window i spans
    [floor(i·size/out), ceil((i+1)·size/out)) (ATen's start_index / end_index)."""
    return sum(math.ceil((i + 1) * size / out) - (i * size) // out for i in range(out))


def adaptive_geometry(x: tuple[int, ...], out: tuple[int, ...]) -> tuple[int, int] | None:
    """(output elements, summed window elements) of a 2-D adaptive pool of x to `out`;
    None for shapes it cannot read."""
    if len(x) not in (3, 4) or len(out) != 2 or min(out) < 1:
        return None
    lead = math.prod(x[:-2])
    windows = adaptive_windows(x[-2], out[0]) * adaptive_windows(x[-1], out[1])
    return lead * math.prod(out), lead * windows


def avg_pool_flop(outputs: int, window: int) -> float:
    """window - 1 adds and 1 divide per output: the window's size."""
    return float(outputs * window)


def avg_pool_backward_flop(grad_outputs: int, window: int) -> float:
    """1 divide per grad_output element, 1 add per window element it spreads to."""
    return float(grad_outputs * (1 + window))


def adaptive_avg_pool_backward_flop(grad_outputs: int, windows: int) -> float:
    """1 divide per grad_output element, 1 add per (summed) window element."""
    return float(grad_outputs + windows)


def scatter_add_flop(grad_outputs: int) -> float:
    """Max pooling's and nearest upsampling's backward: 1 add per grad_output element."""
    return float(grad_outputs)


def group_norm_flop(elements: int, affine: int) -> float:
    """layer_norm's per-element count: 5, + 1 each for weight and bias (`affine` of them)."""
    return float((LAYERNORM_PLAIN_FLOP_PER_ELEMENT + affine) * elements)


def group_norm_backward_flop(elements: int, grad_input: bool, grad_weight: bool,
                             grad_bias: bool, has_weight: bool) -> float:
    """layer_norm backward's per-element count for the gradients asked for."""
    return float(layernorm_backward_per_element(grad_input, grad_weight, grad_bias,
                                                has_weight) * elements)


def lerp_flop(dims: int) -> int:
    """FLOP per output element of linear interpolation over `dims` axes: 3·(2^d - 1)."""
    return 3 * (2 ** dims - 1)


def upsample_flop(op: str, outputs: int) -> float | None:
    """FLOP of an upsample forward of `outputs` elements: 0 nearest (movement), 3·(2^d - 1)
    per output for linear interpolation; None for a mode with no rule."""
    if op in NEAREST_MODES:
        return 0.0
    dims = LINEAR_MODES.get(op)
    return None if dims is None else float(lerp_flop(dims) * outputs)


def upsample_backward_flop(op: str, grad_outputs: int) -> float | None:
    """FLOP of an upsample backward (op: the forward's name): nearest 1 add per grad_output
    element, linear 2·2^d (a multiply and an add per neighbour); None otherwise."""
    if op in NEAREST_MODES:
        return scatter_add_flop(grad_outputs)
    dims = LINEAR_MODES.get(op)
    return None if dims is None else float(2 * 2 ** dims * grad_outputs)


def pad_backward_flop(grad_outputs: int, grad_inputs: int) -> float:
    """A reflect/replicate pad's backward: the border's grad_output elements added back in,
    numel(dy) - numel(x)."""
    return float(max(0, grad_outputs - grad_inputs))
