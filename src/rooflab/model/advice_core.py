"""The shared pieces of the advice rules: what a piece of advice is, how a kernel's time
splits into launch floor and work, and how a changed kernel's time is predicted.

    time = calls x overhead_s  +  max(FLOP / P, bytes / B) / efficiency

where `efficiency` is the fraction of the roof the kernel's work reaches now (its work
floor over its measured time minus the launch floor) unless the advice is about efficiency
itself. The speed-up is the old time over the predicted time. Pure: no I/O. The rules are
in advice_memory, advice_precision and advice_compute; model/advice.py is the public face.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..units import fmt_pct, fmt_seconds
from .analysis import Point
from .roofline import time_floor
from .sanity_ceilings import applicable_launch_s

# A well-tuned kernel reaches 70-80 % of the (measured) roof (seed 000 §6.4, tip four).
TARGET_EFFICIENCY = 0.8
# Below this share of the measured time the launch floor is negligible, and the work's
# efficiency is the point's percent of roof (diagnose's "negligible" launch split).
NEGLIGIBLE_LAUNCH = 0.01


@dataclass(frozen=True)
class Advice:
    """One thing to try, what it shrinks, and what the model predicts it gives."""

    kernel: str
    action: str           # short imperative: "fuse with neighbouring passes"
    detail: str           # why, in numbers
    shrinks: str          # which distance: "below roof" | "along slope" | "roof"
    new_ai: float
    new_flop_per_s: float
    new_seconds: float
    speedup: float
    assumption: str
    # A whole step's lever (advice.gap_range): (gap scaled, gap held) times, fast end
    # first; new_seconds and speedup are the held (slow) end. None for one kernel.
    seconds_range: tuple[float, float] | None = None


@dataclass(frozen=True)
class Efficiency:
    """How a kernel's time splits into launch floor and work, and how well the work runs."""

    seconds: float        # measured (or, without a time, the floor)
    launch_s: float       # calls x overhead_s, capped at the measured time
    work_s: float         # the rest
    efficiency: float     # work floor / work time, at most 1
    # No measured time: `seconds` is the floor "with launches", max(work floor, calls x
    # launch floor), as llm/whatif/choose define it (launches overlap the work of the
    # kernels before them), and a prediction is max(new work, launches) too.
    untimed: bool = False


def pct(fraction: float) -> str:
    """A fraction as a percentage, rounded as the report's tables and chart round a
    point's percent of roof (units.fmt_pct): whole percents from 1 %, two
    figures under it so a small one is not '0%' (0.0012 -> '0.12%', 0.494999 -> '49%')."""
    return fmt_pct(100 * fraction)


def work_pct(p: Point, e: Efficiency) -> str:
    """The work's efficiency in words. With no launch floor in the time, or a negligible
    one, it is the point's percent of roof, the figure the report's table prints: the
    demo's triad at 49.4999 % of roof with 0.43 us of its 9 ms taken out as dispatch
    floor works at 49.5024 %, and '50%' beside a table's '49 %' read as two numbers."""
    if p.percent_of_roof is not None and e.launch_s < NEGLIGIBLE_LAUNCH * e.seconds:
        return pct(min(p.percent_of_roof / 100, e.efficiency))
    return pct(e.efficiency)


def efficiency_of(p: Point) -> Efficiency:
    """The launch floor that applies to the point's time (sanity_ceilings.applicable_launch_s: none
    when the time is below calls x the floor), and the efficiency of the rest."""
    launch = applicable_launch_s(p)
    if p.seconds is None:
        return Efficiency(max(p.floor_s, launch), launch, p.floor_s, 1.0, untimed=True)
    launch = min(launch, p.seconds)
    work = p.seconds - launch
    eff = min(1.0, p.floor_s / work) if work > 0 and p.floor_s > 0 else 1.0
    return Efficiency(p.seconds, launch, work, eff)


def predict_seconds(flop: float, nbytes: float, peak: float, bw: float, launch_s: float,
                    efficiency: float, untimed: bool = False) -> float:
    """calls x overhead + max(FLOP / P, bytes / B) / efficiency (see the module docstring);
    for an untimed kernel the larger of the two ("with launches", Efficiency.untimed)."""
    return _with_launch(time_floor(flop, nbytes, peak, bw) / efficiency, launch_s, untimed)


def _with_launch(work: float, launch_s: float, untimed: bool) -> float:
    """The predicted time of `work` seconds of work after `launch_s` of launches: their
    sum, or for an untimed kernel the larger (predict_seconds)."""
    return max(work, launch_s) if untimed else launch_s + work


def _advice(p: Point, e: Efficiency, action: str, detail: str, shrinks: str, *, flop: float,
            nbytes: float, peak: float, bw: float, launch_s: float | None = None,
            efficiency: float | None = None, assumption: str) -> Advice:
    launch = e.launch_s if launch_s is None else launch_s
    eff = e.efficiency if efficiency is None else efficiency
    work = time_floor(flop, nbytes, peak, bw) / eff
    t = _with_launch(work, launch, e.untimed)
    assumption = _at_launch_floor(e, work, launch) + assumption
    return Advice(kernel=p.kernel, action=action, detail=detail, shrinks=shrinks,
                  new_ai=flop / nbytes if nbytes > 0 else float("inf"),
                  new_flop_per_s=flop / t if t > 0 else 0.0, new_seconds=t,
                  speedup=e.seconds / t if t > 0 else 1.0, assumption=assumption)


def _at_launch_floor(e: Efficiency, work: float, launch: float) -> str:
    """The words for a prediction that lands on the launch floor (an untimed kernel's
    time is max(work, launches)): the speed-up is then the launch floor's, not the work's,
    and whatif's work-floor table gives the other number (review 15v F-d: int4 on matmul
    16x4096x4096 on an H100 is 2.02x here, 3.91x on the work floor). '' otherwise."""
    if not (e.untimed and launch > 0 and work < launch and work > 0 and e.work_s > 0):
        return ""
    return (f"the kernel is launch-bound after it, at the {fmt_seconds(launch, 3)} launch "
            f"floor; the work "
            f"floor shrinks {e.work_s / work:.3g}x (CUDA graphs or fused kernels keep "
            f"that); ")


def _efficiency(p: Point, e: Efficiency, action: str, why: str) -> Advice | None:
    if e.efficiency >= TARGET_EFFICIENCY:
        return None
    return _advice(p, e, action, f"the work runs at {work_pct(p, e)} of the roof at its AI; "
                   + why, "below roof", flop=p.flop, nbytes=p.bytes, peak=p.peak_flop_per_s,
                   bw=p.bytes_per_s, efficiency=TARGET_EFFICIENCY,
                   assumption=f"the same FLOP and bytes reach {TARGET_EFFICIENCY:.0%} of the "
                              f"roof (what a well-tuned kernel reaches, seed 000 §6.4)")
