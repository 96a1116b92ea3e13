"""Audit 7: where the arrays the bandwidth probe streams sit in memory.

The quick probe's DRAM triad read 36-38 GB/s while the default probe read 55 on the
2-vCPU Zen 4 VM; the suspicion was array aliasing (STREAM pads its arrays for that).
Measured (docs/probe.md): not the cause, the host's DRAM bandwidth itself flips between
~25, ~37 and ~55 GB/s within seconds, and a C STREAM triad flips with it. What layout does
matter a little: slots placed apart within a 2 MiB huge page read DRAM triad 2-5 % faster
than wherever malloc put them (for the quick probe's sizes malloc left a and b 4 KiB apart
modulo 2 MiB). These tests pin the layout the pool now guarantees, for any allocator.
"""

from __future__ import annotations

import numpy as np
import pytest

from rooflab.probe.cpu import bandwidth as bw
from rooflab.probe.cpu.modes import MODES

MiB = 2**20
H = bw.HUGE_PAGE


def _dram_ws(mode: str, threads: int = 2, llc: float = 32 * MiB) -> float:
    spec = MODES[mode]
    return bw.sweep_sizes(spec.sweep_lo_bytes, spec.llc_multiple * llc / threads,
                          spec.sweep_step)[-1]


def _circular(x: int, y: int) -> int:
    d = abs(x - y) % H
    return min(d, H - d)


@pytest.mark.parametrize("mode", ["quick", "default"])
@pytest.mark.parametrize("kernel", ["copy", "add", "triad"])
def test_a_threads_arrays_are_spread_within_a_huge_page(mode, kernel):
    pytest.importorskip("numba", reason="the CPU probe needs numba (the [cpu] extra)")
    ws = _dram_ws(mode)       # quick: 256 MiB per thread, default: ~219 MiB
    k = bw.STREAM[kernel]
    n = bw.elements_for(k, ws)
    pool = bw.ArrayPool(ws)
    arrs = [pool.get(j, 2, n) for j in range(k.arrays)]
    for t in range(2):
        starts = [a[t].ctypes.data for a in arrs]
        assert all(s % 64 == 0 for s in starts)          # cache-line aligned rows
        for i in range(len(starts)):
            for j in range(i):
                # never at (nearly) the same place in a huge page, nor in a 4 KiB page
                assert _circular(starts[i], starts[j]) >= 64 * 1024
                assert starts[i] % 4096 != starts[j] % 4096


def test_views_keep_the_byte_accounting_exact():
    pytest.importorskip("numba", reason="the CPU probe needs numba (the [cpu] extra)")
    ws = _dram_ws("quick")
    n = bw.elements_for(bw.STREAM["triad"], ws)
    assert n == 11184768      # 256 MiB / 24 B, rounded down to 64 elements
    pool = bw.ArrayPool(ws)
    for j in range(3):
        v = pool.get(j, 2, n)
        # each thread's row is contiguous (the kernels run on rows[t, :n]); the rows lie
        # a whole number of huge pages apart, each first-touched by its own thread
        assert v.shape == (2, n) and v[0].flags.c_contiguous and v.dtype == np.float64
        assert pool.rows(j, 2, n).flags.c_contiguous and v.strides[0] % H == 0
        assert np.all(v[:, [0, -1]] == 1.0 + j)             # filled, first-touched
    # a larger request later regrows the slot at the same huge-page offset
    big = pool.get(1, 3, n)
    assert big.shape == (3, n) and big.ctypes.data % H == bw.slot_offset(1)


def test_slot_offsets_and_placement():
    assert [bw.slot_offset(j) for j in range(3)] == [64, 64 + 704 * 1024 + 64,
                                                     64 + 2 * (704 * 1024 + 64)]
    a = bw.placed(1000, bw.slot_offset(2), 2.5)
    assert a.size == 1000 and a.ctypes.data % H == bw.slot_offset(2) and a[999] == 2.5
