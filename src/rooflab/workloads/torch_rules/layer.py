"""FLOP per element of the fused PyTorch layer ops rooflab counts (batch norm and RMS norm,
forward and backward), the attention backward kernels' names and the attention core of
the encoder fast path, as pure counts: one definition for the live counter
(bench/torch_layer_rules.py reads the tensors) and the trace rules
(ingest/torch_ops_backward.py, torch_ops_table.py, torch_ops_rmsnorm.py). Moved from
bench/torch_layer_rules.py.
"""

from __future__ import annotations

from ..ops import SOFTMAX_FLOP_PER_ELEMENT
from .flop import PER_ELEMENT

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

