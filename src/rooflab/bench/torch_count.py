"""Count the FLOP and compulsory bytes of PyTorch code by watching the ops it dispatches.

FLOP: `torch.utils.flop_counter.FlopCounterMode` (matmuls, convolutions, attention; 2 FLOP
per multiply-add). Ops it counts as 0 get a per-element figure from `PER_ELEMENT` below
when rooflab knows the op family; anything else stays 0 and is listed as uncounted.

Bytes: a `TorchDispatchMode` adds, for every dispatched op, the sizes of its distinct input
tensors (read once) and output tensors (written once): the compulsory-traffic model of
`rooflab.workloads.count.COMPULSORY`. A tensor passed twice (`x * x`) is read once; an
in-place op reads and writes its `self` (`add_`), except the write-only ones (`copy_`,
`fill_`, `zero_`, `normal_`, `index_put_`: `_WRITE_ONLY`), which only write it; an `out=`
tensor is written, not read. A tensor is charged the storage its view spans, never more
than its logical size: an expanded (stride-0) input reads its storage once. A gather
(`embedding`, `index`, `index_select`, `gather`) reads the rows it looks up (its output's
size), not its whole source. View ops (`t`, `view`, `expand`, ...) and allocations
(`empty*`) move no bytes. Traffic between ops is counted per op, as if nothing stayed in
cache: the sum over ops is what unfused kernels move, which is what eager PyTorch runs.

Fused bytes: besides the per-op sum, a counted call records the traffic of the same work
done in one pass (`TorchCount.fused_bytes`): the tensors it read that it did not produce,
read once, plus the tensors it returns and the inputs it wrote, written once. That is the
compulsory traffic a fused kernel (torch.compile's, a hand-written one) cannot go below:
eager softmax over 1024x4096 fp32 sums 134 MB over its five ops, fused 33.6 MB.

TF32: on CUDA, PyTorch runs fp32 convolutions on TF32 tensor cores while
`torch.backends.cudnn.allow_tf32` is on (its default; `cudnn.conv.fp32_precision` "tf32"
in torch >= 2.9), and fp32 matmuls when `torch.backends.cuda.matmul.allow_tf32` or
`set_float32_matmul_precision("high")` says so. Those ops are counted as tf32 FLOP on the
tensor unit, the ceiling that binds them (held to the fp32 vector ceiling, a cuDNN conv
on an A100 would run 8x "below its floor"); meta["tf32_note"] says so.

Units: FLOP of matrix work (FlopCounterMode's matmuls and convolutions, attention,
`_int_mm`) count on the tensor unit where the precision has one (workloads.ops'
_matrix_unit), the rest (per-element table, FFT, `mv`/`dot`: ops.gemv's unit) on the
vector units; a Kernel carries one unit, that of the larger FLOP share (TorchCount.unit).

torch is imported only by the functions here (the caller imports this module lazily).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..units import canonical_dtype, flop_precision
from ..workloads.count import COMPULSORY
from ..workloads.ops import (
    LAYERNORM_AFFINE_FLOP_PER_ELEMENT,
    LAYERNORM_PLAIN_FLOP_PER_ELEMENT,
)

# FLOP per element where FlopCounterMode counts 0, by aten op name (overload packet).
# The conventions are those of rooflab.workloads.ops, so a counted op and its analytic
# count agree:
#  - pointwise math: 1 FLOP per output element, transcendental or not (exp, tanh, gelu,
#    silu count 1 like add): the op is counted, not the instructions a library expands it
#    into (silu = x / (1 + exp(-x)) is 3-4 of them), as the trace rules
#    (ingest/torch_ops.py) and `rooflab ai elementwise` count it. Softmax and layer norm
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
_COMPARISONS = frozenset({"relu", "maximum", "minimum", "clamp", "clamp_min", "clamp_max",
                          "hardtanh", "threshold", "amax", "amin", "max", "min"})
PER_ELEMENT: dict[str, float] = {
    **{op: 1.0 for op in _POINTWISE_1},
    "addcmul": 2.0, "addcdiv": 2.0, "lerp": 3.0,
    "sum": 1.0, "mean": 1.0, "prod": 1.0, "cumsum": 1.0, "cumprod": 1.0, "logsumexp": 3.0,
    "linalg_vector_norm": 2.0, "norm": 2.0, "var": 3.0, "std": 3.0, "var_mean": 3.0,
    "std_mean": 3.0,
    "_softmax": 4.0, "_log_softmax": 4.0,
    "_native_batch_norm_legit_no_training": 4.0,
}
# Backward ops: FLOP per element of grad_output, the one table the counter here and the
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


# Old name of the layer-norm counts keyed by affine/plain (ops.py owns the two numbers),
# kept for outside users; ops.LAYERNORM_FLOP_PER_ELEMENT is the affine count alone.
LAYERNORM_FLOP_PER_ELEMENT = {"affine": float(LAYERNORM_AFFINE_FLOP_PER_ELEMENT),
                              "plain": float(LAYERNORM_PLAIN_FLOP_PER_ELEMENT)}
# Reductions counted by reduction_flop (n - 1 per output, + 1 divide for a mean).
_REDUCTIONS = frozenset({"sum", "prod", "mean"})


def reduction_flop(name: str, n_in: int, n_out: int) -> int:
    """FLOP of sum / prod (n_in - n_out: n - 1 adds or multiplies per output of n inputs)
    and mean (those adds + 1 divide per output = n_in). sum(8 elements) is 7 adds: the
    count of the arithmetic, not FlopCounterMode's 0, nor 1 per input."""
    adds = max(0, n_in - n_out)
    return adds + (n_out if name == "mean" and n_in > 0 else 0)


# Real FLOP per element of complex elementwise ops, one table for `measure` and the trace
# rules (ingest/torch_ops.py imports it): (a+bi) ± (c+di) is 2 adds, (a+bi)(c+di) 4
# multiplies + 2 adds, -(a+bi) 2 negations (a real scalar operand is promoted to complex,
# as PyTorch computes it). Other per-element ops get no complex formula.
COMPLEX_FLOP_PER_ELEMENT = {"add": 2, "sub": 2, "rsub": 2, "mul": 6, "neg": 2, "where": 0}
# A complex reduction's add is 2 real FLOP (sum, mean: the trace's sum rule), its multiply 6
COMPLEX_REDUCTION = {"sum": 2, "mean": 2, "prod": 6}
# A complex multiply-add is 8 real FLOP, 4x the real 2 (the trace's matmul rule)
COMPLEX_MATRIX = 4


def complex_flop(name: str, flop: float, source: str, read: list, written: list
                 ) -> tuple[float, str]:
    """(FLOP, source) of an op on complex values, from its count as if real (one complex
    element counted as one FLOP; FlopCounterMode's 2 per multiply-add): elementwise by
    COMPLEX_FLOP_PER_ELEMENT, reductions by COMPLEX_REDUCTION, matrix work x4; an op with
    no complex formula is uncounted ("none"), not 1 fp32 FLOP per element (review 19b N7:
    a complex64 multiply of 100 elements counted 100 FLOP, not 600). FFTs are counted
    from complex lengths already."""
    if name in _FFT or not flop or not any(t.is_complex() for t in read + written):
        return flop, source
    if source in ("FlopCounterMode", "rooflab formula"):
        return flop * COMPLEX_MATRIX, source
    if name in COMPLEX_REDUCTION:
        return flop * COMPLEX_REDUCTION[name], source
    if name in COMPLEX_FLOP_PER_ELEMENT and written:
        return float(COMPLEX_FLOP_PER_ELEMENT[name] * written[0].numel()), source
    return 0.0, "none"


# Ops whose FLOP count per element uses the input size (reductions) rather than the output.
_PER_INPUT = frozenset({"sum", "mean", "prod", "logsumexp", "linalg_vector_norm", "norm",
                        "var", "std", "var_mean", "std_mean"})
# Ops that only move or select data: 0 FLOP by definition, not "uncounted".
_MOVEMENT = frozenset({
    "copy_", "clone", "_to_copy", "contiguous", "cat", "stack", "index", "index_select",
    "gather", "scatter", "scatter_add", "index_put_", "index_put", "embedding", "sort",
    "argsort", "topk", "fill_", "fill", "zero_", "zeros", "ones", "full", "zeros_like",
    "ones_like", "full_like", "where", "masked_fill", "masked_fill_", "constant_pad_nd",
    "flip", "roll", "repeat", "tril", "triu", "randn", "rand", "randint", "normal_",
    "uniform_", "arange", "eq", "ne", "lt", "le", "gt", "ge", "logical_not", "logical_and",
    "logical_or", "bitwise_and", "bitwise_or", "lift_fresh", "lift_fresh_copy", "_unsafe_view",
    "split_with_sizes_copy", "slice_scatter", "select_scatter", "nonzero", "argmax", "argmin",
    "_local_scalar_dense", "item", "set_", "resize_",
})
# Gathers (source tensor first): bytes are the looked-up elements (the output's size, at
# most the source's), the indices and the output (ops.embedding's byte model).
_GATHERS = frozenset({"embedding", "index", "index_select", "gather"})
# In-place ops that write their `self` without reading it (the schema marks `self` as
# mutated, Tensor(a!), but cannot say whether it is read, so the list is by hand).
_WRITE_ONLY = frozenset({"copy_", "fill_", "zero_", "normal_", "uniform_", "index_put_",
                         "_index_put_impl_", "random_", "bernoulli_", "exponential_",
                         "geometric_", "cauchy_", "log_normal_"})
# Ops whose pointwise count doubles when a scale argument is not 1 (b + alpha*c is a
# multiply and an add: STREAM's triad, 2 FLOP per element).
_SCALED = {"add": "alpha", "sub": "alpha", "rsub": "alpha", "addcmul": "value",
           "addcdiv": "value"}
# Scaled dot-product attention kernels: FLOP counted here (FlopCounterMode has no rule for
# the CPU one and counts causal as dense on the CUDA ones: torch/utils/flop_counter.py
# sdpa_flop, "We aren't accounting for causal attention here").
_SDPA = frozenset({"_scaled_dot_product_flash_attention_for_cpu",
                   "_scaled_dot_product_flash_attention", "_scaled_dot_product_efficient_attention",
                   "_scaled_dot_product_cudnn_attention"})
_NO_TRAFFIC = frozenset({"empty", "empty_like", "empty_strided", "new_empty",
                         "new_empty_strided", "detach", "alias", "lift_fresh", "_unsafe_view"})
# FFT: 5 N log2 N FLOP per complex transform of length N, half of it for real-input or
# real-output transforms: the convention of FFTW's benchmarks
# (https://www.fftw.org/speed/method.html).
_FFT = {"_fft_c2c": 5.0, "_fft_r2c": 2.5, "_fft_c2r": 2.5}


@dataclass(frozen=True)
class OpRecord:
    """One dispatched op: its FLOP (with where the figure came from) and compulsory bytes."""

    op: str
    precision: str
    flop: float
    bytes: float
    flop_source: str   # FlopCounterMode | rooflab formula | per-element table | movement | ...
    unit: str | None = None   # tensor | vector | None (matrix work in a precision with no
                              # tensor unit: any ceiling of the precision)
    device: str = "cpu"       # where its tensors lived ("cuda:0"): the clock to time it by


ANY_UNIT = "any"   # flop_by_unit's key for FLOP with unit None


@dataclass(frozen=True)
class TorchCount:
    """What a stretch of PyTorch code dispatched, op by op."""

    ops: tuple[OpRecord, ...]
    fused_bytes: float | None = None   # one-pass traffic (module doc); None: returns unknown

    @property
    def devices(self) -> tuple[str, ...]:
        """The devices the ops' tensors lived on, in order of first use."""
        return tuple(dict.fromkeys(r.device for r in self.ops))

    @property
    def flop(self) -> dict[str, float]:
        """FLOP by precision (precisions with 0 FLOP left out)."""
        out: dict[str, float] = {}
        for r in self.ops:
            if r.flop > 0:
                out[r.precision] = out.get(r.precision, 0.0) + r.flop
        return out

    @property
    def flop_by_unit(self) -> dict[str, float]:
        """FLOP by compute unit: "tensor", "vector", "any" (units with 0 FLOP left out)."""
        out: dict[str, float] = {}
        for r in self.ops:
            if r.flop > 0:
                key = r.unit or ANY_UNIT
                out[key] = out.get(key, 0.0) + r.flop
        return out

    @property
    def unit(self) -> str | None:
        """The Kernel's unit: the unit of the larger FLOP share. A Kernel carries one unit;
        a tensor kernel's other precisions go to the vector units anyway
        (model.ceiling._unit_of_part), so only same-precision mixes are held to the
        majority's unit (meta's unit_note says so)."""
        by_unit = self.flop_by_unit
        if not by_unit:
            return None
        best = max(by_unit.items(), key=lambda kv: kv[1])[0]
        return None if best == ANY_UNIT else best

    @property
    def bytes(self) -> float:
        return float(sum(r.bytes for r in self.ops))

    @property
    def uncounted(self) -> tuple[str, ...]:
        """Ops that are neither counted nor pure data movement: their FLOP are missing."""
        return tuple(dict.fromkeys(r.op for r in self.ops if r.flop_source == "none"))

    def summary(self) -> dict[str, dict[str, float]]:
        """Per op name: calls, FLOP, bytes (for a kernel's meta)."""
        out: dict[str, dict[str, float]] = {}
        for r in self.ops:
            row = out.setdefault(r.op, {"calls": 0, "flop": 0.0, "bytes": 0.0})
            row["calls"] += 1
            row["flop"] += r.flop
            row["bytes"] += r.bytes
        return out

    def meta(self) -> dict[str, Any]:
        d: dict[str, Any] = {"byte_model": COMPULSORY + "; summed per dispatched op",
                             "ops": self.summary()}
        by_unit = self.flop_by_unit
        if by_unit:
            d["flop_by_unit"] = by_unit
        if len(by_unit) > 1:
            total = sum(by_unit.values())
            shares = ", ".join(f"{100 * v / total:.3g} % {k}" for k, v in by_unit.items())
            d["unit_note"] = (f"FLOP on more than one unit ({shares}); the kernel is held to "
                              f"the {self.unit or ANY_UNIT} unit, the larger share")
        if self.uncounted:
            d["uncounted_ops"] = list(self.uncounted)
        if self.fused_bytes is not None:
            d["fused_bytes"] = self.fused_bytes
        if any(r.precision == "tf32" for r in self.ops):   # torch has no tf32 dtype: the rule
            d["tf32_note"] = TF32_NOTE
        return d


def torch_precision(dtype) -> str:
    """rooflab's precision name for a torch dtype (complex counts as its real part)."""
    text = str(dtype).removeprefix("torch.")
    text = {"complex64": "float32", "complex128": "float64", "complex32": "float16",
            "bool": "bool", "uint8": "uint8"}.get(text, text)
    try:
        return flop_precision(canonical_dtype(text))
    except Exception:  # exotic dtypes (float8 variants, quantised): count under fp32
        return "fp8" if "float8" in text else "fp32"


def _tensors(tree) -> list:
    import torch
    from torch.utils._pytree import tree_flatten

    return [t for t in tree_flatten(tree)[0] if isinstance(t, torch.Tensor)]


def _span(t) -> float:
    """Bytes a tensor's reader touches: its logical size, or less where the view spans less
    storage (an expanded, stride-0 view reads each stored element once)."""
    n = t.numel()
    if n == 0:
        return 0.0
    try:
        extent = 1 + sum((size - 1) * abs(st) for size, st in zip(t.shape, t.stride(), strict=True))
    except RuntimeError:   # sparse or other layouts without strides: the logical size
        extent = n
    return float(min(n, extent) * t.element_size())


def _nbytes(tensors) -> float:
    seen: set = set()
    total = 0.0
    for t in tensors:
        try:
            key = (t.data_ptr(), tuple(t.shape), tuple(t.stride()), t.dtype)
        except RuntimeError:  # tensors without storage (meta, fake): count by size
            key = (id(t),)
        if key in seen:
            continue
        seen.add(key)
        total += _span(t)
    return float(total)


def _arg(func, args, kwargs, name: str, default=None):
    """The argument called `name` in func's schema, positional or keyword."""
    if name in kwargs:
        return kwargs[name]
    try:
        names = [a.name for a in func._schema.arguments]
    except AttributeError:
        return default
    i = names.index(name) if name in names else len(args)
    return args[i] if i < len(args) else default


def _out_arg_names(func) -> set[str]:
    try:
        return {a.name for a in func._schema.arguments if getattr(a, "is_out", False)}
    except AttributeError:
        return set()


def _split_args(func, args, kwargs) -> tuple[list, list]:
    """(tensors read, tensors passed as out=) of one call."""
    outs = _out_arg_names(func)
    out_tensors = _tensors([v for k, v in kwargs.items() if k in outs])
    read = _tensors(list(args) + [v for k, v in kwargs.items() if k not in outs])
    return read, out_tensors


def _scales_per_element(name: str, args) -> bool:
    """Whether alpha multiplies a tensor element by element: add/sub scale `other`, rsub
    its `self`; a scalar (or one-element) operand is scaled once, not per element."""
    if name not in ("add", "sub", "rsub"):
        return True
    scaled = args[0] if name == "rsub" else (args[1] if len(args) > 1 else None)
    return hasattr(scaled, "numel") and scaled.numel() > 1


def table_flop(name: str, func, args, kwargs, read: list, written: list) -> float | None:
    """FLOP from rooflab's per-element table for an op FlopCounterMode counts as 0."""
    if name == "native_layer_norm":
        has_affine = len(args) > 2 and args[2] is not None
        per = (LAYERNORM_AFFINE_FLOP_PER_ELEMENT if has_affine
               else LAYERNORM_PLAIN_FLOP_PER_ELEMENT)
        return float(per * args[0].numel())
    if name in _FFT and read:
        # The full-length signal: the input, except for complex-to-real (the output).
        full = written[0] if name == "_fft_c2r" and written else read[0]
        dims = args[1] if len(args) > 1 else kwargs.get("dim", [full.dim() - 1])
        n = math.prod(full.shape[d] for d in dims)
        batch = full.numel() / n if n else 0
        return _FFT[name] * n * math.log2(n) * batch if n > 1 else 0.0
    if name == "native_layer_norm_backward":
        return _layernorm_backward_flop(func, args, kwargs)
    if name in BACKWARD_PER_ELEMENT:   # per element of grad_output, the first argument
        return BACKWARD_PER_ELEMENT[name] * args[0].numel()
    per = PER_ELEMENT.get(name)
    if per is None:
        return None
    if name in _SCALED and _arg(func, args, kwargs, _SCALED[name], 1) != 1 \
            and _scales_per_element(name, args):
        per += 1.0   # the scale is a multiply of its own (b + alpha*c: 2 FLOP)
    if name in _REDUCTIONS and read and written:
        return float(reduction_flop(name, read[0].numel(), written[0].numel()))
    base = read[0] if (name in _PER_INPUT and read) else (written[0] if written else None)
    return per * base.numel() if base is not None else None


def _layernorm_backward_flop(func, args, kwargs) -> float:
    """native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight,
    bias, output_mask): layernorm_backward_per_element times the input's elements."""
    mask = _arg(func, args, kwargs, "output_mask", [True, True, True])
    weight = _arg(func, args, kwargs, "weight")
    bias = _arg(func, args, kwargs, "bias")
    grad_input, grad_weight, grad_bias = (bool(m) for m in mask)
    per = layernorm_backward_per_element(grad_input, grad_weight and weight is not None,
                                         grad_bias and bias is not None, weight is not None)
    return float(per * args[1].numel())


def causal_pairs(q_len: int, kv_len: int) -> int:
    """(query, key) pairs left by PyTorch's is_causal mask, which is top-left aligned
    (scaled_dot_product_attention's docs: query i sees keys 0..i): ops.attention_scores
    with align="top-left", the count `rooflab torch`'s trace rule uses too."""
    from ..workloads.ops import attention_scores

    return attention_scores(q_len, kv_len, True, "top-left")


def sdpa_flop(func, args, kwargs) -> float:
    """FLOP of one scaled-dot-product-attention kernel (q, k, v as [..., L, D]): the two
    matmuls, 2·D_qk + 2·D_v per computed (query, key) pair (4·B·H·pairs·D, ops.attention's
    count); causal counts only the unmasked pairs, the work a block-skipping kernel does."""
    q, k, v = args[0], args[1], args[2]
    heads = math.prod(q.shape[:-2])
    q_len, kv_len = q.shape[-2], k.shape[-2]
    causal = bool(_arg(func, args, kwargs, "is_causal", False))
    pairs = causal_pairs(q_len, kv_len) if causal else q_len * kv_len
    return 2.0 * heads * pairs * (q.shape[-1] + v.shape[-1])


def _mv(func, args, kwargs) -> float:
    a = args[0]
    return 2.0 * a.shape[0] * a.shape[1]


def _addmv(func, args, kwargs) -> float:
    a = args[1]
    return 2.0 * a.shape[0] * a.shape[1] + a.shape[0]   # + the add of self


def _dot(func, args, kwargs) -> float:
    return 2.0 * args[0].numel()


def _int_mm(func, args, kwargs) -> float:
    (m, k), n = args[0].shape, args[1].shape[1]
    return 2.0 * m * n * k


# Ops FlopCounterMode counts as 0 (or, for attention, not as rooflab does): rooflab's
# formula and the unit it runs on (ops.gemv: vector; int8 matmul: tensor; attention: the
# precision's matrix unit, None here).
FORMULAS: dict[str, tuple[Callable[..., float], str | None]] = {
    "mv": (_mv, "vector"), "addmv": (_addmv, "vector"), "dot": (_dot, "vector"),
    "vdot": (_dot, "vector"), "_int_mm": (_int_mm, "tensor"),
    **{name: (sdpa_flop, None) for name in _SDPA},
}


def _matrix_unit(precision: str) -> str | None:
    from ..workloads.ops import TENSOR_DTYPES

    return "tensor" if precision in TENSOR_DTYPES else None


def _precision_of(read: list, written: list) -> str:
    for t in read + written:
        if t.is_floating_point() or t.is_complex():
            return torch_precision(t.dtype)
    return torch_precision((read + written)[0].dtype) if read + written else "fp32"


def _is_self_write(func) -> bool:
    """The schema's first argument is mutated (Tensor(a!) self)."""
    try:
        info = func._schema.arguments[0].alias_info
    except (AttributeError, IndexError):
        return False
    return bool(info is not None and info.is_write)


def _indexed_elements(target, indices) -> int:
    """Elements of `target` an index_put_ with `indices` (None, integer or bool tensors)
    writes. A bool mask counts every element it covers (an upper bound: how many are True
    is data the count does not read)."""
    import torch

    sizes: list[int] = []
    int_shapes = []
    dim = 0
    for idx in indices:
        if idx is None:
            sizes.append(target.shape[dim])
            dim += 1
        elif idx.dtype in (torch.bool, torch.uint8):   # a mask over idx.dim() dims
            sizes.append(idx.numel())
            dim += idx.dim()
        else:
            int_shapes.append(tuple(idx.shape))
            dim += 1
    sizes += list(target.shape[dim:])
    if int_shapes:
        sizes.append(math.prod(torch.broadcast_shapes(*int_shapes)))
    return math.prod(sizes)


def _traffic(name: str, func, args, kwargs, read: list, written: list) -> float:
    """Compulsory bytes of one op (see the module docstring)."""
    if name in _GATHERS and read:
        source = args[0]
        others = [t for t in read if t is not source]
        rows = min(_span(source), _nbytes(written))   # the looked-up rows, at most once
        return rows + _nbytes(others) + _nbytes(written)
    if name in _WRITE_ONLY and _is_self_write(func) and args:
        target = args[0]
        sources = [t for t in read if t is not target]
        if name.startswith(("index_put", "_index_put")):
            region = _indexed_elements(target, args[1]) * target.element_size()
            rmw = region if _arg(func, args, kwargs, "accumulate", False) else 0.0
            return _nbytes(sources) + rmw + region
        return _nbytes(sources) + _nbytes([target])
    return _nbytes(read) + _nbytes(written)


# Ops PyTorch may run on TF32 tensor cores when their tensors are CUDA fp32 (module doc).
_CONVS = frozenset({"convolution", "_convolution", "convolution_backward",
                    "cudnn_convolution", "cudnn_convolution_transpose"})
_MATMULS = frozenset({"mm", "addmm", "bmm", "baddbmm", "_addmm_activation"})
TF32_NOTE = ("fp32 convolutions/matmuls on CUDA counted as tf32 on the tensor unit: PyTorch "
             "runs them on TF32 while torch.backends.cudnn.allow_tf32 (default on) or "
             "torch.backends.cuda.matmul.allow_tf32 is set; turn it off to run and count "
             "them as fp32")


def tf32_enabled(kind: str) -> bool:
    """Whether PyTorch lets cuDNN convolutions (kind "conv") or cuBLAS matmuls ("matmul")
    run fp32 on TF32: the newer fp32_precision setting when it is "tf32" or "ieee", else
    the allow_tf32 flag (torch 2.13: cudnn.conv.fp32_precision reads "tf32" by default,
    "none" once allow_tf32 is set False)."""
    import torch

    backend = torch.backends.cudnn if kind == "conv" else torch.backends.cuda.matmul
    scoped = getattr(backend, "conv", backend) if kind == "conv" else backend
    setting = getattr(scoped, "fp32_precision", "none")
    if setting in ("tf32", "ieee"):
        return setting == "tf32"
    if kind == "matmul" and torch.get_float32_matmul_precision() != "highest":
        return True
    return bool(getattr(backend, "allow_tf32", False))


def _tf32_kind(name: str) -> str | None:
    return "conv" if name in _CONVS else "matmul" if name in _MATMULS else None


def _device_of(tensors: list) -> str:
    """The device of an op's tensors ("cpu", "cuda:0"): its first tensor's."""
    return str(tensors[0].device) if tensors else "cpu"


def _storage_key(t) -> tuple:
    """Which memory a tensor lives in: views of one tensor share it (fused-bytes bookkeeping)."""
    try:
        return (str(t.device), t.untyped_storage().data_ptr())
    except (RuntimeError, NotImplementedError):   # sparse, fake: the tensor itself
        return ("id", id(t))


class _OnePass:
    """The fused-bytes bookkeeping of a counted call: which storages came from outside (read
    once) and which it wrote (written once when returned or when an input)."""

    def __init__(self) -> None:
        self.outside: dict[tuple, float] = {}   # storage -> bytes read from it
        self.made: set[tuple] = set()           # storages the call produced
        self.written: dict[tuple, float] = {}   # storage -> bytes written to it
        self.inputs_written: set[tuple] = set()  # the caller's tensors it wrote (out=, add_)

    def clear(self) -> None:
        self.inputs_written.clear()
        self.outside.clear()
        self.made.clear()
        self.written.clear()

    def op(self, reads: list[tuple], writes: list, targets: list) -> None:
        """reads: (tensor, bytes read) pairs; writes: the tensors the op wrote; targets: the
        written tensors passed in (an in-place `self`, `out=`): the caller's unless made here."""
        for t, nbytes in reads:
            key = _storage_key(t)
            if key not in self.made:
                self.outside[key] = max(self.outside.get(key, 0.0), nbytes)
        for t in targets:
            key = _storage_key(t)
            if key not in self.made:
                self.inputs_written.add(key)
        for t in writes:
            key = _storage_key(t)
            if key not in self.outside and key not in self.inputs_written:
                self.made.add(key)
            self.written[key] = max(self.written.get(key, 0.0), _span(t))

    def total(self, returned) -> float:
        """Inputs read once, plus the returned tensors and the written inputs written once."""
        mine = self.outside.keys() | self.inputs_written
        out: dict[tuple, float] = {k: v for k, v in self.written.items() if k in mine}
        for t in _tensors(returned):
            key = _storage_key(t)
            if key in self.written:
                out[key] = max(out.get(key, 0.0), _span(t))
        return float(sum(self.outside.values()) + sum(out.values()))


def _fused_reads(name: str, func, args, read: list, written: list) -> list[tuple]:
    """(tensor, bytes) an op reads, for the one-pass count: a write-only op's target is not
    read, a gather reads the rows it looks up (as _traffic counts them)."""
    if name in _WRITE_ONLY and _is_self_write(func) and args:
        read = [t for t in read if t is not args[0]]
    if name in _GATHERS and read:
        rows = min(_span(args[0]), _nbytes(written))
        return [(t, rows if t is args[0] else _span(t)) for t in read]
    return [(t, _span(t)) for t in read]


def _make_mode(counter: FlopCounter):
    from torch.utils._python_dispatch import TorchDispatchMode

    class _BytesMode(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            before = counter.flop_counter.get_total_flops()
            out = func(*args, **kwargs)
            counted = counter.flop_counter.get_total_flops() - before
            counter.record(func, args, kwargs, out, float(counted))
            return out

    return _BytesMode()


class FlopCounter:
    """Context manager: counts FLOP and compulsory bytes of the PyTorch ops run inside.

    >>> with FlopCounter() as c:
    ...     torch.mm(a, b)
    >>> c.result.flop, c.result.bytes
    """

    def __init__(self) -> None:
        from torch.utils.flop_counter import FlopCounterMode

        self.flop_counter = FlopCounterMode(display=False)
        self._records: list[OpRecord] = []
        self._one_pass = _OnePass()
        self._mode = None

    def __enter__(self) -> FlopCounter:
        self._records.clear()
        self._one_pass.clear()
        self.flop_counter.__enter__()
        self._mode = _make_mode(self)
        self._mode.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        try:
            self._mode.__exit__(*exc)
        finally:
            self._mode = None
            self.flop_counter.__exit__(*exc)

    @property
    def result(self) -> TorchCount:
        return TorchCount(ops=tuple(self._records))

    def result_returning(self, returned) -> TorchCount:
        """The count of a call that returned `returned`, with its fused (one-pass) bytes."""
        return TorchCount(ops=tuple(self._records), fused_bytes=self._one_pass.total(returned))

    def record(self, func, args, kwargs, out, counted: float) -> None:
        name = func._overloadpacket.__name__ if hasattr(func, "_overloadpacket") else str(func)
        if getattr(func, "is_view", False):
            return
        if name in _NO_TRAFFIC:   # an allocation is made here, though it moves nothing yet
            self._one_pass.op([], _tensors(out), [])
            return
        read, out_args = _split_args(func, args, kwargs)
        written = _tensors(out)
        if not read and not written:
            return
        nbytes = _traffic(name, func, args, kwargs, read, written)
        targets = out_args + ([args[0]] if args and _is_self_write(func) else [])
        self._one_pass.op(_fused_reads(name, func, args, read, written), written, targets)
        precision = _precision_of(read, written)
        device = _device_of(read + written)
        unit: str | None = None
        if name in FORMULAS:
            formula, unit = FORMULAS[name]
            flop, source = formula(func, args, kwargs), "rooflab formula"
            unit = unit or _matrix_unit(precision)
        elif counted > 0:
            flop, source = counted, "FlopCounterMode"
            kind = _tf32_kind(name)
            if (precision == "fp32" and kind and device.startswith("cuda")
                    and tf32_enabled(kind)):
                precision = "tf32"   # what the tensor cores run (module doc)
            unit = _matrix_unit(precision)   # matmuls and convolutions
        elif name in _MOVEMENT:
            flop, source = 0.0, "movement"
        elif name.rstrip("_") in _COMPARISONS:
            flop, source = 0.0, "comparison"
        else:
            # In-place variants (add_, mul_) count like their functional op.
            found = table_flop(name.rstrip("_") or name, func, args, kwargs, read, written)
            flop, source = (found, "per-element table") if found is not None else (0.0, "none")
            unit = "vector" if found else None
        flop, source = complex_flop(name.rstrip("_") or name, flop, source, read, written)
        self._records.append(OpRecord(op=f"aten.{name}", precision=precision,
                                      flop=float(flop), bytes=nbytes, flop_source=source,
                                      unit=unit if flop > 0 else None, device=device))


def count_call(fn: Callable[..., Any], args: tuple = (), kwargs: Mapping[str, Any] | None = None
               ) -> tuple[Any, TorchCount]:
    """Run fn(*args, **kwargs) once under the counter: (its result, the count, with the
    fused bytes of what it returned)."""
    with FlopCounter() as counter:
        result = fn(*args, **dict(kwargs or {}))
    return result, counter.result_returning(result)


_WARM = [False]


def warm_up() -> None:
    """Pay the counter's first-use cost once per process, outside any timed region: the
    first op dispatched under its modes imports torch._dynamo (torch/_compile.py; ~2-3 s,
    review 17b N6), so a single timed run counted cold would time mostly rooflab. Runs one
    tiny op under a throwaway counter (a few ms once warm)."""
    if _WARM[0]:
        return
    import torch

    with FlopCounter():
        torch.ones(2, 2) @ torch.ones(2, 2) + 1.0
    _WARM[0] = True
