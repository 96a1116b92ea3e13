"""A what-if on a `rooflab train --dp` file: its communication row's exposed time before
and after the change (model/train_comm.py), what the what-if's floors count of that row in
place of its whole time, so `whatif` gives the step floor `rooflab train` prints (s30: its
work floor read 256 ms, the row's whole 52.4 ms, for train's 230 ms step with 26.3 ms of it
exposed). Pure: no I/O."""

from __future__ import annotations

from collections.abc import Mapping

from .retime import WhatIf
from .train_comm import Exposure, exposure, is_comm, part_windows
from .work_floor import work_floor_or_none

# {id(the comm kernel before): (exposure before, exposure after)}; None where the roof has
# no ceiling for its bytes (then its floor, unknown too, makes the total unknown)
Exposures = dict[int, tuple[Exposure | None, Exposure | None]]


def comm_exposures(w: WhatIf) -> Exposures:
    """Each communication row's exposure on each side: its floor on that side's roof
    (the link it runs on) and the windows of that side's forward and backward kernels,
    each at its work floor (as `rooflab train` times the overlap). {} for a file without
    such a row, at no cost (a 100k-kernel profile asks too)."""
    comms = [k for k in w.before.kernels if is_comm(k)]
    if not comms:
        return {}
    before = dict(zip(map(id, w.before.kernels), w.before_work_floors, strict=True))
    after: dict[int, float | None] = {id(new): wa for (_, new), (_, wa)
                                      in zip(w.moves, w.work_floors, strict=True)}
    for k in w.after.kernels:   # the kernels the change left alone, on the after roof
        if id(k) not in after:
            after[id(k)] = work_floor_or_none(w.after.roof, k)
    windows = (part_windows((k, before[id(k)]) for k in w.before.kernels),
               part_windows((k, after[id(k)]) for k in w.after.kernels))
    new_of = {id(old): new for old, new in w.moves}
    out: Exposures = {}
    for k in comms:
        new = new_of.get(id(k), k)
        fb, fa = before[id(k)], after.get(id(new))
        # a row without its whole time (a train CSV): the file's share of its floor here
        out[id(k)] = (None if fb is None else exposure(k, fb, windows[0], fb),
                      None if fa is None or not is_comm(new)
                      else exposure(new, fa, windows[1], fb))
    return out


def after_exposed(w: WhatIf, exposures: Exposures):
    """w.after with each communication row's meta exposed_s the after side's exposure (and
    exposed_overlap_s, what it would be under overlap, train's same number), so the file's row
    says what the move's after_exposed_s does (s36 R: --precision fp32 left 0.524 ms where
    train --dtype fp32 writes 0.961 ms); w.after itself where no row has one."""
    from dataclasses import replace

    pairs = [*w.moves, *((k, k) for k in w.before.kernels if is_comm(k))]
    exposed = {id(new): (old, got[1]) for old, new in pairs
               if (got := exposures.get(id(old))) is not None and got[1] is not None
               and not got[1].share_held}
    if not exposed:
        return w.after

    def said(k):
        old, e = exposed.get(id(k), (None, None))
        if e is None or not is_comm(k):
            return k
        # under overlap whether or not the row overlaps: a --no-overlap row's is re-timed
        # too (s37 B: it kept the file's 0.961 ms on an MI300X, train says 8.17 ms)
        hidden = e.exposed_s if e.overlap_s is None else e.overlap_s
        meta = {**k.meta, "exposed_s": e.exposed_s,
                **({"exposed_overlap_s": hidden} if "exposed_overlap_s" in k.meta else {})}
        return k.with_(meta={**meta, **_note(old.meta, meta)})

    return replace(w.after, kernels=tuple(map(said, w.after.kernels)))


def _note(was: Mapping, now: Mapping) -> dict:
    """{"note": train's note on the row with its whole and exposed times as `now` has
    them} (it says "7.33 ms per optimizer step ... leaves 524 us exposed"); {} where
    there is no note or no time to say."""
    from ..units import fmt_seconds

    note, swaps = was.get("note"), []
    for key in ("comm_s", "exposed_s"):
        a, b = was.get(key), now.get(key)
        if isinstance(a, (int, float)) and isinstance(b, (int, float)) and a > 0:
            swaps.append((fmt_seconds(a), fmt_seconds(b)))
    if not isinstance(note, str) or not swaps:
        return {}
    # through placeholders: an old exposed time may read as the new whole one
    for i, (a, _) in enumerate(swaps):
        note = note.replace(a, f"\0{i}\0")
    for i, (_, b) in enumerate(swaps):
        note = note.replace(f"\0{i}\0", b)
    return {"note": note}


def step_part(exposures: Exposures, old_id: int, side: int,
              floor: float | None) -> float | None:
    """What the step's floor counts of a kernel on one side (0 before, 1 after): its
    floor, or for a communication row its exposed part (None stays unknown)."""
    got = exposures.get(old_id)
    if got is None or floor is None:
        return floor
    e = got[side]
    return floor if e is None else e.exposed_s


def held_share(exposures: Exposures) -> bool:
    """Whether any row's exposure kept the file's exposed share (an older file)."""
    return any(e is not None and e.share_held for pair in exposures.values() for e in pair)


# --json's words for what the totals count of the row (whatif_floors.describe)
COMM_COUNTED = ("exposed: a train --dp step's communication row counts its exposed part "
                "in the totals (before_exposed_s, after_exposed_s), as `rooflab train`'s "
                "step floor does; its own floors are the whole communication")


def exposure_fields(exposures: Exposures, old_id: int) -> dict:
    """A move's --json keys for a communication row: the exposed part each side counts and
    how it was found; {} for any other kernel."""
    got = exposures.get(old_id)
    if got is None:
        return {}
    b, a = got
    held = any(e is not None and e.share_held for e in got)
    return {"before_exposed_s": b and b.exposed_s, "after_exposed_s": a and a.exposed_s,
            "exposed_from": ("the file's exposed share (the file lists no collectives)"
                             if held else "its collectives' overlap with the step's "
                                          "forward and backward on this roof")}
