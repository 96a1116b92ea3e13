"""The memory levels' order check: a level nearer the core measured slower than one farther
out says the measurement was disturbed. Pure.

One check for every roof a probe measured: the CPU probe's full roof (probe/cpu/bandwidth.py
re-exports it) and each thread count's row of a scaling profile (hardware/profile.py
roof_at_threads: review 19c N2, a one-thread row's L1 below its L2 went unflagged). It
lives in model/ because both layers use it (hardware may not import probe).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from ..units import si
from .ceiling import Ceiling

# nearest the core first (probe/plateaus.py LEVELS)
LEVELS = ("L1", "L2", "L3", "DRAM")

# A level nearer the core measured this much slower than one further out is not noise.
INVERTED = 0.9


def flag_inversions(ceilings: Mapping[str, Ceiling]) -> dict[str, Ceiling]:
    """Warn on a memory level measured slower than a level further from the core.

    L1 can't be slower than DRAM: the same triad reads the same bytes, only from farther
    away. A run disturbed throughout (e.g. another process's spinning OpenMP threads on
    the same cores) gives such numbers with tight samples, so the spread test stays
    silent; this says the roof is wrong. `ceilings`: level -> Ceiling (value in B/s);
    levels other than LEVELS (DRAM (real traffic), links) pass through unchanged.
    """
    order = [lv for lv in LEVELS if lv in ceilings]
    out = dict(ceilings)
    for i, lv in enumerate(order):
        farther = [ceilings[o] for o in order[i + 1:]]
        if not farther:
            continue
        fast = max(farther, key=lambda c: c.value)
        c = ceilings[lv]
        if c.value < INVERTED * fast.value:
            w = (f"{lv} bandwidth: measured {si(c.value, 'B/s')}, slower than "
                 f"{fast.level} ({si(fast.value, 'B/s')}), which is farther from the core: the "
                 f"probe was disturbed (other load on these cores); rerun on a quiet machine")
            out[lv] = replace(c, warnings=c.warnings + (w,))
    return out
