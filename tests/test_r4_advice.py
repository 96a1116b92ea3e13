"""Review r4 F5 and F3: a hand-written naive 512^3 fp64 matmul on a 2-thread EPYC roof.

Hand numbers (review r4_cpu.md):
- FLOP 2 x 512^3 = 268,435,456. DRAM bytes (each operand moved once) 3 x 512^2 x 8 =
  6,291,456: DRAM AI 268,435,456 / 6,291,456 = 42.67. L3 bytes (ijk: every B load misses L1,
  64 B per multiply-add) 64 x 512^3 = 8,589,934,592: L3 AI 0.03125.
- F5: the weights (B, k x n = 512^2 x 8 = 2,097,152 B) are 1/3 of the DRAM bytes; the old
  weights' floor took the *L3* AI over that DRAM share: 0.03125 x 3 = 0.0938 (the "upper
  bound" 3.00x). Of one level: 42.67 / (1/3) = 128 = 2 x 512^3 / 2,097,152, so the shape's
  42.7 caps it, and the L3 ridge 69.2e9 / 192e9 = 0.3604 binds: 0.3604 / 0.03125 = 11.53x.
  Without a shape the old code read M = 1 off the L3 AI (0.03125 x 8 / 2 = 0.125 rows <=
  1.5: "a GEMV"); the DRAM AI gives 42.67 x 8 / 2 = 171 rows: not a GEMV, no batching.
- F3: meta threads 2 = the roof's "(2 threads)": no "spread the work over every core".
"""

from __future__ import annotations

import pytest

from rooflab.model import Ceiling, Kernel, Roof, analyze
from rooflab.model.diagnose import diagnose
from rooflab.model.weight_traffic import weight_share

EPYC = Roof("AMD EPYC measured (2 threads)", kind="measured",
            compute=(Ceiling(69.2e9, precision="fp64", unit="vector"),),
            memory=(Ceiling(192e9, level="L3"), Ceiling(10.04e9, level="DRAM")),
            overhead_s=425e-9)
FLOP = 2 * 512 ** 3
SHAPE = {"m": 512, "n": 512, "k": 512}


def _naive(**meta) -> Kernel:
    return Kernel("mm_naive_512", flop={"fp64": FLOP},
                  bytes={"DRAM": 3 * 512 ** 2 * 8, "L3": 64 * 512 ** 3}, seconds=0.394,
                  meta={"op": "matmul", "threads": 2, **meta})


def _advice(k: Kernel) -> dict:
    (d,) = diagnose(analyze(EPYC, [k]))
    return {a.action: a for a in d.advice}


def test_square_matmul_without_shape_is_not_a_gemv():
    assert weight_share(_naive(), "matmul", FLOP / (64 * 512 ** 3), "fp64") is None
    acts = _advice(_naive())
    assert not [a for a in acts if a.startswith("batch")]   # was "batch 8 requests ..."
    assert not any("M = 1" in a.assumption for a in acts.values())


def test_tiling_bound_of_a_512_cube_is_its_shape_not_the_l3_ai_over_a_dram_share():
    acts = _advice(_naive(shape=SHAPE))
    (tile,) = [a for k, a in acts.items() if k.startswith("block for cache reuse")]
    assert "its shape allows AI 42.7" in tile.assumption      # was 0.0938
    assert tile.speedup == pytest.approx((69.2 / 192) / (1 / 32), rel=1e-3)   # 11.53x, was 3.00x


def test_latency_bound_kernel_on_every_core_is_not_told_to_spread():
    blocked = Kernel("mm_blocked_512", flop={"fp64": FLOP},
                     bytes={"DRAM": 3 * 512 ** 2 * 8}, seconds=0.0758,
                     meta={"op": "matmul", "threads": 2, "shape": SHAPE})
    acts = _advice(blocked)
    assert not [a for a in acts if a.startswith("spread the work")]
    (lever,) = [a for k, a in acts.items() if k.startswith("block for cache and fix the loop")]
    assert "already runs on 2 threads" in lever.detail
    # one thread of two: spreading is still the lever
    one = Kernel("mm", flop={"fp64": FLOP}, bytes={"DRAM": 3 * 512 ** 2 * 8}, seconds=0.0758,
                 meta={"op": "matmul", "threads": 1, "shape": SHAPE})
    assert [a for a in _advice(one) if a.startswith("spread the work over every core")]
