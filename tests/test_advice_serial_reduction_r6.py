"""Review r6 F5: a serial numba sum (`for i: s += x[i]`, no fastmath, one thread) was told
"stream with full-width SIMD loads on every core"; its time is the loop-carried add.

Hand numbers: n = 1e7 fp64, FLOP n - 1 = 9,999,999, DRAM bytes 8n = 8e7; 16.5 ms (the
review's rs.json). On a 15.3 GB/s DRAM roof the floor is 8e7 / 15.3e9 = 5.2288 ms: the
work runs at 5.2288 / (16.5 - 0.000268) = 31.7 % of it, under the 50 % taken as paced by
its adds. Its efficiency lever (80 % of the roof): 5.2288 ms / 0.8 + 268 ns = 6.5363 ms,
16.5 / 6.5363 = 2.524x, now named for the add chain.
"""

from __future__ import annotations

import pytest

from rooflab.model import Ceiling, Kernel, Roof, analyze
from rooflab.model.diagnose import diagnose

EPYC = Roof("AMD EPYC measured (2 threads)", kind="measured",
            compute=(Ceiling(102e9, precision="fp64", unit="vector"),),
            memory=(Ceiling(15.3e9, level="DRAM"),), overhead_s=268e-9)


def _actions(**meta) -> dict:
    k = Kernel("nb_sum", flop={"fp64": 1e7 - 1}, bytes={"DRAM": 8e7}, seconds=16.5e-3,
               meta={"op": "reduction", **meta})
    (d,) = diagnose(analyze(EPYC, [k]))
    assert d.point.bound == "memory"
    return {a.action: a for a in d.advice}


def test_a_one_thread_reduction_is_told_to_break_its_add_chain():
    acts = _actions(threads=1)
    (serial,) = [a for k, a in acts.items() if k.startswith("break the reduction's serial")]
    assert "partial sums" in serial.action and "fastmath=True" in serial.action
    assert "prange" in serial.action
    assert serial.speedup == pytest.approx(16.5e-3 / (8e7 / 15.3e9 / 0.8 + 268e-9), rel=1e-6)
    assert serial.speedup == pytest.approx(2.524, rel=1e-3)
    assert not [k for k in acts if k.startswith("stream with full-width SIMD loads")]


def test_a_parallel_or_unrecorded_reduction_keeps_the_streaming_lever():
    for meta in ({"threads": 2}, {}):
        acts = _actions(**meta)
        assert [k for k in acts if k.startswith("stream with full-width SIMD loads")]
        assert not [k for k in acts if k.startswith("break the reduction's")]
