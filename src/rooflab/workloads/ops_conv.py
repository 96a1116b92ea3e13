"""Which input rows (or columns) a convolution reads: the compulsory input bytes of ops.conv2d
and of the torch-trace conv rule, one rule for both (review s19 r1 F1).

Output p (0 <= p < P) reads input positions p·stride - padding + dilation·i, i < R. A 1x1
filter at stride 2 reads rows 0, 2, 4, ... only: a quarter of a 56 x 56 image, so counting
the whole input as compulsory put ResNet's shortcut convs at half their AI. The rows read
are the union of those positions inside [0, size); for a 2-D conv the elements read are
the product of the rows read and the columns read (each output (p, q) reads every (row,
column) pair of its taps), times all channels. Elements, not 32-byte sectors or 64-byte
lines: the count an NHWC (channels_last) layout moves, where a pixel's channels are
contiguous; an NCHW layout that skips every other element of a row still moves the whole
sectors of each row it reads, which this count leaves out.
"""

from __future__ import annotations

import math

from ..errors import InputError
from ..units import fmt_fraction, fmt_times
from .ops_common import TENSOR_DTYPES, _size

# Above this many residue classes the exact count below loops too long for a CLI answer
# (only a filter and a stride both past a million do it): the whole axis is counted then,
# an upper bound.
_MAX_CLASSES = 1_000_000


def conv_touched(size: int, kernel: int, stride: int, padding: int, dilation: int,
                 out: int) -> int:
    """How many of the `size` input positions along one axis the `out` outputs read:
    |{p·stride - padding + dilation·i : p < out, i < kernel} ∩ [0, size)|.

    Exact without enumerating positions: the taps i fall into T = stride / gcd(dilation,
    stride) classes by (dilation·i mod stride); the taps of class j (i = j, j + T, ...)
    start lattices of step stride that are D = dilation / gcd apart in lattice units, each
    `out` long, so one class reads the union of c_j intervals of `out` points spaced D.
    1x1 stride 2 on 56: 28; 3x3 stride 1 pad 1 on 56: 56 (every row)."""
    if dilation == 1 and stride <= kernel:
        # each output's taps reach the next output's: every position of the span is read
        # (the common case: stride 1, or 3x3 stride 2)
        first = max(0, -padding)
        last = min(size - 1, (out - 1) * stride - padding + kernel - 1)
        return max(0, last - first + 1)
    g = math.gcd(dilation, stride)
    classes, step = stride // g, dilation // g
    if min(classes, kernel) > _MAX_CLASSES:
        return size
    total = 0
    for j in range(min(classes, kernel)):
        count = (kernel - 1 - j) // classes + 1          # taps in class j
        origin = dilation * j - padding                  # lattice index 0 of class j
        lo = max(0, -(origin // stride))                 # first x with origin + stride·x >= 0
        hi = (size - 1 - origin) // stride               # last x inside the axis
        if hi < lo:
            continue
        total += _in_union(hi + 1, count, step, out) - _in_union(lo, count, step, out)
    return total


def _in_union(x: int, count: int, step: int, length: int) -> int:
    """Points of [0, x) in the union of `count` intervals [step·t, step·t + length)."""
    if x <= 0:
        return 0
    if step <= length:      # the intervals touch or overlap: one interval
        return min(x, step * (count - 1) + length)
    full, rem = divmod(x, step)
    if full >= count:
        return count * length
    return full * length + min(rem, length)


def conv_input_elements(n: int, c: int, sizes, kernels, strides, paddings, dilations,
                        outs) -> int:
    """Input elements a conv reads: n·c·Π(touched positions per spatial axis), each axis
    given as sizes/kernels/strides/paddings/dilations/outs in the same order (1-D to 3-D;
    the torch-trace rule passes its per-axis tuples)."""
    elements = n * c
    for axis in zip(sizes, kernels, strides, paddings, dilations, outs, strict=True):
        elements *= conv_touched(*axis)
    return elements


def axis_pair(value, name: str, minimum: int) -> tuple[int, int]:
    """(height, width) of a conv2d stride/padding/dilation: one number for both axes, or a
    pair, as torch.nn.Conv2d takes them (padding (1, 0) pads the height only)."""
    if isinstance(value, (tuple, list)):
        if len(value) != 2:
            raise InputError(f"{name} takes one value or two (height, width); got {value!r}")
        return _size(value[0], f"{name} (height)", minimum), _size(value[1], f"{name} "
                                                                    f"(width)", minimum)
    v = _size(value, name, minimum)
    return v, v


def per_axis_value(a: int, b: int):
    """A per-axis value as the answer's shape keeps it: one number when both axes agree."""
    return a if a == b else [a, b]


def conv_unit(dtype: str, weight: tuple, groups: int = 1, transposed: bool = False,
              ) -> str | None:
    """The unit a convolution, forward or backward, is held to: the tensor unit where the
    (canonical) dtype has one, else None (vector); a depthwise conv, one channel per group,
    is vector work in any dtype: each output reduces over one channel (an N = 1 GEMM that
    tensor-core tiles cannot fill) and cuDNN's depthwise kernels run on the FMA pipes.
    weight: [C_out, C_in/g, taps...], or [C_in, C_out/g, taps...] when transposed (then
    depthwise is one channel per group on both sides). One rule for ops.conv2d and the
    torch trace's forward and backward rules."""
    if dtype not in TENSOR_DTYPES:
        return None
    per_group = max(weight[0] // groups, weight[1]) if transposed else weight[1]
    return "vector" if per_group == 1 else "tensor"


# Channel multiples cuDNN's tensor-core conv kernels take (NVIDIA's "Convolutional Layers"
# performance guide: C and K multiples of 8 for fp16/bf16, 16 for int8, 4 for tf32); other
# counts are padded up to one, or run on FMA kernels.
TENSOR_CHANNEL_MULTIPLE = {"fp16": 8, "bf16": 8, "tf32": 4, "int8": 16, "fp8": 16}


def channel_pad_note(dtype: str, c_per_group: int, k_per_group: int) -> str | None:
    """Why a tensor-core conv with C/groups or K/groups not a multiple of its dtype's
    channel multiple does not reach the tensor ceiling (review s28 R3 F10: the RGB stem, C
    = 3, read as 250 TFLOP/s attainable on an A100): cuDNN pads the channels (C = 3 to 8:
    2.67x the MACs) or falls back to FMA kernels. None where both are multiples (or the
    dtype has no such rule)."""
    m = TENSOR_CHANNEL_MULTIPLE.get(dtype)
    if m is None or (c_per_group % m == 0 and k_per_group % m == 0):
        return None
    padded = (-(-c_per_group // m) * m) * (-(-k_per_group // m) * m)
    factor = padded / (c_per_group * k_per_group)
    return (f"C/groups = {c_per_group}, K/groups = {k_per_group}: {dtype} tensor-core conv "
            f"kernels take channel counts in multiples of {m} (NVIDIA's convolution "
            f"performance guide); cuDNN pads them ({fmt_times(factor)} the MACs executed, the "
            f"tensor ceiling then {fmt_fraction(1 / factor)} useful) or runs FMA kernels, so the "
            f"attainable above is not reached (an RGB stem conv, C = 3, is the usual case)")
