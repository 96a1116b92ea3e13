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
from .ceiling import Roof
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


def _blocked_bytes(p: Point, kernel: Kernel, roof: Roof | None, t: int) -> float | None:
    """The binding level's bytes that price t sweeps blocked in time, where the point is
    held by an on-chip level (L1, L2): blocking cuts only the off-chip (DRAM) bytes by t;
    every sweep still loads its neighbours through the caches, so those bytes stay. The
    kernel is placed again at every level it has bytes for and the slowest level's time
    is returned as bytes at the point's bandwidth (review s21 r3 F5: an L1-bound stencil
    at 79 % of 19 TB/s was told "block 4 sweeps: 4.00x" with its L1 bytes divided by 4).
    The DRAM point of a kernel with on-chip bytes too is placed again the same way: its
    L1 bytes may bind once DRAM's fall. None where DRAM is the only level, there are no
    DRAM bytes, or a level has no ceiling on the roof."""
    if roof is None or OFF_CHIP not in kernel.bytes or len(kernel.bytes) < 2:
        return None
    slowest = 0.0
    for level, nbytes in kernel.bytes.items():
        c = roof.find_memory(level)
        # the point's own level at the ceiling it was judged by (a CPU's real-traffic DRAM)
        bw = p.bytes_per_s if level == p.level else (c.value if c is not None else 0.0)
        if bw <= 0:
            return None
        slowest = max(slowest, (nbytes / t if level == OFF_CHIP else nbytes) / bw)
    return slowest * p.bytes_per_s


# The level temporal blocking keeps a grid out of: sweeps share one trip through DRAM.
OFF_CHIP = "DRAM"


def temporal_advice(p: Point, e: Efficiency, kernel: Kernel,
                    roof: Roof | None = None) -> Advice | None:
    """Temporal blocking (wavefront or diamond tiling): t sweeps per pass through memory
    divide the DRAM bytes by t (AI x t), t = TEMPORAL_SWEEPS or the sweeps the kernel has
    (meta shape sweeps, else its calls) when fewer, capped by the roof's ridge as every
    prediction is (max(FLOP / P, bytes / B)); a point held by an on-chip level keeps its
    bytes there (_blocked_bytes)."""
    sweeps = shape_of(kernel).get("sweeps")
    have = int(sweeps) if isinstance(sweeps, (int, float)) and sweeps >= 1 else kernel.calls
    t = min(TEMPORAL_SWEEPS, have) if have >= 2 else TEMPORAL_SWEEPS
    known = (f"it runs {have} sweeps" if have >= 2 else
             "it runs several sweeps in a row (its record has 1 call: assumed)")
    blocked = _blocked_bytes(p, kernel, roof, t)
    if blocked is None:
        nbytes, held = p.bytes / t, ""
    else:
        nbytes = blocked
        held = (f"; its {p.level} bytes stay (every sweep still loads its neighbours "
                f"through {p.level}), so it is placed again at every level: DRAM "
                f"{si(kernel.bytes[OFF_CHIP], 'B')} -> {si(kernel.bytes[OFF_CHIP] / t, 'B')}")
    level = OFF_CHIP if blocked is not None else p.level
    if blocked is not None and p.level == OFF_CHIP:
        held = ("; the on-chip bytes stay (every sweep still loads its neighbours through "
                "the caches), so it is placed again at every level")
    return _advice(
        p, e, f"block {t} sweeps in time (wavefront or diamond tiling)",
        f"each grid element comes from {level} once per {t} sweeps instead of every "
        f"sweep (fusing a sweep with the next is the 2-sweep case): AI {fmt_ai(p.ai)} -> "
        f"{fmt_ai(p.flop / nbytes if nbytes > 0 else p.ai * t)}{held}", "along slope",
        flop=p.flop, nbytes=nbytes, peak=p.peak_flop_per_s, bw=p.bytes_per_s,
        assumption=f"an upper bound: {known}, and each thread's block ({t} sweeps of "
                   f"planes, or a diamond) fits on chip (shared memory or L2 on a GPU, "
                   f"L2/L3 on a CPU); the halo's redundant work and the "
                   f"wavefront's synchronisation are left out; FLOP unchanged")
