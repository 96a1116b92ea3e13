"""Advice for a structured-grid stencil (review 16a E): a Jacobi-like sweep reads each grid
element once and writes one when its neighbouring planes stay in cache (the layer
condition), so its levers are non-temporal stores (no write-allocate read; one rule with a
STREAM triad's, advice_nontemporal), spatial blocking (until the layer condition holds)
and temporal blocking (several sweeps per pass through memory), not generic tiling. Pure: no I/O.
"""

from __future__ import annotations

from ..units import fmt_ai, si
from .advice_core import Advice, Efficiency, _advice
from .advice_nontemporal import shape_of
from .analysis import Point
from .element_dtype import element_bytes
from .kernel import Kernel

# Sweeps blocked per pass through memory in the temporal-blocking advice: wavefront and
# diamond schemes keep a few sweeps in flight per cache-sized block; 4 is a modest choice
# whose blocks (t + 2r planes per thread) still fit a per-core L2 at moderate grid widths.
TEMPORAL_SWEEPS = 4
# Bytes above the compulsory count by more than this are taken for a broken layer condition.
LAYER_SLACK = 1.05


def spatial_advice(p: Point, e: Efficiency, kernel: Kernel) -> Advice | None:
    """Spatial blocking until the layer condition holds: where meta shape gives the points
    updated (updated_points) and the DRAM bytes per point exceed one read, one write and its
    write-allocate read (3 x the element size) by LAYER_SLACK, the excess is neighbouring
    planes re-read from memory, which blocking the inner dimensions removes."""
    pts = shape_of(kernel).get("updated_points")
    size = element_bytes(kernel, p.precision)
    if p.level != "DRAM" or not isinstance(pts, (int, float)) or pts <= 0 or not size:
        return None
    need = 3 * size * pts
    if p.bytes <= need * LAYER_SLACK:
        return None
    layer = shape_of(kernel).get("layer_condition_bytes")
    fits = (f" (here {si(layer, 'B')} per thread)" if isinstance(layer, (int, float))
            and layer > 0 else "")
    return _advice(
        p, e, "block in space until the layer condition holds (L2/L3)",
        f"{p.bytes / pts:.3g} B per point move from DRAM; a sweep needs {3 * size:g} (one "
        f"read, one write and its write-allocate read): the rest are neighbouring planes "
        f"read again because they left the cache. The layer condition: the 2r + 1 planes a "
        f"point's neighbours span{fits} fit in about half the L2 or L3 per thread; blocking "
        f"the inner dimensions makes them fit", "along slope", flop=p.flop, nbytes=need,
        peak=p.peak_flop_per_s, bw=p.bytes_per_s,
        assumption=f"{pts:.4g} points updated (meta shape updated_points); blocked, each "
                   f"element comes from DRAM once per sweep; FLOP unchanged")


def temporal_advice(p: Point, e: Efficiency, kernel: Kernel) -> Advice | None:
    """Temporal blocking (wavefront or diamond tiling): t sweeps per pass through memory
    divide the bytes by t (AI x t), t = TEMPORAL_SWEEPS or the sweeps the kernel has (meta
    shape sweeps, else its calls) when fewer, capped by the roof's ridge as every
    prediction is (max(FLOP / P, bytes / B))."""
    sweeps = shape_of(kernel).get("sweeps")
    have = int(sweeps) if isinstance(sweeps, (int, float)) and sweeps >= 1 else kernel.calls
    t = min(TEMPORAL_SWEEPS, have) if have >= 2 else TEMPORAL_SWEEPS
    known = (f"it runs {have} sweeps" if have >= 2 else
             "it runs several sweeps in a row (its record has 1 call: assumed)")
    return _advice(
        p, e, f"block {t} sweeps in time (wavefront or diamond tiling)",
        f"each grid element comes from {p.level} once per {t} sweeps instead of every "
        f"sweep (fusing a sweep with the next is the 2-sweep case): AI {fmt_ai(p.ai)} -> "
        f"{fmt_ai(p.ai * t)}", "along slope", flop=p.flop, nbytes=p.bytes / t,
        peak=p.peak_flop_per_s, bw=p.bytes_per_s,
        assumption=f"an upper bound: {known}, and each thread's block ({t} sweeps of "
                   f"planes, or a diamond) fits in L2/L3; the halo's redundant work and the "
                   f"wavefront's synchronisation are left out; FLOP unchanged")
