"""Advice for a point that moves its bytes faster than its level's roof allows: the
counted bytes are not that level's traffic (hand-counted, algorithmic bytes the caches
served: the classic sign of reuse). Its AI levers (blocking, fusion, a narrower type)
would be priced as if the counted bytes were real DRAM traffic, so they wait until the
level's bytes are measured; what it should do first is take them from the profiler
(review s21 r3 F4: 1 GB counted in 200 us on an A100, 2.45x its DRAM roof, was told
"block 4 sweeps in time: 1.57x"; seed 000 §6.1 问题二: data that hits L2 is judged against
the L2 roof). Pure: no I/O.
"""

from __future__ import annotations

from ..units import fmt_seconds, fmt_times, si
from .advice_core import Advice, Efficiency
from .analysis import Point
from .sanity_finding import ABOVE_TOLERANCE

# The words of the lever, so a report or test finds it.
MEASURE_BYTES = "measure the {level} bytes (cache reuse: the counted bytes are not {level} traffic)"


def above_slope(p: Point) -> bool:
    """Whether a timed point moves more bytes/s than its level's roof, past the tolerance."""
    return (p.seconds is not None and p.seconds > 0 and p.bytes > 0
            and p.bytes / p.seconds > p.bytes_per_s * (1 + ABOVE_TOLERANCE))


def measure_bytes_advice(p: Point, e: Efficiency) -> Advice:
    """Measure the level's bytes first: no speed-up is predicted (module doc)."""
    rate = p.bytes / p.seconds
    source = ("dram__bytes.sum from Nsight Compute (or the kernel's L2 bytes, judged "
              "against the L2 roof)" if p.level == "DRAM" else
              f"the profiler's {p.level} counters")
    detail = (f"{si(p.bytes, 'B')} in {fmt_seconds(p.seconds)} is {si(rate, 'B/s')}, "
              f"{fmt_times(rate / p.bytes_per_s)} the {p.level} roof {si(p.bytes_per_s, 'B/s')}: "
              f"faster levels served part of the counted bytes; take {source}")
    return Advice(
        kernel=p.kernel, action=MEASURE_BYTES.format(level=p.level), detail=detail,
        shrinks="along slope", new_ai=p.ai, new_flop_per_s=p.achieved_flop_per_s or 0.0,
        new_seconds=e.seconds, speedup=1.0,
        assumption=("no speed-up is predicted: the AI levers (blocking, fusion, a narrower "
                    "type) cut bytes the caches already serve, so they are priced only once "
                    f"the {p.level} bytes are measured; {detail}"))


def hold_above_slope(p: Point, e: Efficiency, items: list[Advice]) -> list[Advice]:
    """`items` with the measure-the-bytes line first and the along-slope levers dropped
    for a point above its level's roof; `items` unchanged otherwise."""
    if not (p.memory_bound_side and above_slope(p)):
        return items
    return [measure_bytes_advice(p, e)] + [a for a in items if a.shrinks != "along slope"]
