"""s27 v3-F2, v3-F5: `whatif --fuse` on a train step (fixer fN).

F2: the fused kernel took the first member's unit, so SwiGLU's act_mul (vector) fused into
down_proj (tensor) timed the GEMM's 47.3 TFLOP at H100's bf16 *vector* ceiling (134 TFLOP/s):
58.1 ms -> 353 ms, fusion 6x slower. Now it runs on the unit most of its dominant
precision's FLOP ran on. By hand, H100 SXM (989.5 TFLOP/s bf16 tensor, 3.35 TB/s), the
numbers of `rooflab train llama-2-7b --on H100 --batch 4 --seq 4096`:
  down_proj: 47 278 999 994 368 FLOP / 989.5e12 = 47.780 ms (compute; 18.7 GB / 3.35e12
             = 5.59 ms)
  act_mul:   17 314 086 912 FLOP (3 a element), 34.6 GB / 3.35e12 = 10.337 ms (memory)
  fused:     (47 278 999 994 368 + 17 314 086 912) / 989.5e12 = 47.798 ms, compute; its
             bytes (the larger member's, 34.6 GB) take 10.3 ms: above the GEMM alone by the
             epilogue's 17 GFLOP (17.5 us), below the two apart (58.117 ms).
F5: the fused kernel's meta was only {"fused": [...]}, so it read as batch 1 and whatif
said "batch 4 -> 1 sequences per step ... 0.25x the tokens/s" for a fusion that saves time.
"""

from __future__ import annotations

import json

import pytest
from tests.cli_inproc import run_cli

from rooflab.hardware.resolve import load_roof
from rooflab.model import Kernel
from rooflab.model.retime import _floor
from rooflab.model.whatif import fuse

H100 = load_roof("H100")
GEMM_FLOP, EW_FLOP = 47278999994368.0, 17314086912.0
GEMM_B, EW_B = 18723373056.0, 34628173824.0


def _pair(batch_a=4, batch_b=4) -> list[Kernel]:
    meta = {"op": "act_mul"} | ({"batch": batch_a} if batch_a else {})
    return [Kernel("act_mul", {"bf16": EW_FLOP}, {"DRAM": EW_B}, calls=32, unit="vector",
                   meta=meta),
            Kernel("down_proj", {"bf16": GEMM_FLOP}, {"DRAM": GEMM_B}, calls=32, unit="tensor",
                   meta={"op": "linear"} | ({"batch": batch_b} if batch_b else {}))]


@pytest.mark.parametrize("order", [["act_mul", "down_proj"], ["down_proj", "act_mul"]])
def test_an_epilogue_fused_into_a_gemm_runs_on_tensor(order):
    w = fuse(H100, _pair(), order)
    new = w.moves[0][1]
    assert new.unit == "tensor"       # was "vector": act_mul comes first in the file
    ew, gemm = sorted((k for k, _ in w.moves), key=lambda k: k.name)
    (gemm_apart, _), (ew_apart, _) = _floor(H100, gemm), _floor(H100, ew)
    assert gemm_apart == pytest.approx(GEMM_FLOP / 989.5e12)          # 47.780 ms
    assert ew_apart == pytest.approx(EW_B / 3.35e12)                  # 10.337 ms
    fused, _ = _floor(H100, new)
    assert fused == pytest.approx((GEMM_FLOP + EW_FLOP) / 989.5e12)   # 47.798 ms (was 353)
    # never slower than the two apart, and the GEMM plus only the epilogue's FLOP
    assert gemm_apart < fused < gemm_apart + 18e-6 < gemm_apart + ew_apart


def test_the_unit_is_that_of_the_dominant_precisions_flop():
    gemm = Kernel("gemm", {"fp8": 4e12}, {"DRAM": 1e9}, unit="tensor")
    scale = Kernel("scale", {"bf16": 1e9}, {"DRAM": 2e9}, unit="vector", meta={"op": "mul"})
    new = fuse(H100, [scale, gemm], ["scale", "gemm"]).moves[0][1]
    assert new.unit == "tensor" and new.precision == "fp8"   # bf16 part: vector (epilogue)
    # a GEMM with no unit (any: its fastest) beside a vector op keeps "any"
    free = Kernel("gemm", {"bf16": 4e12}, {"DRAM": 1e9})
    assert fuse(H100, [scale, free], ["scale", "gemm"]).moves[0][1].unit is None


@pytest.mark.parametrize(("a", "b", "want"), [(4, 4, 4), (4, 2, None), (4, None, None),
                                              (None, None, None)])
def test_the_fused_kernel_keeps_its_members_common_batch(a, b, want):
    new = fuse(H100, _pair(a, b), ["act_mul", "down_proj"]).moves[0][1]
    assert new.meta.get("batch") == want
    assert new.meta["fused"] == ["act_mul", "down_proj"]


@pytest.fixture(scope="module")
def step(tmp_path_factory):
    path = tmp_path_factory.mktemp("v3") / "step.json"
    done = run_cli("train", "llama-2-7b", "--on", "H100", "--batch", "4", "--seq", "4096",
                   "-o", str(path), "-q")
    assert done.returncode == 0, done.stderr
    return str(path)


def test_whatif_fuse_on_a_train_step(step):
    done = run_cli("whatif", step, "--fuse", "act_mul,down_proj", "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    new = next(k for k in doc["after"]["kernels"] if k["name"] == "act_mul+down_proj")
    assert new["unit"] == "tensor" and new["meta"]["batch"] == 4
    assert doc["total_after_work_floor_s"] < doc["total_before_work_floor_s"]   # 842 -> 832 ms
    text = run_cli("whatif", step, "--fuse", "residual_add.bwd,norm.bwd")
    assert text.returncode == 0, text.stderr
    out = " ".join(text.stdout.split())
    assert "saved 7.69 ms" in out
    assert "tokens/s" not in out and "batch 4 -> 1" not in out
