"""`rooflab llm model.gguf`: the model from a GGUF header, each tensor at its stored ggml
type. Hand counts in s26_gguf_files' docstring (Q4_K 144 B per 256 weights, Q6_K 210 B)."""

from __future__ import annotations

import pytest
from s26_gguf_files import (
    MOE_TOTAL_BYTES,
    TINY_LAYER_BYTES,
    TINY_TOTAL_BYTES,
    add,
    finish,
    gguf,
    write_tiny_llama,
    write_tiny_qwen3_moe,
)

from rooflab.workloads.llm import decode_step, layer_weights, load_config
from rooflab.workloads.llm.footprint import weight_bytes
from rooflab.workloads.llm.gguf_header import read_header
from rooflab.workloads.llm.settings import settings_for


@pytest.fixture
def tiny(tmp_path):
    return write_tiny_llama(tmp_path / "tiny-Q4_K_M.gguf")


def test_a_4096_square_q4_k_tensor_is_9437184_bytes(tmp_path):
    # the brief's hand count: 4096 x 4096 / 256 blocks x 144 B
    w = gguf.GGUFWriter(str(tmp_path / "one.gguf"), "llama")
    add(w, "blk.0.attn_q.weight", (4096, 4096), gguf.GGMLQuantizationType.Q4_K)
    finish(w, None)
    (t,) = read_header(tmp_path / "one.gguf").tensors
    assert (t.name, t.type_name, t.shape, t.elements) == ("blk.0.attn_q.weight", "Q4_K",
                                                          (4096, 4096), 16_777_216)
    assert t.nbytes == 4096 * 4096 // 256 * 144 == 9_437_184


def test_hyper_parameters_come_from_the_header(tiny):
    cfg = load_config(str(tiny))
    assert (cfg.hidden, cfg.layers, cfg.heads, cfg.kv_heads, cfg.head_dim,
            cfg.intermediate, cfg.vocab, cfg.max_positions) == (256, 2, 4, 2, 64, 512, 1024,
                                                                4096)
    assert cfg.model_type == "llama" and not cfg.tied_embeddings
    assert cfg.name == "tiny-Q4_K_M"


def test_weight_bytes_are_the_files_exactly(tiny):
    cfg = load_config(str(tiny))
    s = settings_for(cfg)
    assert weight_bytes(cfg, s) == TINY_TOTAL_BYTES
    mw = layer_weights(cfg, s)
    assert mw.total_bytes == TINY_TOTAL_BYTES
    # the one-layer line is the mean of the two stored layers; the outside parts exact
    assert mw.layer.total_bytes == sum(TINY_LAYER_BYTES) / 2 == 354_944
    assert (mw.embedding_bytes, mw.lm_head_bytes, mw.final_norm_bytes) == (147_456, 215_040,
                                                                          1_024)
    assert mw.layer.norms_bytes == 2 * 256 * 4      # F32 norms read at 4 B


def test_each_kernel_reads_its_own_types_bytes(tiny):
    cfg = load_config(str(tiny))
    step = decode_step(cfg, settings_for(cfg), batch=1, context=100)
    w = {o.op.name: o.op.bytes_split.get("weights", 0.0) for o in step.ops}
    assert w["q_proj"] == 36_864                       # Q4_K in both layers
    assert w["v_proj"] == (26_880 + 18_432) / 2        # Q6_K in layer 0, Q4_K in layer 1
    assert w["down_proj"] == (107_520 + 73_728) / 2
    assert w["lm_head"] == 215_040                     # output.weight, Q6_K
    assert w["embedding"] == 256 * 144 / 256           # one Q4_K row of the table
    assert w["norm"] == 256 * 4
    # the step reads every matrix once: all the file's bytes but the table's other rows
    assert step.bytes_split["weights"] == TINY_TOTAL_BYTES - 147_456 + 144


def test_the_bits_per_weight_and_the_types_are_said(tiny):
    cfg = load_config(str(tiny))
    s = settings_for(cfg)
    words = "5.04 bits/weight: Q4_K 13 tensors, F32 5, Q6_K 3"
    assert cfg.stored.words == words and cfg.stored.label == "Q4_K_M"
    assert s.weights == "int4" and s.weight_format == "Q4_K_M"
    assert s.describe().startswith(f"weights Q4_K_M ({words}; from the GGUF file's tensor "
                                   f"types; dequantized to fp16 for the math)")
    assert any("1 of 2 hold wider types (blk.0: 376 kB, blk.1: 334 kB)" in n
               for n in cfg.notes)


def test_no_output_tensor_ties_the_logits_to_the_table(tmp_path):
    path = write_tiny_llama(tmp_path / "tied.gguf", tied=True)
    cfg = load_config(str(path))
    s = settings_for(cfg)
    assert cfg.tied_embeddings
    assert weight_bytes(cfg, s) == TINY_TOTAL_BYTES - 215_040
    step = decode_step(cfg, s, batch=1, context=10)
    lm = next(o for o in step.ops if o.op.name == "lm_head")
    assert lm.op.bytes_split["weights"] == 147_456     # the Q4_K table read whole


def test_without_file_type_the_label_is_the_main_type(tmp_path):
    cfg = load_config(str(write_tiny_llama(tmp_path / "x.gguf", file_type=None)))
    assert cfg.stored.label == "Q4_K"


def test_the_cli_tables_the_file(tiny, capsys):
    from cli_inproc import json_of

    d = json_of(capsys, ["llm", str(tiny), "--on", "H100", "--json"])["llm"]
    assert d["footprint"]["weights_bytes"] == TINY_TOTAL_BYTES
    g = d["settings"]["ggml"]
    assert g["format"] == "Q4_K_M" and g["file_tensor_bytes"] == TINY_TOTAL_BYTES
    assert g["bytes_per_weight"]["q_proj"] == 144 / 256
    assert g["bytes_per_weight"]["vector"] == 4.0


def test_another_weights_option_replaces_the_files_types(tiny):
    cfg = load_config(str(tiny))
    s = settings_for(cfg, "int8")
    assert s.stored is None and s.weights == "int8"
    # a what-if row changing the weights drops the stored types too
    assert settings_for(cfg).with_(weights="fp8").stored is None


def test_moe_experts_are_read_from_their_3d_tensors(tmp_path):
    cfg = load_config(str(write_tiny_qwen3_moe(tmp_path / "moe.gguf")))
    assert cfg.model_type == "qwen3_moe" and cfg.qk_norm
    assert (cfg.moe.experts, cfg.moe.top_k, cfg.moe.intermediate) == (4, 2, 256)
    s = settings_for(cfg)
    assert weight_bytes(cfg, s) == MOE_TOTAL_BYTES
    lw = layer_weights(cfg, s).layer
    assert lw.routed_bytes == 2 * 147_456 + 215_040
    assert lw.router_bytes == 4 * 256 * 4               # the F32 router
    # a token reads top-2 of the 4 experts
    assert lw.ffn_active_bytes == (2 * 147_456 + 215_040) / 2 + 4_096
    assert not any("differ from the file's" in n for n in cfg.notes)


def test_pipeline_stages_hold_the_files_bytes(tiny):
    from rooflab.workloads.llm.pipeline import stage_weight_bytes

    cfg = load_config(str(tiny))
    s = settings_for(cfg, pp=2)
    first = stage_weight_bytes(cfg, s, range(0, 1), ("embedding",))
    last = stage_weight_bytes(cfg, s, range(1, 2), ("final_norm", "lm_head"))
    # layer 0 as stored and the Q4_K table; layer 1, the F32 final norm, the Q6_K output
    assert first == TINY_LAYER_BYTES[0] + 147_456 == 523_520
    assert last == TINY_LAYER_BYTES[1] + 1_024 + 215_040 == 549_888
    assert first + last == TINY_TOTAL_BYTES


def test_fused_qkv_and_gate_up_tensors_phi3(tmp_path):
    # Phi-3 stores q/k/v in one attn_qkv and gate/up in one ffn_up (2 x 512 rows):
    # table 147,456 + norms 3 x 1,024 + qkv 768 blocks x 144 = 110,592 + o 36,864
    # + ffn_up 1024 blocks x 144 = 147,456 + down (Q6_K) 512 x 210 = 107,520
    # + output (Q6_K) 215,040 = 768,000 B
    T = gguf.GGMLQuantizationType
    w = gguf.GGUFWriter(str(tmp_path / "phi.gguf"), "phi3")
    for k, v in {"block_count": 1, "embedding_length": 256, "feed_forward_length": 512,
                 "attention.head_count": 4, "attention.head_count_kv": 4,
                 "context_length": 4096}.items():
        w.add_uint32(f"phi3.{k}", v)
    add(w, "token_embd.weight", (1024, 256), T.Q4_K)
    add(w, "blk.0.attn_norm.weight", (256,), T.F32)
    add(w, "blk.0.attn_qkv.weight", (768, 256), T.Q4_K)
    add(w, "blk.0.attn_output.weight", (256, 256), T.Q4_K)
    add(w, "blk.0.ffn_norm.weight", (256,), T.F32)
    add(w, "blk.0.ffn_up.weight", (1024, 256), T.Q4_K)
    add(w, "blk.0.ffn_down.weight", (256, 512), T.Q6_K)
    add(w, "output_norm.weight", (256,), T.F32)
    add(w, "output.weight", (1024, 256), T.Q6_K)
    finish(w, None)
    cfg = load_config(str(tmp_path / "phi.gguf"))
    s = settings_for(cfg)
    assert cfg.model_type == "phi3" and cfg.gated_mlp
    assert weight_bytes(cfg, s) == 768_000
    assert s.stored.of("gate_proj") == s.stored.of("up_proj") == 144 / 256
    assert s.stored.of("down_proj") == 210 / 256


def test_a_weights_option_on_a_gguf_says_what_it_replaced(tiny):
    from rooflab.workloads.llm.study import overridden_quantization

    (note,) = overridden_quantization(load_config(str(tiny)), "q8_0")
    assert note == ("--weights q8_0 replaces the GGUF file's tensor types (Q4_K_M, 5.04 "
                    "bits/weight: Q4_K 13 tensors, F32 5, Q6_K 3); the tables count "
                    "--weights q8_0")
