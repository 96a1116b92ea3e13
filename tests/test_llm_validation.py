"""Issue 7 validation, small: a random-weight Llama built with transformers decodes on this
CPU; rooflab's parameter count and matmul FLOP equal PyTorch's, and the measured TPOT sits
below rooflab's floor on a roof measured in the same run (benchmarks/llm_validation.py)."""

from __future__ import annotations

import pytest
from benchmark_script import load_benchmark

pytest.importorskip("torch")
pytest.importorskip("transformers")



@pytest.fixture(scope="module")
def bench():
    return load_benchmark("llm_validation")


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_small_llama_decode_sits_below_the_roof(bench):
    roof = bench.read_bandwidth_roof(nbytes=128e6, reps=3)
    v = bench.validate(bench.SMALL, roof, batch=1, prompt=64, steps=8)
    assert v.params_rooflab == v.params_torch                 # counted from the config
    assert v.flop_rooflab == pytest.approx(v.flop_torch, rel=1e-9)   # FlopCounterMode
    assert len(v.tpot_samples) == 8 and min(v.tpot_samples) > 0
    # the point is below the roof: a real step takes at least the bytes/bandwidth floor
    assert v.ratio > 1.0
    assert 0 < v.percent_of_roof < 100
