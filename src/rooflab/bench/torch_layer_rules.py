"""FLOP (and, for the NLL loss, bytes) of the fused PyTorch layer ops the live counter
(bench.torch_count) sees as one dispatched op: attention backward, batch norm (and its
backward), fused RMS
norm, the NLL loss and the inference fast path of nn.TransformerEncoderLayer /
nn.MultiheadAttention. FlopCounterMode counts them 0 (or, for the CUDA attention backward,
causal as dense). The per-element counts are workloads/torch_rules/layer.py's (one
definition with the trace rules); this module reads the call's tensors and arguments.
torch is imported only inside the functions.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from ..workloads.ops import LAYERNORM_AFFINE_FLOP_PER_ELEMENT, rmsnorm_flop
from ..workloads.torch_rules.flop import sdpa_count
from ..workloads.torch_rules.layer import (
    BATCH_NORM_BACKWARDS,
    BATCH_NORMS,
    SDPA_BACKWARD,
    attention_core_flop,
    batchnorm_backward_per_element,
    batchnorm_per_element,
    rmsnorm_backward_per_element,
)
from .torch_bytes import _arg


def sdpa_backward_flop(func, args, kwargs) -> float:
    """FLOP of one attention backward (q, k, v are arguments 1-3): sdpa_count's flash
    backward, five matmuls per computed (query, key) pair."""
    q, k, v = args[1], args[2], args[3]
    causal = bool(_arg(func, args, kwargs, "is_causal", False))
    return sdpa_count(math.prod(q.shape[:-2]), q.shape[-2], k.shape[-2], q.shape[-1],
                      v.shape[-1], causal, backward=True)


def batch_norm_flop(func, args, kwargs) -> float:
    """native_batch_norm / _native_batch_norm_legit / cudnn_batch_norm(input, weight, bias,
    [running_mean, running_var,] training, ...): batchnorm_per_element."""
    training = bool(_arg(func, args, kwargs, "training", False))
    return float(batchnorm_per_element(training) * args[0].numel())


def batch_norm_backward_flop(func, args, kwargs) -> float:
    """native_batch_norm_backward / batch_norm_backward(grad_out, input, weight, ...,
    train, eps, output_mask) and cudnn / miopen_batch_norm_backward(input, grad_output,
    ...): the per-element count above times the input's elements."""
    train = _arg(func, args, kwargs, "train", _arg(func, args, kwargs, "update", True))
    mask = _arg(func, args, kwargs, "output_mask", [True, True, True])
    per = batchnorm_backward_per_element(bool(train), *(bool(m) for m in mask))
    return float(per * args[0].numel())


def fused_rms_norm_flop(func, args, kwargs) -> float:
    """_fused_rms_norm(input, normalized_shape, weight, eps): rmsnorm_flop."""
    x, shape = args[0], args[1]
    weight = _arg(func, args, kwargs, "weight")
    return rmsnorm_flop(x.numel(), x.numel() // max(1, math.prod(shape)), weight is not None)


def fused_rms_norm_backward_flop(func, args, kwargs) -> float:
    """_fused_rms_norm_backward(grad_out, input, normalized_shape, rstd, weight,
    output_mask): rmsnorm_backward_per_element times the input's elements."""
    x, weight = args[1], _arg(func, args, kwargs, "weight")
    mask = _arg(func, args, kwargs, "output_mask", [True, True])
    per = rmsnorm_backward_per_element(bool(mask[0]), bool(mask[1]), weight is not None)
    return float(per * x.numel())


def _ffn_matmul_flop(tokens: int, *weights) -> float:
    """2 FLOP per multiply-add of `tokens` rows through each [out, in] weight."""
    return 2.0 * tokens * sum(w.numel() for w in weights)


def encoder_layer_fwd_flop(func, args, kwargs) -> float | None:
    """_transformer_encoder_layer_fwd, nn.TransformerEncoderLayer's inference fast path (eval
    + no_grad), counted from the weights it receives: the four projections (QKV, out, two
    FFN), attention over all L² pairs with its softmax, two layer norms (7/elem), the
    activation (gelu 1/elem, relu 0: a comparison) and the two residual adds; bias adds 0,
    as addmm's. src is [B, L, E] (batch_first); a padded (nested) src: None, uncounted."""
    src, heads = args[0], int(args[2])
    if src.is_nested or src.dim() != 3:   # padded batch: the lengths are data, not counted
        return None
    qkv_w, proj_w, ffn_1, ffn_2 = args[3], args[5], args[14], args[16]
    batch, length, embed = src.shape
    tokens = batch * length
    matmul = _ffn_matmul_flop(tokens, qkv_w, proj_w, ffn_1, ffn_2)
    attention = attention_core_flop(batch, heads, length, length, embed // heads)
    vector = (2 * LAYERNORM_AFFINE_FLOP_PER_ELEMENT * tokens * embed + 2 * tokens * embed
              + (tokens * ffn_1.shape[0] if bool(args[7]) else 0))
    return float(matmul + attention + vector)


def native_mha_flop(func, args, kwargs) -> float | None:
    """_native_multi_head_attention(query, key, value, E, heads, qkv_weight, ...),
    nn.MultiheadAttention's fast path: each of q, k, v through its third of qkv_weight,
    the out projection, attention over all Lq·Lk pairs with its softmax."""
    q, k, heads = args[0], args[1], int(args[4])
    if q.is_nested or k.is_nested or q.dim() != 3:
        return None
    embed = int(args[3])
    batch, q_len = q.shape[0], q.shape[1]
    kv_len = k.shape[1]
    per_row = embed * embed   # one [E, E] third of qkv_weight, or proj_weight
    matmul = 2.0 * per_row * (2 * batch * q_len + 2 * batch * kv_len)   # q, out; k, v
    return float(matmul + attention_core_flop(batch, heads, q_len, kv_len, embed // heads))


# The fast-path ops: uncounted only for a padded (nested) batch; measure's warning says why.
FAST_PATH_OPS = frozenset({"_transformer_encoder_layer_fwd", "_native_multi_head_attention"})
FAST_PATH_HINT = ("PyTorch's fused inference fast path (eval + no_grad) of "
                  "nn.TransformerEncoderLayer / nn.MultiheadAttention ran on a padded "
                  "(nested) batch, whose lengths the count cannot see: measure it under "
                  "torch.enable_grad() or with the model in train() (dropout=0), or profile it "
                  "with `rooflab torch`, whose trace records the matmuls")

# rooflab's formula and its unit (None: the precision's matrix unit) by aten op name.
LAYER_FORMULAS: dict[str, tuple[Callable[..., float], str | None]] = {
    **{name: (sdpa_backward_flop, None) for name in SDPA_BACKWARD},
    **{name: (batch_norm_flop, "vector") for name in BATCH_NORMS},
    **{name: (batch_norm_backward_flop, "vector") for name in BATCH_NORM_BACKWARDS},
    "_fused_rms_norm": (fused_rms_norm_flop, "vector"),
    "_fused_rms_norm_backward": (fused_rms_norm_backward_flop, "vector"),
    "_transformer_encoder_layer_fwd": (encoder_layer_fwd_flop, None),
    "_native_multi_head_attention": (native_mha_flop, None),
}
