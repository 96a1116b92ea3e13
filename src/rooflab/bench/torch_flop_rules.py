"""rooflab's FLOP formulas for the PyTorch ops FlopCounterMode counts as 0 (or not as rooflab
does), read off the live counter's dispatched call (func, args, kwargs and the tensors):
the per-element table's count of a call, complex values, FFTs and the formulas of
mv/dot/int8 matmul/attention. The pure counts they apply (the per-element table, the
backward and layer-norm counts, reductions, sdpa_count) are workloads/torch_rules/flop.py's,
one table with the trace rules (ingest.torch_ops*), so both agree. Split from
bench/torch_count.py.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from ..workloads.ops import (
    LAYERNORM_AFFINE_FLOP_PER_ELEMENT,
    LAYERNORM_PLAIN_FLOP_PER_ELEMENT,
)
from ..workloads.torch_rules.flop import (
    BACKWARD_PER_ELEMENT,
    COMPLEX_FLOP_PER_ELEMENT,
    COMPLEX_MATRIX,
    COMPLEX_REDUCTION,
    FFT_COEFFICIENT,
    PER_ELEMENT,
    PER_INPUT,
    REDUCTIONS,
    SCALED,
    SDPA_FORWARD,
    layernorm_backward_per_element,
    reduction_flop,
    sdpa_count,
)
from .torch_bytes import _arg


def complex_flop(name: str, flop: float, source: str, read: list, written: list
                 ) -> tuple[float, str]:
    """(FLOP, source) of an op on complex values, from its count as if real (one complex
    element counted as one FLOP; FlopCounterMode's 2 per multiply-add): elementwise by
    COMPLEX_FLOP_PER_ELEMENT, reductions by COMPLEX_REDUCTION, matrix work x4; an op with
    no complex formula is uncounted ("none"), not 1 fp32 FLOP per element (review 19b N7:
    a complex64 multiply of 100 elements counted 100 FLOP, not 600). FFTs are counted
    from complex lengths already."""
    if name in FFT_COEFFICIENT or not flop or not any(t.is_complex() for t in read + written):
        return flop, source
    if source in ("FlopCounterMode", "rooflab formula"):
        return flop * COMPLEX_MATRIX, source
    if name in COMPLEX_REDUCTION:
        return flop * COMPLEX_REDUCTION[name], source
    if name in COMPLEX_FLOP_PER_ELEMENT and written:
        return float(COMPLEX_FLOP_PER_ELEMENT[name] * written[0].numel()), source
    return 0.0, "none"


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
    if name in FFT_COEFFICIENT and read:
        # The full-length signal: the input, except for complex-to-real (the output).
        full = written[0] if name == "_fft_c2r" and written else read[0]
        dims = args[1] if len(args) > 1 else kwargs.get("dim", [full.dim() - 1])
        n = math.prod(full.shape[d] for d in dims)
        batch = full.numel() / n if n else 0
        return FFT_COEFFICIENT[name] * n * math.log2(n) * batch if n > 1 else 0.0
    if name == "native_layer_norm_backward":
        return _layernorm_backward_flop(func, args, kwargs)
    if name in BACKWARD_PER_ELEMENT:   # per element of grad_output, the first argument
        return BACKWARD_PER_ELEMENT[name] * args[0].numel()
    per = PER_ELEMENT.get(name)
    if per is None:
        return None
    if name in SCALED and _arg(func, args, kwargs, SCALED[name], 1) != 1 \
            and _scales_per_element(name, args):
        per += 1.0   # the scale is a multiply of its own (b + alpha*c: 2 FLOP)
    if name in REDUCTIONS and read and written:
        return float(reduction_flop(name, read[0].numel(), written[0].numel()))
    base = read[0] if (name in PER_INPUT and read) else (written[0] if written else None)
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


def sdpa_flop(func, args, kwargs) -> float:
    """FLOP of one scaled-dot-product-attention kernel (q, k, v as [..., L, D]): sdpa_count;
    causal counts only the unmasked pairs, the work a block-skipping kernel does."""
    q, k, v = args[0], args[1], args[2]
    causal = bool(_arg(func, args, kwargs, "is_causal", False))
    return sdpa_count(math.prod(q.shape[:-2]), q.shape[-2], k.shape[-2], q.shape[-1],
                      v.shape[-1], causal)


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
    **{name: (sdpa_flop, None) for name in SDPA_FORWARD},
}

