"""Advice for a kernel bound by its bytes: fusion (advice_fusion: only the activation
share of a matrix-reading kernel), tiling (advice_tiling), narrower storage and lower
precision (advice_precision), access efficiency, batching and int4 weights for
weight-streaming ops (advice_weights, priced by weight_traffic's weight share), and keeping
the working set in L2. This module picks which apply to a point. Pure: no I/O.
"""

from __future__ import annotations

from ..units import si
from .advice_core import Advice, Efficiency, _advice, _efficiency
from .advice_fold import fold_advice
from .advice_fusion import FUSION_MIN_GAIN, fusion_advice
from .advice_nontemporal import nontemporal_advice
from .advice_precision import _lower_precision
from .advice_sparse import index_advice, spmm_advice
from .advice_stencil import spatial_advice, temporal_advice
from .advice_threads import serial_reduction
from .advice_tiling import tiling_advice
from .advice_weights import weight_advice
from .analysis import Point
from .ceiling import Roof
from .kernel import Kernel
from .machine import Machine, words
from .opkind import (
    is_gemm,
    is_matrix,
    is_resample,
    is_sparse,
    is_stencil,
    is_streaming,
    name_words,
    streams_weights,
)
from .weight_traffic import weight_share, weight_streaming, weights_by_default

# L2 capacity assumed when the device's is unknown (H100: 50 MB).
L2_BYTES_DEFAULT = 50e6
# Batching and int4 advice for a GEMM that streams its weights is dropped below this
# predicted speed-up, the rule for advice that only part of the bytes feel (fusion's).
WEIGHT_MIN_GAIN = FUSION_MIN_GAIN
# Why a pool or resample kernel's accesses coalesce better channels-last: in NCHW the
# threads of neighbouring outputs read one channel's plane `stride` elements apart (each
# load of a 3x3/2 pool uses every second element it brings in; the cache serves the rest,
# at twice the transactions); in NHWC neighbouring threads take neighbouring channels of
# one pixel, contiguous bytes, and the tensor-core convs around it keep their own NHWC
# layout with no transpose kernels between (torch.channels_last).
NHWC_WHY = ("an NCHW pool or resample has neighbouring threads read one channel's plane a "
            "window stride apart; channels-last (NHWC, torch.channels_last) gives them "
            "neighbouring channels of one pixel, contiguous bytes, and needs no layout "
            "transposes beside the tensor-core convs")
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


def memory_advice(p: Point, e: Efficiency, roof: Roof, kind: str,
                  l2_bytes: float | None = None, machine: Machine | None = None,
                  kernel: Kernel | None = None) -> list[Advice]:
    """The memory-side levers that apply to a point bound by its bytes, in the order the
    report lists them: fusion (or a stencil's blocking), tiling, lower precision, access
    efficiency, an SpMM, batching and int4 weights, keeping the working set in L2."""
    out: list[Advice] = []
    matrix = is_matrix(kind)
    # An op under 1 FLOP/B with no matrix kind known streams (seed 004: y = x + 1 is 0.25,
    # "永远在斜线上"): nothing to reuse, so no tiling; fusion is its lever (review 12a #4).
    streaming = is_streaming(kind) or (not matrix and p.ai < 1)
    heavy = weight_streaming(kernel, kind, p.ai, p.precision)
    stencil = kernel is not None and is_stencil(kind)
    sparse = kernel is not None and is_sparse(kind)
    # a stencil's neighbouring pass is its next sweep: temporal blocking prices that fusion
    # An inference BatchNorm folds into the conv before it: the kernel goes (s28 R3 F11).
    # The fold replaces fusion's advice: it removes all the pass where fusion removes most
    # of its bytes, and its speed-up is the step's (a share of the time) where fusion's is
    # the kernel's, so ranked side by side the weaker lever would read as the best.
    fold = fold_advice(p, e, kernel)
    fused = (fusion_advice(p, e, kind, machine, kernel)
             if not stencil and fold is None else None)
    out.extend(a for a in (fused, fold) if a is not None)
    # streaming stores: a stencil's output grid, a triad's output array (review s18 r2 F5)
    nt = nontemporal_advice(p, e, kernel, machine, kind) if kernel is not None else None
    if nt is not None:
        out.append(nt)
    if stencil:
        out += [a for a in (spatial_advice(p, e, kernel), temporal_advice(p, e, kernel, roof))
                if a is not None]
    # Tiling where the shape's compulsory AI (or the weights' floor) is above the AI reached
    # (tiling_advice's cap), not for a GEMV or a decode step, which use each weight once, nor an
    # SpMV (its matrix likewise) or a stencil (its blocking advice above is its tiling), nor
    # a pool or upsample: its input is read and its output written once already (a
    # window's overlap is served from cache), so tiles cannot cut its bytes.
    no_reuse = streams_weights(kind) or sparse or stencil or is_resample(kind)
    tiling = tiling_advice(p, e, kind, machine, kernel) if not (streaming or no_reuse) else None
    if tiling is not None:
        out.append(tiling)
    low = _lower_precision(p, e, roof, kind, machine, kernel,
                           nominal=machine.nominal if machine is not None else None)
    if low is not None:
        out.append(low)
    access = (GATHER_ACCESS.get(machine.kind if machine else "", GATHER_ACCESS[""])
              if sparse else words(machine, "access"))
    serial = (serial_reduction(kind, kernel, e)
              if machine is not None and machine.kind == "cpu" else None)
    if serial is not None:   # its adds, not its loads, hold it (review r6 F5)
        access = serial
    elif is_resample(kind) and not _channels_last(kernel):
        access = (f"{access[0]}, in channels-last (NHWC) layout", f"{access[1]}; {NHWC_WHY}")
    eff = _efficiency(p, e, *access)
    if eff is not None:
        out.append(eff)
    spmm = spmm_advice(p, e, kernel) if sparse else None
    if spmm is not None:
        out.append(spmm)
    if sparse:   # the integer indices: blocked formats, narrower indices (review s18 r2 F8)
        out += index_advice(p, e, kernel)
    # a linear / GEMV kind whose weight share is known below WEIGHT_DOMINANT (a prefill
    # linear's activations) is no weight stream; one with no share known is taken for one
    if heavy or (weights_by_default(kind)
                 and weight_share(kernel, kind, p.ai, p.precision) is None):
        # a GEMM of a GEMV's shape or AI gets what `ai gemv` gets, saying why (12a #1); one
        # that streams only some of its bytes as weights gets what gains WEIGHT_MIN_GAIN
        out += [a for a in weight_advice(p, e, kind, heavy if is_gemm(kind) else "", kernel)
                if not is_gemm(kind) or a.speedup >= WEIGHT_MIN_GAIN]
    if machine is not None and machine.kind == "cpu":
        # No "block the working set into L2/L3" on a CPU: one call's working set that fits a
        # cache level is served from it already when the kernel repeats (sanity's
        # cache_resident finding: the DRAM floor does not bind), so the level's bandwidth
        # is no gain to offer (review 11a F-G: 6.11x "into L3" for a 2.4 MB triad at 100 %
        # of roof); one that fits none needs tiles, which the tiling advice prices.
        return out
    in_l2 = _keep_in_l2(p, e, roof, l2_bytes)
    return out + ([in_l2] if in_l2 is not None else [])


def _channels_last(kernel: Kernel | None) -> bool:
    """Whether a pool or resample kernel already runs channels-last: its name says NHWC
    (ATen's upsample_nearest2d_nhwc_out_frame, TF's MaxPoolForwardNHWC) or its meta
    memory_format is channels_last."""
    if kernel is None:
        return False
    full = kernel.meta.get("full_name")
    names = (kernel.name, full if isinstance(full, str) else "")
    return (str(kernel.meta.get("memory_format", "")).lower() == "channels_last"
            or any(w in ("nhwc", "ndhwc") for n in names for w in name_words(n)))


def _keep_in_l2(p: Point, e: Efficiency, roof: Roof,
                l2_bytes: float | None) -> Advice | None:
    """Serve one call's working set from L2 where it fits there (`l2_bytes`, else
    L2_BYTES_DEFAULT) and the roof's L2 is faster than the point's level; None otherwise."""
    per_call = p.bytes / p.calls
    if p.level == "L2" or not per_call <= (l2_bytes or L2_BYTES_DEFAULT):
        return None
    l2 = roof.find_memory("L2")
    if l2 is None or not l2.value > p.bytes_per_s:
        return None
    return _advice(
        p, e, "keep the working set in L2 (layout, kernel order, persistence)",
        f"served from L2 at {si(l2.value, 'B/s')} instead of {p.level} "
        f"{si(p.bytes_per_s, 'B/s')}", "along slope", flop=p.flop, nbytes=p.bytes,
        peak=p.peak_flop_per_s, bw=l2.value,
        assumption=f"the working set of one call ({si(per_call, 'B')}) fits in L2 "
                   f"({si(l2_bytes or L2_BYTES_DEFAULT, 'B')}"
                   f"{'' if l2_bytes else ', assumed: the largest L2s today'}) "
                   f"and is reused from there")
