"""rooflab's LLM counts next to LLM-Viewer's (benchmarks/llm_viewer_parity.py): the numbers
both tools agree on are pinned to hand-calculated values, and so are the known, explained
differences, so that neither side can drift silently. llama-2-7b: hidden 4096, 32 heads of
128, 32 layers, intermediate 11008, vocab 32000; fp16 everywhere."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "llm_viewer_parity.py"
H, L, FF, V, CTX = 4096, 32, 11008, 32000, 1024


@pytest.fixture(scope="module")
def lv():
    spec = importlib.util.spec_from_file_location("llm_viewer_parity", BENCH)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod        # dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod


def _rows(res):
    return {r.name: r for r in res["rows"]}


@pytest.fixture(scope="module")
def decode1(lv):
    return lv.compare("decode", 1, CTX, False)


@pytest.fixture(scope="module")
def decode16(lv):
    return lv.compare("decode", 16, CTX, False)


@pytest.fixture(scope="module")
def prefill(lv):
    return lv.compare("prefill", 1, CTX, False)


def test_projections_agree_exactly(lv, decode1, decode16, prefill):
    q = _rows(decode1)["q_proj"]
    # a MAC is 2 OPs in both; the weight is read once, in fp16
    assert q.lv["OPs"] == q.rl_flop == 2 * H * H
    assert q.lv["load_weight"] == q.rl_split["weights"] == H * H * 2
    assert q.lv["load_act"] + q.lv["store_act"] == q.rl_split["activations"] == 2 * H * 2
    for res, tokens in ((decode1, 1), (decode16, 16), (prefill, CTX)):
        rows = _rows(res)
        for name in ("q_proj", "k_proj", "v_proj", "out_proj", "gate_proj", "up_proj",
                     "down_proj"):
            r = rows[name]
            assert r.rl_flop == r.lv["OPs"], name
            assert r.rl_split.get("weights", 0) == r.lv["load_weight"], name
            assert r.rl_split.get("kv", 0) == r.lv["store_kv_cache"], name
            assert r.rl_time == pytest.approx(lv.lv_time(r.lv)), name
        # the new token's K (and V) go to the cache: tokens x 4096 x 2 B, in both
        assert rows["k_proj"].lv["store_kv_cache"] == rows["k_proj"].rl_split["kv"] == \
            tokens * H * 2
        assert rows["down_proj"].lv["OPs"] == 2 * tokens * FF * H


def test_decode_attention_agrees(lv, decode1):
    rows = _rows(decode1)
    qk, sv = rows["qk_matmul"], rows["sv_matmul"]
    assert qk.lv["OPs"] == qk.rl_flop == 2 * CTX * 128 * 32
    assert sv.lv["OPs"] == sv.rl_flop == 2 * CTX * 128 * 32
    assert qk.lv["load_kv_cache"] == qk.rl_split["kv"] == CTX * H * 2      # K of 1024 tokens
    # Q read + scores written, in both
    assert qk.lv["load_act"] + qk.lv["store_act"] == qk.rl_split["activations"] == \
        (H + 32 * CTX) * 2
    flash = _rows(lv.compare("decode", 1, CTX, True))["fused_attention"]
    assert flash.lv["load_kv_cache"] == flash.rl_split["kv"] == 2 * CTX * H * 2   # K and V


def test_known_differences_are_pinned(decode1, decode16, prefill):
    rows = _rows(decode1)
    # lm_head: same weights; LLM-Viewer counts its MACs once (batch*hidden*vocab*1)
    head = rows["lm_head"]
    assert head.lv["load_weight"] == head.rl_split["weights"] == H * V * 2
    assert head.rl_flop == 2 * H * V and head.lv["OPs"] == H * V
    # ... and leaves the batch out of its activations
    head16 = _rows(decode16)["lm_head"]
    assert head16.rl_split["activations"] == 16 * (H + V) * 2
    assert head16.lv["load_act"] + head16.lv["store_act"] == (H + V) * 2
    # softmax 4 vs 5 OPs per score; norm 4 (RMSNorm) vs 7; same activation bytes
    assert rows["softmax"].rl_flop == 4 * 32 * CTX and rows["softmax"].lv["OPs"] == 5 * 32 * CTX
    assert rows["attn_norm"].rl_flop == 4 * H and rows["attn_norm"].lv["OPs"] == 7 * H
    assert rows["attn_norm"].rl_split["weights"] == H * 2 and rows["attn_norm"].lv[
        "load_weight"] == 0
    # residual add: rooflab reads 2 inputs, LLM-Viewer 1
    add = rows["attn_add"]
    assert add.rl_split["activations"] == 3 * H * 2
    assert add.lv["load_act"] + add.lv["store_act"] == 2 * H * 2
    # SwiGLU over intermediate (rooflab) vs hidden (LLM-Viewer)
    act = rows["mlp_act"]
    assert act.rl_flop == 3 * FF and act.rl_split["activations"] == 3 * FF * 2
    assert act.lv["OPs"] == 2 * H and act.lv["load_act"] + act.lv["store_act"] == 3 * H * 2
    # causal prefill: rooflab counts P(P+1)/2 scores per head, LLM-Viewer P x P
    qk = _rows(prefill)["qk_matmul"]
    assert qk.lv["OPs"] == 2 * CTX * CTX * 128 * 32
    assert qk.rl_flop == 2 * (CTX * (CTX + 1) // 2) * 128 * 32


def test_step_totals(decode1, decode16, prefill):
    proj = 4 * H * H + 3 * H * FF
    lv_weights = L * proj * 2 + H * V * 2
    assert decode1["lv_total"]["weights"] == lv_weights == 13_214_154_752
    # rooflab adds the embedding row and 65 RMSNorm gammas (2 x 32 + final), 8 kB each
    assert decode1["rl_total"]["weights"] == lv_weights + 66 * H * 2
    assert decode1["lv_total"]["kv"] == decode1["rl_total"]["kv"] == \
        L * (2 * CTX * H * 2 + 2 * H * 2)
    # TPOT floors on LLM-Viewer's A100 numbers (1555 GB/s): within 0.3 %
    assert decode1["lv_total"]["time"] == pytest.approx(8.854e-3, rel=1e-3)
    assert decode1["rl_total"]["time"] / decode1["lv_total"]["time"] == pytest.approx(1, abs=1e-3)
    assert decode16["rl_total"]["time"] / decode16["lv_total"]["time"] == pytest.approx(
        1, abs=3e-3)
    # TTFT: rooflab 3.8 % longer (mlp_act over 11008, two-input adds, RoPE, embedding)
    assert prefill["rl_total"]["time"] / prefill["lv_total"]["time"] == pytest.approx(
        1.038, abs=2e-3)


def test_lv_time_is_the_per_layer_roofline(lv, decode1):
    q = _rows(decode1)["q_proj"].lv
    assert lv.lv_time(q) == pytest.approx((H * H * 2 + 2 * H * 2) / 1555e9)
    qk = _rows(lv.compare("prefill", 1, CTX, False))["q_proj"].lv   # compute-bound
    assert lv.lv_time(qk) == pytest.approx(2 * CTX * H * H / 312e12)


def test_every_difference_is_explained(lv, capsys):
    assert lv.main() == 0
    out = capsys.readouterr().out
    assert "UNEXPLAINED" not in out
    assert "LLM-VIEWER BUG" in out and "CONVENTION" in out
