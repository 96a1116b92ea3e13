"""Sanity checks: the classic mistakes of seed 000 §6 (and seed 004 "常见误区"), in numbers.

Each check looks at one kernel's points and returns Findings that say what looks wrong, the
likely causes, and how to check. This module runs them all (check_kernel, check_analysis);
the checks live by what they judge: sanity_counts (FLOP and bytes), sanity_timing (the
time), sanity_ceilings (the roof). Pure: no I/O.
"""

from __future__ import annotations

from .analysis import Analysis
from .kernel import Kernel
from .machine import Machine

# check_kernel calls the checks through this module's names, so a test that patches one
# here (sanity.check_ai_high) changes what runs.
from .sanity_ceilings import (
    check_above_roof,
    check_launch_floor,
    check_precision_fallback,
    check_threads,
)
from .sanity_counts import check_ai_high, check_ai_low, check_cache_resident
from .sanity_finding import Finding
from .sanity_timing import check_timing


def check_kernel(analysis: Analysis, kernel: Kernel,
                 machine: Machine | None = None) -> tuple[Finding, ...]:
    """Every check for one kernel of an analysis (`machine` words the fixes for a CPU/GPU),
    in the order the report lists them: the points against the roof, the counts, the
    timing, cache residency, the launch floor, the threads, the stand-in ceilings."""
    points = analysis.points_of(kernel)
    roof = analysis.roof
    found = [check_above_roof(p, roof.kind, machine, roof, kernel) for p in points]
    found += [check_ai_high(kernel, points), check_ai_low(kernel, points, machine, roof)]
    found += check_timing(kernel, machine)
    found += [check_cache_resident(kernel, p, machine) for p in points]
    found += [check_launch_floor(kernel, roof, machine),
              check_threads(kernel, roof, analysis.notes)]
    found += check_precision_fallback(roof, kernel, points)
    return tuple(f for f in found if f is not None)


def check_analysis(analysis: Analysis, machine: Machine | None = None) -> tuple[Finding, ...]:
    """Every check for every kernel."""
    out: list[Finding] = []
    for k in analysis.kernels:
        out += check_kernel(analysis, k, machine)
    return tuple(out)
