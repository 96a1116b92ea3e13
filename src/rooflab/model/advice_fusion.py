"""Fusion advice for a kernel bound by its bytes: fuse with the neighbouring pass (only
the share of its bytes a neighbour makes or takes: activation_share), or fuse a counted
function's own eager ops into one pass (meta fused_bytes). Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..units import fmt_ai, fmt_times, si
from .advice_core import Advice, Efficiency, _advice
from .advice_sparse import sparse_bytes
from .analysis import Point
from .element_dtype import element_bytes
from .kernel import Kernel
from .machine import Machine, words
from .opkind import is_gemm, is_sparse, kind_word
from .weight_traffic import (
    gemm_shape,
    is_positive,
    kernel_bytes,
    meta_shape,
    weight_streaming,
    weights_by_default,
)

# Fusion advice for a kernel whose bytes are mostly a matrix read once (weights, a KV
# cache) is dropped below this predicted speed-up: only its activations can stay on chip
# (a 4096x4096 fp64 GEMV: 32 kB of its 134 MB, 1.0002x).
FUSION_MIN_GAIN = 1.05


def activation_share(kernel: Kernel | None, kind: str) -> float:
    """The share of a kernel's bytes that its neighbours make or take (activations), the
    bytes fusion can keep on chip. A matrix read once per call (a GEMV's matrix, a decode
    linear layer's weights) or a KV cache comes from memory whatever runs next to it.
    From meta 'bytes_split': `rooflab llm`'s activations (beside weights / kv), else all
    but its 'weights' and 'kv' (`rooflab ai attention`'s q + o, and the scores of a
    non-flash one); or from 'weight_bytes'; a GEMM with meta shape m/n/k keeps its output
    and its smaller input only (the larger is the weight a neighbour cannot make: for
    `ai matmul 1 4096 4096` 16 kB of 33.6 MB); an SpMV kind, all but its matrix
    (advice_sparse.sparse_bytes: x, y; none when the split is unknown); a GEMV / linear /
    decode kind, or a GEMM at
    a GEMV's AI with no shape (weight_streaming), everything but the vectors of meta shape
    m x n (all of it is matrix without a shape, as the batching advice assumes); else 1."""
    meta = kernel.meta if kernel is not None else {}
    split = meta.get("bytes_split")
    if isinstance(split, Mapping) and any(x in split for x in ("weights", "activations",
                                                                "kv")):
        nums = {key: float(v) for key, v in split.items()
                if isinstance(v, (int, float)) and not isinstance(v, bool)}
        total = sum(nums.values())
        act = nums["activations"] if "activations" in nums else (
            total - nums.get("weights", 0.0) - nums.get("kv", 0.0))
        if total > 0:
            return min(1.0, max(0.0, act / total))
    nbytes = kernel_bytes(kernel)
    wb = meta.get("weight_bytes")
    if isinstance(wb, (int, float)) and nbytes > 0:
        return min(1.0, max(0.0, 1.0 - float(wb) / nbytes))
    if kernel is not None and is_sparse(kind):
        # an SpMV's matrix is read once per product whatever runs next to it (review 16a C)
        split = sparse_bytes(kernel, kernel.precision)
        return 1.0 - split.matrix if split is not None else 0.0
    dims = gemm_shape(kernel) if is_gemm(kind) else None
    if dims is not None:
        m, n, k = dims
        return (min(m * k, k * n) + m * n) / (m * k + k * n + m * n)
    if (kernel is not None and is_gemm(kind) and nbytes > 0
            and weight_streaming(kernel, kind, kernel.total_flop / nbytes,
                                 kernel.precision)):
        return 0.0
    if not weights_by_default(kind):
        return 1.0
    matrix = (_matrix_bytes(kernel) if kind_word(kind) in ("gemv", "mul_mat_vec")
              else None)
    if matrix is None or nbytes <= 0:
        return 0.0
    return min(1.0, max(0.0, 1.0 - matrix / nbytes))


def _matrix_bytes(kernel: Kernel | None) -> float | None:
    """A GEMV's matrix bytes from meta shape m x n (ops.gemv's) in its element size
    (element_bytes: the shape's dtype, then meta dtype, then the kernel's precision); None
    without a shape or a size."""
    shape = meta_shape(kernel)
    if shape is None:
        return None
    m, n = shape.get("m"), shape.get("n")
    if not all(is_positive(v) for v in (m, n)):
        return None
    size = element_bytes(kernel, kernel.precision)
    return float(m) * float(n) * size if size is not None else None


def fusion_advice(p: Point, e: Efficiency, kind: str, machine: Machine | None,
            kernel: Kernel | None) -> Advice | None:
    """Fuse with a neighbour: half the bytes fusion can keep on chip stay there (all of an
    elementwise chain's; only the activations of a matrix-reading kernel, dropped when that
    gains under FUSION_MIN_GAIN). A counted function of several ops with a one-pass count
    (meta fused_bytes) is fused within itself instead (_own_passes)."""
    own = _own_passes(p, e, kernel, machine)
    if own is not None:
        return own if own.speedup >= FUSION_MIN_GAIN else None
    chip, unit = words(machine, "chip")
    share = activation_share(kernel, kind)
    if share >= 1.0:
        unknown = ("" if kind_word(kind) else "; its op kind is unknown, so it is taken for an "
                   "elementwise pass (a stencil or a sparse product reads data fusion cannot "
                   "keep: name it with meta.op)")
        return _advice(
            p, e, "fuse with the neighbouring pass",
            "k elementwise passes fused move about 1/k of the bytes (the intermediate never "
            "reaches memory); fused with one neighbour: bytes / 2, AI x 2", "along slope",
            flop=p.flop, nbytes=p.bytes / 2, peak=p.peak_flop_per_s, bw=p.bytes_per_s,
            assumption=f"a neighbouring {unit} reads what this one writes (or writes what it "
                       f"reads), so half of these bytes stay {chip}; FLOP unchanged"
                       + unknown)
    act = share * p.bytes
    if act <= 0:
        return None
    out = _advice(
        p, e, "fuse with the neighbouring pass",
        f"only its activations ({si(act, 'B')} of the {si(p.bytes, 'B')}) can stay {chip}; "
        f"fused with one neighbour half of them do: bytes {si(p.bytes, 'B')} -> "
        f"{si(p.bytes - act / 2, 'B')}", "along slope",
        flop=p.flop, nbytes=p.bytes - act / 2, peak=p.peak_flop_per_s, bw=p.bytes_per_s,
        assumption=f"a neighbouring {unit} reads what this one writes (or writes what it "
                   f"reads), so half of its activation bytes stay {chip}; the other "
                   f"{si(p.bytes - act, 'B')} ("
                   + ("the matrix: values, indices, row pointers" if is_sparse(kind) else
                      "weights, KV cache") + ": read once per call) come "
                   "from memory whatever runs next to it; FLOP unchanged")
    return out if out.speedup >= FUSION_MIN_GAIN else None


def ops_per_call(kernel: Kernel | None) -> float:
    """How many ops one call of a counted kernel dispatched (meta ops: rooflab.measure's
    {op: {calls, ...}} summed over calls, or a list of op names); 0 without a list."""
    ops = kernel.meta.get("ops") if kernel is not None else None
    if isinstance(ops, Mapping):
        calls = [row.get("calls", 1) if isinstance(row, Mapping) else 1
                 for row in ops.values()]
        n = sum(float(c) for c in calls if is_positive(c))
        return n / kernel.calls if n else 0.0
    if isinstance(ops, (list, tuple)):
        return float(len(ops))
    return 0.0


def _own_passes(p: Point, e: Efficiency, kernel: Kernel | None,
                machine: Machine | None) -> Advice | None:
    """Fuse a counted function's own ops into one pass: a kernel of several eager ops
    (meta ops, more than one per call) moves their summed traffic, each op reading its
    inputs and writing its outputs; done in one pass it moves meta fused_bytes (the
    function's inputs read once, its outputs written once: rooflab.measure's count). The
    generic neighbour fusion (bytes / 2) undersold it: an eager softmax 1024x4096 fp32
    moves 134,234,112 B in 5 ops, 33,554,432 B in one, 4.00x (review 16b #3). DRAM points
    only: the count is of memory traffic. None where it does not apply."""
    fused = kernel.meta.get("fused_bytes") if kernel is not None else None
    n = ops_per_call(kernel)
    # a hand-given fused_bytes without an op list (n == 0) is used, its op count unknown:
    # it was ignored silently and the neighbour rule offered instead (review r5)
    if (p.level != "DRAM" or not is_positive(fused) or 0 < n <= 1 or not 0 < fused < p.bytes
            or p.bytes != kernel.bytes.get("DRAM")):
        return None
    chip, _ = words(machine, "chip")
    count = f"{n:g}" if n > 1 else "several"
    # measure(torch.compile(f)): the bytes are the eager ops', the timed code may be fused
    compiled = "compiled" in str(kernel.provenance.get("bytes", ""))
    return _advice(
        p, e, f"fuse its {count} ops into one pass",
        f"bytes {si(p.bytes, 'B')} -> {si(fused, 'B')}, {fmt_times(p.bytes / fused)} fewer: its "
        f"{count} eager ops each read their inputs and write their outputs; one pass reads "
        f"the function's inputs once and writes its outputs once (AI {fmt_ai(p.ai)} -> "
        f"{fmt_ai(p.flop / fused)})", "along slope",
        flop=p.flop, nbytes=float(fused), peak=p.peak_flop_per_s, bw=p.bytes_per_s,
        assumption=f"one kernel does the {count} ops (torch.compile, a hand-written "
                   f"kernel), its intermediates stay {chip}; it moves the counted one-pass "
                   f"bytes (meta fused_bytes); FLOP unchanged"
                   + ("; its bytes are the eager ops' count while the timed code is "
                      "torch.compile'd: where that code fuses them already, this gain is "
                      "in the measured time and the kernel is nearer its roof than shown"
                      if compiled else ""))
