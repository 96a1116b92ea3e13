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

# The op-kind vocabulary lived here before model/opkind.py: its names stay importable here.
from .opkind import (  # noqa: F401
    ELEMENTWISE_OPS,
    STREAMING_KINDS,
    is_streaming,
    kernel_kind,
    kind_from_name,
    name_words,
    op_kind,
)

# The checks and their constants lived here before the split by what they judge; every
# name stays importable from here. check_kernel calls the checks through this module's
# names, so a test that patches one here (sanity.check_ai_high) changes what runs.
from .sanity_ceilings import (  # noqa: F401
    WRITE_ALLOCATE_RATIO,
    applicable_launch_s,
    check_above_roof,
    check_launch_floor,
    check_precision_fallback,
    check_threads,
    check_write_allocate,
    roof_threads,
    stand_ins,
)
from .sanity_counts import (  # noqa: F401
    COUNTERS,
    LLC_RESIDENT_SHARE,
    STREAMING_MAX_AI,
    _article,
    cache_resident,
    check_ai_high,
    check_ai_low,
    check_cache_resident,
    last_level_cache,
    working_set_of,
)
from .sanity_finding import ABOVE_TOLERANCE, Finding  # noqa: F401
from .sanity_timing import (  # noqa: F401
    CLOCK_CAUSE,
    COLD_CAUSE,
    LOAD_CAUSE,
    NOISY_IQR,
    NOISY_SPREAD,
    REPEAT,
    STEADY,
    TOO_SHORT_S,
    check_timing,
    counting_finding,
    load_evidence,
    noise_causes,
    timer_reading,
)


def check_kernel(analysis: Analysis, kernel: Kernel,
                 machine: Machine | None = None) -> tuple[Finding, ...]:
    """Every check for one kernel of an analysis (`machine` words the fixes for a CPU/GPU),
    in the order the report lists them: the points against the roof, the counts, the
    timing, cache residency, the launch floor, the threads, the stand-in ceilings."""
    points = analysis.points_of(kernel)
    roof = analysis.roof
    found = [check_above_roof(p, roof.kind, machine, roof, kernel) for p in points]
    found += [check_ai_high(kernel, points), check_ai_low(kernel, points, machine)]
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
