"""Advice for a kernel bound by its bytes: fusion (only the activation share of a
matrix-reading kernel), tiling, narrower storage and lower precision (advice_precision),
access efficiency, batching and int4 weights for weight-streaming ops, and keeping the
working set in L2. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from ..units import dtype_bytes, fmt_ai, si
from .advice_core import MATRIX_KINDS, Advice, Efficiency, _advice, _efficiency
from .advice_precision import _lower_precision
from .analysis import Point
from .ceiling import Roof
from .kernel import Kernel
from .machine import Machine, words
from .sanity import is_streaming

# Without a matrix shape, tiling is assumed to raise AI this much (seed 000 §5.3: 5 -> 20+).
TILING_GAIN = 4.0
# L2 capacity assumed when the device's is unknown (H100: 50 MB).
L2_BYTES_DEFAULT = 50e6
# Requests batched per weight read in the batching advice (seed 004, Day 16 sweeps to 180).
BATCH_ADVICE = 8
# Op kinds whose DRAM traffic is mostly weights (a linear layer / GEMV in decode).
WEIGHT_KINDS = ("gemv", "linear", "decode")
# Op kinds that use each weight once per request (a GEMV, a batch-1 decode step): tiling
# cannot raise their AI; batching requests per weight read is the lever (weight_advice).
NO_REUSE_KINDS = ("gemv", "mul_mat_vec", "decode")
# Fusion advice for a kernel whose bytes are mostly a matrix read once (weights, a KV
# cache) is dropped below this predicted speed-up: only its activations can stay on chip
# (a 4096x4096 fp64 GEMV: 32 kB of its 134 MB, 1.0002x).
FUSION_MIN_GAIN = 1.05
# Op kinds that multiply two matrices (C = A @ B): with compulsory traffic their AI is
# 2mnk / (s (mk + kn + mn)), about min(m, n, k) x 2/s when one dimension is small, so the
# shape, not the tiles, caps it (review 12a #1). llama.cpp's mul_mat_vec is a GEMV (above).
GEMM_KINDS = ("gemm", "matmul", "linear", "mm", "bmm", "addmm", "addbmm", "baddbmm",
              "mul_mat")
# A GEMM whose narrow side (m or n) has at most this many rows reads each weight once per
# row, once per request in decode (seed 004: decode at batch b has AI ~ b): the batching
# and int4 levers apply, tiling cannot raise its AI. The batch the advice adds.
SKINNY_MAX_ROWS = BATCH_ADVICE
# Without a shape: a GEMM whose AI x element size / 2 (the rows a compulsory-traffic GEMM
# of that AI would have) is at most this is taken for a GEMV in disguise (M = 1: fp16 AI
# ~1, one weight read per 2 FLOP). M = 2 would read ~2, so 1.5 splits the two; cuBLAS and
# CUTLASS name their small-M kernels *gemm* too, as seed 004's decode table does.
GEMV_MAX_ROWS = 1.5
# Tiling that would raise AI less than this is not offered (the bytes are compulsory).
MIN_TILING_GAIN = 1.05


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


def is_gemm(kind: str) -> bool:
    """A two-matrix multiply (GEMM_KINDS), not llama.cpp's GEMV (mul_mat_vec)."""
    return any(kind.startswith(g) for g in GEMM_KINDS) and not kind.startswith("mul_mat_vec")


def shape_ai(kernel: Kernel | None, precision: str) -> float | None:
    """The most AI a GEMM's shape allows: each operand moved once (compulsory traffic),
    2mnk / (s (mk + kn + mn)), s the element size of the shape's dtype, else `precision`'s;
    None without a shape (or a size)."""
    dims = _gemm_shape(kernel)
    if dims is None:
        return None
    m, n, k = dims
    dtype = kernel.meta["shape"].get("dtype") or precision
    try:
        size = dtype_bytes(str(dtype))
    except Exception:   # a dtype with no storage size
        return None
    return 2 * m * n * k / (size * (m * k + k * n + m * n)) if size > 0 else None


def weight_streaming(kernel: Kernel | None, kind: str, ai: float, precision: str) -> str:
    """Why a kernel uses each weight once per request (so tiling cannot raise its AI and
    batching / int4 are its levers, seed 004), '' when it does not: a GEMV or decode kind
    (NO_REUSE_KINDS); a GEMM whose meta shape has at most SKINNY_MAX_ROWS rows on its
    narrow side; a GEMM with no shape at the AI of a GEMV (GEMV_MAX_ROWS)."""
    if any(kind.startswith(k) for k in NO_REUSE_KINDS):
        return f"a {kind} uses each weight once per request"
    if not is_gemm(kind):
        return ""
    dims = _gemm_shape(kernel)
    if dims is not None:
        m, n, k = dims
        rows = min(m, n)
        if rows > SKINNY_MAX_ROWS:
            return ""
        used = ("1 row on its narrow side (a GEMV): each weight is used once per read"
                if rows == 1 else f"{rows:g} rows on its narrow side: each weight is used "
                                  f"{rows:g} times per read, once per request")
        return (f"its shape (m {m:g}, n {n:g}, k {k:g}) has {used}, so tiling cannot raise "
                f"its AI past {fmt_ai(shape_ai(kernel, precision) or ai)}")
    try:
        size = dtype_bytes(precision)
    except Exception:
        return ""
    if not 0 < ai * size / 2 <= GEMV_MAX_ROWS:
        return ""
    return (f"AI {fmt_ai(ai)} in {precision} is what a GEMV reaches (each {size:g}-byte "
            f"weight read once for 2 FLOP); a {kind}'s AI with each operand moved once is "
            f"about its narrowest dimension x {2 / size:g}, so this is most likely M = 1 (a "
            f"decode step), which tiling cannot help (give meta shape m/n/k if it is not)")


def weight_advice(p: Point, e: Efficiency, kind: str = "", why: str = "") -> list[Advice]:
    """A weight-streaming op (a GEMV in decode, seed 004): batch requests, shrink weights.
    `why`: what makes it weight-streaming where its kind alone does not say so (a GEMM
    of a GEMV's shape or AI), added to the assumptions."""
    why = f"; {why}" if why else ""
    out = []
    b = BATCH_ADVICE
    what = (f"batch {b} vectors per matrix read (GEMV -> GEMM)" if kind.startswith("gemv")
            else f"batch {b} requests per weight read")
    batched = _advice(
        p, e, what,
        f"weights are read once for the whole batch: AI {fmt_ai(p.ai)} -> {fmt_ai(b * p.ai)}; "
        f"the speed-up is per request (throughput)", "along slope", flop=b * p.flop,
        nbytes=p.bytes, peak=p.peak_flop_per_s, bw=p.bytes_per_s,
        assumption=(f"all bytes are the matrix (the vectors are small); {b} independent "
                    f"vectors are there to multiply by it" if kind.startswith("gemv") else
                    f"all bytes are weights (activations and KV cache small at batch {b}); "
                    f"{b} requests are there to batch") + why)
    out.append(replace(batched, speedup=b * batched.speedup))
    size = dtype_bytes(p.precision) if p.precision in ("fp32", "fp16", "bf16", "fp8") else None
    if size and size > 0.5:
        out.append(_advice(
            p, e, "store weights in int4 (dequantize on the fly)",
            f"{size:g} -> 0.5 byte per weight: AI {fmt_ai(p.ai)} -> "
            f"{fmt_ai(p.ai * size / 0.5)}", "along slope", flop=p.flop,
            nbytes=p.bytes * 0.5 / size, peak=p.peak_flop_per_s, bw=p.bytes_per_s,
            assumption="all bytes are weights; int4 accuracy is acceptable; the math stays "
                       f"in {p.precision}" + why))
    return out


def activation_share(kernel: Kernel | None, kind: str) -> float:
    """The share of a kernel's bytes that its neighbours make or take (activations), the
    bytes fusion can keep on chip. A matrix read once per call (a GEMV's matrix, a decode
    linear layer's weights) or a KV cache comes from memory whatever runs next to it.
    From meta 'bytes_split': `rooflab llm`'s activations (beside weights / kv), else all
    but its 'weights' and 'kv' (`rooflab ai attention`'s q + o, and the scores of a
    non-flash one); or from 'weight_bytes'; a GEMM with meta shape m/n/k keeps its output
    and its smaller input only (the larger is the weight a neighbour cannot make: for
    `ai matmul 1 4096 4096` 16 kB of 33.6 MB); a GEMV / linear / decode kind, or a GEMM at
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
    dims = _gemm_shape(kernel) if is_gemm(kind) else None
    if dims is not None:
        m, n, k = dims
        return (min(m * k, k * n) + m * n) / (m * k + k * n + m * n)
    if (kernel is not None and is_gemm(kind) and nbytes > 0
            and weight_streaming(kernel, kind, kernel.total_flop / nbytes,
                                 kernel.precision)):
        return 0.0
    if not any(kind.startswith(w) for w in WEIGHT_KINDS + ("mul_mat_vec",)):
        return 1.0
    matrix = _matrix_bytes(kernel) if kind.startswith(("gemv", "mul_mat_vec")) else None
    if matrix is None or nbytes <= 0:
        return 0.0
    return min(1.0, max(0.0, 1.0 - matrix / nbytes))


def _matrix_bytes(kernel: Kernel | None) -> float | None:
    """A GEMV's matrix bytes from meta shape m x n (ops.gemv's) in the shape's dtype, else
    the kernel's precision; None without a shape."""
    shape = kernel.meta.get("shape") if kernel is not None else None
    if not isinstance(shape, Mapping):
        return None
    m, n = shape.get("m"), shape.get("n")
    if not all(isinstance(v, (int, float)) and v > 0 for v in (m, n)):
        return None
    dtype = shape.get("dtype") or kernel.precision
    try:
        return float(m) * float(n) * dtype_bytes(str(dtype))
    except Exception:   # a dtype with no storage size: no matrix bytes to tell
        return None


def _fusion(p: Point, e: Efficiency, kind: str, machine: Machine | None,
            kernel: Kernel | None) -> Advice | None:
    """Fuse with a neighbour: half the bytes fusion can keep on chip stay there (all of an
    elementwise chain's; only the activations of a matrix-reading kernel, dropped when that
    gains under FUSION_MIN_GAIN)."""
    chip, unit = words(machine, "chip")
    share = activation_share(kernel, kind)
    if share >= 1.0:
        return _advice(
            p, e, "fuse with the neighbouring pass",
            "k elementwise passes fused move about 1/k of the bytes (the intermediate never "
            "reaches memory); fused with one neighbour: bytes / 2, AI x 2", "along slope",
            flop=p.flop, nbytes=p.bytes / 2, peak=p.peak_flop_per_s, bw=p.bytes_per_s,
            assumption=f"a neighbouring {unit} reads what this one writes (or writes what it "
                       f"reads), so half of these bytes stay {chip}; FLOP unchanged")
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
                   f"{si(p.bytes - act, 'B')} (weights, KV cache: read once per call) come "
                   f"from memory whatever runs next to it; FLOP unchanged")
    return out if out.speedup >= FUSION_MIN_GAIN else None


def reuses_data(kind: str, kernel: Kernel | None = None, ai: float | None = None,
                precision: str = "") -> bool:
    """Whether tiling can raise the op's AI: not for a GEMV or a batch-1 decode step, whose
    every weight is used once per request (batching is their lever), nor for a GEMM of a
    GEMV's shape or, without a shape, a GEMV's AI (weight_streaming)."""
    return not weight_streaming(kernel, kind, ai if ai is not None else float("nan"),
                                precision)


def _tiling(p: Point, e: Efficiency, kind: str, machine: Machine | None,
            kernel: Kernel | None) -> Advice | None:
    """Tile for reuse, up to the ridge: a matrix op's shape caps the AI at its compulsory
    traffic's (shape_ai) where meta gives it; without a shape an upper bound, the ridge; any
    other kind TILING_GAIN x (seed 000 §5.3)."""
    if not 0 < p.ai < p.ridge:
        return None
    matrix = any(kind.startswith(k) for k in MATRIX_KINDS)
    cap = shape_ai(kernel, p.precision) if matrix and is_gemm(kind) else None
    target = (min(p.ridge, cap) if cap is not None else p.ridge) if matrix else \
        min(p.ridge, TILING_GAIN * p.ai)
    if target <= p.ai * MIN_TILING_GAIN:
        return None   # its bytes are the shape's compulsory traffic already
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
    matrix = any(kind.startswith(k) for k in MATRIX_KINDS)
    # An op under 1 FLOP/B with no matrix kind known streams (seed 004: y = x + 1 is 0.25,
    # "永远在斜线上"): nothing to reuse, so no tiling; fusion is its lever (review 12a #4).
    streaming = is_streaming(kind) or (not matrix and p.ai < 1)
    heavy = weight_streaming(kernel, kind, p.ai, p.precision)
    fused = _fusion(p, e, kind, machine, kernel)
    if fused is not None:
        out.append(fused)
    tiling = _tiling(p, e, kind, machine, kernel) if not (streaming or heavy) else None
    if tiling is not None:
        out.append(tiling)
    low = _lower_precision(p, e, roof, kind, machine, kernel)
    if low is not None:
        out.append(low)
    eff = _efficiency(p, e, *words(machine, "access"))
    if eff is not None:
        out.append(eff)
    if heavy or any(kind.startswith(w) for w in WEIGHT_KINDS):
        # a GEMM of a GEMV's shape or AI gets what `ai gemv` gets, saying why (12a #1)
        out += weight_advice(p, e, kind, heavy if is_gemm(kind) else "")
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
