"""Advice by bound (seed 000 §5) with predicted points worked out by hand.

Toy roof without a launch floor (so efficiency = floor / time): fp32 vector 1e12 FLOP/s,
tf32 tensor 4e12, fp16 tensor 8e12, DRAM 1e11 B/s, L2 4e11 B/s. Ridge fp32/DRAM = 10.
The model: new time = max(FLOP / P, bytes / B) / efficiency (efficiency kept unless the
advice is about efficiency, which moves it to 80 %).
"""

import pytest

from rooflab.model import Ceiling, Kernel, Roof, analyze
from rooflab.model.advice import TARGET_EFFICIENCY, advise, efficiency_of

ROOF = Roof("toy", compute=(Ceiling(1e12, precision="fp32", unit="vector"),
                            Ceiling(4e12, precision="tf32", unit="tensor"),
                            Ceiling(8e12, precision="fp16", unit="tensor")),
            memory=(Ceiling(1e11, level="DRAM"), Ceiling(4e11, level="L2")))


def advice_for(kernel, roof=ROOF):
    p = analyze(roof, [kernel]).primary()[0]
    return p, {a.action.split(" ")[0]: a for a in advise(p, roof, kernel)}


def test_memory_bound():
    # AI 0.1, floor 1e10 / 1e11 = 0.1 s, measured 0.25 s -> efficiency 0.4.
    p, a = advice_for(Kernel("stream", {"fp32": 1e9}, {"DRAM": 1e10}, seconds=0.25))
    assert p.bound == "memory" and efficiency_of(p).efficiency == pytest.approx(0.4)
    # Fuse with one neighbour: bytes / 2 -> floor 0.05 s / 0.4 = 0.125 s: 2x, AI 0.2.
    assert a["fuse"].speedup == pytest.approx(2.0) and a["fuse"].new_ai == pytest.approx(0.2)
    # Tiling, unknown op kind: AI x 4 = 0.4 (below the ridge 10) -> bytes 2.5e9,
    # floor 0.025 s / 0.4 = 0.0625 s: 4x.
    assert a["tile"].speedup == pytest.approx(4.0) and a["tile"].new_ai == pytest.approx(0.4)
    # Lower precision fp32 -> fp16 (the roof's fp16 tensor ceiling): bytes / 2 -> 2x.
    assert a["use"].speedup == pytest.approx(2.0) and "fp16" in a["use"].action
    # Coalescing: the same point at 80 % instead of 40 %: 0.1 / 0.8 = 0.125 s -> 2x.
    assert a["coalesce"].speedup == pytest.approx(0.25 / (0.1 / TARGET_EFFICIENCY))
    assert a["coalesce"].shrinks == "below roof"
    # L2 residency is not offered: one call moves 10 GB, far more than an L2.
    assert "keep" not in a
    # Every piece says what it assumes and gives a predicted point.
    assert all(x.assumption and x.new_flop_per_s > 0 for x in a.values())


def test_memory_bound_small_working_set_gets_l2():
    # 1e7 B per call fits a 50 MB L2: served at 4e11 B/s -> floor 1e7 / 4e11 = 2.5e-5 s,
    # at the current efficiency 0.4 (1e-4 s floor, 2.5e-4 s measured): 6.25e-5 s -> 4x.
    p, a = advice_for(Kernel("small", {"fp32": 1e6}, {"DRAM": 1e7}, seconds=2.5e-4))
    assert a["keep"].speedup == pytest.approx(4.0)


def test_elementwise_gets_no_tiling():
    _, a = advice_for(Kernel("add", {"fp32": 1e9}, {"DRAM": 8e9}, seconds=0.16,
                             meta={"op": "elementwise"}))
    assert "tile" not in a and "fuse" in a


def test_compute_bound():
    # AI 1000, floor 1e12 / 1e12 = 1 s, measured 2 s -> efficiency 0.5.
    p, a = advice_for(Kernel("gemm", {"fp32": 1e12}, {"DRAM": 1e9}, seconds=2.0,
                             meta={"op": "matmul"}))
    assert p.bound == "compute"
    # Tensor cores (tf32 4e12): floor 0.25 s / 0.5 = 0.5 s -> 4x.
    by_action = {x.action: x for x in a.values()}
    tc = next(x for x in by_action.values() if "tensor cores" in x.action)
    assert tc.speedup == pytest.approx(4.0) and tc.shrinks == "roof"
    # Occupancy/ILP: 80 % instead of 50 %: 1 / 0.8 = 1.25 s -> 1.6x.
    assert a["raise"].speedup == pytest.approx(1.6)


def test_compute_bound_lower_precision():
    # fp32 -> fp16 tensor 8e12 and bytes / 2: floor max(0.125, 0.005) = 0.125 s / 0.5 -> 8x.
    p = analyze(ROOF, [Kernel("gemm", {"fp32": 1e12}, {"DRAM": 1e9}, seconds=2.0)]).points[0]
    low = [x for x in advise(p, ROOF, Kernel("gemm", {"fp32": 1e12}, {"DRAM": 1e9}))
           if x.action.startswith("use fp16")]
    assert low and low[0].speedup == pytest.approx(8.0)
    assert low[0].new_ai == pytest.approx(2000.0)     # 1e12 / 5e8


def test_overhead_bound():
    roof = Roof("toy", compute=ROOF.compute, memory=ROOF.memory, overhead_s=5e-6)
    # 100 calls x 5 us = 0.5 ms launch of a 1 ms total; work 0.5 ms for a 1e-7 s floor.
    p, a = advice_for(Kernel("tiny", {"fp32": 1e3}, {"DRAM": 1e4}, seconds=1e-3, calls=100),
                      roof)
    assert p.bound == "overhead"
    # CUDA graph: launch removed, work as now: 0.5 ms -> 2x.
    assert a["capture"].speedup == pytest.approx(2.0)
    # Fuse into a neighbour: no launch and half the bytes: 0.25 ms -> 4x.
    assert a["fuse"].speedup == pytest.approx(4.0)
    # Batch the 100 calls: one 5 us launch + 0.5 ms work -> 1e-3 / 5.05e-4.
    assert a["batch"].speedup == pytest.approx(1e-3 / 5.05e-4)


def test_latency_bound():
    # floor 0.1 s, measured 2 s: 5 % of roof. More parallelism to 80 %: 0.125 s -> 16x.
    p, a = advice_for(Kernel("slow", {"fp32": 1e9}, {"DRAM": 1e10}, seconds=2.0))
    assert p.bound == "latency"
    assert a["expose"].speedup == pytest.approx(16.0)


def test_sorted_best_first():
    p = analyze(ROOF, [Kernel("s", {"fp32": 1e9}, {"DRAM": 1e10}, seconds=0.25)]).points[0]
    out = advise(p, ROOF, Kernel("s", {"fp32": 1e9}, {"DRAM": 1e10}))
    assert [x.speedup for x in out] == sorted((x.speedup for x in out), reverse=True)


def test_decode_gemv_gets_batching_and_int4():
    # Seed 004's decode b=1 on a 320 GB/s roof: 2.2e9 FLOP and bytes (AI 1), 15 ms;
    # floor 2.2e9 / 3.2e11 = 6.875 ms -> efficiency 0.458.
    roof = Roof("T4", compute=(Ceiling(65e12, precision="fp16", unit="tensor"),),
                memory=(Ceiling(320e9, level="DRAM"),))
    k = Kernel("decode", {"fp16": 2.2e9}, {"DRAM": 2.2e9}, seconds=0.015, meta={"op": "gemv"})
    p, a = advice_for(k, roof)
    # Batch 8: 8x the FLOP for the same weight bytes (AI 8, still far below the ridge 203):
    # same time, 8 requests -> 8x per request.
    assert a["batch"].new_ai == pytest.approx(8.0) and a["batch"].speedup == pytest.approx(8.0)
    # int4 weights: 2 -> 0.5 byte: AI 4 (seed 004), bytes / 4 -> 4x.
    assert a["store"].new_ai == pytest.approx(4.0) and a["store"].speedup == pytest.approx(4.0)
