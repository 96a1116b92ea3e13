"""One layer's weights by part, and the model as layers + embedding/lm_head (seed 004).

Seed 004 (TinyLlama-1.1B on a T4): "gate、up、down 三个 FFN 矩阵加起来 69 MB,占一层 101 MB
权重的三分之二". By hand (hidden 2048, intermediate 5632, 32 heads / 4 KV heads x 64,
22 layers, vocab 32000, untied, fp16):
  q, o 2048 x 2048 x 2 B = 8,388,608 B each; k, v 2048 x 256 x 2 B = 1,048,576 B each
  -> attention 18,874,368 B; gate/up/down 2048 x 5632 x 2 B = 23,068,672 B each -> FFN
  69,206,016 B; two RMSNorms 2 x 2048 x 2 B = 8,192 B; one layer 88,088,576 B = 88.1 MB,
  FFN 78.6 %. 22 layers 1,937,948,672 B + embedding and lm_head 32000 x 2048 x 2 B =
  131,072,000 B each + final norm 4,096 B = 2,200,096,768 B. The seed's 101 MB is that
  whole 2.2 GB over 22 layers (100 MB): the embedding and lm_head spread over the layers.
"""

from __future__ import annotations

import json

import pytest
from llm_config_files import bundled_with_quant as _bundled

from rooflab.cli.main import main
from rooflab.hardware.resolve import load_roof
from rooflab.workloads.llm import Request, analyze_llm, load_config, parse_config
from rooflab.workloads.llm.config_names import bundled_names
from rooflab.workloads.llm.footprint import weight_bytes
from rooflab.workloads.llm.layer_weights import layer_weights
from rooflab.workloads.llm.settings import settings_for

TINY_LINE = ("one layer's weights: 88.1 MB (attention 18.9 MB 21.4 %, FFN 69.2 MB 78.6 %, norms "
             "8.19 kB); 22 layers 1.94 GB + embedding 131 MB + lm_head 131 MB + final norm "
             "4.1 kB = 2.2 GB")


def _tiny():
    cfg = load_config("tinyllama-1.1b")
    return layer_weights(cfg, settings_for(cfg, weights="fp16"))


def test_tinyllama_layer_is_88_mb_and_ffn_79_percent():
    mw = _tiny()
    lw = mw.layer
    assert lw.attention_bytes == 2 * 8_388_608 + 2 * 1_048_576 == 18_874_368
    assert lw.ffn_bytes == 3 * 2048 * 5632 * 2 == 69_206_016       # seed's "69 MB"
    assert lw.norms_bytes == 8_192
    assert lw.total_bytes == 88_088_576
    assert lw.share(lw.ffn_bytes) == pytest.approx(0.7856, abs=1e-4)   # not "two thirds"
    assert lw.share(lw.attention_bytes) == pytest.approx(0.2143, abs=1e-4)
    assert lw.active_bytes == lw.total_bytes                      # dense: a token reads all
    assert mw.layers == 22 and mw.dense_layer is None
    assert mw.layers_bytes == 1_937_948_672
    assert mw.embedding_bytes == mw.lm_head_bytes == 131_072_000
    assert mw.final_norm_bytes == 4_096
    assert mw.total_bytes == 2_200_096_768
    # the seed's "101 MB": the whole model over 22 layers, not a layer's own weights
    assert mw.total_bytes / 22 == pytest.approx(100e6, rel=0.01)


def test_llm_text_prints_the_layer_line(capsys):
    assert main(["llm", "tinyllama-1.1b", "--on", "T4", "--context", "500", "--phase",
                 "decode", "--tpot-ms", "15"]) == 0
    out = capsys.readouterr().out
    assert TINY_LINE in out.replace("\n", " ").replace("  ", " ")


def test_llm_json_carries_layer_weights(capsys):
    assert main(["llm", "tinyllama-1.1b", "--on", "T4", "--context", "500", "--json"]) == 0
    lw = json.loads(capsys.readouterr().out)["llm"]["layer_weights"]
    assert lw["layer"]["total_bytes"] == 88_088_576
    assert lw["layer"]["attention_bytes"] == 18_874_368
    assert lw["layer"]["ffn_bytes"] == 69_206_016
    assert lw["layer"]["norms_bytes"] == 8_192
    assert lw["layer"]["ffn_share"] == pytest.approx(69_206_016 / 88_088_576)
    assert lw["layers"] == 22 and lw["dense_layer"] is None and lw["dense_layers"] == 0
    assert lw["layers_bytes"] == 1_937_948_672
    assert lw["embedding_bytes"] == lw["lm_head_bytes"] == 131_072_000
    assert lw["tied_embeddings"] is False
    assert lw["total_bytes"] == 2_200_096_768


def test_gpt2_tied_lm_head_not_counted_twice():
    # GPT-2 small (fp32 config, run at fp16 here): per layer attention 4 x 768^2 + qkv and
    # o biases 4 x 768 = 2,362,368; MLP 2 x 768 x 3072 + 3072 + 768 = 4,722,432; two
    # LayerNorms 2 x 2 x 768 = 3,072 -> 7,087,872 params = 14,175,744 B. Embedding
    # (50257 + 1024 positions) x 768 = 39,383,808 = 78,767,616 B; lm_head tied (0);
    # final LayerNorm 3,072 B. Total 248,879,616 B = 124,439,808 params x 2 B.
    cfg = load_config("gpt2")
    mw = layer_weights(cfg, settings_for(cfg, weights="fp16"))
    assert mw.layer.attention_bytes == 2_362_368 * 2
    assert mw.layer.ffn_bytes == 4_722_432 * 2
    assert mw.layer.norms_bytes == 3_072 * 2
    assert mw.tied and mw.lm_head_bytes == 0
    assert mw.embedding_bytes == 78_767_616
    assert mw.total_bytes == 248_879_616
    assert "lm_head tied to it" in mw.describe()[0]


def test_mixtral_counts_all_experts_and_the_active_share(capsys):
    # Mixtral-8x7B (bf16, 2 B): attention 2 x (4096^2 + 4096 x 1024) x 2 B = 83,886,080 B;
    # 8 experts x 3 x 4096 x 14336 x 2 B = 2,818,572,288 B; router 4096 x 8 x 2 B = 65,536 B;
    # norms 16,384 B. A token reads top-2: 704,643,072 + 65,536 + attention + norms.
    cfg = load_config("mixtral-8x7b")
    lw = layer_weights(cfg, settings_for(cfg)).layer
    assert lw.attention_bytes == 83_886_080
    assert lw.routed_bytes == 2_818_572_288 and lw.router_bytes == 65_536
    assert lw.ffn_bytes == 2_818_572_288 + 65_536
    assert lw.total_bytes == 83_886_080 + 2_818_637_824 + 16_384
    assert lw.active_bytes == 83_886_080 + 704_643_072 + 65_536 + 16_384 == 788_611_072
    assert (lw.experts, lw.top_k) == (8, 2)
    assert main(["llm", "mixtral-8x7b", "--on", "H100", "--phase", "decode"]) == 0
    out = capsys.readouterr().out.replace("\n", " ")
    assert "one MoE layer's weights: 2.9 GB" in out
    assert "8 experts 2.82 GB + router 65.5 kB" in out
    assert "a token reads 789 MB of it (top-2 of 8 experts)" in out


def test_deepseek_v2_lite_dense_first_layer_apart():
    # first_k_dense_replace 1: 26 MoE layers (64 experts, top-6, 2 shared of 1408) and one
    # dense layer (MLP 10944): 3 x 2048 x 10944 x 2 B = 134,479,872 B of FFN
    cfg = load_config("deepseek-v2-lite")
    mw = layer_weights(cfg, settings_for(cfg))
    assert (mw.layers, mw.dense_layers) == (26, 1)
    assert mw.dense_layer.ffn_bytes == 3 * 2048 * 10944 * 2
    assert mw.layer.routed_bytes == 64 * 3 * 2048 * 1408 * 2
    assert mw.layer.shared_bytes == 2 * 3 * 2048 * 1408 * 2
    assert mw.layer.router_bytes == 2048 * 64 * 2
    assert mw.layer.ffn_active_bytes == (6 * 3 * 2048 * 1408 * 2 + 2 * 3 * 2048 * 1408 * 2
                                         + 2048 * 64 * 2)
    assert "26 MoE layers" in mw.describe()[0] and "1 dense layer" in mw.describe()[0]


@pytest.mark.parametrize("weights", [None, "fp16", "int8", "int4", "fp8"])
@pytest.mark.parametrize("name", bundled_names())
def test_layers_plus_outside_is_the_memory_lines_weights(name, weights):
    # GQA, tied tables, MoE, MLA (its absorbed 16-bit copies under quantized weights):
    # layers x layer + embedding + lm_head + final norm = footprint.weight_bytes
    cfg = load_config(name)
    s = settings_for(cfg, weights=weights)
    assert layer_weights(cfg, s).total_bytes == pytest.approx(weight_bytes(cfg, s),
                                                              rel=1e-12)


def test_int4_layer_tinyllama():
    # --weights int4, group 128, fp16 scales: 0.5 + 2/128 = 0.515625 B per weight; the
    # norms stay at fp16. 44,040,192 matrix weights a layer -> 22,708,224 B + 8,192 B
    cfg = load_config("tinyllama-1.1b")
    lw = layer_weights(cfg, settings_for(cfg, weights="int4")).layer
    assert lw.total_bytes == 44_040_192 * 0.515625 + 8_192 == 22_716_416


def test_awq_keeps_lm_head_and_table_at_fp16(tmp_path):
    # AWQ int4 with zero points: 0.5 + 2/128 + 0.5/128 = 0.51953125 B per layer weight;
    # Llama-3-8B's layer 218,103,808 matrix weights -> 113,311,744 B + norms 16,384 B;
    # embedding and lm_head 128256 x 4096 x 2 B = 1,050,673,152 B each (kept fp16)
    quant = {"quant_method": "awq", "bits": 4, "group_size": 128, "version": "gemm",
             "zero_point": True, "modules_to_not_convert": ["lm_head"]}
    cfg = load_config(_bundled(tmp_path, "llama-3-8b", quant))
    s = settings_for(cfg)
    mw = layer_weights(cfg, s)
    assert mw.layer.total_bytes == 113_311_744 + 16_384
    assert mw.embedding_bytes == mw.lm_head_bytes == 1_050_673_152
    assert mw.total_bytes == pytest.approx(weight_bytes(cfg, s), rel=1e-12)


def test_kept_router_and_gemma3_qk_norms(tmp_path):
    fp8 = {"quant_method": "compressed-tensors",
           "ignore": ["lm_head", "re:.*block_sparse_moe.gate"],
           "config_groups": {"group_0": {"targets": ["Linear"],
                                         "weights": {"num_bits": 8, "type": "float",
                                                     "strategy": "tensor"}}}}
    cfg = load_config(_bundled(tmp_path, "mixtral-8x7b", fp8))
    lw = layer_weights(cfg, settings_for(cfg)).layer
    assert lw.router_bytes == 4096 * 8 * 2                  # kept at bf16
    assert lw.routed_bytes == 8 * 3 * 4096 * 14336 * 1      # fp8
    # Gemma 3 1B: four RMSNorms of 1152 + q_norm/k_norm of head_dim 256 = 5,120 a layer
    gemma3 = parse_config({"model_type": "gemma3_text", "hidden_size": 1152,
                           "num_hidden_layers": 26, "num_attention_heads": 4,
                           "num_key_value_heads": 1, "head_dim": 256,
                           "intermediate_size": 6912, "vocab_size": 262144,
                           "sliding_window": 512, "max_position_embeddings": 32768,
                           "query_pre_attn_scalar": 256})
    mw = layer_weights(gemma3, settings_for(gemma3, weights="bf16"))
    assert mw.layer.norms_bytes == 5_120 * 2
    assert mw.tied and mw.lm_head_bytes == 0
    assert mw.total_bytes == 999_885_952 * 2


def test_tp_line_says_whole_model():
    cfg = load_config("tinyllama-1.1b")
    r = analyze_llm(cfg, load_roof("T4"), settings_for(cfg, weights="fp16", tp=2), Request())
    assert r.layer_weights.total_bytes == 2_200_096_768     # the unsharded model
    assert "--tp 2 splits each matrix over 2 devices" in r.layer_weights.describe(2)[0]
    both = r.layer_weights.describe(2, 4)[0]
    assert both.endswith("= 2.2 GB (the whole model's; --tp 2 splits each matrix over 2 "
                         "devices, --pp 4 splits the layers over 4 stages)")
