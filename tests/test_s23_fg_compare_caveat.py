"""s23 r1 mutant F2: compare's caveat when most of the matched total's change is in
matches the U test lets pass (compare_gate.total_caveat: doubtful part x 2 > the move).

Hand numbers (medians of the samples below):
- steady: 10.00..10.09 ms -> median (10.04 + 10.05) / 2 = 10.045 ms; after, shifted down
  by 1 ms (or 2 ms) -> 9.045 (8.045) ms. Ten against ten fully separated: a change.
- noisy: 6, 14, 10, 8, 12, 7, 13, 9, 11, 10 -> median (10 + 10) / 2 = 10 ms; after 5, 13, 8,
  7, 11, 6, 12, 8, 10, 9 -> sorted 5 6 7 8 8 9 10 11 12 13, median (8 + 9) / 2 = 8.5 ms. The
  sets overlap almost entirely: within the noise. Its part of the move is 1.5 ms.
"""

from __future__ import annotations

import statistics

import pytest

from rooflab.model import Kernel
from rooflab.model.compare import compare_kernels

MS = 1e-3
NOISY_BEFORE = (6, 14, 10, 8, 12, 7, 13, 9, 11, 10)
NOISY_AFTER = (5, 13, 8, 7, 11, 6, 12, 8, 10, 9)


def _k(name: str, ms: list[float]) -> Kernel:
    xs = tuple(x * MS for x in ms)
    return Kernel(name, {"fp32": 1e6}, {"DRAM": 1e6}, seconds=statistics.median(xs),
                  samples=xs)


def _notes(steady_shift_ms: float):
    before = [_k("steady", [10 + 0.01 * i for i in range(10)]), _k("noisy", NOISY_BEFORE)]
    after = [_k("steady", [10 - steady_shift_ms + 0.01 * i for i in range(10)]),
             _k("noisy", NOISY_AFTER)]
    c = compare_kernels(before, after)
    m = {x.name: x for x in c.timed}
    assert m["noisy"].within_noise is True and m["steady"].within_noise is False
    assert m["noisy"].before.seconds - m["noisy"].after.seconds == pytest.approx(1.5 * MS)
    return [n for n in c.notes if "matched total" in n]


def test_a_move_mostly_within_the_noise_gets_the_caveat():
    # moved (10.045 - 9.045) + (10 - 8.5) = 2.5 ms; the doubtful 1.5 ms x 2 = 3 > 2.5
    assert _notes(1.0) == [
        "the matched total moved 2.5 ms, and 1.5 ms of change is in matches within the noise"
        " or that cannot be told apart (noisy): the total speed-up is mostly not a change "
        "these samples tell"]


def test_a_move_mostly_in_real_changes_gets_no_caveat():
    # moved 2 + 1.5 = 3.5 ms; the doubtful 1.5 ms x 2 = 3 <= 3.5: most of it is told
    assert _notes(2.0) == []
