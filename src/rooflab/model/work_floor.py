"""A kernel's work floor on a roof, max(FLOP / P, bytes / B) at the level that binds it, read
straight off the roof's ceilings: the floor_s of the point `analyze(roof, [kernel])`'s
primary() gives, without placing the kernel. A what-if asks it of every kernel before and
after, on each roof (model/retime.py), and a whole Analysis per kernel (its notes, shares,
bound class and every level's Point) made `rooflab whatif` on 2,000 kernels build 26,000 of
them (s24). Same ceilings (ceiling.kernel_ceiling, byte_convention.memory_ceiling), same
arithmetic (roofline.attainable, time_floor), same binding level (placement.primary_points:
the lowest attainable, the first level of the kernel's on a tie), so the same float. Pure.
"""

from __future__ import annotations

import math

from ..errors import InputError
from .analysis import analyze
from .byte_convention import memory_ceiling
from .ceiling import Roof
from .held_unit import held_ceiling, held_unit
from .kernel import Kernel
from .roofline import attainable, time_floor


def work_floor(roof: Roof, k: Kernel, peaks: dict | None = None) -> float:
    """The kernel's work floor at its binding level on `roof` (derived); InputError where
    the roof has none of its memory levels (or it has no bytes), as before: those cases,
    and anything that is not a Roof and a Kernel, go through analyze() itself, so the
    error is analyze's word for word. peaks: a dict the caller keeps across many kernels,
    holding each (roof, precision, unit)'s compute ceiling once (a what-if's 100,000
    kernels are of two or three)."""
    if not isinstance(roof, Roof) or not isinstance(k, Kernel):
        return _analyzed(roof, k)
    # the compute ceiling analyze holds the kernel to (a mixed kernel's weighted one);
    # its seconds play no part in it, nor in the memory ceiling (provenance, meta, kind)
    peak = _peak(roof, k, peaks)
    flop = k.total_flop
    best: tuple[float, float] | None = None   # (attainable, floor) of the binding level
    for level, nbytes in k.bytes.items():
        memory, _ = memory_ceiling(roof, k, level)
        if memory is None or (nbytes <= 0 and flop <= 0):
            continue   # analyze places no point there
        nbytes = float(nbytes)
        bw = memory.value
        ai = flop / nbytes if nbytes > 0 else math.inf
        # roofline.attainable's one-point branch (a float AI >= 0; a Ceiling's value is
        # checked > 0 and finite where it is made), without its checks per call; any
        # other AI goes to attainable, which says what is wrong with it
        att = float(min(peak, bw * ai)) if ai >= 0 else attainable(ai, peak, bw)
        if best is None or att < best[0]:   # strict: the first of a tie, as primary_points
            best = (att, time_floor(flop, nbytes, peak, bw))
    if best is None:
        return _analyzed(roof, k)
    return best[1]


def _peak(roof: Roof, k: Kernel, peaks: dict | None) -> float:
    """The value of the compute ceiling analyze holds `k` to on `roof`
    (ceiling.kernel_ceiling); a kernel of one precision's from `peaks` where given, since
    kernel_ceiling gives it Roof.compute_for(its precision, its unit)."""
    if peaks is None or k.mixed:
        return held_ceiling(roof, k).ceiling.value
    # the caller holds the roofs: ids stay theirs
    key = (id(roof), k.precision, held_unit(roof, k))
    found = peaks.get(key)
    if found is None:
        found = peaks[key] = held_ceiling(roof, k).ceiling.value
    return found


def _analyzed(roof: Roof, k: Kernel) -> float:
    """The floor the old way, one analysis of the kernel alone: for the cases that raise."""
    a = analyze(roof, [k.with_(seconds=None, samples=())])
    points = a.primary()
    if not points:
        raise InputError(f"kernel '{k.name}' has no bytes at a level roof '{roof.name}' has "
                         f"(it has: {', '.join(roof.levels) or 'none'})")
    return points[0].floor_s


def work_floor_or_none(roof: Roof, k: Kernel, peaks: dict | None = None) -> float | None:
    """work_floor, None where the roof has none of the kernel's memory levels."""
    try:
        return work_floor(roof, k, peaks)
    except InputError:
        return None


def floor_s(roof: Roof, k: Kernel) -> float | None:
    """The least time of a kernel under retime's model: launch floor + work at 100 % of
    the roof (efficiency 1). Derived, a floor, not a prediction of a measured time; None
    when the roof has none of the kernel's memory levels."""
    return launch_plus(roof, k, work_floor_or_none(roof, k))


def launch_plus(roof: Roof, k: Kernel, work: float | None) -> float | None:
    """calls x the roof's launch floor + a work floor (floor_s), None without the work."""
    return None if work is None else (roof.overhead_s or 0.0) * k.calls + work
