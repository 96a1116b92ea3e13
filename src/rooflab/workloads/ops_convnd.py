"""`rooflab ai conv3d` and `ai conv_transpose2d` (session 29; review s28 R3 F9: video nets'
3-D convs and the transposed convs of UNet and GAN decoders could not be sized by hand).
The byte model is ops.conv2d's: compulsory traffic, the input elements some output reads
(ops_conv.conv_input_elements), the filter and the output once each, no im2col copy. The
FLOP are those torch.utils.flop_counter counts (conv_flop_count): 2 x batch x C_out x
C_in/groups x the filter's taps x the output positions for a conv; a transposed conv runs
each *input* element through the filter, so its FLOP are 2 x N x C_in x C_out/groups x
taps x the input positions. Pure: no I/O.
"""

from __future__ import annotations

import math

from ..errors import InputError
from ..units import dtype_bytes
from .count import OpCount
from .ops_common import COMPULSORY, _count, _dt, _size
from .ops_conv import axis_pair, conv_input_elements, conv_unit, per_axis_value

# the filter depth and spatial sides, as cuDNN names a 3-D filter (T x R x S)
_AXES3 = ("depth", "height", "width")


def axis_triple(value, name: str, minimum: int) -> tuple[int, int, int]:
    """(depth, height, width) of a conv3d stride/padding/dilation: one number for all three
    axes or three, as torch.nn.Conv3d takes them."""
    if isinstance(value, (tuple, list)):
        if len(value) != 3:
            raise InputError(f"{name} takes one value or three (depth, height, width); got "
                             f"{value!r}")
        a, b, c = (_size(v, f"{name} ({axis})", minimum)
                   for v, axis in zip(value, _AXES3, strict=True))
        return a, b, c
    v = _size(value, name, minimum)
    return v, v, v


def _one(values: tuple[int, ...]):
    """A per-axis value as the answer's shape keeps it: one number when the axes agree."""
    return values[0] if len(set(values)) == 1 else list(values)


def _suffix(tag: str, values: tuple[int, ...]) -> str:
    """'_s2' / '_s1x2x2' for a stride (or dilation) other than 1 on some axis, '' for 1."""
    if all(v == 1 for v in values):
        return ""
    return f"_{tag}{values[0]}" if len(set(values)) == 1 else f"_{tag}" + "x".join(
        map(str, values))


def _groups(c: int, k: int, groups: int) -> int:
    g = _size(groups, "groups")
    if c % g or k % g:
        raise InputError(f"groups {g} must divide both c {c} and k {k} (each group "
                         f"convolves c/groups input channels into k/groups outputs; "
                         f"depthwise is groups = c)")
    return g


def conv_output(size: int, kernel: int, stride: int, padding: int, dilation: int) -> int:
    """floor((size + 2·padding - dilation·(kernel - 1) - 1) / stride) + 1 (torch.nn.Conv3d)."""
    return (size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1


def conv3d(n: int, c: int, d: int, h: int, w: int, k: int, t: int = 3, r: int = 3,
           s: int = 3, stride=1, padding=0, dilation=1, groups: int = 1,
           dtype: str = "fp16", name: str | None = None) -> OpCount:
    """3-D convolution, N x C x D x H x W input, K filters of C/groups x T x R x S, output
    N x K x Do x P x Q (each torch.nn.Conv3d's size rule). FLOP 2·N·K·(C/groups)·T·R·S·
    Do·P·Q; bytes: the input elements some output reads, the filter, the output."""
    sizes = tuple(_size(v, nm) for v, nm in ((n, "n"), (c, "c"), (d, "d"), (h, "h"),
                                             (w, "w"), (k, "k"), (t, "t"), (r, "r"), (s, "s")))
    n, c, d, h, w, k, t, r, s = sizes
    g = _groups(c, k, groups)
    st, pad, dil = (axis_triple(v, nm, lo) for v, nm, lo in
                    ((stride, "stride", 1), (padding, "padding", 0), (dilation, "dilation", 1)))
    space, taps = (d, h, w), (t, r, s)
    out = tuple(conv_output(*a) for a in zip(space, taps, st, pad, dil, strict=True))
    if min(out) < 1:
        raise InputError(f"the {t}x{r}x{s} filter does not fit the {d}x{h}x{w} input with "
                         f"padding {_one(pad)} and dilation {_one(dil)}; increase padding or "
                         f"use a smaller filter")
    dt, e, _ = _dt(dtype)
    cg = c // g
    flop = 2.0 * n * k * cg * math.prod(taps) * math.prod(out)
    touched = conv_input_elements(n, c, space, taps, st, pad, dil, out)
    split = {"input": e * touched, "filter": e * k * cg * math.prod(taps),
             "output": dtype_bytes(dt) * n * k * math.prod(out)}
    model = COMPULSORY
    if touched < n * c * d * h * w:
        model += ("; the stride skips input positions no output reads: "
                  f"{touched // (n * c)} of each channel's {d * h * w} are read")
    unit = conv_unit(dt, (k, cg), g)
    if unit == "vector" and cg == 1:
        model += ("; depthwise (C/groups = 1): held to the vector ceiling, as conv2d's "
                  "depthwise is (an N = 1 GEMM per group that tensor-core tiles cannot fill)")
    shape = {"n": n, "c": c, "d": d, "h": h, "w": w, "k": k, "t": t, "r": r, "s": s,
             "stride": _one(st), "padding": _one(pad), "dilation": _one(dil), "groups": g,
             "do": out[0], "p": out[1], "q": out[2]}
    tags = _suffix("dil", dil) + _suffix("s", st) + (f"_g{g}" if g > 1 else "")
    return _count(name or f"conv3d_{t}x{r}x{s}{tags}_n{n}c{c}k{k}_{d}x{h}x{w}_{dt}",
                  "conv3d", flop, split["input"] + split["filter"], split["output"], dt,
                  unit, shape, model=model, split=split)


def conv_transpose_output(size: int, kernel: int, stride: int, padding: int,
                          output_padding: int, dilation: int) -> int:
    """(size - 1)·stride - 2·padding + dilation·(kernel - 1) + output_padding + 1, the
    output size torch.nn.ConvTranspose2d's docs give."""
    return (size - 1) * stride - 2 * padding + dilation * (kernel - 1) + output_padding + 1


def conv_transpose2d(n: int, c: int, h: int, w: int, k: int, r: int = 3, s: int = 3,
                     stride=1, padding=0, output_padding=0, dilation=1, groups: int = 1,
                     dtype: str = "fp16", name: str | None = None) -> OpCount:
    """Transposed 2-D convolution (torch.nn.ConvTranspose2d), C input channels to K output
    channels, filter C x K/groups x R x S. Each input element scatters into an R x S window
    of the output: FLOP 2·N·C·(K/groups)·R·S·H·W (torch's flop counter), whatever the
    stride; bytes: every input element read (padding crops the output's border, and only
    a padding past dilation·(R - 1) leaves an input feeding no output: counted anyway),
    the filter, the output written once."""
    n, c, h, w, k, r, s = (_size(v, nm) for v, nm in ((n, "n"), (c, "c"), (h, "h"),
                                                      (w, "w"), (k, "k"), (r, "r"), (s, "s")))
    g = _groups(c, k, groups)
    (sh, sw), (ph, pw), (oph, opw), (dh, dw) = (
        axis_pair(v, nm, lo) for v, nm, lo in ((stride, "stride", 1), (padding, "padding", 0),
                                               (output_padding, "output_padding", 0),
                                               (dilation, "dilation", 1)))
    if not (oph < max(sh, dh) and opw < max(sw, dw)):
        raise InputError(f"output_padding {per_axis_value(oph, opw)} must be smaller than "
                         f"the stride or the dilation on each axis (torch's rule; it only "
                         f"picks among the output sizes a stride allows)")
    p = conv_transpose_output(h, r, sh, ph, oph, dh)
    q = conv_transpose_output(w, s, sw, pw, opw, dw)
    if p < 1 or q < 1:
        raise InputError(f"padding {per_axis_value(ph, pw)} crops the whole {r}x{s} "
                         f"transposed-conv output of the {h}x{w} input; lower --padding")
    dt, e, _ = _dt(dtype)
    kg = k // g
    flop = 2.0 * n * c * kg * r * s * h * w
    split = {"input": e * n * c * h * w, "filter": e * c * kg * r * s,
             "output": dtype_bytes(dt) * n * k * p * q}
    unit = conv_unit(dt, (c, kg), g, transposed=True)
    model = COMPULSORY + "; each input element scatters into an R x S window of the output"
    if unit == "vector" and c // g == 1 and kg == 1:
        model += "; depthwise (one channel per group): held to the vector ceiling"
    shape = {"n": n, "c": c, "h": h, "w": w, "k": k, "r": r, "s": s,
             "stride": per_axis_value(sh, sw), "padding": per_axis_value(ph, pw),
             "output_padding": per_axis_value(oph, opw),
             "dilation": per_axis_value(dh, dw), "groups": g, "p": p, "q": q}
    tags = (_suffix("dil", (dh, dw)) + _suffix("s", (sh, sw)) + (f"_g{g}" if g > 1 else ""))
    return _count(name or f"conv_transpose2d_{r}x{s}{tags}_n{n}c{c}k{k}_{h}x{w}_{dt}",
                  "conv_transpose2d", flop, split["input"] + split["filter"],
                  split["output"], dt, unit, shape, model=model, split=split)
