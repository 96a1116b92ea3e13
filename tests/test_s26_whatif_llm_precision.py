"""`rooflab whatif --precision fp8` on an `rooflab llm` step keeps what `llm --act fp8`
keeps at the model dtype (review s26 r3 F6): norms, RoPE, the residual add and SwiGLU, and
the embedding's output; 8-bit activations exist at the GEMM inputs only."""

from __future__ import annotations

import pytest

from rooflab.hardware.resolve import load_roof
from rooflab.model.whatif_precision import change_precision
from rooflab.workloads.llm import decode_step, load_config
from rooflab.workloads.llm.settings import settings_for

WIDE = ("embedding", "rope", "residual_add", "norm", "act_mul", "final_norm")


def _step(**kw):
    cfg = load_config("llama-3-8b")
    return decode_step(cfg, settings_for(cfg, **kw), 4, 512)


def _by_name(kernels):
    return {k.name: k for k in kernels}


def test_fp8_keeps_norms_rope_residual_at_the_model_dtype():
    # r3: norm 1.16 us vs llm's 2.31 us, residual_add 1.54 vs 3.09 us (halved), the
    # embedding 0.67x. llm --act fp8: a decode norm call reads x and writes y at bf16 and
    # reads gamma: 4 x 4096 x 2 x 2 + 4096 x 2 = 73,728 B, 64 calls
    before = _step()
    w = change_precision(load_roof("a100"), before.kernels(), "fp8")
    after = _by_name(new for _, new in w.moves)
    want = _by_name(_step(act="fp8", weights="fp8", kv="fp8").kernels())
    assert want["norm"].bytes["DRAM"] == 64 * 73_728
    for name in WIDE:
        assert after[name].bytes["DRAM"] == pytest.approx(want[name].bytes["DRAM"],
                                                          rel=1e-12), name
        assert after[name].precision == want[name].precision == "bf16", name
    # the embedding's rows are fp8 weights (1 B) now, its ids and output stay:
    # 4 x 4096 x 1 + 4 x 8 + 4 x 4096 x 2 = 49,184 B
    assert after["embedding"].bytes["DRAM"] == 49_184
    assert after["embedding"].meta["bytes_split"]["weights"] == 4 * 4096
    # the GEMMs move (their outputs at bf16 in llm: within 0.1 %)
    for name in ("q_proj", "gate_proj", "lm_head"):
        assert after[name].bytes["DRAM"] == pytest.approx(want[name].bytes["DRAM"],
                                                          rel=2e-3), name
        assert after[name].precision == "fp8"
    assert "keep the model dtype" in w.assumption


def test_wider_precision_still_moves_every_kernel():
    # fp32: llm --act fp32 runs norms and the residual in fp32 too, so they double
    before = _step()
    w = change_precision(load_roof("a100"), before.kernels(), "fp32")
    after = _by_name(new for _, new in w.moves)
    old = _by_name(before.kernels())
    for name in ("norm", "residual_add", "rope"):
        assert after[name].bytes["DRAM"] == pytest.approx(2 * old[name].bytes["DRAM"])
    assert "keep the model dtype" not in w.assumption
