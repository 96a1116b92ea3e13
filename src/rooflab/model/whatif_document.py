"""The what-if document's base: totals and one row per moved kernel (moves_document), the
JSON model.whatif.describe (whatif_floors) builds on. Pure: no I/O."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from .opkind import is_whole_step
from .retime import WhatIf, gap_held, lower_bound


def moves_document(w: WhatIf) -> Mapping[str, object]:
    """The what-if document's base: totals and one row per moved kernel, with the older
    single floor per move. Not the JSON rooflab writes: model.whatif.describe adds the
    work and with-launches floors over it (review 19e F-c: two `describe`s, this one still
    writing the retired "work + launch" floor, read as the same function)."""
    from .schema import analysis_to_dict

    return document_base(w, list(move_rows(w)), analysis_to_dict(w.after))


def move_rows(w: WhatIf) -> Iterator[dict[str, object]]:
    """The base document's row of each move, made one at a time (describe adds to each
    and may write them as they are made: json_stream.Streamed)."""
    from .choose import split_whole_steps

    steps = {id(k) for k in split_whole_steps([old for old, _ in w.moves])[1]}
    for (old, new), (fb, fa) in zip(w.moves, w.floors, strict=True):
        yield {"kernel": old.name, "new_kernel": new.name,
               # a whole step timed as one point, as the terminal calls it
               # (opkind.is_whole_step; review 19a N2: the decode point said false)
               "whole_step": is_whole_step(old),
               # a whole measured step beside its kernels: not in the totals
               "beside_kernels": id(old) in steps,
               "before_s": old.seconds, "after_s": new.seconds,
               "speedup": old.seconds / new.seconds if old.seconds and new.seconds
               else None,
               # a whole step with one launch assumed: the time with its gap above
               # the roof held fixed, the slow end of the range (retime's gap_s)
               # the range low to high: the gap-scaled end is the fast one only
               # where the change removes work (review r8 F5)
               **({"after_s_gap_held": held,
                   "speedup_gap_held": old.seconds / held if old.seconds else None,
                   "after_s_range": sorted([new.seconds, held])}
                  if (held := gap_held(new)) is not None else {}),
               # "at least": after_s a lower bound, speedup an upper bound (an
               # unsplit decode point past the ridge, at its compute floor)
               **({"after_s_lower_bound": True, "speedup_upper_bound": True}
                  if lower_bound(new) else {}),
               # floors are derived from the roof: present even without measured times
               "before_floor_s": fb, "after_floor_s": fa, "floor_provenance": "derived"}


def document_base(w: WhatIf, moves: object, after: object) -> dict[str, object]:
    """The what-if's totals around its rows (`moves`, a list or a Streamed) and the
    analysis after (`after`: schema.analysis_to_dict)."""
    from .schema import SCHEMA_VERSION

    fb, fa = w.total_floors
    return {"schema_version": SCHEMA_VERSION, "label": w.label, "assumption": w.assumption,
            "total_before_s": w.total_before_s,
            "total_after_s": w.total_after_s, "speedup": w.speedup,
            # a whole step's range: both ends as equals, `total_after_s` and `speedup` the
            # gap-scaled end, as after.kernels[*].seconds (their meta seconds_gap_held the
            # other; review 19a N2), fast where the change removes work, slow where it
            # adds some (--batch up, a widening, a slower device: review r8 F5)
            **({"total_after_s_gap_held": w.total_after_gap_held_s,
                "speedup_gap_held": (w.total_before_s / w.total_after_gap_held_s
                                     if w.total_before_s else None),
                "total_after_s_range": sorted([w.total_after_s, w.total_after_gap_held_s]),
                "total_after_s_is": _which_end(w.total_after_s, w.total_after_gap_held_s)}
               if w.total_after_gap_held_s is not None else {}),
            **({"total_after_s_lower_bound": True, "speedup_upper_bound": True}
               if any(lower_bound(new) for _, new in w.moves) else {}),
            "total_before_floor_s": fb, "total_after_floor_s": fa, "moves": moves,
            "after": after}


def _which_end(scaled: float, held: float) -> str:
    """Which end of a whole step's range the gap-scaled time is, in words."""
    end = "fast (low)" if scaled <= held else "slow (high)"
    return f"the gap-scaled end of a range, its {end} end"
