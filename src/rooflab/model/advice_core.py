"""The shared pieces of the advice rules: what a piece of advice is, how a kernel's time
splits into launch floor and work, and how a changed kernel's time is predicted.

    time = calls x overhead_s  +  max(FLOP / P, bytes / B) / efficiency

where `efficiency` is the fraction of the roof the kernel's work reaches now (its work
floor over its measured time minus the launch floor) unless the advice is about efficiency
itself. The speed-up is the old time over the predicted time. Pure: no I/O. The rules are
in advice_memory, advice_precision and advice_compute; model/advice.py is the public face.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..sides import pct_text
from ..units import fmt_fraction, fmt_seconds, fmt_times
from .analysis import Point
from .roofline import time_floor
from .sanity_ceilings import applicable_launch_s
from .sanity_finding import ABOVE_TOLERANCE

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
    # The work runs faster than the roof allows (a wrong ceiling or counts): its levers are
    # priced at TARGET_EFFICIENCY of the new ceiling, not the 100 % the clamp gives
    # (above_roof_priced; review s21 r3 F8)
    above: bool = False


def pct(fraction: float) -> str:
    """A fraction as a percentage, rounded as the report's tables and chart round a
    point's percent of roof (units.fmt_pct): whole percents from 1 %, two
    figures under it so a small one is not '0 %' (0.0012 -> '0.12 %', 0.494999 -> '49 %'),
    and the digits that keep it off a class line (sides.pct_text: 0.09996 -> '9.996 %')."""
    return pct_text(100 * fraction)


def work_pct(p: Point, e: Efficiency) -> str:
    """The work's efficiency in words. With no launch floor in the time, or a negligible
    one, it is the point's percent of roof, the figure the report's table prints: the
    demo's triad at 49.4999 % of roof with 0.43 us of its 9 ms taken out as dispatch
    floor works at 49.5024 %, and '50%' beside a table's '49 %' read as two numbers."""
    if e.above:
        return f"{pct(e.efficiency)} (priced so: it runs above its roof now)"
    if p.percent_of_roof is not None and e.launch_s < NEGLIGIBLE_LAUNCH * e.seconds:
        return pct(min(p.percent_of_roof / 100, e.efficiency))
    return pct(e.efficiency)


def keeps_words(p: Point, e: Efficiency) -> str:
    """What a lever assumes of the work's efficiency, in words: it keeps its current one,
    or, above its roof (above_roof_priced), what it is priced at instead: "keeps its
    current efficiency (80% (priced so: ...) of roof)" was said of a conv at 405 % of its
    roof (review s21 x2 F7)."""
    if not e.above:
        return f"the kernel keeps its current efficiency ({work_pct(p, e)} of roof)"
    now = p.floor_s / e.work_s if e.work_s > 0 else 1.0
    return (f"it runs above its roof now ({pct(now)} of it: a ceiling too low for it or "
            f"counts too high), so it is priced at {pct(e.efficiency)} of the new roof, "
            f"not at its current share")


def efficiency_of(p: Point) -> Efficiency:
    """The launch floor that applies to the point's time (sanity_ceilings.applicable_launch_s: none
    when the time is below calls x the floor or GPU-side), at most the time above the work
    floor, and the efficiency of the rest."""
    launch = applicable_launch_s(p)
    if p.seconds is None:
        return Efficiency(max(p.floor_s, launch), launch, p.floor_s, 1.0, untimed=True)
    # the launches take at most what the work floor leaves of the time: the work never
    # runs faster than the roof (review s21 r3 F1: a 12.5 us GEMV with a 10.0 us floor
    # had 5 us taken out as launches and its work called 100 % of the roof, clamped). A
    # time under its floor keeps them: it beats its roof anyway, and retime_launch's
    # held_work_ratio (what a what-if keeps) is of its work net of the launches (review r8 F1)
    launch = min(launch, p.seconds - p.floor_s) if p.seconds >= p.floor_s else launch
    launch = min(launch, p.seconds)
    work = p.seconds - launch
    eff = min(1.0, p.floor_s / work) if work > 0 and p.floor_s > 0 else 1.0
    return Efficiency(p.seconds, launch, work, eff)


def above_roof_priced(p: Point, e: Efficiency) -> Efficiency:
    """A timed kernel above its roof (work floor / work time > 1, clamped to 1 by
    efficiency_of) priced at TARGET_EFFICIENCY past the tolerance (1 + ABOVE_TOLERANCE): a
    clamped 100 % made a fp32 conv at 205 % of the fp32 roof (it ran on TF32 tensor cores)
    "use tensor cores: 3.89x", reaching the full TF32 peak (review s21 r3 F8). Within the
    tolerance the price slides from 100 % to it, so no speed-up jumps at the line (review
    s21 x2 F7: the same stencil read fp16 3.84x at 104 % of roof, 3.01x at 106 %). `e`
    unchanged at or under its roof."""
    if e.untimed or e.work_s <= 0 or p.floor_s <= e.work_s:
        return e
    over = min(1.0, (p.floor_s / e.work_s - 1) / ABOVE_TOLERANCE)
    return replace(e, efficiency=1 - (1 - TARGET_EFFICIENCY) * over, above=True)


def _with_launch(work: float, launch_s: float, untimed: bool) -> float:
    """The predicted time of `work` seconds of work after `launch_s` of launches: their
    sum, calls x overhead + max(FLOP / P, bytes / B) / efficiency (the module docstring),
    or for an untimed kernel the larger ("with launches", Efficiency.untimed)."""
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
            f"floor shrinks {fmt_times(e.work_s / work)} (CUDA graphs or fused kernels keep "
            f"that); ")


def _efficiency(p: Point, e: Efficiency, action: str, why: str,
                mix: float | None = None) -> Advice | None:
    """The "tune the kernel" lever to TARGET_EFFICIENCY of the roof; to the no-FMA ceiling
    of its instruction mix where that is lower (`mix`, model/fma_ceiling.py: GPP's 46 % FMA
    share tops out at 73 %, so "raise occupancy" cannot give the 80 % target's 1.46x;
    review s21 x3 F3)."""
    target = TARGET_EFFICIENCY if mix is None else min(TARGET_EFFICIENCY, mix)
    if e.efficiency >= target:
        return None
    held = (f"the same FLOP and bytes reach {fmt_fraction(target)} of the roof (the no-FMA "
            f"ceiling of its add/mul/fma mix, under the {fmt_fraction(TARGET_EFFICIENCY)} a "
            f"well-tuned kernel reaches)" if target < TARGET_EFFICIENCY else
            f"the same FLOP and bytes reach {fmt_fraction(TARGET_EFFICIENCY)} of the "
            f"roof (what a well-tuned kernel reaches, seed 000 §6.4)")
    return _advice(p, e, action, f"the work runs at {work_pct(p, e)} of the roof at its AI; "
                   + why, "below roof", flop=p.flop, nbytes=p.bytes, peak=p.peak_flop_per_s,
                   bw=p.bytes_per_s, efficiency=target, assumption=held)
