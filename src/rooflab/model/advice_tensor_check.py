"""A matrix op held to its tensor-core ceiling that runs below even its precision's
CUDA-core (vector) rate, at an AI where the memory roof lies above that rate: the first
suspect is that it does not run on tensor cores at all (a size or alignment the
tensor-core kernels refuse, a dtype they do not take, a naive kernel instead of
cuBLAS/cuDNN), not "more parallelism" (review s21 r3 F7: seed 000's fp16 gemm_1024 at 4.2
TFLOP/s on an A100, under the fp16 vector 78, was told "expose more parallelism:
37.56x"). The rate is the kernel's own precision's (own_vector), not fp32's. Where meta
shape gives M and N, the 80 % target is held to the tile-quantisation bound of 128 x 128
output tiles (model/tile_quantization.py; with the profile's SM count, the wave bound
too: 64 tiles on 108 SMs fill 59 %). Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import replace

from ..units import fmt_fraction, fmt_rate
from .advice_core import TARGET_EFFICIENCY, Advice, Efficiency, _advice, pct
from .analysis import Point
from .ceiling import Roof
from .kernel import Kernel
from .machine import Machine
from .opkind import is_matrix
from .tile_quantization import quantized_fraction, tile_count, wave_count

TENSOR_CHECK = "check that it runs on tensor cores (sm__inst_executed_pipe_tensor)"
# The output tile a tensor-core GEMM kernel typically takes (cuBLAS/CUTLASS 128 x 128).
TILE = 128


def _dim(shape, key: str) -> int | None:
    v = shape.get(key) if isinstance(shape, dict) else None
    return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 1 \
        and float(v).is_integer() else None


def tile_fraction(kernel: Kernel | None) -> tuple[float, str] | None:
    """(useful fraction x wave efficiency, words) of TILE x TILE output tiles over meta
    shape's m x n (batch where given), the waves over meta sms where the profile gave it;
    None without m and n or where the tiles lose nothing."""
    shape = kernel.meta.get("shape") if kernel is not None else None
    m, n = _dim(shape, "m"), _dim(shape, "n")
    if m is None or n is None:
        return None
    count = tile_count(m, n, TILE, TILE, _dim(shape, "batch") or 1)
    sms = kernel.meta.get("sms")
    waves = (wave_count(count.tiles, sms) if isinstance(sms, int)
             and not isinstance(sms, bool) and sms >= 1 else None)
    frac = quantized_fraction(count, waves)
    if frac >= 1.0:
        return None
    words = (f"{count.tiles} output tiles of {TILE}x{TILE}"
             + (f" on {sms} SMs" if waves is not None else "")
             + (f" ({kernel.meta['sms_source']})" if waves is not None
                and kernel.meta.get("sms_source") else "")
             + f" keep {pct(frac)} of the peak busy (tile quantisation)")
    return frac, words


def sms_would_bound(kernel: Kernel, sms: int) -> bool:
    """Whether an SM count would tighten the kernel's tile bound (tile_fraction with meta
    sms set to `sms` below the one without): where a reader that knows the device (the
    catalog entry --on names: A100 80GB SXM has 108) should set meta sms and sms_source,
    as ingest.profile_import.with_sm_count does for a grid. gemm_1024's 64 tiles of
    128 x 128 lose nothing to quantisation but fill 59 % of 108 SMs (review s21 x2 F9:
    without meta sms the wave bound never applied to r3's own command)."""
    if kernel.meta.get("sms") is not None or sms < 1:
        return False
    now = tile_fraction(kernel)
    then = tile_fraction(kernel.with_(meta={**kernel.meta, "sms": sms}))
    return then is not None and then[0] < (now[0] if now else 1.0)


# A tensor-core precision with no vector form of its own: TF32 is fp32 data on the CUDA
# cores (fp32 FMA); any other precision (int4, fp8 on an A100) has no CUDA-core rate to
# compare with, and gets no check.
VECTOR_OF = {"tf32": "fp32"}


def own_vector(roof: Roof, precision: str):
    """The vector (CUDA-core) ceiling of the kernel's own precision, the rate it reaches
    without tensor cores: fp64 for an fp64 GEMM, fp16 for fp16 (review s21 x2 F3: fp64
    GEMMs at 15 and 50 TFLOP/s, only reachable on DMMA tensor cores, were compared with the
    fp32 vector rate, 19.5 and 67, and told to check the tensor pipe); None where the roof
    has none."""
    return roof.find_compute(VECTOR_OF.get(precision, precision), "vector")


def tensor_check_advice(p: Point, e: Efficiency, roof: Roof, kind: str,
                        machine: Machine | None, kernel: Kernel | None) -> Advice | None:
    """The "is it on tensor cores?" line (module doc), priced at TARGET_EFFICIENCY of the
    tensor ceiling held to tile_fraction; None where it does not apply."""
    if (machine is None or machine.kind != "gpu" or not is_matrix(kind)
            or p.unit != "tensor" or p.achieved_flop_per_s is None or e.untimed):
        return None
    cuda = own_vector(roof, p.precision)
    if cuda is None or p.achieved_flop_per_s >= cuda.value:
        return None
    if p.ai * p.bytes_per_s <= cuda.value:
        # memory-side of the CUDA-core ridge: the bytes, not the unit, hold it (a T4 conv at
        # AI 7.5: 2.4 TFLOP/s of bandwidth under the 8.1 of fp32 vector), so no tensor check
        return None
    held = tile_fraction(kernel)
    target = TARGET_EFFICIENCY * (held[0] if held else 1.0)
    return _advice(
        p, e, TENSOR_CHECK,
        f"it reaches {fmt_rate(p.achieved_flop_per_s, p.precision)}, below even the "
        f"{cuda.label} rate {fmt_rate(cuda.value, cuda.precision)} (no tensor cores "
        f"needed for that): first check the tensor pipe is busy (ncu "
        f"sm__inst_executed_pipe_tensor); sizes and leading dimensions a multiple of 8 "
        f"(16 B), a tensor-core dtype and cuBLAS/cuDNN rather than a hand-written loop put "
        f"it there" + (f"; {held[1]}" if held else ""),
        "below roof", flop=p.flop, nbytes=p.bytes, peak=p.peak_flop_per_s,
        bw=p.bytes_per_s, efficiency=target,
        assumption=f"the same FLOP and bytes on tensor cores reach {pct(target)} of the "
                   f"roof ({fmt_fraction(TARGET_EFFICIENCY)}"
                   + (" x the tile bound" if held else "") + ")")


def hold_to_tiles(items: list[Advice], p: Point, e: Efficiency, kind: str,
                  kernel: Kernel | None, action: str) -> list[Advice]:
    """The efficiency lever `action` (80 % of the roof) of a matrix op held to the tile
    bound too, where meta shape gives one (tile_fraction): 80 % of 312 TFLOP/s is out of
    reach for a GEMM whose tiles fill part of the SMs (review s21 r3 F7)."""
    held = tile_fraction(kernel) if is_matrix(kind) else None
    if held is None:
        return items
    out = []
    for a in items:
        if a.action == action and a.shrinks == "below roof":
            b = _advice(p, e, a.action, f"{a.detail}; {held[1]}", a.shrinks, flop=p.flop,
                        nbytes=p.bytes, peak=p.peak_flop_per_s, bw=p.bytes_per_s,
                        efficiency=TARGET_EFFICIENCY * held[0],
                        assumption=f"{a.assumption}; held to the tile bound: {held[1]}")
            a = replace(b, seconds_range=a.seconds_range)
        out.append(a)
    return out
