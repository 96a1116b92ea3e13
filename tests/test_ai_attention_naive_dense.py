"""`ai attention --naive --causal` counts the dense FLOP an eager kernel does, as `rooflab llm
--attn naive` does (llm/kernels.py attention); flash keeps the causal (unmasked) count."""
import json

import pytest

from rooflab.cli.main import main
from rooflab.workloads import ops
from rooflab.workloads.llm.config import load_config
from rooflab.workloads.llm.kernels import prefill_step
from rooflab.workloads.llm.settings import Settings


def _ai(capsys, *argv):
    assert main(["ai", "attention", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_naive_causal_flop_are_dense_by_hand(capsys):
    # H 4, Lq 16, Lkv 64, D 64, fp16: dense 4·4·16·64·64 = 1,048,576 FLOP;
    # bytes q 8,192 + kv 65,536 + o 8,192 + scores 4·2·4·16·64 = 32,768 -> 114,688, AI 9.142857
    d = _ai(capsys, "--heads", "4", "--q-len", "16", "--kv-len", "64", "--head-dim", "64",
            "--causal", "--naive")
    assert d["flop"] == 1_048_576
    assert d["bytes"] == 114_688
    assert d["ai"] == pytest.approx(1_048_576 / 114_688)
    assert d["shape"]["scores"] == 904   # bottom-right: Σ(i + 49), i = 0..15, the unmasked ones
    assert "904 of 1024 pairs a head unmasked" in d["byte_model"]
    assert "computes the masked ones too" in d["byte_model"]


def test_flash_causal_keeps_the_unmasked_count(capsys):
    # flash, bottom-right: 4·4·904·64 = 925,696; top-left Σ(i + 1) = 136 -> 139,264
    base = ("--heads", "4", "--q-len", "16", "--kv-len", "64", "--head-dim", "64", "--causal")
    assert _ai(capsys, *base)["flop"] == 925_696
    assert _ai(capsys, *base, "--causal-align", "top-left")["flop"] == 139_264
    # naive is dense whichever way the mask sits
    assert _ai(capsys, *base, "--causal-align", "top-left", "--naive")["flop"] == 1_048_576


def test_naive_prefill_dense_and_equal_to_llm_naive():
    # TinyLlama prefill 1024: 32 heads, D 64 -> per layer 4·32·1024²·64 = 8,589,934,592 FLOP
    op = ops.attention(1, 32, 1024, 1024, 64, kv_heads=4, flash=False, causal=True)
    assert op.flop == 8_589_934_592
    flash = ops.attention(1, 32, 1024, 1024, 64, kv_heads=4, flash=True, causal=True)
    assert flash.flop == 4 * 32 * (1024 * 1025 // 2) * 64   # 4,297,064,448
    cfg = load_config("tinyllama-1.1b")
    naive = prefill_step(cfg, Settings(attn="naive"), 1, 1024)
    llm = naive.op("attn_scores").op.flop + naive.op("attn_values").op.flop
    assert llm == pytest.approx(op.flop)
