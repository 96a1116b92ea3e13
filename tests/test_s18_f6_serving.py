"""Review s18 r3 (LLM serving), fixer f6: F1 where tokens/s stops growing with the batch
(per-kernel floors, not the step's aggregate AI), F2 hybrid Mamba / linear-attention
configs refused, F3 `--act fp8/int8` keeps the KV cache at the model's dtype (vLLM's
kv_cache_dtype "auto"), F4 prefill embedding rows capped at the table."""

from __future__ import annotations

import json
import math

import pytest

from rooflab.cli.main import main
from rooflab.errors import InputError
from rooflab.hardware.resolve import load_roof
from rooflab.workloads.llm import load_config, parse_config, prefill_step
from rooflab.workloads.llm.footprint import kv_bytes_per_token
from rooflab.workloads.llm.settings import Settings, settings_for
from rooflab.workloads.llm.sweep import batch_sweep

H100 = "NVIDIA H100 SXM"      # 989.5 TFLOP/s bf16 dense, 3.35 TB/s: ridge 295.4
P, B = 989.5e12, 3.35e12


def run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, " ".join(out.split()), err


def crossing(k: int, n: int) -> float:
    """Batch at which a bf16 k x n weight matmul turns compute-bound on the H100: 2 b k n / P
    = (2 k n weights + 2 b k in + 2 b n out) / B, solved for b."""
    return (2 * k * n / B) / (2 * k * n / P - (2 * k + 2 * n) / B)


# --- F1 ------------------------------------------------------------------------------

def test_saturation_is_where_the_last_weight_matmul_turns_compute_bound():
    # by hand (llama-3-8b: hidden 4096, KV 8 x 128 = 1024, MLP 14336, vocab 128256):
    # lm_head 319.1, gate/up/down 325.6, q/o 345.2, k/v 461.9
    assert crossing(4096, 128256) == pytest.approx(319.12, abs=0.01)
    assert crossing(4096, 14336) == pytest.approx(325.56, abs=0.01)
    assert crossing(4096, 4096) == pytest.approx(345.15, abs=0.01)
    assert crossing(4096, 1024) == pytest.approx(461.93, abs=0.01)
    from rooflab.workloads.llm.saturation import saturation

    cfg, roof = load_config("llama-3-8b"), load_roof(H100)
    s = settings_for(cfg, roof=roof)
    for context in (256, 4096):     # attention is its own kernel: the context moves nothing
        sat = saturation(cfg, s, roof, context)
        assert (sat.first_batch, sat.first_kernels) == (320, ("lm_head",))
        assert (sat.last_batch, set(sat.last_kernels)) == (462, {"k_proj", "v_proj"})
        assert sat.never_kernels == ()
    # past 462 the floor is proportional to the batch: tokens/s at 462 and at 1024 agree,
    # while the step's aggregate AI reaches the ridge only at 2666 (the old answer)
    sw = batch_sweep(cfg, s, roof, [256, 462, 1024], 256)
    tps = {p.batch: p.tokens_per_s for p in sw.points}
    assert tps[1024] == pytest.approx(tps[462], rel=1e-4)
    assert tps[256] < 0.9 * tps[462]
    assert sw.saturation.plateau_tokens_per_s == pytest.approx(tps[462])
    assert sw.knee_batch == 2666


def test_sweep_lines_give_the_per_kernel_batch_not_the_aggregate_ridge(capsys):
    code, out, _ = run(capsys, "llm", "llama-3-8b", "--on", H100, "--batch",
                       "1,64,256,512,1024", "--context", "256", "--prompt", "128",
                       "--generate", "256", "--phase", "decode")
    assert code == 0
    assert ("tokens/s stops growing at batch 462: the weight matmuls turn compute-bound (by "
            "their own floors) from batch 320 (lm_head) to batch 462 (k_proj, v_proj)") in out
    # the aggregate AI named as what it is, and no longer offered as the batch to make
    # memory for
    assert "reaches the ridge at batch 2666 in total FLOP / total bytes (as if one kernel)" in out
    assert "the ridge batch 2666" not in out
    # at context 4096 the step stays memory-bound as a whole (attention), yet the matmuls
    # still saturate at 462, past the 118 sequences that fit
    code, out, _ = run(capsys, "llm", "llama-3-8b", "--on", H100, "--batch", "1,512,1024",
                       "--context", "4096", "--phase", "decode")
    assert code == 0
    assert "the step as a whole stays memory-bound at every batch" in out
    assert ("tokens/s stops growing at batch 462 (more than the 118 that fit the device "
            "memory)") in out
    code, out, _ = run(capsys, "llm", "llama-3-8b", "--on", H100, "--batch", "1,512",
                       "--json")
    sat = json.loads(out)["llm"]["sweep"]["saturation"]
    assert sat["last_batch"] == 462 and sat["first_batch"] == 320


def test_moe_router_never_turns_and_does_not_block_the_answer():
    # qwen3-30b-a3b's router is 2048 x 128: AI limit 2048 x 128 / 2176 = 120 < 295
    from rooflab.workloads.llm.saturation import saturation

    cfg, roof = load_config("qwen3-30b-a3b"), load_roof(H100)
    sat = saturation(cfg, settings_for(cfg, roof=roof), roof, 4096)
    assert sat.never_kernels == ("router",)
    assert sat.last_batch is not None and sat.last_batch > sat.first_batch


# --- F2 ------------------------------------------------------------------------------

QNEXT = {"architectures": ["Qwen3NextForCausalLM"], "model_type": "qwen3_next",
         "full_attention_interval": 4, "head_dim": 256, "hidden_size": 2048,
         "intermediate_size": 5120, "linear_conv_kernel_dim": 4, "linear_key_head_dim": 128,
         "linear_num_key_heads": 16, "linear_num_value_heads": 32,
         "linear_value_head_dim": 128, "max_position_embeddings": 262144,
         "moe_intermediate_size": 512, "num_attention_heads": 16, "num_experts": 512,
         "num_experts_per_tok": 10, "num_hidden_layers": 48, "num_key_value_heads": 2,
         "shared_expert_intermediate_size": 512, "torch_dtype": "bfloat16",
         "vocab_size": 151936}
JAMBA = {"architectures": ["JambaForCausalLM"], "model_type": "jamba",
         "attn_layer_offset": 4, "attn_layer_period": 8, "expert_layer_offset": 1,
         "expert_layer_period": 2, "hidden_size": 4096, "intermediate_size": 14336,
         "mamba_d_conv": 4, "mamba_d_state": 16, "mamba_expand": 2,
         "max_position_embeddings": 262144, "num_attention_heads": 32, "num_experts": 16,
         "num_experts_per_tok": 2, "num_hidden_layers": 32, "num_key_value_heads": 8,
         "torch_dtype": "bfloat16", "vocab_size": 65536}


def test_hybrid_configs_are_refused_naming_the_field():
    # Qwen3-Next with layer_types: 36 linear-attention layers were counted as full
    # attention (98.3 kB of KV per token; 12 x 2 x 2 x 256 x 2 B = 24.6 kB by hand)
    types = ["linear_attention", "linear_attention", "linear_attention",
             "full_attention"] * 12
    with pytest.raises(InputError, match=r"layer_types has 36 of 48 layers of kind "
                                         r"'linear_attention' \(the first: layer 0\)"):
        parse_config({**QNEXT, "layer_types": types}, "qnext")
    with pytest.raises(InputError, match="'full_attention_interval' \\(4\\)"):
        parse_config(QNEXT, "qnext")
    # Jamba: 32 attention layers counted where 4 are (attn_layer_period 8)
    with pytest.raises(InputError, match="'attn_layer_period' \\(8\\)"):
        parse_config(JAMBA, "jamba")
    with pytest.raises(InputError, match="'mamba_d_conv' \\(4\\)"):
        parse_config({k: v for k, v in JAMBA.items() if "layer" not in k
                      or k == "num_hidden_layers"}, "jamba")
    # sliding / full layer_types (gpt-oss: alternating, window 128) still count
    oss = load_config("gpt-oss-20b")
    assert oss.sliding_window == 128 and len(oss.sliding_layers) == 12


def test_cli_refuses_a_hybrid_config_in_one_line(tmp_path, capsys):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(JAMBA))
    code, out, err = run(capsys, "llm", str(path), "--on", H100, "--phase", "decode")
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ")
    assert "'JambaForCausalLM' is a hybrid model" in lines[0] and "Traceback" not in err


# --- F3 ------------------------------------------------------------------------------

def test_act_fp8_keeps_the_kv_cache_at_the_model_dtype():
    cfg = load_config("llama-3-8b")
    s = settings_for(cfg, act="fp8")
    assert (s.weights, s.act, s.kv) == ("fp8", "fp8", "bf16")
    # 2 x 32 layers x 8 KV heads x 128 x 2 B, not 1 B (65,536)
    assert kv_bytes_per_token(cfg, s) == 131_072
    assert settings_for(cfg, act="fp8", kv="fp8").kv == "fp8"
    assert settings_for(cfg, weights="int8", act="int8").kv == "bf16"
    assert settings_for(cfg, act="fp16").kv == "fp16"      # a 16-bit --act still sets it


def test_act_fp8_cli_capacity_and_note(capsys):
    code, out, _ = run(capsys, "llm", "llama-3-8b", "--on", "H200", "--context", "32768",
                       "--prompt", "2048", "--act", "fp8", "--phase", "decode")
    assert code == 0
    assert "activations fp8 (fp8 GEMMs, attention/norms/elementwise in bf16), KV bf16," in out
    # review r3: with bf16 KV 131 kB/token, at most ~30 sequences, TPOT ~2.46 ms (fp8 KV
    # claimed 61 and 2.01 ms)
    assert "(131 kB per token)" in out and "largest batch that fits: 30" in out
    assert "TPOT floor 2.46 ms" in out
    assert ("note: --act fp8 leaves the KV cache at bf16, the model's dtype, as vLLM's "
            "kv_cache_dtype \"auto\" does") in out
    code, out, _ = run(capsys, "llm", "llama-3-8b", "--on", "H200", "--context", "32768",
                       "--prompt", "2048", "--act", "fp8", "--kv", "fp8", "--phase", "decode")
    assert code == 0 and "KV fp8" in out and "leaves the KV cache" not in out
    assert "largest batch that fits: 61" in out


# --- F4 ------------------------------------------------------------------------------

def test_prefill_embedding_rows_are_capped_at_the_table():
    cfg, s = load_config("llama-3-8b"), Settings(weights="bf16", act="bf16", kv="bf16")
    row = 4096 * 2
    emb = prefill_step(cfg, s, 1, 2048).op("embedding").split("weights")
    assert emb == 2048 * row                                  # 2048 distinct rows at most
    emb = prefill_step(cfg, s, 256, 2048).op("embedding").split("weights")
    assert emb == 128_256 * row == 1_050_673_152              # the table, not 4.29 GB
    # GPT-2's learned positions: at most max_positions (1024) rows of that table too
    g = load_config("gpt2")
    emb = prefill_step(g, s, 64, 1024).op("embedding").split("weights")
    assert emb == (min(64 * 1024, g.vocab) + 1024) * 768 * 2
    assert math.isclose(prefill_step(g, s, 1, 8).op("embedding").split("weights"),
                        2 * 8 * 768 * 2)
