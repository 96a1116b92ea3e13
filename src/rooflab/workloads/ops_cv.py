"""The vision layers `rooflab ai` sizes beside conv2d (review s28 R3 F9): 2-D pooling,
batch / group norm and upsampling over an N x C x H x W tensor, with the counts
`rooflab torch` and `rooflab.measure` use (workloads/torch_rules/layer.py, one rule set).
Bytes: compulsory traffic, input read once and output written once, the norm's
per-channel parameters read once.
"""

from __future__ import annotations

import math

from ..errors import InputError
from .count import OpCount
from .ops_common import _count, _dt, _size
from .torch_rules.layer import (
    batchnorm_per_element,
    group_norm_flop,
    upsample_flop,
    window_out,
)

POOL_MODES = ("max", "avg")
UPSAMPLE_MODES = {"nearest": "upsample_nearest2d", "bilinear": "upsample_bilinear2d"}


def _nchw(n, c, h, w) -> tuple[int, int, int, int]:
    return _size(n, "n"), _size(c, "c"), _size(h, "h"), _size(w, "w")


def pool2d(n: int, c: int, h: int, w: int, kernel: int, stride: int | None = None,
           padding: int = 0, mode: str = "max", dtype: str = "fp16",
           name: str | None = None) -> OpCount:
    """2-D pooling, output floor((H + 2p - k)/s) + 1 a side (torch's, ceil_mode off): max
    0 FLOP (comparisons, as relu), avg the window's size per output (k² - 1 adds and a
    divide); bytes input + output (PyTorch's max_pool2d_with_indices also writes int64
    indices, 8 B an output, when autograd or return_indices asks for them)."""
    n, c, h, w = _nchw(n, c, h, w)
    k = _size(kernel, "kernel")
    s = _size(stride if stride is not None else k, "stride")
    p = _size(padding, "padding", 0)
    if mode not in POOL_MODES:
        raise InputError(f"--mode must be one of {', '.join(POOL_MODES)}; got {mode!r}")
    if p > k // 2:
        raise InputError(f"padding {p} must be at most half the {k}x{k} window (torch's "
                         f"rule); lower --padding")
    oh, ow = window_out(h, k, s, p, 1, False), window_out(w, k, s, p, 1, False)
    if min(oh, ow) < 1:
        raise InputError(f"the {k}x{k} window does not fit the {h}x{w} input with padding "
                         f"{p}; use a smaller --kernel or more --padding")
    d, e, _ = _dt(dtype)
    outputs = n * c * oh * ow
    flop = 0.0 if mode == "max" else float(outputs * k * k)
    return _count(name or f"{mode}pool_{k}x{k}_s{s}_n{n}c{c}_{h}x{w}_{d}", f"{mode}_pool2d",
                  flop, e * n * c * h * w, e * outputs, d, "vector" if flop else None,
                  {"n": n, "c": c, "h": h, "w": w, "kernel": k, "stride": s, "padding": p,
                   "mode": mode, "p": oh, "q": ow})


def norm2d(n: int, c: int, h: int, w: int, kind: str = "batch", groups: int = 32,
           training: bool = False, dtype: str = "fp16", name: str | None = None) -> OpCount:
    """BatchNorm2d (eval 4 FLOP an element, training 7: the batch statistics) or
    GroupNorm (a layer norm over each group, 7 with weight and bias); bytes x read, y
    written, the per-channel parameters read (batch norm's weight, bias, running mean and
    variance: 4C; group norm's weight and bias: 2C)."""
    n, c, h, w = _nchw(n, c, h, w)
    d, e, _ = _dt(dtype)
    elements = n * c * h * w
    if kind == "batch":
        flop, params = batchnorm_per_element(training) * elements, 4 * c
        shape = {"training": training}
    elif kind == "group":
        g = _size(groups, "groups")
        if c % g:
            raise InputError(f"--groups {g} must divide --c {c} (GroupNorm splits the "
                             f"channels into equal groups)")
        flop, params, shape = group_norm_flop(elements, 2), 2 * c, {"groups": g}
    else:
        raise InputError(f"norm kind must be batch or group; got {kind!r}")
    return _count(name or f"{kind}norm_n{n}c{c}_{h}x{w}_{d}", f"{kind}norm", flop,
                  e * (elements + params), e * elements, d, "vector",
                  {"n": n, "c": c, "h": h, "w": w, **shape})


def upsample2d(n: int, c: int, h: int, w: int, scale: float = 2.0, mode: str = "nearest",
               dtype: str = "fp16", name: str | None = None) -> OpCount:
    """Upsampling by `scale` (output floor(H·scale) x floor(W·scale)): nearest 0 FLOP
    (a copy), bilinear 9 an output (three lerps of 2 multiplies and an add); bytes input +
    output."""
    n, c, h, w = _nchw(n, c, h, w)
    if mode not in UPSAMPLE_MODES:
        raise InputError(f"--mode must be one of {', '.join(UPSAMPLE_MODES)}; got {mode!r}")
    if not (isinstance(scale, (int, float)) and math.isfinite(scale) and scale > 0):
        raise InputError(f"--scale must be a positive number; got {scale!r}")
    oh, ow = math.floor(h * scale), math.floor(w * scale)
    if min(oh, ow) < 1:
        raise InputError(f"--scale {scale:g} leaves no output pixel of the {h}x{w} input")
    d, e, _ = _dt(dtype)
    outputs = n * c * oh * ow
    flop = upsample_flop(UPSAMPLE_MODES[mode], outputs) or 0.0
    return _count(name or f"upsample_{mode}_x{scale:g}_n{n}c{c}_{h}x{w}_{d}",
                  f"upsample_{mode}", flop, e * n * c * h * w, e * outputs, d,
                  "vector" if flop else None,
                  {"n": n, "c": c, "h": h, "w": w, "scale": scale, "mode": mode,
                   "p": oh, "q": ow})
