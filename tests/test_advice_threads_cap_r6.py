"""Review r6 F2: a one-thread numba 256^3 matmul (tiled) on a 2-thread EPYC roof was told
"spread the work over every core (threads): 25.43x"; two threads can give at most 2x, and
the blocking / loop-order lever, the one that helped (3.16x), was never given.

Hand numbers (the review's rs.json, roof from its me.json):
- FLOP 2 x 256^3 = 33,554,432; DRAM bytes 3 x 256^2 x 8 = 1,572,864 (AI 21.3, right of
  the ridge 102e9 / 15.3e9 = 6.67): floor 33,554,432 / 102e9 = 328.97 us.
- time 10.5 ms, one call, dispatch floor 268 ns: work 10.499732 ms at 3.13 % of roof.
- old: threads to 80 % of the roof: 328.97 us / 0.8 + 268 ns = 411.47 us -> 25.52x.
- threads capped at 2 / 1 = 2x: 10.5 ms / 2 = 5.25 ms.
- per thread (1 thread reaching 80 % of its half of the roof, 40 % of it):
  328.97 us / 0.4 + 268 ns = 822.68 us -> 12.763x.
"""

from __future__ import annotations

import pytest

from rooflab.model import Ceiling, Kernel, Roof, analyze
from rooflab.model.diagnose import diagnose

EPYC = Roof("AMD EPYC measured (2 threads)", kind="measured",
            compute=(Ceiling(102e9, precision="fp64", unit="vector"),),
            memory=(Ceiling(15.3e9, level="DRAM"),), overhead_s=268e-9)
FLOOR = 2 * 256 ** 3 / 102e9


def _advice(**meta) -> dict:
    k = Kernel("mm_tiled", flop={"fp64": 2 * 256 ** 3}, bytes={"DRAM": 3 * 256 ** 2 * 8},
               seconds=10.5e-3, meta=meta)
    (d,) = diagnose(analyze(EPYC, [k]))
    assert d.point.bound == "latency"
    return {a.action.split(" (")[0].split(",")[0]: a for a in d.advice}


def test_threads_give_at_most_roof_threads_over_kernel_threads():
    acts = _advice(threads=1)
    spread = acts["spread the work over every core"]
    assert spread.speedup == pytest.approx(2.0)               # was 25.52x
    assert spread.new_seconds == pytest.approx(5.25e-3)
    assert "threads give at most 2.00x: it ran on 1 thread" in spread.assumption
    block = acts["block for cache and fix the loop order"]
    assert block.new_seconds == pytest.approx(FLOOR / 0.4 + 268e-9, rel=1e-9)
    assert block.speedup == pytest.approx(12.763, rel=1e-4)
    assert "the other 12.8x of the gap" in spread.detail      # 12.763: 3 figures from 10
    # the best lever is now the per-thread one
    (d,) = diagnose(analyze(EPYC, [Kernel("mm_tiled", flop={"fp64": 2 * 256 ** 3},
                                          bytes={"DRAM": 3 * 256 ** 2 * 8},
                                          seconds=10.5e-3, meta={"threads": 1})]))
    assert d.advice[0].action.startswith("block for cache and fix the loop order")


def test_no_thread_count_is_taken_as_one_and_said():
    acts = _advice()
    spread = acts["spread the work over every core"]
    assert spread.speedup == pytest.approx(2.0)
    assert "not recorded (no meta 'threads'; assumed 1)" in spread.assumption
    assert "assumed 1 (not recorded)" in acts["block for cache and fix the loop order"].assumption


def test_every_core_busy_still_gets_only_the_per_thread_lever():
    acts = _advice(threads=2)
    assert "spread the work over every core" not in acts
    block = acts["block for cache and fix the loop order"]
    # 2 threads of 2 reaching 80 % of the roof: 328.97 us / 0.8 + 268 ns -> 25.52x
    assert block.speedup == pytest.approx(10.5e-3 / (FLOOR / 0.8 + 268e-9), rel=1e-6)
