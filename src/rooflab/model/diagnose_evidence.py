"""Why a kernel is in its bound class, in numbers (diagnose's `evidence`): the achieved and
attainable rates, its % of roof, the launch floor against the measured time, the ridge
it sits left or right of, and a note where its class hangs on the 10 % latency line.
A level's bound as the tables print it (level_bound). Split from diagnose.py, which
imports these names back. Pure: no I/O.
"""

from __future__ import annotations

from ..sides import ai_apart, factor_text, pct_text
from ..units import fmt_ai, fmt_fraction, fmt_rate, fmt_seconds, si
from .analysis import Analysis, Point, primary_points
from .kernel import Kernel
from .machine import Machine
from .placement import LATENCY_FRACTION, NOT_BINDING, OVERHEAD_SHARE, binds_elsewhere, kernel_key


def level_bound(p: Point, binding: Point | None) -> str:
    """A point's bound as the tables print it. A kernel's bound is its binding point's
    (the level with the lowest roof: Analysis.primary); another level's point sits under
    a higher roof, so its % of roof is low because that level does not bind, not because
    of latency (review 16a H: a stencil at 65 % of DRAM had its L1 point "latency" at
    4.7 %). Such a point reads "not binding (DRAM binds)"; memory, compute and overhead
    are what they say at every level and stay (placement.binds_elsewhere: the rule, which
    the JSON's bound and binding_level follow too)."""
    other = binds_elsewhere(p, binding)
    return p.bound if other is None else f"{NOT_BINDING} ({other} binds)"


def level_bounds(analysis: Analysis) -> tuple[str, ...]:
    """level_bound of every point of the analysis, in its order."""
    primary = primary_points(analysis.points)
    return tuple(level_bound(p, primary.get(kernel_key(p))) for p in analysis.points)


def evidence(p: Point, machine: Machine | None = None) -> str:
    """Why this bound class, in numbers."""
    floor = "dispatch floor" if machine is not None and machine.kind == "cpu" else "launch floor"
    # rounded so that it stays on its side of the 10 % line (sides.py: 9.996 %, not 10 %)
    pc = pct_text(p.percent_of_roof)
    ach = fmt_rate(p.achieved_flop_per_s, p.precision)
    att = fmt_rate(p.attainable_flop_per_s, p.precision)
    if p.bound == "overhead" and p.seconds is None:
        return (f"{p.calls} call(s) x {fmt_seconds((p.overhead_floor_s or 0) / p.calls)} "
                f"{floor} = {fmt_seconds(p.overhead_floor_s)} is more than the work floor "
                f"{fmt_seconds(p.floor_s)} (max of FLOP/P, bytes/B): untimed, it takes at "
                f"least the larger (with launches), so the launches bound it")
    if p.bound == "overhead":
        return (f"{p.calls} call(s) x {fmt_seconds((p.overhead_floor_s or 0) / p.calls)} "
                f"{floor} = {fmt_seconds(p.overhead_floor_s)}, >= "
                f"{fmt_fraction(OVERHEAD_SHARE)} of the measured {fmt_seconds(p.seconds)} and more "
                f"than the work floor {fmt_seconds(p.floor_s)} (max of FLOP/P, bytes/B)")
    if p.bound == "latency" and p.grid:
        # the grid decides the class, not the 10 % line (review s21 r3 F6)
        return (f"{p.grid} (fewer blocks than half the SMs): the SMs "
                f"without a block add no bandwidth or FLOP/s, so no roof holds it "
                f"(achieved {ach} = {pc} of the {att} attainable at AI {fmt_ai(p.ai)}): "
                f"too little parallelism")
    if p.bound == "latency":
        if p.overhead_floor_s is None:
            known = f"no {floor} is known for this roof, so launches are not ruled out"
        elif p.seconds is not None and p.seconds < p.overhead_floor_s:
            known = (f"calls x the {floor} ({fmt_seconds(p.overhead_floor_s)}) is more than "
                     f"the measured time, so it is not in it (see the sanity findings)")
        else:
            known = f"the {floor} {fmt_seconds(p.overhead_floor_s)} does not explain it"
        if p.flop <= 0 and p.seconds:
            # no FLOP/s to compare: the bandwidth it reaches is its fraction of the roof
            bps = p.bytes / p.seconds
            return (f"no FLOP (AI 0): moves only {si(bps, 'B/s')} = "
                    f"{pct_text(100 * bps / p.bytes_per_s)} (< {fmt_fraction(LATENCY_FRACTION)}) "
                    f"of {p.level} "
                    f"bandwidth {si(p.bytes_per_s, 'B/s')}, and {known}: latency, "
                    f"synchronisation, too little parallelism or work that is no FLOP "
                    f"(comparisons, index arithmetic)")
        return (f"achieved {ach} is only {pc} (< {fmt_fraction(LATENCY_FRACTION)}) of the {att} "
                f"attainable at AI {fmt_ai(p.ai)}, and {known}: latency, "
                f"synchronisation or too little parallelism{near_latency_line(p)}")
    if p.memory_bound_side:
        moved = ""
        if p.seconds:
            bps = p.bytes / p.seconds
            moved = (f"; moves {si(bps, 'B/s')} = {pct_text(100 * bps / p.bytes_per_s)} of "
                     f"{p.level} bandwidth")
        if p.ai <= 0:   # no FLOP/s to hold or reach: the bandwidth is its one number
            return (f"AI 0 (no FLOP: pure data movement): held by {p.level} at "
                    f"{si(p.bytes_per_s, 'B/s')}{moved}{near_latency_line(p)}")
        where = f"{factor_text(p.ridge / p.ai)} left of it"
        ai, ridge = ai_apart(p.ai, p.ridge)   # 'AI 9.996 < ridge 10', not 'AI 10 < ridge 10'
        return (f"AI {ai} FLOP/B < ridge {ridge} ({where}): "
                f"held by {p.level} at {si(p.bytes_per_s, 'B/s')}, attainable {att}; "
                f"achieved {ach} = {pc} of roof{moved}{near_latency_line(p)}")
    ai, ridge = ai_apart(p.ai, p.ridge)
    return (f"AI {ai} FLOP/B >= ridge {ridge}: held by {p.binding} at "
            f"{fmt_rate(p.peak_flop_per_s, p.precision)}; achieved {ach} = {pc} of roof"
            f"{near_latency_line(p)}")


# within this factor of the latency line a point's class hangs on the roof's exact height
NEAR_LINE = 1.25


def near_latency_line(p: Point) -> str:
    """'; near the 10 % line ...' for a point whose % of roof is within NEAR_LINE of the
    latency line: the class then turns on the roof, not the kernel (seed 000's softmax reads
    10 %, memory-bound, on the seed's roof and 9 %, latency-bound, on an A100's 1.13x
    higher one; review r2 F6). '' elsewhere, and for a point with no measured time."""
    pct_ = p.percent_of_roof
    if pct_ is None or p.bound not in ("latency", "memory", "compute"):
        return ""
    frac = pct_ / 100
    if not LATENCY_FRACTION / NEAR_LINE <= frac < LATENCY_FRACTION * NEAR_LINE:
        return ""
    return (f"; near the {fmt_fraction(LATENCY_FRACTION)} line that parts latency-bound from "
            f"memory- and compute-bound: a roof {NEAR_LINE}x higher or lower moves it across, so "
            f"read both causes")


def _latency_evidence(p: Point, machine: Machine | None, kernel: Kernel) -> str:
    """evidence(), and for a latency-bound kernel what the profile recorded that tells
    which it is (a grid smaller than the SMs, low occupancy and its limiter, pipes)."""
    from .advice_compute import latency_detail

    said = evidence(p, machine)
    if p.grid:   # evidence() cited the grid already: the rest of what the profile says
        from dataclasses import replace

        kernel = replace(kernel, meta={k: v for k, v in kernel.meta.items() if k != "grid"})
    detail = latency_detail(kernel) if p.bound == "latency" else ""
    return f"{said}; the profile says: {detail}" if detail else said
