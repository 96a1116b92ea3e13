"""FLOP and compulsory bytes of PyTorch's scaled-dot-product attention, forward and backward,
from the shapes the profiler recorded (split from ingest/torch_ops.py).

FLOP: workloads.torch_rules.flop.sdpa_count, the live counter's count too (both paths read
it from workloads/, below bench/ and ingest/). Forward: 2 matmuls (S = QK^T, O = PV),
2·B·H·pairs·(D_qk + D_v) (ops.attention's 4·B·H·pairs·D when D_qk == D_v), causal pairs
with PyTorch's top-left mask. Backward (flash and its CUDA siblings): S is recomputed and
dP, dV, dQ, dK computed, 5 matmuls per computed (q, k) pair, 2·B·H·pairs·(3·D_qk + 2·D_v)
(2.5x the forward when D_qk == D_v; torch/utils/flop_counter.py sdpa_backward_flop_count,
steps 1-3), the causal pairs counted as the forward counts them (FlopCounterMode counts
causal as dense).
"""

from __future__ import annotations

from ..units import flop_precision
from ..workloads import ops
from ..workloads.torch_rules.flop import sdpa_count
from ..workloads.torch_rules.traffic import sdpa_kv_bytes
from .torch_ops_base import COMPLEX_REAL, OpCall, OpWork, dtype_of, in_bytes, itemsize, numel

# The is_causal argument's position in each backward op's schema (native_functions.yaml).
_BACKWARD_CAUSAL = {
    "aten::_scaled_dot_product_flash_attention_for_cpu_backward": 7,
    "aten::_scaled_dot_product_flash_attention_backward": 11,
    "aten::_scaled_dot_product_efficient_attention_backward": 11,
    "aten::_scaled_dot_product_cudnn_attention_backward": 14,
}


def _qkv(dims, first: int):
    """(b, h, lq, d_qk, hkv, lkv, d_v) of q, k, v at dims[first:first+3], each [B, H, L, D]."""
    qkv = dims[first:first + 3]
    if len(qkv) < 3 or any(d is None or len(d) != 4 for d in qkv):
        return None
    (b, h, lq, d), (_, hkv, lkv, _) = qkv[0], qkv[1]
    return b, h, lq, d, hkv, lkv, qkv[2][3]


def _kv_unseen(call: OpCall, first: int, causal: bool) -> float:
    """Bytes of K and V (at dims[first+1:first+3]) that no query sees, so never read
    (sdpa_kv_bytes: top-left causal with Lq < Lkv)."""
    k, v = (first + 1, first + 2)
    kv = in_bytes([(tuple(call.dims[i]), dtype_of(call.types[i])) for i in (k, v)])
    lq, lkv = call.dims[first][2], call.dims[k][2]
    return kv - sdpa_kv_bytes(kv, lq, lkv, causal)


def _count(call: OpCall, first: int, causal: bool, backward: bool):
    """(FLOP, ops.attention's flash count) of the q, k, v at dims[first:], or None / a
    reason. ops.attention checks the shapes (GQA) and gives the precision and unit; the
    FLOP is sdpa_count's, which has D_v (ops.attention's D is q's)."""
    shape = _qkv(call.dims, first)
    dt = dtype_of(call.types[first]) if shape else None
    if dt is None:
        return None
    if dt in COMPLEX_REAL:
        return "no formula for complex attention"
    b, h, lq, d, hkv, lkv, dv = shape
    c = ops.attention(b, h, lq, lkv, d, kv_heads=hkv, dtype=dt, flash=True, causal=causal,
                      causal_align="top-left")
    return sdpa_count(b * h, lq, lkv, d, dv, causal, backward), c


def _attention(call: OpCall) -> OpWork | str | None:
    """aten::scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal, ...):
    q [B, H, Lq, D_qk], k [B, Hkv, Lkv, D_qk], v [B, Hkv, Lkv, D_v]; flash byte model
    (scores stay on chip). is_causal masks top-left (query i sees keys 0..i; the SDPA docs'
    "upper left causal bias"), which differs from the decode-style bottom-right mask when
    Lq != Lkv."""
    causal = bool(call.const(5, False))
    got = _count(call, 0, causal, backward=False)
    if got is None or isinstance(got, str):
        return got
    flop, c = got
    dims = call.dims
    # q and the K, V rows some query sees read, O [B, H, Lq, D_v] written (ops.attention's
    # bytes when D_v == D_qk)
    out = numel(dims[0][:3]) * dims[2][3] * itemsize(dtype_of(call.types[0]))
    nbytes = (in_bytes([(tuple(dims[i]), dtype_of(call.types[i])) for i in (0, 1, 2)]) + out
              - _kv_unseen(call, 0, causal))
    mask = dims[3] if len(dims) > 3 and dims[3] else None
    mask_dt = dtype_of(call.types[3]) if mask else None
    extra = numel(mask) * itemsize(mask_dt or dtype_of(call.types[0])) if mask else 0.0
    return OpWork("attention", flop, nbytes + extra, c.precision, c.unit)


def _attention_backward(call: OpCall) -> OpWork | str | None:
    """The SDPA backward kernels (grad_out, q, k, v, ...): sdpa_count's backward; bytes
    every tensor argument read once (grad_out, q, out, logsumexp, a mask or bias; K and V
    for the keys some query sees, as the forward) and dq, dk, dv written (dk, dv whole:
    the rows no query sees are written as zeros)."""
    causal = bool(call.const(_BACKWARD_CAUSAL[call.name], False))
    got = _count(call, 1, causal, backward=True)
    if got is None or isinstance(got, str):
        return got
    flop, c = got
    qkv = [(tuple(call.dims[i]), dtype_of(call.types[i])) for i in (1, 2, 3)]
    nbytes = in_bytes(call.tensors()) + in_bytes(qkv) - _kv_unseen(call, 1, causal)
    return OpWork("attention_backward", flop, nbytes, c.precision, c.unit)


def _transform_bias_rescale_qkv(call: OpCall) -> OpWork | str | None:
    """aten::_transform_bias_rescale_qkv(qkv [B, L, 3E], qkv_bias [3E], num_heads), the
    nn.MultiheadAttention fast path's split into q, k, v: 0 FLOP, placed by its bytes (qkv
    and the bias read, q, k, v written): its bias adds count 0 as addmm's bias does, and
    the q scale is the softmax scale the attention count leaves out, as `measure`'s
    native_mha_flop does (one count for both paths; review s28 R3 F12: it was uncounted,
    67 ms of a ViT's CPU trace)."""
    ts = call.tensors()
    if len(ts) < 2 or len(ts[0][0]) != 3:
        return None
    (qkv, dt), bias = ts[0], ts[1]
    e = itemsize(dt)
    return OpWork("transform_bias_rescale_qkv", 0.0,
                  float(2 * numel(qkv) * e + in_bytes([bias])), flop_precision(dt), None)


ATTENTION_RULES = {"aten::scaled_dot_product_attention": _attention,
                   "aten::_transform_bias_rescale_qkv": _transform_bias_rescale_qkv,
                   **{name: _attention_backward for name in _BACKWARD_CAUSAL}}
