"""A convolution's stride and padding, for a trace that recorded no constant arguments
("Concrete Inputs" came with torch 2.1), inferred from its output's shape where the trace
shows it (review r7 F2): the profiler records no outputs, but an op inside the convolution
often takes the output as its first input (the bias add_ after cuDNN's kernel, mkldnn's
as_strided_/resize_ of the result), and else the op right after it on the thread may (the
next layer, batch_norm, relu). A shape [N, K, *out] counts only when some stride and padding
give exactly `out` from the input and filter, so an unrelated tensor rarely passes; the
FLOP depend on the output size alone (2·N·K·out·C/g·taps), so any such pair gives the true
count, and the common one (padding (R-1)/2 first) gives the bytes.
"""

from __future__ import annotations

import bisect

from .skips import SkipLog
from .torch_ops_base import OpCall
from .torch_trace_events import _Op

CONV = "aten::convolution"


def following_ops(ops: list[_Op]) -> dict[int, _Op]:
    """op.index -> the first op that starts after it ends on its thread, for the
    convolutions recorded without constant arguments (none: empty, nothing sorted)."""
    targets = [op for op in ops if op.name == CONV and "Concrete Inputs" not in op.args]
    if not targets:
        return {}
    by_thread: dict[tuple, list[_Op]] = {}
    for op in ops:
        by_thread.setdefault(op.thread, []).append(op)
    starts: dict[tuple, list[float]] = {}
    for key, thread_ops in by_thread.items():
        thread_ops.sort(key=lambda o: o.ts)
        starts[key] = [o.ts for o in thread_ops]
    out = {}
    for op in targets:
        key = op.thread
        i = bisect.bisect_left(starts[key], op.ts + op.dur)
        if i < len(by_thread[key]):
            out[op.index] = by_thread[key][i]
    return out


def shape_of(d) -> tuple[int, ...] | None:
    """A recorded tensor shape ([8, 16, 32, 32]; [] a scalar) as a tuple, or None for
    anything else: true/false are no sizes (a hand-edited [8, 16, 32, true] was read as an
    output 32x1 and inferred a stride that gave 221,184 FLOP for 7,077,888; review s35 D)."""
    if isinstance(d, list) and all(isinstance(x, int) and not isinstance(x, bool) for x in d):
        return tuple(d)
    return None


def _outputs(other: _Op, log: SkipLog | None) -> list[tuple[int, ...]]:
    """The shapes an op's 'Input Dims' records (a tensor list's, [[240], [576]], is none);
    a hand-edited 'Input Dims' that is no list (5 was a traceback here) is none either, and
    said in `log`, naming the event: the convolution then takes the default stride."""
    raw = other.args.get("Input Dims")
    if raw is None:
        return []
    cells = raw if isinstance(raw, list) else []
    shapes = [shape_of(d) for d in cells]
    bad = [d for d, s in zip(cells, shapes, strict=True) if s is None and not (
        isinstance(d, list) and all(shape_of(x) is not None for x in d))]
    if (bad or not isinstance(raw, list)) and log is not None:
        what = f"entry {bad[0]!r:.40} is no shape" if bad else f"{raw!r:.40} is no list"
        log.add(None, f"event #{other.index} ({other.name}): 'Input Dims' {what} (a shape is "
                      f"a list of whole numbers, [8, 16, 32, 32]); not used to infer a "
                      f"convolution's stride")
    return [] if bad else [s for s in shapes if s]


def infer_conv(call: OpCall, op: _Op, after: _Op | None, log: SkipLog | None = None
               ) -> tuple[OpCall, str] | None:
    """(the call with the inferred stride, padding, dilation 1 and groups as its constant
    arguments, 'stride 2x2, padding 1x1 (inferred from the output 8x16x32x32 that
    aten::add_ reads)'), or None when no op shows an output these input and filter
    shapes can give. `log`: where an op whose 'Input Dims' is unreadable is said."""
    ts = call.tensors()
    if len(ts) < 2 or len(ts[1][0]) < 3:
        return None
    x, wt = ts[0][0], ts[1][0]
    spatial = len(wt) - 2
    if len(x) != spatial + 2 or not wt[1] or x[1] % wt[1]:
        return None
    n, k, taps, size = x[0], wt[0], wt[2:], x[2:]
    for other in [*_descendants(op), *([after] if after is not None else [])]:
        if "conv" in other.name:   # the conv's own dispatch chain: it reads the input
            continue
        for dims in _outputs(other, log):
            if len(dims) != spatial + 2 or dims[:2] != (n, k):
                continue
            got = [_stride_padding(h, r, o) for h, r, o in zip(size, taps, dims[2:],
                                                             strict=True)]
            if all(g is not None for g in got):
                stride, padding = [g[0] for g in got], [g[1] for g in got]
                concrete = ("", "", "", str(stride), str(padding), str([1] * spatial),
                            "False", str([0] * spatial), str(x[1] // wt[1]))
                how = (f"stride {'x'.join(map(str, stride))}, padding "
                       f"{'x'.join(map(str, padding))} (inferred from the output "
                       f"{'x'.join(map(str, dims))} that {other.name} reads)")
                return OpCall(call.name, call.dims, call.types, concrete, call.lists), how
    return None


def _stride_padding(h: int, r: int, o: int) -> tuple[int, int] | None:
    """The (stride, padding) at dilation 1 that make an output of o from h with filter r:
    floor((h + 2p - r) / s) + 1 = o, padding (r-1)/2 tried first (PyTorch's usual), then
    0, then the rest up to r-1; None when none does."""
    pads = list(dict.fromkeys([(r - 1) // 2, 0, *range(r)]))
    for p in pads:
        for s in range(1, max(h, 1) + 1):
            if (h + 2 * p - r) // s + 1 == o and h + 2 * p >= r:
                return s, p
    return None


def _descendants(op: _Op):
    for child in op.children:
        yield child
        yield from _descendants(child)
