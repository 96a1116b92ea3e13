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


def weight_advice(p: Point, e: Efficiency, kind: str = "") -> list[Advice]:
    """A weight-streaming op (a GEMV in decode, seed 004): batch requests, shrink weights."""
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
                    f"{b} requests are there to batch"))
    out.append(replace(batched, speedup=b * batched.speedup))
    size = dtype_bytes(p.precision) if p.precision in ("fp32", "fp16", "bf16", "fp8") else None
    if size and size > 0.5:
        out.append(_advice(
            p, e, "store weights in int4 (dequantize on the fly)",
            f"{size:g} -> 0.5 byte per weight: AI {fmt_ai(p.ai)} -> "
            f"{fmt_ai(p.ai * size / 0.5)}", "along slope", flop=p.flop,
            nbytes=p.bytes * 0.5 / size, peak=p.peak_flop_per_s, bw=p.bytes_per_s,
            assumption="all bytes are weights; int4 accuracy is acceptable; the math stays "
                       f"in {p.precision}"))
    return out


def activation_share(kernel: Kernel | None, kind: str) -> float:
    """The share of a kernel's bytes that its neighbours make or take (activations), the
    bytes fusion can keep on chip. A matrix read once per call (a GEMV's matrix, a decode
    linear layer's weights) or a KV cache comes from memory whatever runs next to it.
    From meta 'bytes_split' (`rooflab llm`: weights / activations / kv) or 'weight_bytes',
    else for a GEMV / linear / decode kind everything but the vectors of meta shape m x n
    (all of it is matrix without a shape, as the batching advice assumes), else 1."""
    meta = kernel.meta if kernel is not None else {}
    split = meta.get("bytes_split")
    if isinstance(split, Mapping) and ("weights" in split or "activations" in split):
        total = sum(float(v) for v in split.values() if isinstance(v, (int, float)))
        act = split.get("activations", 0.0)
        if total > 0 and isinstance(act, (int, float)):
            return min(1.0, max(0.0, float(act) / total))
    nbytes = (kernel.bytes.get("DRAM") or sum(kernel.bytes.values())) if kernel else 0.0
    wb = meta.get("weight_bytes")
    if isinstance(wb, (int, float)) and nbytes > 0:
        return min(1.0, max(0.0, 1.0 - float(wb) / nbytes))
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


def reuses_data(kind: str) -> bool:
    """Whether tiling can raise the op's AI: not for a GEMV or a batch-1 decode step, whose
    every weight is used once per request (batching is their lever)."""
    return not any(kind.startswith(k) for k in NO_REUSE_KINDS)


def memory_advice(p: Point, e: Efficiency, roof: Roof, kind: str,
                  l2_bytes: float | None = None, machine: Machine | None = None,
                  kernel: Kernel | None = None) -> list[Advice]:
    out: list[Advice] = []
    streaming = is_streaming(kind)
    fused = _fusion(p, e, kind, machine, kernel)
    if fused is not None:
        out.append(fused)
    if not streaming and reuses_data(kind) and 0 < p.ai < p.ridge:
        matrix = any(kind.startswith(k) for k in MATRIX_KINDS)
        target = p.ridge if matrix else min(p.ridge, TILING_GAIN * p.ai)
        out.append(_advice(
            p, e, words(machine, "tile")[0],
            f"each byte is used {fmt_ai(p.ai)} times; reuse raises AI to {fmt_ai(target)} "
            f"({target / p.ai:.1f}x; the ridge {fmt_ai(p.ridge)} is where compute binds)",
            "along slope", flop=p.flop, nbytes=p.flop / target, peak=p.peak_flop_per_s,
            bw=p.bytes_per_s,
            assumption=("an upper bound: a matrix op has enough reuse for bytes to fall to "
                        "FLOP / ridge" if matrix else
                        f"larger tiles raise AI {TILING_GAIN:g}x (seed 000 §5.3: a conv from "
                        f"AI ~5 to 20+); only if the algorithm reuses data at all")))
    low = _lower_precision(p, e, roof, kind, machine, kernel)
    if low is not None:
        out.append(low)
    eff = _efficiency(p, e, *words(machine, "access"))
    if eff is not None:
        out.append(eff)
    if any(kind.startswith(w) for w in WEIGHT_KINDS):
        out += weight_advice(p, e, kind)
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
