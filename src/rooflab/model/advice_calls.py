"""The 'merge the calls' lever: a kernel timed as many small calls (Kernel.calls > 1), each
as short as a few empty calls and each with less work than one call costs, is bound by its
per-call cost, not by latency, its bytes or its FLOP. Merging the calls into one larger
call (one op on the whole block; a CUDA graph on a GPU) is its lever, and a lever that
shrinks only the work (lower precision, fusion) keeps the per-call cost. Pure: no I/O.

Review r5 F3: 1000 x np.add on 64-element rows (633 us, 1.5 kB a call, calls=1000) was
called latency-bound, told "Batching does not close it" and offered fuse / fp32 at 1.56x;
one np.add on the 1000 x 64 block took 16.9 us (37.5x), and fp32 gave 1.01x.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from ..sides import factor_text
from ..units import fmt_seconds, fmt_times
from .advice_core import Advice, Efficiency
from .analysis import Point
from .ceiling import Roof
from .kernel import Kernel
from .machine import Machine
from .sanity_ceilings import applicable_launch_s

# A call this many times the per-call floor, whose work at the roof is under one floor, is
# mostly per-call cost: at least 90 % of the call is not its work even at the floor's
# price, and the rest is the interpreter's slicing and argument checks (a Python-level
# np.add(x[r], y[r], out=o[r]) takes ~630 ns beside a 349 ns 1-element ufunc and a 177 ns
# numba no-op, review r5) that merging the calls removes too.
MANY_CALLS_FACTOR = 10.0
# The profile's per-call floors (probe extras.overhead) by the kind of call they time.
NUMBA_FLOOR = "numba empty call"


@dataclass(frozen=True)
class CallCost:
    """A many-calls kernel's per-call floor, where it came from, and its time per call."""

    floor_s: float
    source: str
    per_call_s: float


def call_floor(roof: Roof, machine: Machine | None,
               kernel: Kernel) -> tuple[float, str] | None:
    """The per-call floor that matches the kernel's calls: the profile's floors (Machine's
    call_floors, from the probe's extras.overhead, where the machine carries them), the
    numba no-op's for a numba kernel (meta threads_from says numba), else the largest (a
    numpy ufunc's 349 ns is twice the numba no-op's 177 ns the roof keeps as its floor);
    else the roof's own floor; None without one."""
    floors: Mapping[str, float] = getattr(machine, "call_floors", None) or {}
    known = {name: float(s) for name, s in floors.items()
             if isinstance(s, (int, float)) and s > 0}
    numba = str(kernel.meta.get("threads_from", "")).startswith("numba")
    if numba and NUMBA_FLOOR in known:
        return known[NUMBA_FLOOR], f"the profile's {NUMBA_FLOOR}"
    if known:
        name = max(known, key=lambda n: known[n])
        return known[name], f"the profile's {name}"
    if roof.overhead_s:
        # a roof without a source said "the roof's dispatch floor (the roof's)"
        src = f" ({roof.overhead_source})" if roof.overhead_source else ""
        return float(roof.overhead_s), f"the roof's dispatch floor{src}"
    return None


def many_calls(p: Point, roof: Roof, machine: Machine | None,
               kernel: Kernel | None) -> CallCost | None:
    """The kernel's per-call cost where its time is mostly per-call cost (module doc):
    more than one call, timed, each call between one and MANY_CALLS_FACTOR per-call floors
    and its work at the roof under one floor; None otherwise (or already overhead-bound)."""
    if kernel is None or p.calls <= 1 or not p.seconds or p.bound == "overhead":
        return None
    if p.gpu_side:
        # a profiler's GPU-side launches hold no per-call CPU cost (review s21 r3 F1)
        return None
    found = call_floor(roof, machine, kernel)
    if found is None:
        return None
    floor, source = found
    per_call = p.seconds / p.calls
    # a time under calls x the floor does not hold the floor (a profiler's GPU-side time,
    # overlapping launches: sanity's below_launch_floor), so it is no per-call cost
    if not floor <= per_call <= MANY_CALLS_FACTOR * floor or p.floor_s / p.calls > floor:
        return None
    return CallCost(floor, source, per_call)


def calls_evidence(p: Point, cost: CallCost) -> str:
    """Why a many-calls kernel is overhead-bound, in numbers (its diagnosis and its merge
    advice say the same)."""
    return (f"{p.calls} calls of {fmt_seconds(cost.per_call_s)} each, within "
            f"{MANY_CALLS_FACTOR:g}x of the {fmt_seconds(cost.floor_s)} per-call floor "
            f"({cost.source}), and each call's work at the roof "
            f"({fmt_seconds(p.floor_s / p.calls)}) is under one floor: per-call cost "
            f"(interpreter, slicing, dispatch), not latency")


def reachable_s(p: Point, cost: CallCost | None = None) -> float:
    """The least time a point can reach at its roof. Reaching the roof does not remove the
    launches: it is the larger of the work floor and calls x the launch floor (graphs and
    fusion cut the latter; their advice predicts that gain separately), the floor left out
    where the measured time is below it (sanity_ceilings.applicable_launch_s). A many-calls
    kernel (`cost`, many_calls) keeps calls x its per-call floor instead, the one its
    merge advice prices (a numpy loop: the 349 ns ufunc, not the 177 ns no-op). The
    diagnosis's gain and the merge advice's link to it (gain_link) read this one floor."""
    calls = p.calls * cost.floor_s if cost is not None else 0.0
    return max(p.floor_s, applicable_launch_s(p), calls)


def gain_link(p: Point, cost: CallCost) -> str:
    """How the kernel's gain to its roof relates to this lever, in one clause: the gain
    keeps calls x the per-call floor (reachable_s: 633.2 us / 349 us = 1.8x for
    1000 numpy calls) and merging removes that floor (2.23x, up to 12.0x), so the report's
    two factors do not read as a contradiction (session 16). The gain's floor is taken as
    reachable_s takes it (the largest of the work floor, the roof's launch floor and calls
    x the per-call floor), and named as the gain line names it."""
    calls_floor = p.calls * cost.floor_s
    reach = reachable_s(p, cost)
    kept = (f"the {p.calls} x {fmt_seconds(cost.floor_s)} = {fmt_seconds(reach)} per-call "
            f"floor" if calls_floor >= reach else
            f"the {fmt_seconds(reach)} launch/dispatch floor")
    gain = p.seconds / reach if p.seconds and reach > 0 else 1.0
    # 3 figures, as the gain line beside it: '(3.58x faster)', '(3.58x)' here, not '3.6x'
    said = factor_text(gain) if gain > 1.0 + 1e-9 else "none"
    # "drops the rest": where the rest of each call is most of it (633 ns beside a 177 ns
    # floor), the gain (3.58x) is above the merge's low end (1.39x), which keeps that rest
    return (f"its gain to the roof ({said}) keeps {kept} (and drops the rest of each "
            f"call); merging the calls removes that floor")


def merge_calls_advice(p: Point, cost: CallCost, machine: Machine | None) -> Advice:
    """Merge the calls into one: at least (calls - 1) x the per-call floor saved; at most
    everything but the merged work at the roof and one call (the rest of each call is
    per-call cost too: slicing, argument checks), both bounded below by that floor."""
    merged = p.floor_s + cost.floor_s
    slow = max(merged, p.seconds - (p.calls - 1) * cost.floor_s)
    gpu = machine is not None and machine.kind == "gpu"
    how = ("capture the calls in a CUDA graph or batch them into one launch" if gpu else
           "batch them into one larger call: one op on the whole block")
    range_words = (f"{fmt_times(p.seconds / slow)} with {p.calls} x {fmt_seconds(cost.floor_s)} "
                   f"({cost.source}) saved; up to {fmt_times(p.seconds / merged)} where the rest "
                   f"of each call is per-call cost too (slicing, argument checks), down to "
                   f"the merged work at the roof ({fmt_seconds(p.floor_s)}) and one call; "
                   f"{gain_link(p, cost)}")
    return Advice(
        kernel=p.kernel, action=f"merge the {p.calls} calls into one ({how})",
        detail=f"{calls_evidence(p, cost)}; {range_words}",
        shrinks="below roof", new_ai=p.ai,
        new_flop_per_s=p.flop / slow if slow > 0 else 0.0, new_seconds=slow,
        speedup=p.seconds / slow if slow > 0 else 1.0,
        assumption=(f"the calls are independent (or one op covers them all) and the same "
                    f"FLOP and bytes run in one call; {range_words}"),
        seconds_range=(merged, slow) if merged < slow else None)


def hold_call_cost(a: Advice, p: Point, e: Efficiency, cost: CallCost,
                   cache_resident: bool) -> Advice:
    """A lever that shrinks the work (fewer bytes or FLOP per call) on a many-calls kernel:
    the per-call cost stays, so only its work floor shrinks, by the lever's own factor:
    1000 small np.add calls in fp32 were 1.01x, not the 1.56x a DRAM-priced lever said.
    Its full factor waits for the calls to be merged, not for "the latency to be fixed"
    (advice_compute.after_latency, which a many-calls kernel's levers skip: review r5)."""
    scale = ((a.new_seconds - e.launch_s) / e.work_s
             if e.work_s > 0 and a.new_seconds > e.launch_s else 1.0)
    held = p.seconds - p.floor_s * (1 - min(1.0, scale))
    where = (" (cache-resident: the DRAM floor does not bind, so even this is at most)"
             if cache_resident else "")
    words = (f"its {p.calls} calls' per-call cost stays ({fmt_seconds(cost.per_call_s)} a "
             f"call beside {fmt_seconds(cost.floor_s)} of floor): only the "
             f"{fmt_seconds(p.floor_s)} work floor shrinks{where}; merge the calls first: "
             f"only after the calls are merged is the work it shrinks most of the time")
    return replace(a, new_seconds=held, speedup=p.seconds / held,
                   new_flop_per_s=a.new_flop_per_s * a.new_seconds / held,
                   detail=f"{a.detail}; {words}", assumption=f"{words}; {a.assumption}")
