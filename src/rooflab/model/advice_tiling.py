"""Tiling advice for a kernel bound by its bytes, and whether tiling can raise its AI at
all (reuse_limit): not for a kernel that streams its weights, nor one whose traffic is the
shape's compulsory traffic already. Pure: no I/O.
"""

from __future__ import annotations

from typing import Literal

from ..units import fmt_ai, fmt_times
from .advice_core import Advice, Efficiency, _advice
from .analysis import Point
from .kernel import Kernel
from .machine import Machine, words
from .opkind import is_attention, is_gemm, is_matrix, name_words, streams_weights
from .weight_traffic import shape_ai, share_ai, weight_share, weight_streaming

# Without a matrix shape, tiling is assumed to raise AI this much (seed 000 §5.3: 5 -> 20+).
TILING_GAIN = 4.0
# Tiling that would raise AI less than this is not offered (the bytes are compulsory).
MIN_TILING_GAIN = 1.05


# What limits a kernel's data reuse (reuse_limit): its kind streams weights (each used once
# per request), its traffic is already compulsory (each operand moved once), or tiles can
# still cut its bytes.
ReuseLimit = Literal["streams_weights", "compulsory", "tileable"]


def _weights_floor(cap: float | None, ai: float,
                   share: tuple[float, str] | None,
                   kernel: Kernel | None = None) -> float | None:
    """The AI cap lowered to the weights' floor: tiles cannot read a weight less than once,
    so bytes stay >= the weights and AI <= AI / weight share (review 13v F-J), both of
    the bytes the share is of (share_ai: DRAM's; a cache level's AI over a DRAM share made
    a 512^3 matmul's bound 0.0938 instead of 42.7, review r4 F5). `cap` as it was without
    a share (or a zero one)."""
    if share is None or not share[0] > 0:
        return cap
    floor = share_ai(kernel, ai) / share[0]
    return min(cap, floor) if cap is not None else floor


def one_query_attention(kind: str, kernel: Kernel | None) -> bool:
    """Decode attention: one query per sequence (meta q_len or shape.q_len 1, or 'decode'
    in an attention kernel's name). Each K and V byte is read once per step whatever the
    tiles, so its AI (about 2 x query heads / KV heads: 7.87 for `ai attention --heads 32
    --kv-heads 4 --q-len 1`) is compulsory; batching and GQA are its levers, not tiling
    (review 19a N11: 'tile for data reuse: 3.55x' for flash_decode_attention)."""
    if kernel is None or not is_attention(kind):
        return False
    shape = kernel.meta.get("shape")
    q_len = kernel.meta.get("q_len", shape.get("q_len") if isinstance(shape, dict) else None)
    if isinstance(q_len, (int, float)) and not isinstance(q_len, bool):
        return q_len == 1
    return "decode" in name_words(kernel.name)


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
    if one_query_attention(kind, kernel):
        return "compulsory"
    if not is_gemm(kind) or ai is None or not ai > 0:
        return "tileable"
    cap = shape_ai(kernel, precision)
    cap = _weights_floor(cap, ai, weight_share(kernel, kind, ai, precision), kernel)
    if cap is None or cap > ai * MIN_TILING_GAIN:
        return "tileable"
    return ("streams_weights" if weight_streaming(kernel, kind, ai, precision)
            else "compulsory")


def tiling_advice(p: Point, e: Efficiency, kind: str, machine: Machine | None,
            kernel: Kernel | None) -> Advice | None:
    """Tile for reuse, up to the ridge: a matrix op's shape caps the AI at its compulsory
    traffic's (shape_ai) where meta gives it; without a shape an upper bound, the ridge; any
    other kind TILING_GAIN x (seed 000 §5.3)."""
    if not 0 < p.ai < p.ridge or one_query_attention(kind, kernel):
        return None
    matrix = is_matrix(kind)
    cap = shape_ai(kernel, p.precision) if matrix and is_gemm(kind) else None
    share = weight_share(kernel, kind, p.ai, p.precision) if matrix else None
    cap = _weights_floor(cap, p.ai, share, kernel)
    target = (min(p.ridge, cap) if cap is not None else p.ridge) if matrix else \
        min(p.ridge, TILING_GAIN * p.ai)
    if target <= p.ai * MIN_TILING_GAIN:
        return None   # its bytes are the shape's compulsory traffic (or weights) already
    return _advice(
        p, e, words(machine, "tile")[0],
        f"each byte is used {fmt_ai(p.ai)} times; reuse raises AI to {fmt_ai(target)} "
        f"({fmt_times(target / p.ai)}; the ridge {fmt_ai(p.ridge)} is where compute binds)",
        "along slope", flop=p.flop, nbytes=p.flop / target, peak=p.peak_flop_per_s,
        bw=p.bytes_per_s,
        assumption=(f"an upper bound: its shape allows AI {fmt_ai(cap)} with each operand "
                    f"moved once (compulsory traffic)" if cap is not None else
                    "an upper bound: a matrix op has enough reuse for bytes to fall to "
                    "FLOP / ridge" if matrix else
                    f"larger tiles raise AI {TILING_GAIN:g}x (seed 000 §5.3: a conv from "
                    f"AI ~5 to 20+); only if the algorithm reuses data at all"))
