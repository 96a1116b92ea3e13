"""KV cache bytes per token: computed by the footprint, printed on the memory line and in
the JSON (seed 004: TinyLlama 22.5 kB per token, 11 MB at 500 tokens)."""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main
from rooflab.hardware.resolve import load_roof
from rooflab.workloads.llm import (
    Request,
    Settings,
    analyze_llm,
    kv_bytes_per_sequence,
    kv_bytes_per_token,
    load_config,
)
from rooflab.workloads.llm.parallel import shard
from rooflab.workloads.llm.pipeline import heaviest_footprint

FP16 = Settings()

# Hand numbers: 2 (K and V) x layers x KV heads x head_dim x bytes per element.
HAND = {
    "tinyllama-1.1b": 2 * 22 * 4 * 64 * 2,      # 22,528 B (seed 004)
    "llama-2-7b": 2 * 32 * 32 * 128 * 2,        # 524,288 B (MHA: 32 KV heads)
    "llama-3-8b": 2 * 32 * 8 * 128 * 2,         # 131,072 B (GQA: 8 KV heads)
    "deepseek-v2-lite": (512 + 64) * 27 * 2,    # MLA: the latent, not per-head K/V
}


@pytest.mark.parametrize("name", sorted(HAND))
def test_per_token_is_the_hand_number(name):
    assert kv_bytes_per_token(load_config(name), FP16) == HAND[name]


def test_seed_004_tinyllama_at_500_tokens_is_11_mb():
    per = kv_bytes_per_token(load_config("tinyllama-1.1b"), FP16)
    assert per == 22528
    assert per * 500 == 11_264_000      # the seed's "11 MB"


@pytest.mark.parametrize("name", ["tinyllama-1.1b", "llama-2-7b", "deepseek-v2-lite"])
def test_footprint_agrees_with_per_token_by_construction(name):
    cfg = load_config(name)
    r = analyze_llm(cfg, load_roof("T4"), FP16, Request(batches=(3,), context=100))
    fp = r.footprint
    assert fp.kv_per_token == HAND[name]
    assert fp.kv == 3 * fp.context * fp.kv_per_token


def test_kv_dtype_scales_it():
    cfg = load_config("llama-2-7b")
    assert kv_bytes_per_token(cfg, Settings(kv="fp8")) == 524288 / 2


def test_sliding_window_per_token_is_the_growth_before_the_window_fills():
    mistral = load_config("mistral-7b")
    per = kv_bytes_per_token(mistral, FP16)
    assert per == 2 * 32 * 8 * 128 * 2
    assert kv_bytes_per_sequence(mistral, FP16, 100) == 100 * per
    # past the 4096-token window every layer stops growing
    assert kv_bytes_per_sequence(mistral, FP16, 8192) == 4096 * per


def test_tp_and_pp_footprints_are_per_device():
    cfg = load_config("llama-2-7b")
    tp2 = analyze_llm(cfg, load_roof("H100"), Settings(tp=2), Request())
    assert tp2.footprint.kv_per_token == 524288 / 2      # half the KV heads per device
    st = heaviest_footprint(cfg, FP16, pp=2, batch=1, context=640, prompt=512)
    assert st.kv_per_token == 524288 / 2                  # 16 of the 32 layers
    assert st.kv == 640 * st.kv_per_token
    assert kv_bytes_per_token(shard(cfg, 2), FP16) == 524288 / 2


def _llm(capsys, *args):
    assert main(["llm", *args]) == 0
    return capsys.readouterr().out


def test_memory_line_says_bytes_per_token(capsys):
    out = _llm(capsys, "tinyllama-1.1b", "--on", "T4", "--context", "500", "--phase", "decode")
    line = next(ln for ln in out.splitlines() if ln.startswith("memory"))
    assert "KV 14.4 MB (22.5 kB per token) + " in line          # 640 x 22,528 B
    out = _llm(capsys, "llama-2-7b", "--on", "A100", "--batch", "4", "--phase", "decode")
    line = next(ln for ln in out.splitlines() if ln.startswith("memory"))
    assert "(524 kB per token per sequence)" in line


def test_json_carries_bytes_per_token(capsys):
    d = json.loads(_llm(capsys, "llama-2-7b", "--on", "A100", "--json"))
    fp = d["llm"]["footprint"]
    assert fp["kv_bytes_per_token"] == 524288
    assert fp["kv_bytes"] == fp["kv_bytes_per_token"] * fp["context"]
