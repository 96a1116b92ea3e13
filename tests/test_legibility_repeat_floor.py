"""Review r1_legible F11: the time floor max(FLOP / P, bytes / B), the ridge P / B and the
attainable min(P, B x AI) are model/roofline.py's; placement, the advice's predictions and
the LLM step's fused floor call them instead of writing them again. Each test swaps the
one formula a module uses and checks the module follows, then the real numbers by hand."""

from __future__ import annotations

import pytest

from rooflab.hardware.resolve import load_roof
from rooflab.model import advice_core, placement, roofline
from rooflab.model.ceiling import Ceiling, Roof
from rooflab.model.kernel import Kernel
from rooflab.workloads.llm import load_config, timing
from rooflab.workloads.llm.kernels import decode_step
from rooflab.workloads.llm.settings import settings_for

# seed 004's T4: 65 TFLOP/s fp16 tensor, 320 GB/s; ridge 203.125 FLOP/B
T4 = Roof("T4", "nominal", compute=(Ceiling(65e12, precision="fp16", unit="tensor"),),
          memory=(Ceiling(320e9, level="DRAM"),))
MATMUL = Kernel("matmul 4096", {"fp16": 2 * 4096**3}, {"DRAM": 3 * 2 * 4096**2},
                seconds=4e-3)
ADD = Kernel("x + 1", {"fp16": 1e8}, {"DRAM": 4e8}, seconds=2e-3)


def _place(kernel: Kernel) -> placement.Point:
    return placement.analyze_point(T4, kernel, "DRAM", T4.compute[0], T4.memory[0],
                                   kernel.seconds)


def test_placement_by_hand():
    p = _place(MATMUL)
    assert p.ridge == 203.125
    assert p.ai == pytest.approx(4096 / 3)                      # 1365.3 FLOP/B
    assert p.attainable_flop_per_s == 65e12 and p.bound == "compute"
    assert p.floor_s == 2 * 4096**3 / 65e12                     # 2.114 ms
    q = _place(ADD)                                             # AI 0.25
    assert q.attainable_flop_per_s == 320e9 * 0.25 and q.bound == "memory"
    assert q.floor_s == 4e8 / 320e9                             # 1.25 ms
    assert not hasattr(placement, "BOUNDS")                     # dead (review F2)


def test_placement_uses_roofline(monkeypatch):
    monkeypatch.setattr(placement, "time_floor", lambda f, b, p, bw: 7.0)
    monkeypatch.setattr(placement, "ridge", lambda p, bw: 1000.0)
    monkeypatch.setattr(placement, "attainable", lambda ai, p, bw: 1e12)
    p = _place(MATMUL)
    assert (p.floor_s, p.ridge, p.attainable_flop_per_s) == (7.0, 1000.0, 1e12)


def test_the_roofline_functions_are_the_ones_placement_calls():
    assert placement.time_floor is roofline.time_floor
    assert placement.ridge is roofline.ridge and placement.attainable is roofline.attainable
    assert advice_core.time_floor is roofline.time_floor
    assert timing.time_floor is roofline.time_floor


def test_the_advice_prediction_uses_the_one_floor(monkeypatch):
    # _advice, the one place advice predicts a time (a test-only copy of its formula,
    # predict_seconds, stayed green while _advice could change: review s28 R1 #13)
    from dataclasses import replace

    p = _place(MATMUL)
    e = advice_core.efficiency_of(p)
    kw = dict(flop=1e9, nbytes=1e6, peak=1e12, bw=1e9, launch_s=1e-6, efficiency=0.5,
              assumption="")
    # by hand: 1 us of launches + max(1e9 / 1e12, 1e6 / 1e9) / 0.5 = 1 us + 2 ms
    a = advice_core._advice(p, e, "try", "why", "roof", **kw)
    assert a.new_seconds == pytest.approx(1e-6 + 2e-3)
    # untimed: the larger of work and launches, 2 ms
    a = advice_core._advice(p, replace(e, untimed=True), "try", "why", "roof", **kw)
    assert a.new_seconds == pytest.approx(2e-3)
    monkeypatch.setattr(advice_core, "time_floor", lambda f, b, p, bw: 1.0)
    a = advice_core._advice(p, e, "try", "why", "roof", **{**kw, "launch_s": 0.5})
    assert a.new_seconds == 2.5
    # _advice predicts once with it: new_seconds = launches + 1.0 / efficiency
    a = advice_core._advice(p, e, "try", "why", "roof", flop=1.0, nbytes=1.0, peak=1.0,
                            bw=1.0, efficiency=0.25, assumption="")
    assert a.new_seconds == pytest.approx(e.launch_s + 4.0)


def test_the_llm_fused_floor_uses_the_one_floor(monkeypatch):
    cfg, roof = load_config("gpt2"), load_roof("H100")
    t = timing.time_step(decode_step(cfg, settings_for(cfg), 1, 640), roof)
    p = max(t.points, key=lambda q: q.flop)
    hand = max(t.step.flop / p.peak_flop_per_s, t.step.bytes / p.bytes_per_s)
    assert t.fused_floor_s == hand
    assert t.fused_floor_s == pytest.approx(t.step.bytes / 3.35e12)   # batch 1: bytes bind
    monkeypatch.setattr(timing, "time_floor", lambda f, b, pk, bw: 42.0)
    assert t.fused_floor_s == 42.0


def test_scalar_attainable_matches_the_array_path():
    import numpy as np

    for ai in (0.0, 0.25, 203.125, 1365.3, float("inf")):
        one = roofline.attainable(ai, 65e12, 320e9)
        arr = roofline.attainable(np.array([ai]), 65e12, 320e9)[0]
        assert type(one) is float and one == arr
    with pytest.raises(Exception, match="must be >= 0"):
        roofline.attainable(-1.0, 65e12, 320e9)
    with pytest.raises(Exception, match="must be >= 0"):
        roofline.attainable(float("nan"), 65e12, 320e9)
