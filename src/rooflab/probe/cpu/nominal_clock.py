"""The clock the CPU nominal roof is derived at, from the probe's clock readings.

The clock kernel gives every thread equal work and times the whole team, so the slowest
thread sets the all-thread reading: on a hybrid CPU with E-cores among the threads it is
the E-cores' clock, and one thread alone runs on a P-core. `_clock_for` turns the
readings into the P-cores' clock, and, where the OS gives no E/P clock ratio (Windows,
macOS), the measured all/one ratio standing in for it (review s23 h1 F1). Pure: no
measurement, no I/O. assemble.py re-exports these names.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, NamedTuple

from ...hardware.host import HostInfo
from ...units import fmt_times

if TYPE_CHECKING:
    from .assemble import CoreUse

CONTENDED = 0.75    # all-thread clock below this x the one-thread clock: cores were shared
PLAUSIBLE_HZ = (3e8, 8e9)  # no CPU core this probe targets runs outside 0.3-8 GHz
# E/P clock: 0.64-0.69 on Apple M1-M4 (2.06/3.2 .. 2.9/4.4 GHz), 0.74-0.75 on Alder/Raptor
# Lake, 0.49 for Meteor Lake's LP E-cores; an all/one reading under this is other load
HYBRID_FLOOR = 0.45


class ClockChoice(NamedTuple):
    """_clock_for's answer: the P-cores' clock (GHz) for _nominal, clock_estimate's note,
    a hybrid note, and the E/P clock ratio measured as all/one where the OS gives none and
    the readings were the E- and P-cores' (None otherwise: the OS's ratio, if any, holds)."""

    ghz: float
    note: str | None
    hybrid_note: str | None
    e_ratio: float | None = None


def failed_clock_words(hz: float) -> str:
    """Why a clock result outside PLAUSIBLE_HZ is no reading, without printing it as one:
    a preempted calibration read '1.47 kHz', which a note then gave as the clock it read
    (review s33 I); the side of the range it fell on is all it says."""
    lo, hi = PLAUSIBLE_HZ
    side = f"below {lo / 1e9:.1f} GHz" if not hz >= lo else f"above {hi / 1e9:.0f} GHz"
    return (f"other load preempted it: its result, {side}, is no clock, CPU cores run "
            f"at {lo / 1e9:.1f}-{hi / 1e9:.0f} GHz")


def clock_estimate(all_threads_hz: float, one_thread_hz: float, threads: int,
                   end_hz: float | None = None, expected: float = 1.0
                   ) -> tuple[float, str | None]:
    """The clock for the nominal roof (GHz) and a note. All-core clocks sit at most ~25 %
    below one-core boost on current server parts; far lower means our threads shared
    cores with other load, and then the one-thread clock is the better estimate. A
    reading outside 0.3-8 GHz is a failed measurement (a preempted calibration), not a
    clock: the other readings (one thread, the repeat at the end) stand in for it.

    `expected`: the all/one ratio of a quiet machine beyond that 25 %: on a hybrid CPU
    the slowest thread (an E-core) sets the all-thread reading and one thread runs on a
    P-core, so the E/P clock ratio (0.74 on an i9-13900K: 4.3/5.8 GHz); a one-thread
    clock standing in is scaled by it, so the result is always the slowest cores' clock."""
    lo, hi = PLAUSIBLE_HZ
    alone, one_thread_hz = one_thread_hz, one_thread_hz * expected
    scaled = (f" x {expected:.3g} (E/P clock ratio) = {one_thread_hz / 1e9:.2f} GHz"
              if expected != 1.0 else "")
    if not lo <= all_threads_hz <= hi:
        others = [h for h in (one_thread_hz, end_hz) if h and lo <= h <= hi]
        if not others:
            return all_threads_hz / 1e9, (
                f"the clock measurement failed ({failed_clock_words(all_threads_hz)}), so "
                f"the nominal roof is wrong; rerun on a quiet machine")
        return max(others) / 1e9, (
            f"the all-thread clock measurement failed ({failed_clock_words(all_threads_hz)}); "
            f"the nominal roof uses the other clock reading, {max(others) / 1e9:.2f} GHz")
    if threads > 1 and all_threads_hz < CONTENDED * one_thread_hz:
        return one_thread_hz / 1e9, (
            f"with {threads} threads each ran at {all_threads_hz / 1e9:.2f} GHz effective vs "
            f"{alone / 1e9:.2f} GHz alone: other load shared the cores during the "
            f"probe, so measured ceilings may be low; the nominal roof uses the one-thread "
            f"clock{scaled}; rerun on a quiet machine")
    return all_threads_hz / 1e9, None


def _clock_for(raw, host: HostInfo, threads: int, use: CoreUse) -> ClockChoice:
    """The clock choice for _nominal (ClockChoice).

    With E-cores among the threads the all-thread reading is the E-cores' clock (review
    s21 r2 F2). The P-cores' is then that over the E/P cpufreq ratio, and all/one is
    compared with that ratio before other load is blamed."""
    split = host.core_split
    ratio = split.e_clock_ratio if split is not None and use.e else None
    unknown = _unknown_ratio_clock(raw, split, threads) if use.e and use.p and not ratio else None
    if unknown is not None:
        return unknown
    expected = ratio if ratio and use.p else 1.0   # one thread runs on a P-core then
    slow, note = clock_estimate(raw.clock0.best, raw.clock_1t.best, threads,
                                raw.clock1.best, expected=expected)
    if not ratio:
        return ClockChoice(slow, note, None)
    if not use.p:
        return ClockChoice(slow / ratio, note, None)   # E-cores only: the reading is theirs
    # name the clock that was used: clock_estimate may have put the one-thread clock x the
    # E/P ratio, or the repeat at the end, in place of the all-thread reading (x1 F3)
    if math.isclose(slow * 1e9, raw.clock0.best, rel_tol=1e-9):
        which = (f"the all-thread clock reading ({slow:.2f} GHz) is the E-cores' (equal work "
                 f"per thread: the slowest sets it)")
    else:
        which = (f"the E-cores' clock is taken as {slow:.2f} GHz (" + (
            "the one-thread clock x the E/P ratio"
            if math.isclose(slow * 1e9, raw.clock_1t.best * expected, rel_tol=1e-9)
            else "the all-thread reading repeated at the end") + ", standing in for the "
            "all-thread reading)")
    return ClockChoice(slow / ratio, note, (
        f"hybrid CPU: {which}; the P-cores' is taken as {slow:.2f} / {ratio:.3g} (E/P "
        f"cpufreq maximum ratio) = {slow / ratio:.2f} GHz, an upper bound where the "
        f"P-cores' all-core clock sits below their maximum"))


def _unknown_ratio_clock(raw, split, threads: int) -> ClockChoice | None:
    """_clock_for where the OS gives P/E counts but no clock ratio (macOS, Windows): an
    all/one reading of 0.45-0.75 is the E-cores', not other load (s23 r3 F4: a quiet
    Apple-silicon Mac was told to rerun); the P-cores' clock is then the one-thread
    clock, an upper bound, and all/one the E/P ratio, so the E-cores count at the clock
    they were measured at, not the P-cores' (s23 h1 F1). None: the usual rules apply."""
    every, one = raw.clock0.best, raw.clock_1t.best
    if not (threads > 1 and split is not None and PLAUSIBLE_HZ[0] <= every < CONTENDED * one
            and HYBRID_FLOOR * one <= every and one <= PLAUSIBLE_HZ[1]):
        return None
    return ClockChoice(one / 1e9, None, (
        f"hybrid CPU ({split.p_cores} P + {split.e_cores} E cores, from {split.source}) whose "
        f"OS gives no E/P clock ratio: with {threads} threads each ran at {every / 1e9:.2f} "
        f"GHz, the E-cores' clock (equal work per thread: the slowest sets the reading), "
        f"while one thread ran at {one / 1e9:.2f} GHz on a P-core ({fmt_times(every / one)}, as "
        f"E-cores run); the P-cores' clock is taken as {one / 1e9:.2f} GHz, an upper bound "
        f"where their all-core clock sits below it"), every / one)
