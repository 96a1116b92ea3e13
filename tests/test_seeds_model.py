"""The seeds' worked numbers, through the op functions and model.analyze / ridge.

Seed 000 (§4.2 kernel table) and seed 004 (T4 + TinyLlama) are the user's own examples.
"""

from __future__ import annotations

import pytest

from rooflab.model import Ceiling, Kernel, Roof, analyze, ridge
from rooflab.workloads import ops

# Seed 000 §4.3: the example GPU it plots against (measured): 280 TFLOP/s fp16, 1800 GB/s.
SEED000_ROOF = Roof("seed 000 GPU", "measured",
                    compute=(Ceiling(280e12, precision="fp32", provenance="measured"),),
                    memory=(Ceiling(1800e9, level="DRAM", provenance="measured"),))
# Seed 000 §4.2: name, FLOP, bytes, AI, achieved GFLOP/s, exactly as printed.
SEED000_TABLE = [
    ("elementwise_add", 2.1e6, 8.4e6, 0.25, 120),
    ("conv2d_3x3", 1.8e9, 2.4e8, 7.5, 850),
    ("gemm_1024", 2.1e9, 1.2e7, 175, 4200),
    ("softmax", 5.6e6, 1.1e7, 0.51, 95),
]
T4_MEASURED = Roof("T4", "measured",
                   compute=(Ceiling(50e12, precision="fp16", unit="tensor",
                                    provenance="measured"),),
                   memory=(Ceiling(270e9, level="DRAM", provenance="measured"),))


def test_seed000_ai_column_through_analyze():
    kernels = [Kernel(name, {"fp32": flop}, {"DRAM": nbytes}, seconds=flop / (gflops * 1e9))
               for name, flop, nbytes, _, gflops in SEED000_TABLE]
    points = {p.kernel: p for p in analyze(SEED000_ROOF, kernels).points}
    for name, _, _, ai, gflops in SEED000_TABLE:
        assert points[name].ai == pytest.approx(ai, rel=0.01), name
        assert points[name].achieved_flop_per_s == pytest.approx(gflops * 1e9)
    # Ridge 280e12 / 1.8e12 = 155.6: gemm_1024 (175) is the only one right of it.
    assert points["gemm_1024"].memory_bound_side is False
    assert all(points[n].memory_bound_side for n in ("elementwise_add", "conv2d_3x3", "softmax"))


def test_seed000_rows_from_shapes():
    # elementwise_add: 2^21 fp16 elements, one array in, one out (x + a scalar): 2.10e6 FLOP,
    # 8.39e6 B — the seed's 2.1e6 / 8.4e6 = 0.25. (Two fp16 arrays in would give 1/6.)
    add = ops.elementwise(2**21, "fp16")
    assert add.flop == pytest.approx(2.1e6, rel=0.01)
    assert add.bytes == pytest.approx(8.4e6, rel=0.01)
    assert add.ai == pytest.approx(0.25)
    # gemm_1024 in fp32: 2·1024³ = 2.15e9 FLOP, 3·1024²·4 = 1.26e7 B → AI 170.7. The seed
    # rounds both to 2.1e9 / 1.2e7 and divides the rounded figures: 175, 2.5 % higher.
    gemm = ops.matmul(1024, 1024, 1024, dtype="fp32")
    assert (gemm.flop, gemm.bytes) == (2 * 1024**3, 3 * 1024**2 * 4)
    assert gemm.ai == pytest.approx(170.67, rel=1e-4)
    assert 175 / gemm.ai == pytest.approx(1.025, abs=0.002)
    # softmax: 1400 × 1000 fp32, 4 FLOP per element (see ops.SOFTMAX_FLOP_PER_ELEMENT):
    # 5.6e6 FLOP, 1.12e7 B → 0.50; the seed prints 1.1e7 B and so 0.51.
    sm = ops.softmax(1400, 1000, "fp32")
    assert sm.flop == pytest.approx(5.6e6) and sm.bytes == pytest.approx(1.1e7, rel=0.02)
    assert sm.ai == pytest.approx(0.51, abs=0.011)
    # conv2d_3x3: 8 × 64 → 64 channels, 56 × 56, padding 1, fp32 gives the seed's FLOP
    # (1.85e9 ≈ 1.8e9), but its compulsory bytes are 1.3e7, not 2.4e8: the seed's bytes are
    # ~18× the compulsory traffic (an implementation without ideal reuse, e.g. im2col), so
    # its AI 7.5 comes from its own byte count (checked through analyze above), and the
    # compulsory model's AI of 142 is the ceiling that traffic could reach.
    conv = ops.conv2d(8, 64, 56, 56, 64, 3, 3, padding=1, dtype="fp32")
    assert conv.flop == pytest.approx(1.8e9, rel=0.03)
    assert 2.4e8 / conv.bytes == pytest.approx(18.5, rel=0.01)
    assert conv.ai == pytest.approx(142.4, rel=1e-3)


def test_seed004_tpot_point():
    # TinyLlama 1.1e9 fp16 parameters, one decode step at batch 1 is a matrix-vector product
    # over them: 2.2e9 FLOP, 2.2e9 B, AI ≈ 1. TPOT 15 ms.
    step = ops.gemv(1_100_000, 1000, "fp16")
    assert step.flop == pytest.approx(2.2e9) and step.ai == pytest.approx(1.0, rel=1e-3)
    (p,) = analyze(T4_MEASURED, [step.kernel(seconds=0.015)]).points
    assert p.achieved_flop_per_s == pytest.approx(147e9, rel=0.01)    # ≈ 147 GFLOP/s
    assert p.attainable_flop_per_s == pytest.approx(270e9, rel=0.01)  # the 270 GB/s slope at 1
    assert p.percent_of_roof == pytest.approx(54, abs=0.6)            # ≈ 54 %
    assert p.bound == "memory" and p.binding == "DRAM"
    assert p.along_slope == pytest.approx(185, rel=0.01)             # distance 2: to the ridge


def test_seed004_ridges():
    assert ridge(50e12, 270e9) == pytest.approx(185.2, abs=0.05)     # measured example
    assert ridge(65e12, 320e9) == pytest.approx(203.1, abs=0.05)     # T4 nominal
    assert ridge(312e12, 2039e9) == pytest.approx(153.0, abs=0.05)   # A100 80 GB fp16 tensor
    (p,) = analyze(T4_MEASURED, [ops.matmul(4096, 4096, 4096).kernel()]).points
    assert p.ridge == pytest.approx(185.19, rel=1e-4)
    assert p.bound == "compute" and p.binding == "fp16 tensor"
