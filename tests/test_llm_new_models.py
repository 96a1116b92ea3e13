"""Models released after the first LLM configs (gpt-oss, Qwen3, DeepSeek-V3, Llama 4), read
from their real config.json texts (tests/data/llm_configs/README.md names each source):
parameter counts against the model cards, mxfp4 weight bytes against gpt-oss's checkpoint
size, and KV-cache bytes per token counted by hand."""

import json
from pathlib import Path

import pytest

from rooflab.cli.main import main
from rooflab.workloads.llm.config import load_config, parse_config
from rooflab.workloads.llm.footprint import (
    kv_bytes_per_sequence,
    kv_bytes_per_token,
    weight_bytes,
)
from rooflab.workloads.llm.layer_weights import layer_weights
from rooflab.workloads.llm.params import count_params
from rooflab.workloads.llm.settings import Settings, settings_for

DATA = Path(__file__).parent / "data" / "llm_configs"
GIB = 2 ** 30


def cfg_of(name):
    return load_config(str(DATA / f"{name}.json"))


def text_of(name):
    return json.loads((DATA / f"{name}.json").read_text())


# --- gpt-oss (OpenAI model card, arXiv:2508.10925, table 1; https://openai.com/index/
# gpt-oss-model-card/): 20b 20.91 B total / 3.61 B active, 120b 116.83 B / 5.13 B; its
# "active" counts the unembedding but not the embedding table (a lookup, no matmul).

def gpt_oss_layer(experts):
    """One gpt-oss layer by hand (transformers GptOssDecoderLayer)."""
    h, q, kv = 2880, 64 * 64, 8 * 64
    attention = h * q + 2 * h * kv + q * h + (q + 2 * kv + h) + 64   # + q/k/v/o biases, sinks
    expert = 3 * h * 2880 + (2 * 2880 + h)      # gate_up (2 x 2880) and down, with biases
    router = h * experts + experts              # router weight and bias
    return attention, expert, router, 2 * h      # 2 RMSNorms


@pytest.mark.parametrize("name,layers,experts,total,active", [
    ("gpt-oss-20b", 24, 32, 20.91e9, 3.61e9),
    ("gpt-oss-120b", 36, 128, 116.83e9, 5.13e9),
])
def test_gpt_oss_parameters_match_the_model_card(name, layers, experts, total, active):
    attention, expert, router, norms = gpt_oss_layer(experts)
    table = 201088 * 2880                         # embedding = lm_head (untied)
    by_hand = layers * (attention + experts * expert + router + norms) + 2 * table + 2880
    p = count_params(cfg_of(name))
    assert p.total == by_hand      # 20b: 20,914,757,184 (the biases and sinks included)
    assert p.total == pytest.approx(total, rel=0.01)
    # top-4 experts; the card's active count leaves the embedding table out
    assert p.active - p.embedding == layers * (attention + 4 * expert + router + norms) \
        + table + 2880
    assert p.active - p.embedding == pytest.approx(active, rel=0.01)


def test_gpt_oss_20b_reads_mxfp4_as_4_25_bits_for_the_experts_only():
    cfg = cfg_of("gpt-oss-20b")
    s = settings_for(cfg)
    # e2m1 (4 bits) + one e8m0 scale (8 bits) per 32: 4.25 bits = 0.53125 B per weight
    assert s.weight_bytes == 0.53125 and s.group_size == 32
    assert set(s.keep) >= {"q_proj", "k_proj", "v_proj", "o_proj", "router", "lm_head"}
    experts = 24 * 32 * 3 * 2880 * 2880           # 19,110,297,600 mxfp4 weights
    rest = count_params(cfg).total - experts      # attention, router, tables, biases: 16-bit
    assert weight_bytes(cfg, s) == experts * 0.53125 + rest * 2 == 13_761_264_768
    # the model card's checkpoint size: 12.8 GiB
    assert weight_bytes(cfg, s) / GIB == pytest.approx(12.8, abs=0.05)
    # the per-layer table says the same bytes
    assert layer_weights(cfg, s).total_bytes == pytest.approx(weight_bytes(cfg, s), rel=1e-12)
    # gpt-oss-120b: 36 x 128 experts in mxfp4, the card's 60.8 GiB
    big = cfg_of("gpt-oss-120b")
    assert weight_bytes(big, settings_for(big)) / GIB == pytest.approx(60.8, abs=0.05)


def test_gpt_oss_kv_bytes_by_hand():
    cfg = cfg_of("gpt-oss-20b")
    s = Settings(weights="bf16", act="bf16", kv="bf16")
    # 24 layers x K and V x 8 KV heads x 64 x 2 B
    assert kv_bytes_per_token(cfg, s) == 24 * 2 * 8 * 64 * 2 == 49_152
    # alternating layers (layer_types): 12 sliding layers hold 128 tokens at most
    per_layer_token = 2 * 8 * 64 * 2
    assert cfg.sliding_window == 128 and cfg.sliding_layers == tuple(range(0, 24, 2))
    assert kv_bytes_per_sequence(cfg, s, 10_000) == per_layer_token * (12 * 10_000 + 12 * 128)


# --- Qwen3 (Qwen3 technical report / HF cards): Qwen3-8B 8.2 B; Qwen3-30B-A3B 30.5 B
# total, 3.3 B activated (https://huggingface.co/Qwen/Qwen3-30B-A3B)

def test_qwen3_dense_and_moe_counts():
    p8 = count_params(cfg_of("qwen3-8b"))
    layer = (4096 * 4096 + 2 * 4096 * 1024 + 4096 * 4096 + 3 * 4096 * 12288
             + 2 * 4096 + 2 * 128)                # q/k norms of head_dim
    assert p8.total == 36 * layer + 2 * 151936 * 4096 + 4096 == 8_190_735_360
    assert p8.total == pytest.approx(8.2e9, rel=0.01)
    p30 = count_params(cfg_of("qwen3-30b-a3b"))
    assert p30.total == 30_532_122_624 and p30.total == pytest.approx(30.5e9, rel=0.01)
    # 8 of 128 experts: 3.35 G with the embedding table (rooflab's active count); the card's
    # "3.3B" is given to two figures, so within 2 %
    assert p30.active == 3_353_032_704
    assert p30.active == pytest.approx(3.3e9, rel=0.02)
    s = Settings(weights="bf16", act="bf16", kv="bf16")
    assert kv_bytes_per_token(cfg_of("qwen3-8b"), s) == 36 * 2 * 8 * 128 * 2 == 147_456
    assert kv_bytes_per_token(cfg_of("qwen3-30b-a3b"), s) == 48 * 2 * 4 * 128 * 2 == 98_304


def test_qwen_moe_mlp_only_layers_are_dense():
    # Qwen2MoeDecoderLayer: a layer in mlp_only_layers keeps the dense 6144-wide MLP
    d = text_of("qwen3-30b-a3b")
    cfg = parse_config({**d, "mlp_only_layers": [0, 1]})
    assert cfg.moe_layers == 46 and not cfg.is_moe_layer(0) and cfg.is_moe_layer(2)
    full = count_params(parse_config(d)).total
    moe_ffn = 128 * 3 * 2048 * 768 + 2048 * 128
    assert count_params(cfg).total == full - 2 * moe_ffn + 2 * 3 * 2048 * 6144


# --- DeepSeek-V3 (arXiv:2412.19437: 671 B total, 37 B activated; the 14 B MTP module is not
# counted); MLA caches kv_lora_rank + qk_rope_head_dim per token and layer

def test_deepseek_v3_counts_and_mla_cache():
    p = count_params(cfg_of("deepseek-v3"))
    assert p.total == pytest.approx(671e9, rel=0.01)
    assert p.active == pytest.approx(37e9, abs=0.6e9)     # "37B": given to 1 B
    s = Settings(weights="bf16", act="bf16", kv="bf16")
    assert kv_bytes_per_token(cfg_of("deepseek-v3"), s) == 61 * (512 + 64) * 2 == 70_272


# --- Llama 4 (https://huggingface.co/meta-llama/Llama-4-Scout-17B-16E: 17 B active, 109 B
# total; Maverick-17B-128E: 17 B active, 400 B total). Both totals include the vision
# encoder, which rooflab does not count (a note says so): 871,932,416 parameters from
# Scout's vision_config (34 layers of 1408 wide, MLP 5632, with biases; the adapter's
# 23,068,672 + 16,777,216, the projector's 20,971,520, the patch and position embeddings).

VISION = 34 * (4 * (1408 * 1408 + 1408) + 2 * 1408 * 5632 + 5632 + 1408 + 4 * 1408) \
    + 23_068_672 + 16_777_216 + 20_971_520 + 827_904 + 812_416 + 1408 + 4 * 1408
H = 5120
ATTENTION = 2 * H * H + 2 * H * 1024            # q, o 5120 x 5120; k, v 5120 x 1024
EXPERT = 3 * H * 8192


def test_llama4_scout_counts_its_shared_expert():
    cfg = cfg_of("llama-4-scout-17b-16e")
    assert cfg.moe.shared == 1 and cfg.moe_layers == 48
    p = count_params(cfg)
    # every layer: attention, 16 routed + 1 shared expert, router, 2 norms
    layer = ATTENTION + 17 * EXPERT + H * 16 + 2 * H
    assert p.total == 48 * layer + 2 * 202048 * H + H == 107_769_861_120
    assert VISION == 871_932_416
    assert p.total + VISION == pytest.approx(109e9, rel=0.01)
    # 1 routed + the shared expert: 17.17 G against the card's two-figure "17B"
    assert p.active == 48 * (ATTENTION + 2 * EXPERT + H * 16 + 2 * H) + 2 * 202048 * H + H
    assert p.active == pytest.approx(17e9, rel=0.02)


def test_llama4_chunked_attention_caps_the_rope_layers_kv():
    cfg = cfg_of("llama-4-scout-17b-16e")
    # no_rope_layers [1, 1, 1, 0] x 12: 36 RoPE layers attend within 8192-token chunks
    assert cfg.sliding_window == 8192 and len(cfg.sliding_layers) == 36
    s = Settings(weights="bf16", act="bf16", kv="bf16")
    per = 2 * 8 * 128 * 2
    assert kv_bytes_per_token(cfg, s) == 48 * per == 196_608
    assert kv_bytes_per_sequence(cfg, s, 100_000) == per * (12 * 100_000 + 36 * 8192)
    assert any("attention_chunk_size 8192" in n for n in cfg.notes)


def maverick():
    """Llama-4-Maverick's text_config (TensorRT-LLM's LLAMA_4_MAVERICK_TWO_LAYER_CONFIG,
    its 48 layers restored and its added no_rope_layer_interval dropped)."""
    d = text_of("llama-4-scout-17b-16e")
    text = {k: v for k, v in d["text_config"].items() if k not in ("moe_layers", "no_rope_layers")}
    text.update(interleave_moe_layer_step=2, num_local_experts=128, use_qk_norm=False,
                max_position_embeddings=1048576)
    return {**d, "text_config": text}


def test_llama4_maverick_interleaves_moe_and_dense_layers():
    cfg = parse_config(maverick(), name="maverick")
    # interleave_moe_layer_step 2: layers 1, 3, ..., 47 are MoE, the others dense and
    # intermediate_size_mlp (16384) wide
    assert cfg.moe_layers == 24 and cfg.is_moe_layer(1) and not cfg.is_moe_layer(0)
    assert cfg.intermediate == 16384 and cfg.moe.intermediate == 8192
    p = count_params(cfg)
    moe = ATTENTION + 129 * EXPERT + H * 128 + 2 * H
    dense = ATTENTION + 3 * H * 16384 + 2 * H
    assert p.total == 24 * moe + 24 * dense + 2 * 202048 * H + H
    assert p.total + VISION == pytest.approx(400e9, rel=0.01)
    assert p.active == pytest.approx(17e9, rel=0.02)


def test_moe_layer_step_that_leaves_no_moe_layer_is_refused(tmp_path, capsys):
    d = maverick()
    d["text_config"]["interleave_moe_layer_step"] = 100
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(d))
    code = main(["llm", str(path), "--on", "H100"])
    err = capsys.readouterr().err
    assert code == 2 and "leave no MoE layer of 48" in err and "Traceback" not in err


def test_cli_reads_gpt_oss_mxfp4(capsys):
    code = main(["llm", str(DATA / "gpt-oss-20b.json"), "--on", "H100", "--phase", "decode"])
    out = " ".join(capsys.readouterr().out.split())
    assert code == 0
    assert "from the config's quantization_config (mxfp4)" in out
    assert "not one rooflab has checked" not in out and "is not one rooflab reads" not in out
    assert "= 13.8 GB" in out              # the weights line: 13,761,264,768 B
