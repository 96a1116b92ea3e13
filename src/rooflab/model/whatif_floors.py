"""The floors of a what-if's kernels, before and after, as `rooflab llm` and `rooflab
choose` give them (the work floor and the floor with launches), summed over the moved
kernels or the whole step, and the what-if's JSON shape with them (describe). Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from ..json_stream import Streamed
from .ceiling import Roof
from .choose import split_whole_steps, with_launches_s
from .kernel import Kernel
from .retime import WhatIf
from .whatif_comm import (
    COMM_COUNTED,
    Exposures,
    after_exposed,
    comm_exposures,
    exposure_fields,
    step_part,
)
from .whatif_document import document_base, move_rows

# (work floor, with launches) of one kernel; (None, None) where the roof has none of its levels
Floors = tuple[float | None, float | None]


def _floors(roof: Roof, k: Kernel, work: float | None) -> Floors:
    """A kernel's two floors on a roof from its work floor max(FLOP / P, bytes / B) at
    100 % of the roof (None: the roof has none of its levels): that floor, and with its
    launches, max(work floor, calls x the roof's launch floor) (choose.with_launches_s)."""
    if work is None:
        return None, None
    return work, with_launches_s(work, k.calls, roof.overhead_s)


def move_floors(w: WhatIf) -> tuple[tuple[Floors, Floors], ...]:
    """(floors before, floors after) of each move, each on its own roof (derived), from
    the work floors the what-if works out once (WhatIf.work_floors): the JSON, the table
    and the chart each ask, and each worked out every kernel's again (s24)."""
    return tuple(_move_floors(w))


def _move_floors(w: WhatIf):
    """move_floors one move at a time: the sums need no tuple of every move's (s26: at
    100,000 kernels it and four dicts of them were ~55 MB of the table's peak)."""
    for i, ((old, new), (wb, wa)) in enumerate(zip(w.moves, w.work_floors, strict=True)):
        yield _floors(w.before.roof, old, wb), _floors(w.roof_after(i), new, wa)


def fused(w: WhatIf) -> bool:
    """Whether `w` fuses kernels (its new kernel lists the members it replaced)."""
    return any(new.meta.get("fused") for _, new in w.moves)


def moved_floors(w: WhatIf, exposures: Exposures | None = None
                 ) -> dict[str, tuple[float | None, float | None]]:
    """{"work": (before, after), "with_launches": (before, after)}: the moved kernels'
    floors summed, each kernel once (fused members share one new kernel; a whole measured
    step beside its own kernels is not work again); None where any floor is unknown. A
    training step's communication row counts its exposed part (model/whatif_comm.py), as
    `rooflab train`'s floor does, in both sums."""
    exposures = comm_exposures(w) if exposures is None else exposures
    work_ids = {id(k) for k in split_whole_steps([old for old, _ in w.moves])[0]}
    # per side: the kernels summed (a kernel once: fused members share one new kernel,
    # whose floors are the same at each), and [work, with launches] sums, None once unknown
    seen: tuple[set[int], set[int]] = (set(), set())
    sums: list[list] = [[0, 0], [0, 0]]
    for (old, new), floors in zip(w.moves, _move_floors(w), strict=True):
        if id(old) not in work_ids:
            continue
        for side, k in enumerate((old, new)):
            if id(k) in seen[side]:
                continue
            seen[side].add(id(k))
            for i in range(2):
                f = step_part(exposures, id(old), side, floors[side][i])
                total = sums[side][i]
                sums[side][i] = None if f is None or total is None else total + f
    return {key: tuple(None if not seen[side] or sums[side][i] is None
                       else float(sums[side][i]) for side in range(2))
            for i, key in enumerate(("work", "with_launches"))}


def moved_times(w: WhatIf) -> Mapping[str, object]:
    """The moved kernels' measured time before and predicted time after, each kernel once
    (three fused members: their three times before, the one fused kernel's after, not
    three times it; a whole measured step beside its kernels left out, as moved_floors),
    with each side's provenance word (the members' `seconds` provenance, one word where
    they agree; the prediction's, `derived`): what `whatif`'s "measured 13 ms -> 8.74 ms
    predicted" line says, so a script need not sum `moves` (whose rows repeat the fused
    kernel) to get it. None for a side where a kernel has no time."""
    steps = {id(k) for k in split_whole_steps([old for old, _ in w.moves])[1]}
    olds: dict[int, Kernel] = {}
    news: dict[int, Kernel] = {}
    for old, new in w.moves:
        if id(old) not in steps:
            olds[id(old)], news[id(new)] = old, new

    def side(ks: dict[int, Kernel]) -> tuple[float | None, str | None]:
        if not ks or any(k.seconds is None for k in ks.values()):
            return None, None
        words = sorted({str(k.provenance.get("seconds", "")) for k in ks.values()} - {""})
        return (float(sum(k.seconds for k in ks.values())),   # type: ignore[misc]
                ", ".join(words) or None)

    (before, said_b), (after, said_a) = side(olds), side(news)
    return {"before_s": before, "after_s": after,
            "speedup": _ratio(before, after),
            "saved_s": before - after if before is not None and after is not None else None,
            "before_s_provenance": said_b, "after_s_provenance": said_a}


def total_floors(w: WhatIf) -> dict[str, tuple[float | None, float | None]]:
    """As moved_floors, on the whole step for a fusion: the kernels it leaves alone count
    on both sides, so `--fuse` and `--quantize` (which moves every kernel) give their
    totals in one scope (review 11b #11: fusing three launch-bound kernels of a decode step
    is 1.19x of the step with launches, not the 2.50x of the three alone)."""
    exposures = comm_exposures(w)
    moved = moved_floors(w, exposures)
    if not fused(w):
        return moved
    olds = {id(old) for old, _ in w.moves}
    work = {id(k) for k in split_whole_steps(w.before.kernels)[0]}
    # the kernels it leaves alone, each (before, after) per floor: the same kernel, but a
    # communication row's exposed part follows the fused step's shorter windows
    floors = [tuple((step_part(exposures, id(k), 0, f), step_part(exposures, id(k), 1, f))
                    for f in _floors(w.before.roof, k, wf))
              for k, wf in zip(w.before.kernels, w.before_work_floors, strict=True)
              if id(k) in work and id(k) not in olds]
    out = {}
    for i, key in enumerate(moved):
        b, a = moved[key]
        extra = [f[i] for f in floors]
        if b is None or a is None or any(None in e for e in extra):
            out[key] = (None, None)
            continue
        out[key] = (b + sum(e[0] for e in extra),   # type: ignore[misc]
                    a + sum(e[1] for e in extra))   # type: ignore[misc]
    return out


def _ratio(before: float | None, after: float | None) -> float | None:
    return before / after if before and after else None


def _rows(w: WhatIf, exposures: Exposures) -> Iterator[dict[str, object]]:
    """describe's row of each move, made one at a time: the base row (move_rows) with both
    floors and a communication row's exposure."""
    for row, (fb, fa), (old, _) in zip(move_rows(w), _move_floors(w), w.moves, strict=True):
        row.update({"before_work_floor_s": fb[0], "after_work_floor_s": fa[0],
                    "before_with_launches_s": fb[1], "after_with_launches_s": fa[1],
                    "before_floor_s": fb[1], "after_floor_s": fa[1]})
        row.update(exposure_fields(exposures, id(old)))
        yield row


def describe(w: WhatIf, streamed: bool = False) -> Mapping[str, object]:
    """JSON shape of a what-if (whatif_document.moves_document) with both floors, named as in
    `rooflab llm` and `rooflab choose`: *_work_floor_s (max(FLOP / P, bytes / B) per kernel, summed)
    and *_with_launches_s (per kernel max(work floor, calls x launch floor), summed); for a fusion
    on the whole step, the fused kernels alone under moved_*. The older *_floor_s keys stay for
    scripts that read them, now equal to *_with_launches_s: they used to sum work + every launch, a
    third floor beside these two (review 11b #7). streamed: the rows and the analysis after
    as Streamed arrays, each row made as it is written (json_stream.py; the CLI's document:
    at 100,000 kernels the dicts were ~250 MB, s32); else lists."""
    from .schema import analysis_to_dict

    exposures = comm_exposures(w)
    rows = Streamed(lambda: _rows(w, exposures)) if streamed else list(_rows(w, exposures))
    out = document_base(w, rows, analysis_to_dict(after_exposed(w, exposures),
                                                  streamed=streamed))
    t = total_floors(w)
    (wb, wa), (lb, la) = t["work"], t["with_launches"]
    if exposures:   # what the totals count of a train --dp step's communication row
        out["comm_counted"] = COMM_COUNTED
    out.update({"total_before_work_floor_s": wb, "total_after_work_floor_s": wa,
                "work_floor_speedup": _ratio(wb, wa),
                "total_before_with_launches_s": lb, "total_after_with_launches_s": la,
                "with_launches_speedup": _ratio(lb, la),
                "total_before_floor_s": lb, "total_after_floor_s": la,
                "floor_scope": "whole step" if fused(w) else "moved kernels"})
    if fused(w):
        m = moved_floors(w)
        (mwb, mwa), (mlb, mla) = m["work"], m["with_launches"]
        out["moved"] = {"before_work_floor_s": mwb, "after_work_floor_s": mwa,
                        "before_with_launches_s": mlb, "after_with_launches_s": mla,
                        "with_launches_speedup": _ratio(mlb, mla),
                        # the measured total before and the predicted one after (review
                        # session 16: floors alone gave a script no whole-run change)
                        **moved_times(w)}
    return out
