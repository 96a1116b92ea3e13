"""Advice for a kernel bound by its bytes: fusion (only the activation share of a
matrix-reading kernel), tiling, narrower storage and lower precision (advice_precision),
access efficiency, batching and int4 weights for weight-streaming ops, and keeping the
working set in L2. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Literal

from ..units import dtype_bytes, fmt_ai, si
from .advice_core import Advice, Efficiency, _advice, _efficiency
from .advice_precision import _lower_precision
from .advice_sparse import (  # noqa: F401  (sparse_bytes_ratio: whatif's helper, here too)
    sparse_bytes,
    sparse_bytes_ratio,
    spmm_advice,
)
from .advice_stencil import nontemporal_advice, spatial_advice, temporal_advice
from .analysis import Point
from .ceiling import Roof
from .element_dtype import (  # noqa: F401  (INT4_WEIGHT_WORDS: its name here before)
    INT4_WEIGHT_WORDS,
    element_bytes,
    weight_bytes_per_element,
)
from .kernel import Kernel
from .machine import Machine, words
from .opkind import (  # noqa: F401  (GEMM_KINDS, is_gemm: their names here before)
    GEMM_KINDS,
    WEIGHT_STREAMING_KINDS,
    is_gemm,
    is_matrix,
    is_sparse,
    is_stencil,
    is_streaming,
    kind_word,
    streams_weights,
)

# Without a matrix shape, tiling is assumed to raise AI this much (seed 000 §5.3: 5 -> 20+).
TILING_GAIN = 4.0
# L2 capacity assumed when the device's is unknown (H100: 50 MB).
L2_BYTES_DEFAULT = 50e6
# Requests batched per weight read in the batching advice (seed 004, Day 16 sweeps to 180).
BATCH_ADVICE = 8
# Op kinds that use each weight once per request (opkind.WEIGHT_STREAMING_KINDS, its name
# before: a GEMV, a batch-1 decode step): tiling cannot raise their AI; batching requests
# per weight read is the lever (weight_advice).
NO_REUSE_KINDS = WEIGHT_STREAMING_KINDS
# Fusion advice for a kernel whose bytes are mostly a matrix read once (weights, a KV
# cache) is dropped below this predicted speed-up: only its activations can stay on chip
# (a 4096x4096 fp64 GEMV: 32 kB of its 134 MB, 1.0002x).
FUSION_MIN_GAIN = 1.05
# A GEMM whose bytes are at least this share weights streams them (each weight read once
# per call): batching requests per weight read and narrower weights are its levers, whatever
# its row count (review 13v F-E: `ai matmul 16 4096 4096` is 99.2 % weights, AI 15.9), and
# their computed gain decides whether each is offered (WEIGHT_MIN_GAIN). 0.9 dropped a
# measured m-128 linear at 88.9 % weights whose batch of 8 gains 1.34x on A100; at half
# weights batching 8 still reads 4.5x the bytes for 8x the work (1.78x on the slope).
WEIGHT_DOMINANT = 0.5
# Batching and int4 advice for a GEMM that streams its weights is dropped below this
# predicted speed-up, the file's rule for advice that only part of the bytes feel (fusion's).
WEIGHT_MIN_GAIN = FUSION_MIN_GAIN
# Without a shape or a split: a GEMM whose AI x weight size / 2 (the rows a compulsory-traffic
# GEMM of that AI would have) is at most this is taken for a GEMV in disguise (M = 1: fp16 AI
# ~1, one weight read per 2 FLOP). M = 2 would read ~2, so 1.5 splits the two; cuBLAS and
# CUTLASS name their small-M kernels *gemm* too, as seed 004's decode table does.
GEMV_MAX_ROWS = 1.5
# Tiling that would raise AI less than this is not offered (the bytes are compulsory).
MIN_TILING_GAIN = 1.05
# The access lever for a gather (an SpMV's x[col[k]]): unit stride is no option for it
# (review 16a L4); the matrix streams, and a SIMD-friendly format vectorises the gather.
GATHER_ACCESS = {
    "gpu": ("stream the matrix coalesced (CSR-vector or SELL/ELL layout; x through the "
            "read-only cache)",
            "one thread per row reads the matrix scattered; a warp per row or a sliced "
            "ELL layout makes its reads contiguous, and x's gather hits cache"),
    "": ("stream the matrix on every core (rows split by nonzeros, NUMA first-touch; "
         "SELL-C-sigma or blocked CSR to vectorise the gather of x)",
         "the x[col[k]] gather cannot be unit stride; the matrix can stream at full "
         "bandwidth only with every core busy on balanced rows and its pages local"),
}


def _gemm_shape(kernel: Kernel | None) -> tuple[float, float, float] | None:
    """(m, n, k) of a GEMM-family kernel's meta shape (ops.matmul's, `rooflab llm`'s
    linear layers'); None without all three."""
    shape = kernel.meta.get("shape") if kernel is not None else None
    if not isinstance(shape, Mapping):
        return None
    dims = [shape.get(x) for x in ("m", "n", "k")]
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0
               for v in dims):
        return None
    return float(dims[0]), float(dims[1]), float(dims[2])


def weights_by_default(kind: str) -> bool:
    """Whether a kind's bytes are taken as weights where no share is known: a GEMV or
    decode step (opkind.streams_weights), or a 'linear' layer, as `rooflab llm` names a
    decode step's (the batching advice's "all bytes are weights")."""
    return streams_weights(kind) or kind_word(kind) == "linear"


def _num(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0


def routed(kernel: Kernel | None) -> tuple[float, float, float] | None:
    """(experts E, top-k, tokens) of a routed-expert kernel (`rooflab llm`'s meta shape
    says experts and top_k; its m is tokens x top-k rows over top-k *different* experts);
    None for any other kernel."""
    shape = kernel.meta.get("shape") if kernel is not None else None
    if not isinstance(shape, Mapping):
        return None
    e, top, m = shape.get("experts"), shape.get("top_k"), shape.get("m")
    if not (_num(e) and _num(top) and _num(m) and top <= e):
        return None
    return float(e), float(top), float(m) / float(top)


def experts_touched(kernel: Kernel, tokens: float) -> float:
    """Distinct experts `tokens` tokens touch on average, E(1 - (1 - k/E)^T), by whatif's
    expert_weight_ratio (one formula for the advice and the what-if): one token touches
    top-k, so T touch top-k x ratio(T / t) / ratio(1 / t), t the kernel's own tokens."""
    from .whatif import expert_weight_ratio  # here: whatif imports the advice
    _, top, t = routed(kernel) or (0.0, 0.0, 0.0)
    if t <= 0:
        return 1.0
    return top * expert_weight_ratio(kernel, tokens / t) / expert_weight_ratio(kernel, 1 / t)


def weight_size(kernel: Kernel | None, precision: str) -> tuple[float | None, str]:
    """Bytes per weight and where that comes from (element_dtype.weight_bytes_per_element:
    meta 'weight_dtype', a W4A16/AWQ/GPTQ name, else the kernel's element size); (None, '')
    where no size is known."""
    return weight_bytes_per_element(kernel, precision)


def shape_ai(kernel: Kernel | None, precision: str) -> float | None:
    """The most AI a GEMM's shape allows: each operand moved once (compulsory traffic),
    2mnk / (s (mk + D kn + mn)), s its element size (element_bytes: the shape's dtype, then
    meta dtype, then `precision`'s), D the distinct experts its tokens touch for a
    routed-expert kernel (each expert's weights are read once for its few rows), else 1;
    None without a shape (or a size)."""
    dims = _gemm_shape(kernel)
    if dims is None:
        return None
    m, n, k = dims
    size = element_bytes(kernel, precision)
    if size is None:
        return None
    moe = routed(kernel)
    d = experts_touched(kernel, moe[2]) if moe else 1.0
    return 2 * m * n * k / (size * (m * k + d * k * n + m * n))


def weight_share(kernel: Kernel | None, kind: str, ai: float,
                 precision: str) -> tuple[float, str] | None:
    """The share of a kernel's bytes that are weights, and how it is known: meta
    'bytes_split' weights (0 when it names activations only), else 'weight_bytes', over its
    bytes; for a GEMM with meta shape
    k x n weights (x the experts touched, for a routed kernel) of weight_size over its bytes
    (the compulsory ones when it has none); for a GEMM with neither, 1 when its AI is a
    GEMV's (AI x weight size / 2 <= GEMV_MAX_ROWS rows); else None."""
    meta = kernel.meta if kernel is not None else {}
    nbytes = (kernel.bytes.get("DRAM") or sum(kernel.bytes.values())) if kernel else 0.0
    split = meta.get("bytes_split")
    if isinstance(split, Mapping) and ("weights" in split or "activations" in split):
        # `rooflab llm` splits bytes into weights / activations / kv: attention and RoPE
        # name 0 weights, a decode linear layer almost only weights
        total = sum(float(v) for v in split.values() if _num(v))
        weights = split.get("weights", 0.0)
        if total > 0 and (_num(weights) or weights == 0):
            return min(1.0, float(weights) / total), "meta bytes_split"
    wb = meta.get("weight_bytes")
    if _num(wb) and nbytes > 0:
        return min(1.0, float(wb) / nbytes), "meta weight_bytes"
    if not is_gemm(kind):
        return None
    size, src = weight_size(kernel, precision)
    if size is None:
        return None
    dims = _gemm_shape(kernel)
    if dims is not None:
        m, n, k = dims
        moe = routed(kernel)
        weights = (experts_touched(kernel, moe[2]) if moe else 1.0) * k * n * size
        act_size = element_bytes(kernel, precision)
        if act_size is None:
            return None
        act = act_size * (m * k + m * n)
        total = nbytes if nbytes > 0 else weights + act
        return min(1.0, weights / total), f"its shape, {src}"
    if 0 < ai * size / 2 <= GEMV_MAX_ROWS:
        return 1.0, f"its AI, {src}"
    return None


def weight_streaming(kernel: Kernel | None, kind: str, ai: float, precision: str) -> str:
    """Why a kernel's bytes are mostly weights, each read once per call (so batching
    requests per weight read and narrower weights are its levers, seed 004), '' when they
    are not: a GEMV or decode kind (opkind.streams_weights); a GEMM whose weights are at least
    WEIGHT_DOMINANT of its bytes (weight_share), whatever its rows (review 13v F-E)."""
    if streams_weights(kind):
        return f"a {kind} uses each weight once per request"
    share = weight_share(kernel, kind, ai, precision) if is_gemm(kind) else None
    if share is None or share[0] < WEIGHT_DOMINANT:
        return ""
    frac, src = share
    dims = _gemm_shape(kernel)
    moe = routed(kernel)
    if dims is not None and moe is not None:
        m, n, k = dims
        d = experts_touched(kernel, moe[2])
        return (f"a routed-expert kernel (meta shape m {m:g}, n {n:g}, k {k:g}, {moe[0]:g} "
                f"experts, top-{moe[1]:g}): its m is {moe[2]:g} token(s) x top-{moe[1]:g} "
                f"over {d:.3g} different experts, so each expert's weights are used "
                f"{m / d:.3g} time(s) per read; weights are {frac:.1%} of its bytes ({src})")
    if dims is not None:
        m, n, k = dims
        rows = min(m, n)
        used = ("1 row on its narrow side (a GEMV): each weight is used once per read"
                if rows == 1 else f"{rows:g} rows on its narrow side: each weight is used "
                                  f"{rows:g} times per read, once per request")
        return (f"its shape (m {m:g}, n {n:g}, k {k:g}) has {used}; weights are "
                f"{frac:.1%} of its bytes ({src})")
    if src.startswith("its AI"):
        size = weight_size(kernel, precision)[0] or 2.0
        return (f"AI {fmt_ai(ai)} with {src.removeprefix('its AI, ')} is what a GEMV "
                f"reaches (each {size:g}-byte weight read once for 2 FLOP); a {kind}'s AI "
                f"with each operand moved once is about its narrowest dimension x "
                f"{2 / size:g}, so this is most likely M = 1 (a decode step), which tiling "
                f"cannot help (give meta shape m/n/k if it is not)")
    return f"weights are {frac:.1%} of its bytes ({src})"


def weight_advice(p: Point, e: Efficiency, kind: str = "", why: str = "",
                  kernel: Kernel | None = None) -> list[Advice]:
    """A weight-streaming op (a GEMV in decode, seed 004): batch requests, shrink weights.
    `why`: what makes it weight-streaming where its kind alone does not say so (a GEMM
    of a GEMV's shape or AI), added to the assumptions. With `kernel`, the weight share
    (weight_share) prices both: what is not weights grows with the batch and keeps its
    width; a routed-expert kernel's weights grow with the experts the batch touches
    (experts_touched, as `whatif --batch` counts them: review 13v F-K)."""
    why = f"; {why}" if why else ""
    out = []
    b = BATCH_ADVICE
    share = weight_share(kernel, kind, p.ai, p.precision) if kernel is not None else None
    w = share[0] if share is not None else 1.0
    moe = routed(kernel)
    grow = 1.0
    moe_words = ""
    if moe is not None:
        before, after = experts_touched(kernel, moe[2]), experts_touched(kernel, b * moe[2])
        grow = after / before
        moe_words = (f"; MoE: {b * moe[2]:g} tokens touch {after:.3g} of {moe[0]:g} experts "
                     f"({before:.3g} now), so the expert weights read grow {grow:.3g}x: "
                     f"{b / grow:.2f}x per request at most (uniform routing, as whatif "
                     f"--batch)")
    nbytes = p.bytes * (w * grow + (1 - w) * b)
    gemv = kind_word(kind) == "gemv"
    what = (f"batch {b} vectors per matrix read (GEMV -> GEMM)" if gemv
            else f"batch {b} requests per weight read")
    batched = _advice(
        p, e, what,
        f"weights are read once for the whole batch: AI {fmt_ai(p.ai)} -> "
        f"{fmt_ai(b * p.flop / nbytes)}; the speed-up is per request (throughput)"
        + moe_words, "along slope", flop=b * p.flop,
        nbytes=nbytes, peak=p.peak_flop_per_s, bw=p.bytes_per_s,
        assumption=(f"all bytes are the matrix (the vectors are small); {b} independent "
                    f"vectors are there to multiply by it" if gemv else
                    (f"weights are {w:.1%} of the bytes ({share[1]}), the rest grows with "
                     f"the batch" if share is not None and w < 1 else
                     f"all bytes are weights (activations and KV cache small at batch {b})")
                    + f"; {b} requests are there to batch") + moe_words + why)
    out.append(replace(batched, speedup=b * batched.speedup))
    size = dtype_bytes(p.precision) if p.precision in ("fp32", "fp16", "bf16", "fp8") else None
    if kernel is not None and size:
        size = weight_size(kernel, p.precision)[0]   # int4 weights already: no int4 advice
    if size and size > 0.5:
        out.append(_advice(
            p, e, "store weights in int4 (dequantize on the fly)",
            f"{size:g} -> 0.5 byte per weight: AI {fmt_ai(p.ai)} -> "
            f"{fmt_ai(p.flop / (p.bytes * (1 - w + w * 0.5 / size)))}", "along slope",
            flop=p.flop, nbytes=p.bytes * (1 - w + w * 0.5 / size), peak=p.peak_flop_per_s,
            bw=p.bytes_per_s,
            assumption=("all bytes are weights" if w >= 1 else
                        f"weights are {w:.1%} of the bytes ({share[1]})")
            + f"; int4 accuracy is acceptable; the math stays in {p.precision}" + why))
    return out


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
    nbytes = (kernel.bytes.get("DRAM") or sum(kernel.bytes.values())) if kernel else 0.0
    wb = meta.get("weight_bytes")
    if isinstance(wb, (int, float)) and nbytes > 0:
        return min(1.0, max(0.0, 1.0 - float(wb) / nbytes))
    if kernel is not None and is_sparse(kind):
        # an SpMV's matrix is read once per product whatever runs next to it (review 16a C)
        split = sparse_bytes(kernel, kernel.precision)
        return 1.0 - split.matrix if split is not None else 0.0
    dims = _gemm_shape(kernel) if is_gemm(kind) else None
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
    shape = kernel.meta.get("shape") if kernel is not None else None
    if not isinstance(shape, Mapping):
        return None
    m, n = shape.get("m"), shape.get("n")
    if not all(_num(v) for v in (m, n)):
        return None
    size = element_bytes(kernel, kernel.precision)
    return float(m) * float(n) * size if size is not None else None


def _fusion(p: Point, e: Efficiency, kind: str, machine: Machine | None,
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
        n = sum(float(c) for c in calls if _num(c))
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
    if (p.level != "DRAM" or not _num(fused) or n <= 1 or not 0 < fused < p.bytes
            or p.bytes != kernel.bytes.get("DRAM")):
        return None
    chip, _ = words(machine, "chip")
    count = f"{n:g}"
    # measure(torch.compile(f)): the bytes are the eager ops', the timed code may be fused
    compiled = "compiled" in str(kernel.provenance.get("bytes", ""))
    return _advice(
        p, e, f"fuse its {count} ops into one pass",
        f"bytes {si(p.bytes, 'B')} -> {si(fused, 'B')}, {p.bytes / fused:.2f}x fewer: its "
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


# What limits a kernel's data reuse (reuse_limit): its kind streams weights (each used once
# per request), its traffic is already compulsory (each operand moved once), or tiles can
# still cut its bytes.
ReuseLimit = Literal["streams_weights", "compulsory", "tileable"]


def reuse_limit(kind: str, kernel: Kernel | None = None, ai: float | None = None,
                precision: str = "") -> ReuseLimit:
    """Whether tiling can raise the op's AI, and if not why. "streams_weights": a GEMV or a
    batch-1 decode step (opkind.streams_weights), every weight used once per request, or a
    GEMM whose bytes are mostly weights (weight_streaming) at its compulsory AI: batching
    is the lever. "compulsory": a GEMM whose shape's compulsory AI (or the weights' floor:
    weight_share) is no more than MIN_TILING_GAIN above the AI it reaches, its weights a
    minority (`ai matmul 256 256 256`: each element of B is used 256 times, AI 85.3 is
    already the shape's): only a larger problem, fusion or narrower data raise it.
    "tileable": anything else."""
    if streams_weights(kind):
        return "streams_weights"
    if not is_gemm(kind) or ai is None or not ai > 0:
        return "tileable"
    cap = shape_ai(kernel, precision)
    share = weight_share(kernel, kind, ai, precision)
    if share is not None and share[0] > 0:
        cap = min(cap, ai / share[0]) if cap is not None else ai / share[0]
    if cap is None or cap > ai * MIN_TILING_GAIN:
        return "tileable"
    return ("streams_weights" if weight_streaming(kernel, kind, ai, precision)
            else "compulsory")


def reuses_data(kind: str, kernel: Kernel | None = None, ai: float | None = None,
                precision: str = "") -> bool:
    """Whether tiling can raise the op's AI (reuse_limit says why not)."""
    return reuse_limit(kind, kernel, ai, precision) == "tileable"


def _tiling(p: Point, e: Efficiency, kind: str, machine: Machine | None,
            kernel: Kernel | None) -> Advice | None:
    """Tile for reuse, up to the ridge: a matrix op's shape caps the AI at its compulsory
    traffic's (shape_ai) where meta gives it; without a shape an upper bound, the ridge; any
    other kind TILING_GAIN x (seed 000 §5.3)."""
    if not 0 < p.ai < p.ridge:
        return None
    matrix = is_matrix(kind)
    cap = shape_ai(kernel, p.precision) if matrix and is_gemm(kind) else None
    share = weight_share(kernel, kind, p.ai, p.precision) if matrix else None
    if share is not None and share[0] > 0:
        # tiles cannot read a weight less than once: bytes >= the weights (review 13v F-J)
        cap = min(cap, p.ai / share[0]) if cap is not None else p.ai / share[0]
    target = (min(p.ridge, cap) if cap is not None else p.ridge) if matrix else \
        min(p.ridge, TILING_GAIN * p.ai)
    if target <= p.ai * MIN_TILING_GAIN:
        return None   # its bytes are the shape's compulsory traffic (or weights) already
    return _advice(
        p, e, words(machine, "tile")[0],
        f"each byte is used {fmt_ai(p.ai)} times; reuse raises AI to {fmt_ai(target)} "
        f"({target / p.ai:.1f}x; the ridge {fmt_ai(p.ridge)} is where compute binds)",
        "along slope", flop=p.flop, nbytes=p.flop / target, peak=p.peak_flop_per_s,
        bw=p.bytes_per_s,
        assumption=(f"an upper bound: its shape allows AI {fmt_ai(cap)} with each operand "
                    f"moved once (compulsory traffic)" if cap is not None else
                    "an upper bound: a matrix op has enough reuse for bytes to fall to "
                    "FLOP / ridge" if matrix else
                    f"larger tiles raise AI {TILING_GAIN:g}x (seed 000 §5.3: a conv from "
                    f"AI ~5 to 20+); only if the algorithm reuses data at all"))


def memory_advice(p: Point, e: Efficiency, roof: Roof, kind: str,
                  l2_bytes: float | None = None, machine: Machine | None = None,
                  kernel: Kernel | None = None) -> list[Advice]:
    out: list[Advice] = []
    matrix = is_matrix(kind)
    # An op under 1 FLOP/B with no matrix kind known streams (seed 004: y = x + 1 is 0.25,
    # "永远在斜线上"): nothing to reuse, so no tiling; fusion is its lever (review 12a #4).
    streaming = is_streaming(kind) or (not matrix and p.ai < 1)
    heavy = weight_streaming(kernel, kind, p.ai, p.precision)
    stencil = kernel is not None and is_stencil(kind)
    sparse = kernel is not None and is_sparse(kind)
    # a stencil's neighbouring pass is its next sweep: temporal blocking prices that fusion
    fused = _fusion(p, e, kind, machine, kernel) if not stencil else None
    if fused is not None:
        out.append(fused)
    if stencil:
        out += [a for a in (nontemporal_advice(p, e, kernel, machine),
                            spatial_advice(p, e, kernel), temporal_advice(p, e, kernel))
                if a is not None]
    # Tiling where the shape's compulsory AI (or the weights' floor) is above the AI reached
    # (_tiling's cap), not for a GEMV or a decode step, which use each weight once, nor an
    # SpMV (its matrix likewise) or a stencil (its blocking advice above is its tiling).
    no_reuse = streams_weights(kind) or sparse or stencil
    tiling = _tiling(p, e, kind, machine, kernel) if not (streaming or no_reuse) else None
    if tiling is not None:
        out.append(tiling)
    low = _lower_precision(p, e, roof, kind, machine, kernel)
    if low is not None:
        out.append(low)
    access = (GATHER_ACCESS.get(machine.kind if machine else "", GATHER_ACCESS[""])
              if sparse else words(machine, "access"))
    eff = _efficiency(p, e, *access)
    if eff is not None:
        out.append(eff)
    spmm = spmm_advice(p, e, kernel) if sparse else None
    if spmm is not None:
        out.append(spmm)
    # a linear / GEMV kind whose weight share is known below WEIGHT_DOMINANT (a prefill
    # linear's activations) is no weight stream; one with no share known is taken for one
    if heavy or (weights_by_default(kind)
                 and weight_share(kernel, kind, p.ai, p.precision) is None):
        # a GEMM of a GEMV's shape or AI gets what `ai gemv` gets, saying why (12a #1); one
        # that streams only some of its bytes as weights gets what gains WEIGHT_MIN_GAIN
        out += [a for a in weight_advice(p, e, kind, heavy if is_gemm(kind) else "", kernel)
                if not is_gemm(kind) or a.speedup >= WEIGHT_MIN_GAIN]
    per_call = p.bytes / p.calls
    if machine is not None and machine.kind == "cpu":
        # No "block the working set into L2/L3" on a CPU: one call's working set that fits a
        # cache level is served from it already when the kernel repeats (sanity's
        # cache_resident finding: the DRAM floor does not bind), so the level's bandwidth
        # is no gain to offer (review 11a F-G: 6.11x "into L3" for a 2.4 MB triad at 100 %
        # of roof); one that fits none needs tiles, which the tiling advice prices.
        return out
    if p.level != "L2" and per_call <= (l2_bytes or L2_BYTES_DEFAULT):
        l2 = roof.find_memory("L2")
        if l2 is not None and l2.value > p.bytes_per_s:
            out.append(_advice(
                p, e, "keep the working set in L2 (layout, kernel order, persistence)",
                f"served from L2 at {si(l2.value, 'B/s')} instead of {p.level} "
                f"{si(p.bytes_per_s, 'B/s')}", "along slope", flop=p.flop, nbytes=p.bytes,
                peak=p.peak_flop_per_s, bw=l2.value,
                assumption=f"the working set of one call ({si(per_call, 'B')}) fits in L2 "
                           f"({si(l2_bytes or L2_BYTES_DEFAULT, 'B')}"
                           f"{'' if l2_bytes else ', assumed: the largest L2s today'}) "
                           f"and is reused from there"))
    return out
