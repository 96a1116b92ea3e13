"""Two untimed `rooflab llm --json` runs compared by their kernels' work floors. Pure.

They carry no seconds but each kernel's roofline work floor; `floor_moves` compares those,
so the change the counts predict is shown rather than "no speed-up". They are floors, not
measurements: the gate never reads them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .compare import Comparison


@dataclass(frozen=True)
class FloorMove:
    """One kernel's (or the whole step's) work floor in each run: derived, not measured."""

    name: str
    before_s: float
    after_s: float

    @property
    def speedup(self) -> float | None:
        """before floor / after floor: > 1 is a lower floor."""
        return self.before_s / self.after_s if self.before_s > 0 and self.after_s > 0 else None


def floor_moves(c: Comparison, before: Mapping[str, float], after: Mapping[str, float]
                ) -> tuple[FloorMove, ...]:
    """The matched kernels' work floors (seconds by kernel name in each run, as an untimed
    llm document's analysis[].floor_s gives them); kernels without a floor on a side are
    left out."""
    return tuple(FloorMove(m.name, before[m.before.name], after[m.name]) for m in c.matches
                 if m.before.name in before and m.name in after)


def floors_to_dict(moves: Sequence[FloorMove], step: FloorMove | None) -> dict:
    """The JSON's `floors` section: each matched kernel's work floor before and after, and
    the step's (its name says which: the TPOT or TTFT floor)."""
    def row(m: FloorMove) -> dict:
        return {"kernel": m.name, "before_floor_s": m.before_s, "after_floor_s": m.after_s,
                "speedup": m.speedup}

    return {"provenance": "derived", "kernels": [row(m) for m in moves],
            "step": row(step) if step is not None else None}
