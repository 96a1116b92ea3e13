"""The bench table flags a kernel whose first call `rooflab.measure` left out as a warm-up
(review r4 F6: a numba compile of 1.1 s against 12 ms calls), as `report`'s slow_runs
finding does; a kernel without such a note gets no flag."""

from __future__ import annotations

from rooflab.bench.check import FLAG_TEXT, check_floors
from rooflab.model.ceiling import Ceiling, Roof
from rooflab.model.kernel import Kernel

ROOF = Roof("box", "measured", compute=(Ceiling(1e11, "fp64", "vector"),),
            memory=(Ceiling(1e10, level="DRAM"),))
NOTE = "call 1 1.11 s (the first call: a warm-up, left out)"


def _kernel(meta):
    # 2e7 FLOP, 1.6e8 B: floor max(2e-4, 1.6e-2) = 16 ms; 19.4 ms measured: no below-floor
    return Kernel("reduce", flop={"fp64": 2e7}, bytes={"DRAM": 1.6e8}, seconds=0.0194,
                  meta=meta)


def test_a_left_out_warm_up_is_flagged():
    (k,) = check_floors(ROOF, (_kernel({"slow_runs_note": NOTE, "first_calls_left_out": 1}),))
    assert k.meta["flags"] == ["warm-up-left-out"]
    assert "warm-up" in FLAG_TEXT["warm-up-left-out"]


def test_no_note_no_flag():
    (k,) = check_floors(ROOF, (_kernel({}),))
    assert k.meta["flags"] == []
