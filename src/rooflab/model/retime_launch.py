"""How much of calls x the launch floor a timed kernel's time holds, as a what-if reads it
(retime._apply for every what-if, whatif.fuse for each member of a fusion).

calls x the roof's launch floor, L, is a nominal figure (5 us a launch on a catalog GPU), so
a time near it can be read two ways: a GPU-side time (a profiler's) or launches that overlap,
which hold none of it, or a host-timed loop, which holds all of it but what the work floor
needs. `rooflab report` splits the two at L (sanity_ceilings.applicable_launch_s), and a
what-if that split there too jumped ~9x across it: 100 calls of a kernel with a 20.8 us
work floor on an H200, timed at 490 us, read 7.35 ms on a T4 (all work, 4 % of its roof);
at 510 us, 802 us (all launches, the work at 100 %) (review s26 r3 F1).

Here the launches held rise one for one with the time across a band of width L centred on
it: none up to L/2 (report's reading: GPU-side), then the time above L/2, all of L from
3L/2 on (report's reading: host-timed), each capped as efficiency_of caps it (the work never
runs faster than its roof for the launches' sake). One for one is as steep as the held
launches may rise while every prediction still rises with the measured time: a prediction
is r x (T - held) + l x held (r: new work floor / old, l: new launch floor / old), whose
slope r + held' x (l - r) stays between r and l only while 0 <= held' <= 1. At T = L it is
about halfway between the two readings: the 490 us and 510 us kernels read 3.99 ms and 4.01
ms on a T4 (240 and 260 us of launches), and carry both readings' times as a range
(LAUNCH_RANGE_META: 782 us-7.35 ms for the first). Outside the band the reading is
report's, so the decisions taken far from the floor stand.

A predicted kernel carries the share it was predicted with (meta launch_share_held) and is
read with it again, so a round trip returns the measured time: 1 call of 1 us on an H200
(no launch held) read 15 us on a T4, and that 15 us read back as 5.67 us, as if it held a
5 us launch; it now reads 1 us. Pure: no I/O.
"""

from __future__ import annotations

import math

from .kernel import Kernel
from .placement import Point

# the meta a predicted kernel carries: the share of calls x its roof's launch floor that its
# predicted time holds (retime writes it, launch_held_s reads it back)
LAUNCH_SHARE_META = "launch_share_held"
# the meta of a prediction from a time in the band: [fast, slow] seconds under report's two
# readings (band_readings), the range the prediction lies in, for a line or a JSON reader
LAUNCH_RANGE_META = "seconds_launch_range"
# where the band starts, (1 - BAND) x L: one for one, the launches held reach all of L a
# width L later, at (2 - BAND) x L (no narrower band keeps every prediction monotone);
# 0.5 centres it on L, the nominal floor being as likely too high as too low
BAND = 0.5


def carried_share(k: Kernel) -> float | None:
    """The launch share a predicted kernel carries (LAUNCH_SHARE_META); None where it has
    none, or a value no prediction writes (a hand-edited file: not a number in [0, 1])."""
    s = k.meta.get(LAUNCH_SHARE_META)
    if isinstance(s, bool) or not isinstance(s, (int, float)) or not 0.0 <= s <= 1.0:
        return None   # NaN fails the comparison too
    return float(s)


def launch_held_s(p: Point, k: Kernel) -> float:
    """The launch time a timed point's time holds (module doc): 0 untimed, GPU-side
    (gpu_time: it never holds the CPU launch cost) or on a roof without a launch floor."""
    floor = p.overhead_floor_s or 0.0
    if p.seconds is None or p.gpu_side or not floor > 0:
        return 0.0
    carried = carried_share(k)
    if carried is not None:
        return min(carried * floor, p.seconds)
    # as efficiency_of: the launches take at most what the work floor leaves of the time
    # (review s21 r3 F1), and a time under its floor keeps them (it beats its roof anyway:
    # held_work_ratio, review r8 F1), but only as far as it is under: efficiency_of's
    # all-or-none at the floor jumped as the threshold at L did (1 call, floor 10 us:
    # 9.9 us held 5 us of launch, 10.1 us 0.1 us; 5.3 us and 0.77 us on a 15x faster
    # roof). A time within L under its floor is the one place a slower time may still
    # read a little faster (held' = -1 there), never by a jump
    room = min(abs(p.seconds - p.floor_s), p.seconds)
    return max(0.0, min(floor, p.seconds - (1.0 - BAND) * floor, room))


def launch_share(p: Point | None, k: Kernel) -> float:
    """launch_held_s over calls x the floor, the share retime adds back of the new launch
    floor; 1 untimed or without a floor (retime's launch_inside: the target's floor is then
    a floor under the time)."""
    if p is None or p.seconds is None or not p.overhead_floor_s:
        return 1.0
    return launch_held_s(p, k) / p.overhead_floor_s


def held_reading(p: Point, k: Kernel, reading: int | None = None) -> float:
    """launch_held_s, or for a time within the band (in_launch_band) under one of report's
    readings: 0, none of the launches held; 1, all it has room for (band_readings' ends)."""
    if reading is None or not in_launch_band(p, k):
        return launch_held_s(p, k)
    return 0.0 if reading == 0 else min(p.overhead_floor_s, abs(p.seconds - p.floor_s),
                                        p.seconds)


def held_work_ratio(p: Point, k: Kernel) -> float:
    """A timed point's work floor over its measured work, the time less launch_held_s: the
    factor every what-if but a fusion keeps (retime._efficiency). NOT capped at 1
    (efficiency_of caps it): a kernel timed faster than its roof allows (a roof too low
    for it, counts too high, data in cache) keeps beating its new floor by the same
    factor, so a change that leaves it alone leaves its time alone. Capped, every such
    kernel 'moved' to its floor whatever the change: --bytes-scale 1 read 0.32x and
    halving a gemv's bytes 0.40x (review r8 F1). The launches come off by this module's
    split, which rises smoothly across calls x the floor: efficiency_of's all-or-none at
    the floor jumped there (review s26 r3 F1)."""
    work = p.seconds - launch_held_s(p, k)
    return p.floor_s / work if work > 0 and p.floor_s > 0 else 1.0


def in_launch_band(p: Point | None, k: Kernel) -> bool:
    """Whether a timed point's time lies within the band around calls x the floor, where
    the launches it holds are read part way (module doc). False for a GPU-side time, one
    without a floor or a prediction carrying its share."""
    if p is None or p.seconds is None or p.gpu_side or not p.overhead_floor_s:
        return False
    if carried_share(k) is not None:
        return False
    floor = p.overhead_floor_s
    return (1.0 - BAND) * floor < p.seconds < (2.0 - BAND) * floor


def band_readings(p: Point | None, k: Kernel) -> tuple[tuple[float, float], ...]:
    """For a time in the band (in_launch_band): (work ratio, launch share) under each of
    report's two readings, none of the launches held and all it has room for, which retime
    prices as the range the prediction lies in (LAUNCH_RANGE_META); () elsewhere."""
    if not in_launch_band(p, k):
        return ()
    floor = p.overhead_floor_s
    out = []
    for held in (held_reading(p, k, 0), held_reading(p, k, 1)):
        work = p.seconds - held
        out.append((p.floor_s / work if work > 0 and p.floor_s > 0 else 1.0, held / floor))
    return tuple(out)


def share_written(launch_s: float, full_s: float) -> float | None:
    """The share a predicted time holds of its calls x its launch floor (LAUNCH_SHARE_META),
    None where it has no floor."""
    if not full_s > 0 or not math.isfinite(full_s):
        return None
    return min(1.0, max(0.0, launch_s / full_s))


def band_line(moves, floor_s: float) -> str:
    """The 'read with care' line for the moved kernels timed within the band (their
    predictions carry LAUNCH_RANGE_META), for whatif_warnings to print beside its
    below-floor line, which then names only the times at or under L/2: from L/2 to L the
    launches are no longer all left out. '' where none is. moves: WhatIf.moves."""
    from ..units import fmt_seconds

    # a range within 1 % is no doubt worth a line (bytes-scale 1: both readings agree)
    hit = [(old, new.meta[LAUNCH_RANGE_META]) for old, new in moves
           if isinstance(new.meta.get(LAUNCH_RANGE_META), list)
           and new.meta[LAUNCH_RANGE_META][1] > 1.01 * new.meta[LAUNCH_RANGE_META][0]]
    if not hit:
        return ""
    names = ", ".join(f"{k.name} ({fmt_seconds(k.seconds)} over {k.calls} calls: "
                      f"{fmt_seconds(lo)}-{fmt_seconds(hi)})" for k, (lo, hi) in hit[:3])
    more = f" and {len(hit) - 3} more" if len(hit) > 3 else ""
    return (f"{names}{more}: measured within half of calls x the {fmt_seconds(floor_s)} "
            f"launch floor either way, so the time may hold its launches (timed on the host) "
            f"or not (GPU-side, or launches that overlap); the prediction counts the part "
            f"of the time above half of calls x the floor as launches, up to all of them, "
            f"and lies between the two readings' times given (meta seconds_launch_range).")

