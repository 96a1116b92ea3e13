"""rooflab's FLOP rules for the PyTorch ops FlopCounterMode counts as 0 (or not as rooflab
does), as pure counts: the per-element table, the backward and layer-norm counts,
reductions, complex values, FFT coefficients, the op classes the live counter sorts ops
into and the attention count. One table for the live counter (bench.torch_count, whose
bench/torch_flop_rules.py reads the tensors) and the trace rules (ingest.torch_ops*), so
both agree. Moved from bench/torch_flop_rules.py (workloads/ is the analytic counts' layer;
bench/ and ingest/ both sit above it).
"""

from __future__ import annotations

from ..ops import attention_scores

# FLOP per element where FlopCounterMode counts 0, by aten op name (overload packet).
# The conventions are those of rooflab.workloads.ops, so a counted op and its analytic
# count agree:
#  - pointwise math: 1 FLOP per output element, transcendental or not (exp, tanh, gelu,
#    silu count 1 like add): the op is counted, not the instructions a library expands it
#    into (silu = x / (1 + exp(-x)) is 3-4 of them), as the trace rules
#    (ingest/torch_ops_core.py) and `rooflab ai elementwise` count it. Softmax and layer norm
#    below count their steps instead because ops.py's analytic models of them do: two
#    conventions, each matching its analytic op, so compare activation-heavy FLOP across
#    tools only after checking. Arithmetic written out in the op's definition counts by
#    the 2-per-FMA rule: add/sub with alpha != 1 (a triad, b + alpha*c) 2; addcmul /
#    addcdiv 2 (3 with value != 1); lerp = a + w*(b - a) 3.
#  - comparisons (relu, clamp, maximum, max, amax, ...) count 0, as profilers count FLOP
#    from FADD/FMUL/FFMA and not from FMNMX (ops.py module docstring).
#  - reductions: sum and prod n - 1 per output of n inputs (input elements - output
#    elements: reduction_flop), mean those adds + 1 divide per output (= input elements),
#    one formula with the trace rules (ingest/torch_ops_reduce.py); FlopCounterMode
#    counts 0. Vector norm 2 per input (square, add); var/std 3 (subtract mean, square,
#    add); logsumexp 3 (subtract, exp, add).
#  - softmax / log_softmax: 4 per element (subtract the max, exp, add to the sum, divide or
#    subtract the log) = ops.SOFTMAX_FLOP_PER_ELEMENT; the three-pass algorithm is in
#    Milakov & Gimelshein 2018, arXiv:1805.02867, algorithm 1.
#  - layer norm: 7 per element with weight and bias = ops.LAYERNORM_AFFINE_FLOP_PER_ELEMENT
#    (mean add, subtract, square-accumulate 2, times rstd, times gamma plus beta 2); 5
#    without them = ops.LAYERNORM_PLAIN_FLOP_PER_ELEMENT. Batch norm in inference: 4
#    (subtract, scale, weight, bias).
# DeepSpeed's flops profiler (deepspeed/profiling/flops_profiler/profiler.py) counts 1 per
# element for softmax and 4-5 for layer norm: lower figures for the same work, so compare
# FLOP counts from different tools only after checking their conventions.
_POINTWISE_1 = (
    "add", "sub", "rsub", "mul", "div", "neg", "abs", "exp", "exp2", "expm1", "log",
    "log2", "log10", "log1p", "sqrt", "rsqrt", "reciprocal", "sin", "cos", "tan", "tanh",
    "sigmoid", "pow", "sign", "floor", "ceil", "round", "trunc", "gelu", "silu", "erf",
    "leaky_relu", "elu", "square", "fmod", "remainder", "mish", "softplus", "hardswish",
    "hardsigmoid", "sgn", "atan", "asin", "acos", "sinh", "cosh", "logit",
)
# Comparisons: 0 FLOP, for the live counter and the trace's elementwise rule
# (ingest/torch_ops_core.py, which has rules for some of them).
# Max pooling is comparisons too (review s28 R3 F2: `measure` warned its FLOP were missing
# on every CNN); its backward's adds are torch_rules/layer.py's.
COMPARISONS = frozenset({"relu", "maximum", "minimum", "clamp", "clamp_min", "clamp_max",
                         "hardtanh", "threshold", "amax", "amin", "max", "min",
                         "max_pool1d", "max_pool2d", "max_pool3d", "max_pool2d_with_indices",
                         "max_pool3d_with_indices", "adaptive_max_pool1d",
                         "adaptive_max_pool2d", "adaptive_max_pool3d"})
PER_ELEMENT: dict[str, float] = {
    **{op: 1.0 for op in _POINTWISE_1},
    "addcmul": 2.0, "addcdiv": 2.0, "lerp": 3.0,
    "sum": 1.0, "mean": 1.0, "prod": 1.0, "cumsum": 1.0, "cumprod": 1.0, "logsumexp": 3.0,
    "linalg_vector_norm": 2.0, "norm": 2.0, "var": 3.0, "std": 3.0, "var_mean": 3.0,
    "std_mean": 3.0,
    "_softmax": 4.0, "_log_softmax": 4.0,
    "_safe_softmax": 4.0,   # SDPA's math path softmax (torch >= 2.5): softmax, 0 if all masked
    "_native_batch_norm_legit_no_training": 4.0,
}
# Backward ops: FLOP per element of grad_output, the one table the live counter and the
# trace rules (ingest.torch_ops_backward) both read. gelu/silu: the derivative counts 1 (as
# the forward counts the function 1) and the product with grad_output 1. threshold_backward
# (ReLU's): grad_output where input > threshold, else 0: a selection, 0 FLOP like relu.
# sigmoid: dy·y·(1 - y) = 3; tanh: dy·(1 - y²) = 3. Softmax, dx = y·(dy - Σ dy·y): the
# product-sum 2 (an FMA), the subtraction 1, the product 1 = 4; log-softmax, dx = dy -
# exp(y)·Σ dy: the sum 1, exp 1, the product and subtraction 2 = 4; both the forward's 4.
# embedding_dense_backward: each grad_output row added into its token's row, 1 add.
POINTWISE_BACKWARD_FLOP = {"gelu_backward": 2, "silu_backward": 2, "threshold_backward": 0,
                           "sigmoid_backward": 3, "tanh_backward": 3}
SOFTMAX_BACKWARD_FLOP_PER_ELEMENT = 4
EMBEDDING_BACKWARD_FLOP_PER_ELEMENT = 1
BACKWARD_PER_ELEMENT: dict[str, float] = {
    **{op: float(v) for op, v in POINTWISE_BACKWARD_FLOP.items()},
    "_softmax_backward_data": float(SOFTMAX_BACKWARD_FLOP_PER_ELEMENT),
    "_log_softmax_backward_data": float(SOFTMAX_BACKWARD_FLOP_PER_ELEMENT),
    "embedding_dense_backward": float(EMBEDDING_BACKWARD_FLOP_PER_ELEMENT),
}
# Layer-norm backward per element (x̂ = (x - mean)·rstd, g = dy·γ,
# dx = rstd·(g - mean(g) - x̂·mean(g·x̂))): x̂ 2 whenever a gradient needs it; grad_input
# 7 more (Σg 1, Σg·x̂ 2, g - mean 1, x̂·mean(g·x̂) subtracted 2, times rstd 1) plus 1 for
# dy·γ with a weight; grad_weight Σ dy·x̂ 2; grad_bias Σ dy 1. All with weight and bias:
# 2 + 8 + 2 + 1 = 13 (the forward is 7).
LAYERNORM_XHAT_FLOP = 2
LAYERNORM_GRAD_INPUT_FLOP = 7
LAYERNORM_GRAD_WEIGHT_FLOP = 2
LAYERNORM_GRAD_BIAS_FLOP = 1


def layernorm_backward_per_element(grad_input: bool, grad_weight: bool, grad_bias: bool,
                                   has_weight: bool) -> int:
    """FLOP per input element of native_layer_norm_backward for the gradients it returns
    (grad_weight / grad_bias only where the layer has a weight / bias)."""
    return (LAYERNORM_XHAT_FLOP * (grad_input or grad_weight)
            + grad_input * (LAYERNORM_GRAD_INPUT_FLOP + has_weight)
            + grad_weight * LAYERNORM_GRAD_WEIGHT_FLOP + grad_bias * LAYERNORM_GRAD_BIAS_FLOP)


# Reductions counted by reduction_flop (n - 1 per output, + 1 divide for a mean).
REDUCTIONS = frozenset({"sum", "prod", "mean"})


def reduction_flop(name: str, n_in: int, n_out: int) -> int:
    """FLOP of sum / prod (n_in - n_out: n - 1 adds or multiplies per output of n inputs)
    and mean (those adds + 1 divide per output = n_in). sum(8 elements) is 7 adds: the
    count of the arithmetic, not FlopCounterMode's 0, nor 1 per input."""
    adds = max(0, n_in - n_out)
    return adds + (n_out if name == "mean" and n_in > 0 else 0)


# Real FLOP per element of complex elementwise ops, one table for `measure` and the trace
# rules (ingest/torch_ops_core.py imports it): (a+bi) ± (c+di) is 2 adds, (a+bi)(c+di) 4
# multiplies + 2 adds, -(a+bi) 2 negations (a real scalar operand is promoted to complex,
# as PyTorch computes it). Other per-element ops get no complex formula.
COMPLEX_FLOP_PER_ELEMENT = {"add": 2, "sub": 2, "rsub": 2, "mul": 6, "neg": 2, "where": 0}
# A complex reduction's add is 2 real FLOP (sum, mean: the trace's sum rule), its multiply 6
COMPLEX_REDUCTION = {"sum": 2, "mean": 2, "prod": 6}
# A complex multiply-add is 8 real FLOP, 4x the real 2 (the trace's matmul rule)
COMPLEX_MATRIX = 4
# Ops whose FLOP count per element uses the input size (reductions) rather than the output.
PER_INPUT = frozenset({"sum", "mean", "prod", "logsumexp", "linalg_vector_norm", "norm",
                       "var", "std", "var_mean", "std_mean"})
# Ops that only move or select data: 0 FLOP by definition, not "uncounted".
MOVEMENT = frozenset({
    "copy_", "clone", "_to_copy", "contiguous", "cat", "stack", "index", "index_select",
    "gather", "scatter", "scatter_add", "index_put_", "index_put", "embedding", "sort",
    "argsort", "topk", "fill_", "fill", "zero_", "zeros", "ones", "full", "zeros_like",
    "ones_like", "full_like", "where", "masked_fill", "masked_fill_", "constant_pad_nd",
    "flip", "roll", "repeat", "tril", "triu", "randn", "rand", "randint", "normal_",
    "uniform_", "arange", "eq", "ne", "lt", "le", "gt", "ge", "logical_not", "logical_and",
    "logical_or", "bitwise_and", "bitwise_or", "lift_fresh", "lift_fresh_copy", "_unsafe_view",
    "split_with_sizes_copy", "slice_scatter", "select_scatter", "nonzero", "argmax", "argmin",
    "_local_scalar_dense", "item", "set_", "resize_",
    "bernoulli", "bernoulli_",   # dropout's mask: random numbers, no arithmetic on data
    "_nested_tensor_from_mask", "_nested_tensor_from_mask_left_aligned", "to_padded_tensor",
    # allocations filled with a value, as zeros_like (review s28 R3 F12: Swin's new_zeros)
    "new_zeros", "new_ones", "new_full", "randn_like", "rand_like", "randint_like",
    # resampling that moves data (torch_rules/layer.py; review s28 R3 F2, F5)
    "upsample_nearest1d", "upsample_nearest2d", "upsample_nearest3d",
    "_upsample_nearest_exact1d", "_upsample_nearest_exact2d", "_upsample_nearest_exact3d",
    "pixel_shuffle", "pixel_unshuffle",
    "reflection_pad1d", "reflection_pad2d", "reflection_pad3d",
    "replication_pad1d", "replication_pad2d", "replication_pad3d",
})
# Ops whose pointwise count doubles when a scale argument is not 1 (b + alpha*c is a
# multiply and an add: STREAM's triad, 2 FLOP per element).
SCALED = {"add": "alpha", "sub": "alpha", "rsub": "alpha", "addcmul": "value",
          "addcdiv": "value"}
# Scaled dot-product attention kernels: FLOP counted here (FlopCounterMode has no rule for
# the CPU one and counts causal as dense on the CUDA ones: torch/utils/flop_counter.py
# sdpa_flop, "We aren't accounting for causal attention here").
SDPA_FORWARD = frozenset({"_scaled_dot_product_flash_attention_for_cpu",
                          "_scaled_dot_product_flash_attention",
                          "_scaled_dot_product_efficient_attention",
                          "_scaled_dot_product_cudnn_attention"})
# FFT: 5 N log2 N FLOP per complex transform of length N, half of it for real-input or
# real-output transforms: the convention of FFTW's benchmarks
# (https://www.fftw.org/speed/method.html).
FFT_COEFFICIENT = {"_fft_c2c": 5.0, "_fft_r2c": 2.5, "_fft_c2r": 2.5}


def causal_pairs(q_len: int, kv_len: int) -> int:
    """(query, key) pairs left by PyTorch's is_causal mask, which is top-left aligned
    (scaled_dot_product_attention's docs: query i sees keys 0..i): ops.attention_scores
    with align="top-left", the count `rooflab torch`'s trace rule uses too."""
    return attention_scores(q_len, kv_len, True, "top-left")


def sdpa_count(heads: int, q_len: int, kv_len: int, d_qk: int, d_v: int, causal: bool,
               backward: bool = False) -> float:
    """FLOP of one scaled-dot-product attention over `heads` (batch x query heads; GQA's
    shared K/V heads change no FLOP), per computed (query, key) pair: the forward's two
    matmuls S = Q·Kᵀ (D_qk) and O = P·V (D_v), 2·(D_qk + D_v); the flash backward's five,
    S recomputed, dP = dO·Vᵀ and dV = Pᵀ·dO (D_v each), dQ = dS·K and dK = dSᵀ·Q (D_qk
    each), 2·(3·D_qk + 2·D_v) (torch/utils/flop_counter.py sdpa_backward_flop_count, steps
    1-3): 2.5x the forward only when D_qk == D_v. Causal: the pairs PyTorch's top-left mask
    leaves, which FlopCounterMode does not ("We aren't accounting for causal attention").
    One count for the live counter and the trace rules (ingest/torch_ops_attention.py)."""
    pairs = causal_pairs(q_len, kv_len) if causal else q_len * kv_len
    per_pair = 3 * d_qk + 2 * d_v if backward else d_qk + d_v
    return 2.0 * heads * pairs * per_pair

