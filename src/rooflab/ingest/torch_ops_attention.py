"""FLOP and compulsory bytes of PyTorch's scaled-dot-product attention, forward and backward,
from the shapes the profiler recorded (split from ingest/torch_ops.py, which re-exports).

Forward: 2 matmuls (S = QK^T, O = PV), 4·B·H·pairs·D (ops.attention's count), causal pairs
with PyTorch's top-left mask. Backward (flash and its CUDA siblings): S is recomputed and
dP, dV, dQ, dK computed, 5 matmuls per computed (q, k) pair = 2.5x the forward
(torch/utils/flop_counter.py sdpa_backward_flop_count, steps 1-3), the causal pairs
counted as the forward counts them (FlopCounterMode counts causal as dense).
"""

from __future__ import annotations

from .torch_ops import (
    COMPLEX_REAL,
    OpCall,
    OpWork,
    _const,
    _in_bytes,
    _numel,
    _tensors,
    dtype_of,
    itemsize,
)

# Backward matmuls per forward matmul: 5 (S again, dP, dV, dQ, dK) over the forward's 2.
BACKWARD_OVER_FORWARD = 2.5
# The is_causal argument's position in each backward op's schema (native_functions.yaml).
_BACKWARD_CAUSAL = {
    "aten::_scaled_dot_product_flash_attention_for_cpu_backward": 7,
    "aten::_scaled_dot_product_flash_attention_backward": 11,
    "aten::_scaled_dot_product_efficient_attention_backward": 11,
    "aten::_scaled_dot_product_cudnn_attention_backward": 14,
}


def _qkv(dims, first: int):
    """(b, h, lq, d, hkv, lkv) of q, k, v at dims[first:first+3], each [B, H, L, D]."""
    qkv = dims[first:first + 3]
    if len(qkv) < 3 or any(d is None or len(d) != 4 for d in qkv):
        return None
    (b, h, lq, d), (_, hkv, lkv, _) = qkv[0], qkv[1]
    return b, h, lq, d, hkv, lkv


def _forward_count(call: OpCall, first: int, causal: bool):
    """ops.attention's flash count of the q, k, v at dims[first:], or None / a reason."""
    from ..workloads import ops

    shape = _qkv(call.dims, first)
    dt = dtype_of(call.types[first]) if shape else None
    if dt is None:
        return None
    if dt in COMPLEX_REAL:
        return "no formula for complex attention"
    b, h, lq, d, hkv, lkv = shape
    return ops.attention(b, h, lq, lkv, d, kv_heads=hkv, dtype=dt, flash=True, causal=causal,
                         causal_align="top-left")


def _attention(call: OpCall) -> OpWork | str | None:
    """aten::scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal, ...):
    q [B, H, Lq, D], k and v [B, Hkv, Lkv, D]; flash byte model (scores stay on chip).
    is_causal masks top-left (query i sees keys 0..i; the SDPA docs' "upper left causal
    bias"), which differs from the decode-style bottom-right mask when Lq != Lkv."""
    c = _forward_count(call, 0, bool(_const(call, 5, False)))
    if c is None or isinstance(c, str):
        return c
    dims = call.dims
    mask = dims[3] if len(dims) > 3 and dims[3] else None
    mask_dt = dtype_of(call.types[3]) if mask else None
    extra = _numel(mask) * itemsize(mask_dt or dtype_of(call.types[0])) if mask else 0.0
    return OpWork("attention", c.flop, c.bytes + extra, c.precision, c.unit)


def _attention_backward(call: OpCall) -> OpWork | str | None:
    """The SDPA backward kernels (grad_out, q, k, v, ...): 2.5x the forward's FLOP; bytes
    every tensor argument read once (grad_out, q, k, v, out, logsumexp, a mask or bias)
    and dq, dk, dv written."""
    c = _forward_count(call, 1, bool(_const(call, _BACKWARD_CAUSAL[call.name], False)))
    if c is None or isinstance(c, str):
        return c
    qkv = [(tuple(call.dims[i]), dtype_of(call.types[i])) for i in (1, 2, 3)]
    nbytes = _in_bytes(_tensors(call)) + _in_bytes(qkv)
    return OpWork("attention_backward", c.flop * BACKWARD_OVER_FORWARD, nbytes,
                  c.precision, c.unit)


ATTENTION_RULES = {"aten::scaled_dot_product_attention": _attention,
                   **{name: _attention_backward for name in _BACKWARD_CAUSAL}}
