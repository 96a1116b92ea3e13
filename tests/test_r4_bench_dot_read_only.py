"""Review r4 (CPU, numba) F7: the zoo's dot_fp64 (2 inputs, 0 outputs: nothing stored, no
write-allocate to leave out) carried meta op "elementwise", so it was judged against the
STREAM-counted DRAM ceiling (25.2 GB/s: 209 %, below-floor) while sum_fp64 and gemv_fp64
were judged against DRAM (real traffic) 37.8 GB/s. Its op is now "dot", a read-only kind
(byte_convention.READ_ONLY_KINDS)."""

from __future__ import annotations

import pytest
from zoo_clock import TINY, TickClock

from rooflab.bench import zoo
from rooflab.model.analysis import analyze
from rooflab.model.ceiling import Ceiling, Roof

G = 1e9
COUNTED = "STREAM triad, 24 B/element, write-allocate not counted"
ROOF = Roof("t", "measured",
            compute=(Ceiling(117.7 * G, "fp64", "vector", provenance="measured"),),
            memory=(Ceiling(25.2 * G, level="DRAM", provenance="measured", method=COUNTED),
                    Ceiling(37.8 * G, level="DRAM (real traffic)", provenance="measured")))


def test_zoo_dot_is_judged_read_only_like_sum_and_gemv():
    ks = zoo.run_zoo(None, ["dot_fp64", "sum_fp64"], plan=TINY, small=True,
                     clock=TickClock())
    dot = next(k for k in ks if k.name == "dot_fp64")
    assert dot.meta["op"] == "dot"                       # was "elementwise"
    # small: 2^14 elements, 2 x 8 B read each = 262144 B, 2 FLOP each = 32768 FLOP
    assert (dot.bytes["DRAM"], dot.flop["fp64"]) == (262144, 32768)
    points = {p.kernel: p for p in analyze(ROOF, ks).primary()}
    # AI 32768 / 262144 = 0.125; attainable 0.125 x 37.8 GB/s = 4.725 GFLOP/s (old: 0.125
    # x 25.2 = 3.15), the same ceiling sum_fp64 is judged on
    assert points["dot_fp64"].bytes_per_s == 37.8 * G
    assert points["dot_fp64"].attainable_flop_per_s == pytest.approx(4.725 * G)
    assert points["sum_fp64"].bytes_per_s == points["dot_fp64"].bytes_per_s

