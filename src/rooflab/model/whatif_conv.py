"""A convolution's batch and filter share for `whatif --batch` (review s28 R3 F1): the batch
a conv was counted at is its input's N (`rooflab ai conv2d`'s meta shape n, a torch trace's
recorded input shape), and its filter is read once per call whatever the batch, as a
linear layer's weights are. A torch trace's other ops were recorded at the same batch: the
N its convolutions agree on is the batch of the whole recording. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..units import dtype_bytes
from .kernel import Kernel

# meta key whatif --batch stamps on a kernel whose batch it read off an input shape (not a
# token count): the per-step line then says samples, not tokens
BATCH_FROM = "batch_from"
# trace dtype names of the float types a filter is stored in (the float rows of
# ingest.torch_ops_base.TORCH_DTYPES; model/ does not import ingest/)
_TRACE_DTYPES = {"float": "fp32", "double": "fp64", "c10::Half": "fp16",
                 "c10::BFloat16": "bf16", "c10::Float8_e4m3fn": "fp8",
                 "c10::Float8_e5m2": "fp8"}


def _whole(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 1


def _conv_op(k: Kernel) -> str:
    """'conv' for a forward conv (meta op conv1d/2d/3d), 'backward' for its backward
    (conv2d_backward), 'transposed' for `ai conv_transpose2d`'s (its N and filter are read
    off its meta shape and bytes_split only), '' for any other kernel."""
    op = k.meta.get("op")
    if not isinstance(op, str) or not op.startswith("conv"):
        return ""
    if "transpose" in op:
        return "transposed" if op == "conv_transpose2d" else ""
    return "backward" if op.endswith("_backward") else "conv"


# `rooflab ai pool2d / batchnorm / groupnorm / upsample`'s meta ops (workloads/ops_cv.py):
# an N x C x H x W tensor whose N is the batch, as a conv's is (`ai pool2d --n 8` was
# scaled from batch 1 by --batch 32: 32x, not 4x)
IMAGE_OPS = frozenset({"max_pool2d", "avg_pool2d", "batchnorm", "groupnorm",
                       "upsample_nearest", "upsample_bilinear"})


def image_batch(k: Kernel) -> int | None:
    """The N an image kernel was counted at: a conv's (conv_batch), else the meta shape n
    of an `ai` vision layer (IMAGE_OPS); None for other kernels."""
    n = conv_batch(k)
    if n is not None or k.meta.get("op") not in IMAGE_OPS:
        return n
    shape = k.meta.get("shape")
    return int(shape["n"]) if isinstance(shape, Mapping) and _whole(shape.get("n")) else None


def batch_name(k: Kernel, b0: int, batch: int) -> str:
    """The kernel's name at the new batch: `rooflab ai`'s image kernels say their N in
    it ('conv2d_3x3_n8c512k512_7x7_fp16', 'maxpool_3x3_s2_n8c64_112x112_fp16'), which a
    batch change left at the old N (session 29); the name unchanged where it says no N
    (a trace's, a hand-given one)."""
    shape = k.meta.get("shape")
    if image_batch(k) != b0 or not isinstance(shape, Mapping) or b0 == batch:
        return k.name
    c, filters = shape.get("c"), shape.get("k")
    for mid in ((f"c{c}k{filters}_",) if filters is not None else ()) + (f"c{c}_",):
        old = f"_n{b0}{mid}"
        if k.name.count(old) == 1:
            return k.name.replace(old, f"_n{batch}{mid}")
    return k.name


def _trace_dims(k: Kernel) -> tuple[list, list, str] | None:
    """(input shape, filter shape, filter dtype) of a torch-trace conv kernel (meta shapes:
    the forward's [input, weight, ...], the backward's [grad_output, input, weight, ...]);
    None for a kernel without them, or an unbatched input."""
    which = _conv_op(k)
    shapes, types = k.meta.get("shapes"), k.meta.get("dtypes")
    if not which or not isinstance(shapes, Sequence) or not isinstance(types, Sequence):
        return None
    x_at, w_at = (1, 2) if which == "backward" else (0, 1)
    if len(shapes) <= w_at or len(types) <= w_at:
        return None
    x, wt = shapes[x_at], shapes[w_at]
    if not (isinstance(x, Sequence) and isinstance(wt, Sequence) and len(wt) >= 3
            and len(x) == len(wt) and all(_whole(d) for d in (*x, *wt))):
        return None
    return list(x), list(wt), _TRACE_DTYPES.get(str(types[w_at]), "")


def conv_batch(k: Kernel) -> int | None:
    """The N a conv kernel was counted at: `ai conv2d`'s meta shape n, else its traced input
    shape's first dimension; None for other kernels (and an unbatched trace conv)."""
    if not _conv_op(k):
        return None
    shape = k.meta.get("shape")
    if isinstance(shape, Mapping) and _whole(shape.get("n")):
        return int(shape["n"])
    dims = _trace_dims(k)
    return dims[0][0] if dims else None


def conv_filter_share(k: Kernel) -> tuple[float, str] | None:
    """The share of a conv kernel's bytes that is its filter, read once per call whatever
    the batch, and where it came from: `ai conv2d`'s meta bytes_split (input, filter,
    output), else a trace conv's filter shape and dtype x calls over its bytes (a backward
    reads the filter and writes its gradient: twice). None for other kernels."""
    if not _conv_op(k):
        return None
    split = k.meta.get("bytes_split")
    if isinstance(split, Mapping) and "filter" in split:
        parts = [float(v) for v in split.values()
                 if isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0]
        f = split["filter"]
        if parts and isinstance(f, (int, float)) and not isinstance(f, bool) and f >= 0:
            return min(1.0, f / sum(parts)), "meta bytes_split: the filter, read once per call"
    dims = _trace_dims(k)
    nbytes = k.bytes.get("DRAM") or sum(k.bytes.values())
    if dims is None or not dims[2] or nbytes <= 0:
        return None
    wt = dims[1]
    elements = 1
    for d in wt:
        elements *= d
    times = 2 if _conv_op(k) == "backward" else 1
    held = times * elements * dtype_bytes(dims[2]) * k.calls
    what = "read and its gradient written" if times == 2 else "read once per call"
    return (min(1.0, held / nbytes),
            f"its filter {'x'.join(map(str, wt))} {dims[2]}, {what}")


def with_recorded_batch(kernels: Sequence[Kernel]) -> tuple[tuple[Kernel, ...], str]:
    """The kernels with meta batch set where it was absent and can be read off a recorded
    shape, and a clause saying so ('' where none was): a conv's own N; a torch trace's
    other ops the N every conv of their file agrees on (the batch of the recording: its
    linear, norm and pooling ops ran on that batch's activations). Other kernels are left
    as they are (batch 1 when absent, as before)."""
    by_file: dict[object, set[int]] = {}
    for k in kernels:
        n = conv_batch(k) if "batch" not in k.meta else None
        if n is not None and k.meta.get("source") == "torch.profiler":
            by_file.setdefault(k.meta.get("file"), set()).add(n)
    out, said = [], set()
    for k in kernels:
        n = image_batch(k) if "batch" not in k.meta else None
        how = "its input's N"
        if n is None and "batch" not in k.meta and k.meta.get("source") == "torch.profiler":
            agreed = by_file.get(k.meta.get("file"), set())
            n = next(iter(agreed)) if len(agreed) == 1 else None
            how = "its recording's N (every conv of the trace)"
        if n is None:
            out.append(k)
            continue
        said.add((n, how))
        out.append(k.with_(meta={**k.meta, "batch": n, BATCH_FROM: how}))
    if not said:
        return tuple(out), ""
    ns = sorted({n for n, _ in said})
    return tuple(out), (
        f"batch before read off the recorded shapes: {', '.join(map(str, ns))} (a conv's "
        f"or an `ai` pool, norm or upsample's input N; a torch trace's other ops at the N "
        f"its convs agree on)")


def is_depthwise(k: Kernel) -> bool:
    """Whether a conv kernel has one input channel per group (C/groups = 1): `ai conv2d`'s
    meta shape groups = c > 1, or a trace conv's filter [K, 1, taps...]. cuDNN runs those
    on the FMA pipes, never TF32 (ops_conv.conv_unit)."""
    if _conv_op(k) in ("", "transposed"):
        return False
    shape = k.meta.get("shape")
    if isinstance(shape, Mapping) and _whole(shape.get("groups")):
        return shape["groups"] > 1 and shape.get("c") == shape["groups"]
    dims = _trace_dims(k)
    return dims is not None and dims[1][1] == 1 and dims[0][1] > 1
