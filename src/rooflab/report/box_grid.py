"""A uniform grid of boxes, to find the few near a name without testing every one.

The HTML chart's names (slopes', ceilings', kernels') each try a few dozen spots, and every
spot was tested against every marker box: 20 000 kernels made ~1.9 million overlap tests,
~2 s of a ~10 s page (session 36, helper E). A box here is filed under each grid cell it
covers; a query reads the cells its own box covers. That is a superset of the boxes that
can overlap it (two boxes sharing more than a touch share a cell), so a caller applies
its own exact test to these and gets the same answer as from the full scan.
Pure: boxes as (left, bottom, right, top), in pixels or any units.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from .boxes import Box

# Cell side (pixels): about a marker's width (11 px), so a marker sits in one to four cells
# and a name's query reads a few dozen. Only the speed depends on it, never the answer.
GRID_CELL_PX = 16.0
# Cells past this many from the origin are folded into the last one: a box far outside the
# plot (a line's name off its edge) still has its cell, and a long one no endless list.
_FAR = 4096


@dataclass(frozen=True)
class BoxGrid:
    """boxes filed by cell: cells[(i, j)] are the indices of those covering cell (i, j);
    loose: those with a coordinate that is not a finite number (in every query's answer:
    no cell holds them, and the exact test decides)."""

    boxes: tuple
    cell: float
    cells: dict
    loose: tuple

    def near(self, box: Box) -> list[int]:
        """The indices (ascending) of every box that may share more than a touch with
        `box`: at least all those that do."""
        if not all(map(math.isfinite, box)):
            return list(range(len(self.boxes)))    # no cell to read: the full scan
        found = set(self.loose)
        for i in _span(box[0], box[2], self.cell):
            for j in _span(box[1], box[3], self.cell):
                found.update(self.cells.get((i, j), ()))
        return sorted(found)

    def nearby(self, box: Box) -> list:
        """The boxes of near(box), in the order given."""
        return [self.boxes[i] for i in self.near(box)]


def box_grid(boxes: Sequence[Box], cell: float = GRID_CELL_PX) -> BoxGrid:
    """The grid of `boxes` (kept in their order, duplicates included)."""
    cells: dict = {}
    loose = []
    for k, b in enumerate(boxes):
        if not all(map(math.isfinite, b)):
            loose.append(k)
            continue
        for i in _span(b[0], b[2], cell):
            for j in _span(b[1], b[3], cell):
                cells.setdefault((i, j), []).append(k)
    return BoxGrid(tuple(boxes), cell, cells, tuple(loose))


def _span(lo: float, hi: float, cell: float) -> range:
    """The cells (one axis) from lo to hi, either way round, folded at _FAR: folding is
    monotone, so two spans that meet still meet."""
    a, b = (lo, hi) if lo <= hi else (hi, lo)
    first = min(max(math.floor(a / cell), -_FAR), _FAR)
    last = min(max(math.floor(b / cell), -_FAR), _FAR)
    return range(first, last + 1)
