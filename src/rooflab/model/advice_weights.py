"""Advice for a kernel that streams its weights (a GEMV in decode, seed 004): batch
requests per weight read, store the weights in int4. Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import replace

from ..units import dtype_bytes, fmt_ai, fmt_fraction, fmt_times
from .advice_core import Advice, Efficiency, _advice
from .analysis import Point
from .kernel import Kernel
from .opkind import kind_word
from .weight_traffic import experts_touched, routed, weight_share, weight_size

# Requests batched per weight read in the batching advice (seed 004, Day 16 sweeps to 180).
BATCH_ADVICE = 8


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
                     f"({before:.3g} now), so the expert weights read grow {fmt_times(grow)}: "
                     f"{fmt_times(b / grow)} per request at most (uniform routing, as whatif "
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
                    (f"weights are {fmt_fraction(w, 1)} of the bytes ({share[1]}), the rest "
                     f"grows with the batch" if share is not None and w < 1 else
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
                        f"weights are {fmt_fraction(w, 1)} of the bytes ({share[1]})")
            + f"; int4 accuracy is acceptable; the math stays in {p.precision}" + why))
    return out

