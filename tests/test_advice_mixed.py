"""Advice that names the slow part of a mixed-precision kernel (advice.mixed_part_advice).

Hand numbers, A100 figures (fp16 tensor 312, fp16 vector 78, fp32 vector 19.5 TFLOP/s,
DRAM 2039 GB/s): a GEMM of 9e9 fp16 tensor FLOP with a 1e9 FLOP fp32 epilogue.
At the roof the fp16 part takes 9e9 / 312e12 = 28.846 us, the fp32 part
1e9 / 19.5e12 = 51.282 us: 10 % of the FLOP, 51.282 / 80.128 = 64 % of the time; the
weighted ceiling is 1e10 / 80.128 us = 124.8 TFLOP/s.
  fp32 part on fp16 vector: 1e10 / (28.846 + 12.821 us) = 240 TFLOP/s (1.92x): the
  headline, since an epilogue is elementwise work that stays on vector units;
  on fp16 tensor (if matrix-shaped or fused onto the MMA): 1e10 / (28.846 + 3.205 us) =
  312 TFLOP/s (2.50x), the aside.
"""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main
from rooflab.model import Ceiling, Kernel, Roof, analyze
from rooflab.model.advice import advise
from rooflab.model.advice_core import efficiency_of
from rooflab.model.ceiling import kernel_ceiling

# the A100's figures without a launch floor, so efficiency = work floor / measured time
ROOF = Roof("A100-like", compute=(Ceiling(312e12, precision="fp16", unit="tensor"),
                                  Ceiling(78e12, precision="fp16", unit="vector"),
                                  Ceiling(19.5e12, precision="fp32", unit="vector")),
            memory=(Ceiling(2039e9, level="DRAM"),))


def gemm(flop=None, nbytes=1e7, seconds=1e-4, unit="tensor"):
    return Kernel("gemm_epilogue", flop or {"fp16": 9e9, "fp32": 1e9}, {"DRAM": nbytes},
                  seconds=seconds, unit=unit, meta={"op": "gemm"})


def mixed(roof, k):
    p = analyze(roof, [k]).primary()[0]
    return p, [a for a in advise(p, roof, k) if a.action.startswith("move the")]


def test_parts_are_kept_on_the_weighted_ceiling():
    held = kernel_ceiling(ROOF, {"fp16": 9e9, "fp32": 1e9}, "tensor", "fp16")
    (fp16, fp32) = held.parts
    assert (fp16.precision, fp16.ceiling.label) == ("fp16", "fp16 tensor")
    assert (fp32.precision, fp32.ceiling.label) == ("fp32", "fp32 vector")
    assert fp16.seconds_at_peak == pytest.approx(28.846e-6, rel=1e-4)
    assert fp32.seconds_at_peak == pytest.approx(51.282e-6, rel=1e-4)
    assert held.ceiling.value == pytest.approx(124.8e12, rel=1e-4)
    # one precision: no parts
    assert kernel_ceiling(ROOF, {"fp16": 1e10}, "tensor", "fp16").parts == ()


def test_names_the_slow_part_and_predicts_the_fastest_ceiling():
    # bytes 1e7 take 4.9 us: compute still binds after the move. Work floor 80.128 us in
    # 100 us: efficiency 0.80128 (no other advice: at 80 %, no fp8 on this roof).
    p, (a,) = mixed(ROOF, gemm())
    assert p.bound == "compute"
    assert efficiency_of(p).efficiency == pytest.approx(0.80128, rel=1e-4)
    assert a.action == ("move the fp32 vector part (10.0 % of the FLOP, 64.0 % of the time at "
                        "the roof) to fp16 vector")
    # kept efficiency: 41.667 us at the roof / 0.80128 = 52.0 us: 1.923x, 192.3 TFLOP/s
    assert a.new_seconds == pytest.approx(52.0e-6, rel=1e-4)
    assert a.speedup == pytest.approx(100 / 52.0, rel=1e-4)
    assert a.new_flop_per_s == pytest.approx(1e10 / 52.0e-6, rel=1e-4)
    assert a.shrinks == "roof"
    assert "51.3 us of the 80.1 us" in a.detail
    assert "125 TFLOP/s -> 240 TFLOP/s (1.92x)" in a.detail
    # the tensor-unit figure is the aside: it needs the work matrix-shaped or fused
    assert ("on fp16 tensor (312 TFLOP/s), if the work is matrix-shaped or fused onto the "
            "matrix units, 312 TFLOP/s (2.50x)") in a.detail
    assert "binds instead" not in a.detail
    assert "accuracy allows fp16" in a.assumption and "80 % of roof" in a.assumption


def test_one_step_down_only():
    # an fp8 tensor ceiling (624 TFLOP/s) is not a target for an fp32 epilogue
    fp8 = Roof("with fp8", compute=(*ROOF.compute, Ceiling(624e12, precision="fp8",
                                                           unit="tensor")),
               memory=ROOF.memory)
    _, (a,) = mixed(fp8, gemm())
    assert a.action.endswith("to fp16 vector")
    assert a.speedup == pytest.approx(100 / 52.0, rel=1e-4)


def test_vector_target_when_no_tensor_ceiling_is_in_reach():
    # an fp8 GEMM (9e9 FLOP on fp8 tensor 624e12: 14.423 us) with a 1e9 fp32 epilogue
    # (51.282 us) on a roof without fp16/bf16/tf32 tensor ceilings: the fp32 part's
    # targets are fp32, tf32, bf16, fp16; only fp16 vector (78e12) is faster. Weighted
    # 1e10 / 65.705 us = 152.2 TFLOP/s -> 1e10 / (14.423 + 12.821 us) = 367.1 TFLOP/s:
    # 65.705 / 27.244 = 2.4118x at the kept efficiency.
    roof = Roof("fp8 only", compute=(Ceiling(624e12, precision="fp8", unit="tensor"),
                                     Ceiling(78e12, precision="fp16", unit="vector"),
                                     Ceiling(19.5e12, precision="fp32", unit="vector")),
                memory=ROOF.memory)
    p, (a,) = mixed(roof, gemm({"fp8": 9e9, "fp32": 1e9}))
    assert p.peak_flop_per_s == pytest.approx(152.195e12, rel=1e-4)
    assert a.action == ("move the fp32 vector part (10.0 % of the FLOP, 78.0 % of the time at "
                        "the roof) to fp16 vector")
    assert a.speedup == pytest.approx(2.4118, rel=1e-4)
    assert "152 TFLOP/s -> 367 TFLOP/s (2.41x)" in a.detail
    assert "matrix-shaped" not in a.detail and "epilogue" not in a.assumption


def test_slowest_part_being_the_majority_gets_none():
    # a vector kernel: fp16 part 9e9 / 78e12 = 115.38 us, fp32 part 51.28 us: the slowest
    # part is fp16, 90 % of the FLOP (the kernel's own precision)
    _, none = mixed(ROOF, gemm(unit="vector", seconds=2.5e-4))
    assert none == []


def test_memory_bound_is_left_to_the_bytes():
    # 1e9 bytes: AI 10 < ridge 124.8e12 / 2039e9 = 61.2
    p, none = mixed(ROOF, gemm(nbytes=1e9, seconds=6e-4))
    assert p.memory_bound_side and none == []


def test_slow_part_as_majority_gets_none():
    # 4e9 fp16 tensor + 6e9 fp32: fp32 is 60 % of the FLOP (and the kernel's precision)
    _, none = mixed(ROOF, gemm({"fp16": 4e9, "fp32": 6e9}, seconds=4e-4))
    assert none == []


def test_report_json_on_the_a100_catalog(tmp_path, capsys):
    # 1e8 bytes take 1e8 / 2039e9 = 49.044 us: at 240 TFLOP/s (41.67 us) DRAM binds.
    # Launch floor 5 us: work 95 us, efficiency 80.128 / 95 = 0.84346; predicted
    # 5 + 49.044 / 0.84346 = 63.146 us: 100 / 63.146 = 1.5836x.
    path = tmp_path / "k.json"
    path.write_text(json.dumps({"kernels": [
        {"name": "gemm_epilogue", "flop": {"fp16": 9e9, "fp32": 1e9}, "bytes": {"DRAM": 1e8},
         "seconds": 1e-4, "unit": "tensor"}]}))
    assert main(["report", str(path), "--on", "A100", "--json"]) == 0
    (d,) = json.loads(capsys.readouterr().out)["diagnosis"]
    a = d["advice"][0]
    assert a["action"].startswith("move the fp32 vector part (10.0 % of the FLOP, 64.0 % of the "
                                  "time at the roof) to fp16 vector")
    assert a["new_seconds"] == pytest.approx(63.146e-6, rel=1e-4)
    assert a["speedup"] == pytest.approx(1.5836, rel=1e-4)
    assert "DRAM binds instead (49 us of bytes" in a["detail"]
    # the Markdown report (shared with HTML) carries the same row
    md = tmp_path / "r.md"
    assert main(["report", str(path), "--on", "A100", "-o", str(md)]) == 0
    text = md.read_text()
    assert "move the fp32 vector part" in text and "1.58x" in text
