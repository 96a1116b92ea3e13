"""s21 x3 F3: the "raise occupancy and ILP" lever of a vector kernel is priced at the no-FMA
ceiling of its instruction mix where that is under the 80 % target: GPP's fp64 mix of 46 %
FMA tops out at (1 + 0.46) / 2 = 73 % of the peak, so a kernel at 55 % of its roof gains at
most 0.73 / 0.55 = 1.33x, not 0.80 / 0.55 = 1.45x."""

from __future__ import annotations

import pytest

from rooflab.model import Ceiling, Kernel, Roof, analyze
from rooflab.model.diagnose import diagnose
from rooflab.model.machine import Machine

ROOF = Roof("GPU", "nominal", compute=(Ceiling(1e12, precision="fp64", unit="vector"),),
            memory=(Ceiling(1e11, level="DRAM"),))


def _lever(meta: dict) -> float:
    # AI 100 (1e10 FLOP, 1e8 B), compute-bound at 1 TFLOP/s: floor 10 ms; timed 10/0.55 ms
    k = Kernel("gpp", {"fp64": 1e10}, {"DRAM": 1e8}, seconds=1e-2 / 0.55, meta=meta)
    (d,) = diagnose(analyze(ROOF, [k]), machine=Machine("gpu"))
    return next(a.speedup for a in d.advice if a.action.startswith("raise occupancy"))


def test_the_mix_caps_the_occupancy_lever():
    assert _lever({"fma_share": {"fp64": 0.46}}) == pytest.approx(0.73 / 0.55, rel=1e-6)


def test_without_a_mix_the_target_is_80_percent():
    assert _lever({}) == pytest.approx(0.80 / 0.55, rel=1e-6)
    # a mix at or above 60 % FMA leaves 80 % reachable: no cap
    assert _lever({"fma_share": {"fp64": 0.7}}) == pytest.approx(0.80 / 0.55, rel=1e-6)


def test_a_memory_side_kernel_is_not_held_to_its_mix():
    # the GPP reduction's dadd-only mix (s = 0: 50 % of the FLOP peak) does not cap a kernel
    # held by bandwidth: AI 0.1 (1e7 FLOP, 1e8 B), floor 1 ms at 100 GB/s, timed at 25 %
    k = Kernel("red", {"fp64": 1e7}, {"DRAM": 1e8}, seconds=1e-3 / 0.25,
               meta={"fma_share": {"fp64": 0.0}})
    (d,) = diagnose(analyze(ROOF, [k]), machine=Machine("gpu"))
    assert all("no-FMA ceiling" not in a.assumption for a in d.advice)
