"""`rooflab llm FILE.gguf` for deepseek2 (MLA + MoE), gpt-oss (sliding/full layers, sinks,
MXFP4 experts) and llama4 (interleaved MoE, chunked attention): the header's keys give the
same model as the config.json counterpart, and the weights are the file's tensor bytes.
Files and hand counts: s27_gguf_arch_files."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from s27_gguf_arch_files import (
    OSS_20B,
    SCOUT,
    TINY_DS,
    TINY_DS_BYTES,
    TINY_DS_LAYERS,
    TINY_L4,
    TINY_OSS,
    TINY_OSS_BYTES,
    V2_LITE,
    T,
    deepseek2,
    gpt_oss,
    llama4,
)

from rooflab.errors import InputError
from rooflab.workloads.llm import decode_step, layer_weights, load_config
from rooflab.workloads.llm.config_parse import parse_config
from rooflab.workloads.llm.footprint import weight_bytes
from rooflab.workloads.llm.gguf_header import _types
from rooflab.workloads.llm.params import count_params
from rooflab.workloads.llm.settings import settings_for

F16 = {k: T.F16 for k in ("embd", "output", "attn", "kv_b", "ffn", "down", "exps",
                          "down_exps")}


def _weights_read(cfg) -> dict[str, float]:
    step = decode_step(cfg, settings_for(cfg), batch=1, context=100)
    return {o.op.name: o.op.bytes_split.get("weights", 0.0) for o in step.ops}


# --- DeepSeek-2 ------------------------------------------------------------------------

def test_deepseek2_header_gives_mla_and_the_moe(tmp_path):
    deepseek2(tmp_path / "ds.gguf", **TINY_DS)
    cfg = load_config(str(tmp_path / "ds.gguf"))
    m = cfg.mla
    assert cfg.model_type == "deepseek_v2" and cfg.family == "llama-like+moe+mla"
    assert (m.kv_lora_rank, m.qk_nope_head_dim, m.qk_rope_head_dim, m.v_head_dim,
            m.q_lora_rank) == (256, 128, 64, 128, None)
    # the header's head_count_kv 1 and key_length 576 are the compressed "MQA" view: the
    # model's heads are its 2 query heads, its cache the 256 + 64 latent
    assert (cfg.heads, cfg.kv_heads, cfg.head_dim, cfg.kv_elems_per_token()) == (2, 2, 128,
                                                                                  320)
    assert (cfg.moe.experts, cfg.moe.top_k, cfg.moe.intermediate, cfg.moe.shared,
            cfg.moe.first_dense, cfg.intermediate) == (4, 2, 256, 1, 1, 512)


def test_deepseek2_tensors_are_counted_at_their_stored_types(tmp_path):
    assert deepseek2(tmp_path / "ds.gguf", **TINY_DS) == TINY_DS_BYTES
    cfg = load_config(str(tmp_path / "ds.gguf"))
    st = cfg.stored
    assert st.file_bytes == TINY_DS_BYTES and st.layer_bytes == TINY_DS_LAYERS
    # attn_k_b + attn_v_b (Q8_0) are kv_b_proj, and the absorbed decode's own kernels
    assert st.of("kv_b_proj") == st.of("q_absorb") == st.of("v_absorb") == 34 / 32
    assert st.of("kv_a_proj") == st.of("q_proj") == 144 / 256
    assert st.of("expert_down_proj") == st.of("shared_down_proj") == 210 / 256
    assert st.of("router") == 4.0
    w = _weights_read(cfg)
    assert w["kv_a_proj"] == 46_080 and w["o_proj"] == 36_864
    assert not any("not table" in n for n in cfg.notes)


def test_a_16_bit_deepseek2_files_weights_are_its_bytes(tmp_path):
    # all matrices F16, norms and router F32: no quantized weights, no absorbed copies
    total = deepseek2(tmp_path / "ds16.gguf", **TINY_DS, types=F16)
    cfg = load_config(str(tmp_path / "ds16.gguf"))
    s = settings_for(cfg)
    assert weight_bytes(cfg, s) == layer_weights(cfg, s).total_bytes == total
    # by hand, 2 B per matrix weight: attention 2 x (q 98,304 + kv_a 81,920 + k_b and
    # v_b 2 x 65,536 + o 65,536), dense FFN 3 x 131,072, experts 3 x 262,144, shared
    # 3 x 65,536, table and output 2 x 262,144 = 2,654,208 weights; 4 B per F32 weight:
    # 4 layer norms, 2 kv_a norms, the final norm (256 each) and the router's 1,024
    assert total == 2 * 2_654_208 + 4 * (7 * 256 + 1_024) == 5_319_680


def test_a_quantized_deepseek2_files_weights_are_its_bytes(tmp_path):
    deepseek2(tmp_path / "ds.gguf", **TINY_DS)
    cfg = load_config(str(tmp_path / "ds.gguf"))
    assert weight_bytes(cfg, settings_for(cfg)) == TINY_DS_BYTES


def test_a_deepseek_v2_lite_shaped_gguf_is_the_bundled_config(tmp_path):
    total = deepseek2(tmp_path / "lite.gguf", **V2_LITE, types=F16)
    g, b = load_config(str(tmp_path / "lite.gguf")), load_config("deepseek-v2-lite")
    pg, pb = count_params(g), count_params(b)
    assert pg.total == pb.total == 15_706_484_224          # 15.7 G
    assert pg.active == pb.active == 2_661_150_208
    assert (g.mla, g.moe, g.kv_elems_per_token()) == (b.mla, b.moe, 576)
    assert weight_bytes(g, settings_for(g)) == total


def test_an_old_layout_deepseek2_file_says_llama_cpp_caches_full_heads(tmp_path):
    deepseek2(tmp_path / "old.gguf", **V2_LITE, types=F16, mla=False)
    g = load_config(str(tmp_path / "old.gguf"))
    assert count_params(g).total == 15_706_484_224 and g.mla == load_config(
        "deepseek-v2-lite").mla
    assert g.stored.of("kv_b_proj") == 2.0
    (note,) = [n for n in g.notes if "predates llama.cpp's MLA layout" in n]
    assert "caching 16 heads' K and V, 16 x (192 + 128) = 5,120 values" in note


def test_deepseek_v3_router_and_q_lora(tmp_path):
    path = tmp_path / "v3.gguf"
    deepseek2(path, **{**TINY_DS, "q_rank": 256})
    cfg = load_config(str(path))
    assert cfg.mla.q_lora_rank == 256
    assert cfg.stored.of("q_a_proj") == cfg.stored.of("q_b_proj") == 144 / 256


# --- gpt-oss ---------------------------------------------------------------------------

def test_gpt_oss_mxfp4_experts_and_biases_are_the_files_bytes(tmp_path):
    assert gpt_oss(tmp_path / "oss.gguf", **TINY_OSS) == TINY_OSS_BYTES
    cfg = load_config(str(tmp_path / "oss.gguf"))
    s = settings_for(cfg)
    assert cfg.model_type == "gpt_oss" and cfg.attention_sinks and cfg.moe.bias
    assert cfg.qkv_bias and cfg.o_bias
    assert (cfg.sliding_window, cfg.sliding_layers) == (16, (0,))
    assert weight_bytes(cfg, s) == layer_weights(cfg, s).total_bytes == TINY_OSS_BYTES
    st = cfg.stored
    assert st.of("expert_gate_proj") == st.of("expert_down_proj") == 17 / 32   # MXFP4
    assert st.of("q_proj") == 2.0 and st.table == 34 / 32 and st.vector == 4.0
    assert st.main_type == "MXFP4" and s.weights == "fp4"
    # the per-expert biases (2-D F32 tensors) are vectors, not expert matrices
    assert not any("not table" in n or "differ from the file" in n for n in cfg.notes)
    assert _weights_read(cfg)["q_proj"] == 32_768 + 512      # F16 matrix + its F32 bias


def test_a_gpt_oss_20b_shaped_gguf_is_the_bundled_config(tmp_path):
    total = gpt_oss(tmp_path / "oss20.gguf", **OSS_20B, attn=T.BF16, embd=T.BF16)
    g, b = load_config(str(tmp_path / "oss20.gguf")), load_config("gpt-oss-20b")
    assert count_params(g).total == count_params(b).total == 20_914_757_184   # 20.9 G
    assert count_params(g).active == count_params(b).active
    assert (g.sliding_window, g.sliding_layers) == (b.sliding_window, b.sliding_layers)
    assert g.moe == b.moe and g.head_dim == 64
    assert weight_bytes(g, settings_for(g)) == total


# --- Llama 4 ---------------------------------------------------------------------------

L4_CONFIG = {"model_type": "llama4_text", "hidden_size": 256, "num_hidden_layers": 4,
             "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 64,
             "intermediate_size": 256, "intermediate_size_mlp": 512,
             "num_local_experts": 4, "num_experts_per_tok": 1,
             "interleave_moe_layer_step": 2, "attention_chunk_size": 8192,
             "vocab_size": 1024, "tie_word_embeddings": False}


def test_llama4_interleaved_moe_and_chunks_as_its_config(tmp_path):
    total = llama4(tmp_path / "l4.gguf", **TINY_L4)
    g, c = load_config(str(tmp_path / "l4.gguf")), parse_config(L4_CONFIG)
    assert count_params(g) == count_params(c)
    assert g.moe == c.moe and g.moe.layers == (1, 3) and g.moe.shared == 1
    assert (g.intermediate, g.sliding_window, g.sliding_layers, g.chunked) == (
        512, 8192, (0, 1, 2), True)
    # by hand: table and output 147,456 each + output_norm 1,024; dense layers 333,824
    # (attention 110,592 + norms 2,048 + gate/up/down 3 x 73,728); MoE layers 669,696
    # (+ router 4,096 + 3 experts' tensors 147,456 + shared 3 x 36,864)
    assert total == 2 * 147_456 + 1_024 + 2 * 333_824 + 2 * 669_696 == 2_302_976
    assert weight_bytes(g, settings_for(g)) == total
    assert any("fixes Llama 4's attention chunk at 8192" in n for n in g.notes)


def test_a_llama4_header_window_of_0_turns_the_chunks_off(tmp_path):
    # llama.cpp's loader: a sliding_window key of 0 means no chunked attention (MobileLLM)
    llama4(tmp_path / "l4.gguf", **TINY_L4, window=0)
    g = load_config(str(tmp_path / "l4.gguf"))
    assert (g.sliding_window, g.sliding_layers, g.chunked) == (None, (), False)
    assert not any("attention chunk" in n for n in g.notes)


def test_a_llama4_scout_shaped_gguf_is_its_config(tmp_path):
    total = llama4(tmp_path / "scout.gguf", **SCOUT)
    g = load_config(str(tmp_path / "scout.gguf"))
    b = load_config(str(Path(__file__).parent / "data" / "llm_configs"
                        / "llama-4-scout-17b-16e.json"))
    assert count_params(g).total == count_params(b).total == 107_769_861_120
    assert count_params(g).active == count_params(b).active == 17_172_894_720
    assert (g.moe, g.sliding_layers, g.chunked) == (b.moe, b.sliding_layers, True)
    assert weight_bytes(g, settings_for(g)) == total


# --- the header ------------------------------------------------------------------------

def test_an_older_gguf_package_without_mxfp4_still_reads_type_39():
    import enum

    old = enum.IntEnum("GGMLQuantizationType", {"F32": 0, "F16": 1, "Q4_K": 12})
    g = SimpleNamespace(GGMLQuantizationType=old,
                        GGML_QUANT_SIZES={old.F32: (1, 4), old.F16: (1, 2),
                                          old.Q4_K: (256, 144)})
    names, sizes = _types(g)
    assert names[39] == "MXFP4" and sizes["MXFP4"] == (32, 17)
    assert names[12] == "Q4_K" and sizes["Q4_K"] == (256, 144)


def test_other_architectures_are_still_refused_by_name(tmp_path):
    from s26_gguf_files import write_tiny_llama

    path = write_tiny_llama(tmp_path / "x.gguf", arch="mamba")
    with pytest.raises(InputError, match="'mamba' is not one rooflab reads from GGUF "
                                         r"\(.*deepseek2, gpt-oss, llama4\)"):
        load_config(str(path))
