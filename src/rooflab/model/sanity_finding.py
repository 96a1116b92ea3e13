"""What a sanity check returns (Finding), and what the checks share: the above-roof
tolerance and the machine kind their fixes are worded for. Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass

from .machine import Machine

# A point more than this fraction above its attainable roof is "above the roof".
ABOVE_TOLERANCE = 0.05


@dataclass(frozen=True)
class Finding:
    """One sanity finding for one kernel (at one level when it is about a point)."""

    kernel: str
    check: str        # ai_high | ai_low | above_roof | noisy | too_short | precision_fallback
    #                   | below_launch_floor | cache_resident | write_allocate | threads
    #                   | flop_per_element (info: ai_high's note for a generic elementwise op)
    severity: str     # warning | info
    message: str      # what was seen, in numbers
    causes: tuple[str, ...] = ()
    fix: str = ""
    level: str | None = None


def kind_of(machine: Machine | None) -> str:
    """'cpu' for a CPU, else 'gpu': the fixes (STEADY, REPEAT) and the launch/dispatch
    wording have these two forms; an unknown machine is read as a GPU."""
    return machine.kind if machine is not None and machine.kind == "cpu" else "gpu"
