"""`whatif --fuse` holds the fused kernel to the unit rule a single kernel is held to
(model/held_unit.py; session 31 hb). The members' own `unit` alone was read: two kernels
that give none made a fused kernel of no unit, and its name ('a+b') says no kind, so it ran
at the fastest ceiling, the tensor cores, which an n-body force loop cannot use.

Hand numbers (A100 80GB SXM: fp16 vector 78 TFLOP/s, fp16 tensor 312, launch floor 5 us).
32768 bodies, fp16, meta op 'nbody' (a known non-matrix kind: held to fp16 vector).
integrateBodies: 20 FLOP a pair, 20 x 2^30 = 21,474,836,480 FLOP, timed 400 us, floor
275.3 us. computePotential: 10 a pair, 10,737,418,240 FLOP, 200 us, floor 137.7 us. Their
work 600 - 2 x 5 = 590 us runs at 412.98 / 590 = 0.700 of their roof. Fused: 32,212,254,720
FLOP, floor at fp16 vector 412.98 us: 5 + 412.98 / 0.700 = 595 us (one launch saved). At
the tensor ceiling (the old reading): 5 + 103.24 / 0.700 = 152.5 us, 3.93x, a gain the
hardware does not have.
"""

from __future__ import annotations

import json

import pytest

from rooflab import load_roof
from rooflab.cli.main import main
from rooflab.model import Kernel
from rooflab.model.whatif import fuse

A100 = "A100 80GB SXM"
PAIRS = 2 ** 30   # 32768^2
BODIES = [
    {"name": "integrateBodies", "flop": {"fp16": 20 * PAIRS}, "bytes": {"DRAM": 32768 * 14},
     "seconds": 400e-6, "meta": {"op": "nbody"}},
    {"name": "computePotential", "flop": {"fp16": 10 * PAIRS},
     "bytes": {"DRAM": 32768 * 10}, "seconds": 200e-6, "meta": {"op": "nbody"}},
]


def _kernels() -> list[Kernel]:
    return [Kernel(k["name"], k["flop"], k["bytes"], seconds=k["seconds"], meta=k["meta"])
            for k in BODIES]


def test_fused_nbody_kernels_stay_on_the_vector_unit():
    w = fuse(load_roof(A100), _kernels(), ["integrateBodies", "computePotential"])
    new = w.moves[0][1]
    assert new.unit == "vector"
    assert new.seconds == pytest.approx(595e-6, 1e-6)
    (point,) = w.after.points
    assert point.peak_flop_per_s == pytest.approx(78e12)


def test_the_cli_json_says_the_unit_and_the_time(tmp_path, capsys):
    path = tmp_path / "k.json"
    path.write_text(json.dumps({"schema_version": 1, "kernels": BODIES}))
    capsys.readouterr()
    assert main(["whatif", str(path), "--on", A100, "--fuse",
                 "integrateBodies,computePotential", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    (fused,) = d["after"]["kernels"]
    assert fused["unit"] == "vector"
    assert d["moved"]["after_s"] == pytest.approx(595e-6, 1e-6)
    assert d["total_after_work_floor_s"] == pytest.approx(30 * PAIRS / 78e12, 1e-6)


def test_a_gemm_with_its_epilogue_keeps_the_tensor_ceiling():
    # held_unit gives a GEMM of no unit no unit (its fastest, tensor) and a GELU vector:
    # the GEMM's FLOP dominate, so the fused kernel stays on the tensor ceiling.
    # 2 x 4096^3 fp16 FLOP in 500 us (floor 440.5 us) and a GELU of 8 FLOP an element
    roof = load_roof(A100)
    gemm = Kernel("gemm_4096", {"fp16": 2 * 4096 ** 3}, {"DRAM": 3 * 4096 ** 2 * 2},
                  seconds=500e-6, meta={"op": "matmul"})
    gelu = Kernel("gelu_4096", {"fp16": 8 * 4096 ** 2}, {"DRAM": 2 * 4096 ** 2 * 2},
                  seconds=50e-6, meta={"op": "gelu"})
    w = fuse(roof, [gemm, gelu], ["gemm_4096", "gelu_4096"])
    assert w.moves[0][1].unit is None
    (point,) = w.after.points
    assert point.peak_flop_per_s == pytest.approx(312e12)
