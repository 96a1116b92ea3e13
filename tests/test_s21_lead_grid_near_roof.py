"""s21 x3 F2: a grid with fewer blocks than half the SMs is latency-bound only while the
kernel also runs below 80 % of its roof. 64 blocks on 132 SMs reading 94 % of a 3.35 TB/s DRAM
roof is held by DRAM (fusion's gain is not capped to 1.06x); the GPP reduction's 4 blocks on
24 SMs at 16 % stays latency (tests/test_s18_f3_ncu_advice.py)."""

from __future__ import annotations

from rooflab.model import Ceiling, Kernel, Roof, analyze


def _roof() -> Roof:
    return Roof("H100-like", "nominal", compute=(Ceiling(67e12, precision="fp32"),),
                memory=(Ceiling(3.35e12, level="DRAM"),), overhead_s=5e-6)


def _k(fraction: float) -> Kernel:
    # AI 0.25: attainable 0.25 x 3.35e12 = 837.5 GFLOP/s; 1e9 FLOP, 4e9 B
    att = 0.25 * 3.35e12
    return Kernel("small_grid", {"fp32": 1e9}, {"DRAM": 4e9}, seconds=1e9 / (fraction * att),
                  meta={"grid": "(64, 1, 1)", "block": "(256, 1, 1)", "sms": 132})


def test_a_small_grid_near_its_roof_is_memory_bound():
    (p,) = analyze(_roof(), [_k(0.94)]).points
    assert round(p.percent_of_roof) == 94 and p.bound == "memory"


def test_a_small_grid_far_below_its_roof_is_latency_bound():
    (p,) = analyze(_roof(), [_k(0.30)]).points
    assert round(p.percent_of_roof) == 30 and p.bound == "latency"
