"""A stored ceiling's "samples vary" warnings, said again by today's rule. Pure.

A roof or profile file keeps each measured ceiling's samples and the warnings the probe
wrote. The spread those warnings quote is the rule of the rooflab that wrote the file:
before session 20 the exclusive quartiles (one preempted sample among 5 read as a 50 %
IQR), and the reader recomputes iqr_rel from the samples by today's inclusive ones
(sample_spread.iqr_over_median). Passed through, one ceiling showed two spreads (an old
profile's L3 "163.2 %" warning beside iqr_rel 46 %), and a ceiling today's rule finds
steady (L2: IQR 4.05 %, median 2.9 % below the best) still carried the warning, so the
chart starred it and the record table flagged it (review s21 r1 F1). So the reader says
the spread warnings again from the samples (restated), keeping every other warning as
stored: calibration, below nominal, level order, slowdown, real-traffic notes.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Sequence
from dataclasses import replace

from ..units import fmt_fraction
from .ceiling import Ceiling
from .sample_spread import NOISY_IQR, iqr_over_median, spread_name

# "<label>: samples vary (<spread figures>)<tail>", as probe.stats.rates_warning and
# hardware/profile._row_warnings write it ("timing samples vary" is a kernel's, not a
# ceiling's). The figures hold no parenthesis.
_SPREAD = re.compile(r"(?P<label>.+?): samples vary \((?P<figures>[^()]*)\)(?P<tail>.*)",
                     re.S)
# the tail the probe writes (probe.stats.rates_warning), for a warning without a stored one
PROBE_TAIL = ("; other load on the machine or clock changes; rerun on a quiet machine or "
              "use --full")
# An IQR (or range) over this share of the median is no noise around one value: the calls
# fell into two populations, fast ones and ones many times slower (on a 2-CPU host under
# load, a 20 us torch matmul with 2 threads took 8-12 ms, one scheduler slice, whenever its
# second thread waited for a CPU: IQR 7658 %). Said after the figures, before the tail.
TWO_POPULATIONS = 1.0
TWO_POPULATIONS_WORDS = (
    "; over 100 % of the median, so the samples are not one population: some calls ran "
    "many times slower than the rest (a thread waiting for a CPU held by other load, "
    "warm-up, or calls shorter than the scheduler's time slice)")


def is_spread_warning(text: str) -> bool:
    """Whether a warning is a "samples vary" one: its figures follow from the samples."""
    return _SPREAD.fullmatch(str(text)) is not None


def samples_vary(label: str, samples: Sequence[float], tail: str = PROBE_TAIL,
                 limit: float = NOISY_IQR) -> str | None:
    """The probe's warning for rate samples that disagree (higher is better): IQR / median
    over `limit` (NOISY_IQR), or the median more than `limit` below the best; None for
    steady samples or fewer than 2; over TWO_POPULATIONS it says the samples are two
    populations and why (the tail says what to do). The one text: the probe writes it
    (probe.stats.rates_warning) and a stored profile's is rebuilt with it (roof_from_dict)."""
    xs = [float(v) for v in samples]
    if len(xs) < 2 or max(xs) <= 0:
        return None
    iqr, gap = iqr_over_median(xs), 1 - statistics.median(xs) / max(xs)
    if iqr <= limit and gap <= limit:
        return None
    tail = tail.replace(TWO_POPULATIONS_WORDS, "")   # a stored tail may hold it already
    split = TWO_POPULATIONS_WORDS if iqr > TWO_POPULATIONS else ""
    return (f"{label}: samples vary ({spread_name(len(xs))} {fmt_fraction(iqr, 1)} of the median, "
            f"median {fmt_fraction(gap, 1)} below the best){split}{tail}")


def _names(label: str, c: Ceiling) -> bool:
    """Whether a warning's label speaks of ceiling c: 'L2 bandwidth', 'fp64 peak', 'fp32
    scalar peak', 'DRAM (real traffic) (scale)', 'L1 bandwidth (1 thread row)', a GPU
    probe's 'fp16 tensor'. 'DRAM bandwidth' on the DRAM (real traffic) ceiling (inherited
    from DRAM, the probe's dram_ceiling) names DRAM, not it."""
    key = str(c.level if c.level is not None else c.precision)
    return label == key or label.startswith(f"{key} ")


def _owner(label: str, c: Ceiling, roof: Sequence[Ceiling]) -> Ceiling | None:
    """The ceiling whose samples a warning on c speaks of: c where the label names it or
    no ceiling of the roof (a label by method, not by ceiling: c's samples are the ones
    the probe tested), else the one other ceiling it names (the longest name); None
    when several equally are."""
    if _names(label, c):
        return c
    got = [o for o in roof if o is not c and _names(label, o)]
    if not got:
        return c
    longest = max(len(str(o.level or o.precision)) for o in got)
    got = [o for o in got if len(str(o.level or o.precision)) == longest]
    return got[0] if len(got) == 1 else None


def restated(c: Ceiling, roof: Sequence[Ceiling] = ()) -> Ceiling:
    """Ceiling c with each "samples vary" warning said again from the samples it speaks
    of (c's, or those of the ceiling of `roof` it names) by today's rule: new figures,
    or gone where today's rule finds them steady. A warning whose samples are not in the
    file (none stored, or several ceilings it names) is kept as written."""
    out = []
    for w in c.warnings:
        m = _SPREAD.fullmatch(str(w))
        owner = m and _owner(m["label"], c, roof)
        if not m or owner is None or len(owner.samples) < 2:
            out.append(w)
            continue
        again = samples_vary(m["label"], owner.samples, m["tail"])
        if again is not None and again not in out:
            out.append(again)
    return c if tuple(out) == c.warnings else replace(c, warnings=tuple(out))


def restated_all(ceilings: Sequence[Ceiling]) -> tuple[Ceiling, ...]:
    """restated for each ceiling of one roof's list (compute or memory)."""
    return tuple(restated(c, ceilings) for c in ceilings)
