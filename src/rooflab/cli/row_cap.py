"""How many rows a terminal table shows: compare's and whatif's tables had a rich row per
kernel, and rich measures every cell (twice, where a table is fitted to the width), so 10k
kernels took 30-40 s of CPU and 100k never printed (review s23 r5 F6). Past TERMINAL_ROWS
they show the heaviest rows (the longest, or for whatif the ones that move most), as
`report` shows its top kernels, and say how many are left out; --json keeps every row."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, TypeVar

T = TypeVar("T")

# rows a table shows before it is cut; more than any real model's distinct kernels on one
# screen, so the examples and the seeds print whole, as before
TERMINAL_ROWS = 40


class Capped(NamedTuple):
    shown: list
    left_out: int        # rows not shown
    kept_left: int       # of them, rows `keep` asked for (a gate's failures past the cap)
    lighter: bool        # every row left out weighs no more than the shown rows of its kind


def cap(rows: Sequence[T], weight: Callable[[T], Any],
        keep: Callable[[T], bool] = lambda _r: False,
        limit: int = TERMINAL_ROWS) -> Capped:
    """At most `limit` rows: all of them, in their order, where they fit; else the heaviest
    rows `keep` says must show (a gate's failures) and the heaviest of the rest by `weight`
    (a float or a tuple; None weighs least), heaviest first. The rest always get a quarter
    of the rows: 843 gate failures filled the whole table and hid the longest kernel of the
    run, which had got faster (review s23 h2 F4)."""
    if len(rows) <= limit:
        return Capped(list(rows), 0, 0, True)

    def w(r: T) -> Any:
        x = weight(r)
        return 0.0 if x is None else x

    def heaviest(some: list[T], n: int) -> list[T]:
        # sorted(reverse=True) is stable: rows of one weight keep their order
        return sorted(some, key=w, reverse=True)[:max(0, n)]

    must = [r for r in rows if keep(r)]
    others = [r for r in rows if not keep(r)]
    room = min(len(others), max(limit // 4, limit - len(must)))
    kept = heaviest(must, limit - room)
    rest = heaviest(others, room)
    shown = heaviest([*kept, *rest], limit)
    lighter = _lighter(kept, must, w) and _lighter(rest, others, w)
    return Capped(shown, len(rows) - len(shown), len(must) - len(kept), lighter)


def _lighter(shown: list, pool: list, w: Callable) -> bool:
    """No row of `pool` left out of `shown` weighs more than the lightest shown one."""
    if len(shown) == len(pool):
        return True
    if not shown:
        return False
    least, ids = w(shown[-1]), {id(r) for r in shown}
    return all(w(r) <= least for r in pool if id(r) not in ids)


def more_line(c: Capped, what: str, where: str, less: str = "shorter",
              kept: str = "") -> str:
    """'... and 9,960 more kernels, shorter (`--json` lists every one)'. `less` only where
    every row left out weighs no more than the shown ones of its kind (h2 F4: "shorter" was
    said of a list holding the run's longest kernel); `kept`: what the rows `keep` asked
    for are ('slower by more than 5 %'), counted where some are left out."""
    of = f"{c.kept_left:,} of them {kept}; " if c.kept_left and kept else ""
    return (f"... and {c.left_out:,} more {what}" + (f", {less}" if c.lighter else "")
            + f" ({of}{where} lists every one)")
