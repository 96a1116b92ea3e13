"""The position and below-roof words of a kernel timed as many small calls whose time is
per-call cost (advice_calls.many_calls): overhead-bound, and merging the calls closes the
gap, where the latency words said "Batching does not close it" (review r5 F3). Pure."""

from __future__ import annotations

from dataclasses import replace

from ..units import fmt_factor, fmt_seconds
from .advice_calls import CallCost
from .analysis import Point
from .diagnose_distances import Distance
from .machine import Machine


def calls_below_roof(d: Distance, p: Point, cost: CallCost,
                     machine: Machine | None) -> Distance:
    """The below-roof distance of a many-calls kernel: merging the calls closes it."""
    if d.factor is None or p.seconds is None:
        return d
    how = ("a CUDA graph or one batched launch" if machine is not None
           and machine.kind == "gpu" else "one op on the whole block")
    return replace(d, words=(
        f"{fmt_factor(d.factor)} below the roof at its AI: per-call cost, not AI: "
        f"{p.calls} calls of {fmt_seconds(cost.per_call_s)} each for "
        f"{fmt_seconds(p.floor_s / p.calls)} of work each at the roof; merging them into "
        f"one call ({how}) closes it, and a lever on the work alone (fewer bytes, lower "
        f"precision) leaves the per-call cost in place."))
