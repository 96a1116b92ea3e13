"""Review s18 r5 F10: one Nsight Compute kernel (100 % of the time: 20 pt markers) had its
L2 square (AI 4.05) half under its DRAM circle (AI 5.03). A kernel's level markers are
now no larger than the distance between its two closest levels (never under 8 pt)."""

from __future__ import annotations

import math

from rooflab.model import Ceiling, Kernel, Roof
from rooflab.report.chart import roofline_data
from rooflab.report.chart_layout_cost import _to_pt
from rooflab.report.marker_size import POINT_SIZE, SIZE_MAX

GPP_ROOF = Roof("RTX 4060 Laptop (profiler peaks)", "derived",
                compute=(Ceiling(156e9, precision="fp64", unit="vector", provenance="derived"),),
                memory=(Ceiling(4.98e12, level="L1", provenance="derived"),
                        Ceiling(1.66e12, level="L2", provenance="derived"),
                        Ceiling(256e9, level="DRAM", provenance="derived")))


def _gpp(name="sigma_gpp_gpu_34", seconds=30.6, rate=85.2e9, ais=(5.03, 4.05, 2.0)):
    flop = rate * seconds
    return Kernel(name, {"fp64": flop}, dict(zip(("DRAM", "L2", "L1"),
                                                 (flop / a for a in ais), strict=True)),
                  seconds=seconds)


def test_one_kernels_close_levels_do_not_cover_each_other():
    d = roofline_data([GPP_ROOF], [_gpp()])
    pts = {p.level: p for p in d.points}
    at = {lv: _to_pt(p.ai, p.flop_per_s, d.xlim, d.ylim) for lv, p in pts.items()}
    gap = math.dist(at["DRAM"], at["L2"])          # log10(5.03 / 4.05) = 0.094 decade
    assert gap < SIZE_MAX                           # 20 pt markers would overlap
    sizes = {p.size for p in pts.values()}
    assert sizes == {max(POINT_SIZE, gap)}          # one size for the kernel (old: 20)


def test_levels_far_apart_keep_their_time_share_size():
    d = roofline_data([GPP_ROOF], [_gpp(ais=(50.0, 5.0, 0.5))])
    assert {p.size for p in d.points} == {SIZE_MAX}
