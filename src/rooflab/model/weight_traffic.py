"""How much of a kernel's traffic is weights, each read once per call: a GEMM's meta
shape (and the compulsory AI it allows), a routed-expert kernel's experts touched, the
weight share from meta or from the shape, and whether the kernel streams its weights.
The memory advice (batching, int4, fusion, tiling) and whatif read these. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..units import fmt_ai, fmt_fraction
from .element_dtype import element_bytes, weight_bytes_per_element
from .kernel import Kernel
from .opkind import is_gemm, kind_word, streams_weights

# A GEMM whose bytes are at least this share weights streams them (each weight read once
# per call): batching requests per weight read and narrower weights are its levers, whatever
# its row count (review 13v F-E: `ai matmul 16 4096 4096` is 99.2 % weights, AI 15.9), and
# their computed gain decides whether each is offered (advice_memory.WEIGHT_MIN_GAIN). 0.9
# dropped a measured m-128 linear at 88.9 % weights whose batch of 8 gains 1.34x on A100; at
# half weights batching 8 still reads 4.5x the bytes for 8x the work (1.78x on the slope).
WEIGHT_DOMINANT = 0.5
# Without a shape or a split: a GEMM whose AI x weight size / 2 (the rows a compulsory-traffic
# GEMM of that AI would have) is at most this is taken for a GEMV in disguise (M = 1: fp16 AI
# ~1, one weight read per 2 FLOP). M = 2 would read ~2, so 1.5 splits the two; cuBLAS and
# CUTLASS name their small-M kernels *gemm* too, as seed 004's decode table does.
GEMV_MAX_ROWS = 1.5


def is_positive(v: object) -> bool:
    """A positive number read from meta (a bool is not one)."""
    return isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0


def meta_shape(kernel: Kernel | None) -> Mapping | None:
    """The kernel's meta 'shape' mapping (ops.matmul's m/n/k, `rooflab llm`'s experts and
    top_k); None without a kernel or a mapping there."""
    shape = kernel.meta.get("shape") if kernel is not None else None
    return shape if isinstance(shape, Mapping) else None


def kernel_bytes(kernel: Kernel | None) -> float:
    """The bytes the shares are of: DRAM's, else every level's summed; 0 without a kernel."""
    return (kernel.bytes.get("DRAM") or sum(kernel.bytes.values())) if kernel else 0.0


def share_ai(kernel: Kernel | None, ai: float) -> float:
    """The AI at the bytes the weight shares are of (kernel_bytes: DRAM's, else every
    level's), so a share and an AI are of one level: a cache-level point's AI (a naive
    matmul's L3 AI 0.0312) is not its DRAM AI (42.7), and the weights' floor or the M = 1
    guess read off the wrong one mixes levels (review r4 F5). `ai` without a kernel or
    bytes."""
    nbytes = kernel_bytes(kernel)
    flop = kernel.total_flop if kernel is not None else 0.0
    return flop / nbytes if nbytes > 0 and flop > 0 else ai


def gemm_shape(kernel: Kernel | None) -> tuple[float, float, float] | None:
    """(m, n, k) of a GEMM-family kernel's meta shape (ops.matmul's, `rooflab llm`'s
    linear layers'); None without all three."""
    shape = meta_shape(kernel)
    if shape is None:
        return None
    dims = [shape.get(x) for x in ("m", "n", "k")]
    if not all(is_positive(v) for v in dims):
        return None
    return float(dims[0]), float(dims[1]), float(dims[2])


def weights_by_default(kind: str) -> bool:
    """Whether a kind's bytes are taken as weights where no share is known: a GEMV or
    decode step (opkind.streams_weights), or a 'linear' layer, as `rooflab llm` names a
    decode step's (the batching advice's "all bytes are weights")."""
    return streams_weights(kind) or kind_word(kind) == "linear"


def routed(kernel: Kernel | None) -> tuple[float, float, float] | None:
    """(experts E, top-k, tokens) of a routed-expert kernel (`rooflab llm`'s meta shape
    says experts and top_k; its m is tokens x top-k rows over top-k *different* experts);
    None for any other kernel."""
    shape = meta_shape(kernel)
    if shape is None:
        return None
    e, top, m = shape.get("experts"), shape.get("top_k"), shape.get("m")
    if not (is_positive(e) and is_positive(top) and is_positive(m) and top <= e):
        return None
    return float(e), float(top), float(m) / float(top)


def experts_touched(kernel: Kernel, tokens: float) -> float:
    """Distinct experts `tokens` tokens touch on average, E(1 - (1 - k/E)^T), by whatif's
    expert_weight_ratio (one formula for the advice and the what-if): one token touches
    top-k, so T touch top-k x ratio(T / t) / ratio(1 / t), t the kernel's own tokens."""
    from .whatif_batch import expert_weight_ratio
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
    dims = gemm_shape(kernel)
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
    nbytes = kernel_bytes(kernel)
    split = meta.get("bytes_split")
    if isinstance(split, Mapping) and ("weights" in split or "activations" in split):
        # `rooflab llm` splits bytes into weights / activations / kv: attention and RoPE
        # name 0 weights, a decode linear layer almost only weights
        total = sum(float(v) for v in split.values() if is_positive(v))
        weights = split.get("weights", 0.0)
        if total > 0 and (is_positive(weights) or weights == 0):
            return min(1.0, float(weights) / total), "meta bytes_split"
    wb = meta.get("weight_bytes")
    if is_positive(wb) and nbytes > 0:
        return min(1.0, float(wb) / nbytes), "meta weight_bytes"
    if not is_gemm(kind):
        return None
    size, src = weight_size(kernel, precision)
    if size is None:
        return None
    dims = gemm_shape(kernel)
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
    if 0 < share_ai(kernel, ai) * size / 2 <= GEMV_MAX_ROWS:
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
    dims = gemm_shape(kernel)
    moe = routed(kernel)
    if dims is not None and moe is not None:
        m, n, k = dims
        d = experts_touched(kernel, moe[2])
        return (f"a routed-expert kernel (meta shape m {m:g}, n {n:g}, k {k:g}, {moe[0]:g} "
                f"experts, top-{moe[1]:g}): its m is {moe[2]:g} token(s) x top-{moe[1]:g} "
                f"over {d:.3g} different experts, so each expert's weights are used "
                f"{m / d:.3g} time(s) per read; weights are {fmt_fraction(frac, 1)} of its "
                f"bytes ({src})")
    if dims is not None:
        m, n, k = dims
        rows = min(m, n)
        used = ("1 row on its narrow side (a GEMV): each weight is used once per read"
                if rows == 1 else f"{rows:g} rows on its narrow side: each weight is used "
                                  f"{rows:g} times per read, once per request")
        return (f"its shape (m {m:g}, n {n:g}, k {k:g}) has {used}; weights are "
                f"{fmt_fraction(frac, 1)} of its bytes ({src})")
    if src.startswith("its AI"):
        size = weight_size(kernel, precision)[0] or 2.0
        return (f"AI {fmt_ai(share_ai(kernel, ai))} with {src.removeprefix('its AI, ')} is "
                f"what a GEMV reaches (each {size:g}-byte weight read once for 2 FLOP); a "
                f"{kind}'s AI with each operand moved once is about its narrowest dimension x "
                f"{2 / size:g}, so this is most likely M = 1 (a decode step), which tiling "
                f"cannot help (give meta shape m/n/k if it is not)")
    return f"weights are {fmt_fraction(frac, 1)} of its bytes ({src})"

