"""LLM inference counts: seed 004's TinyLlama decode table, published parameter counts,
families (GQA, MoE, MLA, sliding window, GPT-2), sweep, footprint, TP and what-ifs."""

from __future__ import annotations

import json
import math
import warnings

import pytest

from rooflab.errors import InputError, ParseError
from rooflab.model import Ceiling, Roof
from rooflab.model.parallel import Link
from rooflab.workloads import ops
from rooflab.workloads.llm.analysis import ContextWarning, Request, analyze_llm
from rooflab.workloads.llm.config import load_config, parse_config
from rooflab.workloads.llm.config_names import bundled_names
from rooflab.workloads.llm.footprint import footprint, kv_bytes_per_sequence
from rooflab.workloads.llm.kernels import decode_step, prefill_step
from rooflab.workloads.llm.parallel import shard, tensor_parallel
from rooflab.workloads.llm.params import count_params
from rooflab.workloads.llm.result_json import result_to_dict
from rooflab.workloads.llm.settings import Settings
from rooflab.workloads.llm.sweep import batch_sweep
from rooflab.workloads.llm.whatif import compare_settings, measured_point, standard_variants

# Seed 004's T4: fp16 tensor 65 TFLOP/s, 320 GB/s (NVIDIA T4 product page).
T4 = Roof(name="T4", compute=(Ceiling(65e12, precision="fp16", unit="tensor"),),
          memory=(Ceiling(320e9, level="DRAM"),))
FP16 = Settings()

# Published parameter counts (model cards / papers) for each bundled config.
PUBLISHED = {
    "llama-2-7b": 6.74e9, "llama-2-13b": 13.0e9, "llama-2-70b": 69.0e9,  # Llama 2 paper tab. 1
    "llama-3-8b": 8.03e9, "llama-3-70b": 70.6e9,            # HF model cards (safetensors)
    "mistral-7b": 7.24e9, "mixtral-8x7b": 46.7e9,           # Mistral AI announcements
    "qwen2.5-7b": 7.61e9, "qwen2.5-72b": 72.7e9,            # Qwen2.5 model cards
    "gemma-2-9b": 9.24e9,                                   # HF model card (safetensors)
    "tinyllama-1.1b": 1.1e9, "gpt2": 124e6,                 # TinyLlama paper; GPT-2 124M
    "deepseek-v2-lite": 15.7e9,                             # DeepSeek-V2 paper, Lite: 15.7B
    "llama-3.1-405b": 406e9,                                # HF model card (safetensors): 406B
    "gpt-oss-20b": 20.91e9, "qwen3-30b-a3b": 30.5e9,        # gpt-oss model card tab. 1; Qwen3 card
}


def tinyllama_decode(**kw):
    return decode_step(load_config("tinyllama-1.1b"), Settings(**kw), 1, 500)


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_parameter_count_matches_published(name):
    total = count_params(load_config(name)).total
    assert total == pytest.approx(PUBLISHED[name], rel=0.02)


def test_every_bundled_config_is_checked():
    assert set(bundled_names()) == set(PUBLISHED)


def test_moe_active_parameters():
    # Mixtral: 12.9B active per token (2 of 8 experts); DeepSeek-V2-Lite 2.4B excluding
    # the 0.21B embedding table.
    assert count_params(load_config("mixtral-8x7b")).active == pytest.approx(12.9e9, rel=0.02)
    p = count_params(load_config("deepseek-v2-lite"))
    assert p.active - p.embedding == pytest.approx(2.4e9, rel=0.03)


def test_seed004_tinyllama_decode_table():
    st = tinyllama_decode()
    per_call = {o.op.name: o.op for o in st.ops}
    # q_proj 2048 x 2048: 8.4 MFLOP / 8.4 MB; k/v 2048 x 256: 1.0 / 1.0
    assert per_call["q_proj"].flop == 2 * 2048 * 2048
    assert per_call["q_proj"].bytes == pytest.approx(8.4e6, rel=0.01)
    for k in ("k_proj", "v_proj"):
        assert per_call[k].flop == pytest.approx(1.05e6, rel=0.01)
        assert per_call[k].bytes == pytest.approx(1.05e6, rel=0.01)
    for k in ("gate_proj", "up_proj", "down_proj"):       # 2048 x 5632: 23 M each
        assert per_call[k].flop == pytest.approx(23.07e6, rel=0.005)
        assert per_call[k].bytes_split["weights"] == 2 * 2048 * 5632
    # lm_head 2048 x 32000 once per step: 131 MFLOP — with the x2 per multiply-add
    assert per_call["lm_head"].flop == 2 * 2048 * 32000
    assert per_call["lm_head"].bytes == pytest.approx(131e6, rel=0.01)
    # RMSNorm over 2048: 8 K FLOP / 12 KB
    assert per_call["norm"].flop == 4 * 2048 + 2   # 4 a element, 2 a row (mean, rsqrt)
    assert per_call["norm"].bytes == 3 * 2 * 2048
    # attention at context 500: K and V of 4 KV heads x 64 = 0.5 MB; QK^T alone is the
    # seed's "2 M" FLOP, the full attention (QK^T + PV) 4.1 M
    att = per_call["attention"]
    assert att.bytes_split["kv"] == 2 * 4 * 64 * 500 * 2
    assert att.flop == 2 * 2 * 32 * 64 * 500
    naive = {o.op.name: o.op for o in tinyllama_decode(attn="naive").ops}
    assert naive["attn_scores"].flop == pytest.approx(2.05e6, rel=0.01)
    # SiLU x up over 5632: ~17 K FLOP / 34 KB
    assert per_call["act_mul"].flop == 3 * 5632
    assert per_call["act_mul"].bytes == 3 * 2 * 5632
    # the whole step: AI ~ 1, weights 2.2 GB resident, KV 11 MB at context 500
    assert st.ai == pytest.approx(1.0, abs=0.1)
    assert st.bytes_split["kv"] == pytest.approx(11.3e6, rel=0.01)
    fp = footprint(load_config("tinyllama-1.1b"), FP16, batch=1, context=500, prompt=500)
    assert fp.weights == pytest.approx(2.2e9, rel=0.01)


def test_seed004_launch_overhead_and_floor():
    cfg = load_config("tinyllama-1.1b")
    r = analyze_llm(cfg, T4, FP16, Request(batches=(1,), prompt=500, context=500))
    st = r.decode.step
    # 2 norms, q/k/v/o, RoPE, attention, 2 residual adds, gate/up/act*mul/down = 14 fused;
    # naive attention adds a separate softmax and a second matmul: 16 (seed: 15-25)
    assert st.per_layer_kernels() == 14
    assert decode_step(cfg, Settings(attn="naive"), 1, 500).per_layer_kernels() == 16
    assert st.launches == 14 * 22 + 3                       # + embedding, final norm, lm_head
    lo, hi = r.decode.launch_s_range                        # 5-10 us each: 1.5-3.1 ms
    assert 1.5e-3 <= lo <= hi <= 5.5e-3
    # TPOT floor ~ weights / bandwidth: 2.07 GB / 320 GB/s = 6.5 ms (seed: ~6.9 ms with 2.2 GB)
    assert r.tpot_s == pytest.approx(st.bytes / 320e9, rel=0.01)
    assert 6.0e-3 < r.tpot_s < 7.0e-3
    assert "norm" in r.decode.launch_bound_kernels()
    assert "q_proj" not in r.decode.launch_bound_kernels()


def test_linear_flop_agrees_with_ops_and_gqa_attention_with_ops_attention():
    st = tinyllama_decode()
    assert st.op("q_proj").op.flop == ops.matmul(1, 2048, 2048).flop
    ref = ops.attention(1, 32, 1, 500, 64, kv_heads=4, flash=True, causal=True)
    att = st.op("attention").op
    assert att.flop == ref.flop
    assert att.bytes == pytest.approx(ref.bytes)          # GQA: each KV head read once
    pre = prefill_step(load_config("tinyllama-1.1b"), FP16, 2, 64)
    ref = ops.attention(2, 32, 64, 64, 64, kv_heads=4, flash=True, causal=True)
    assert pre.op("attention").op.flop == ref.flop          # causal: 64*65/2 scores a head


def test_naive_attention_writes_the_score_matrix():
    cfg = load_config("tinyllama-1.1b")
    flash = prefill_step(cfg, FP16, 1, 1024)
    naive = prefill_step(cfg, Settings(attn="naive"), 1, 1024)
    extra = naive.bytes - flash.bytes
    assert extra == pytest.approx(22 * 4 * 32 * 1024 * 1024 * 2, rel=1e-6)   # 4 passes
    ref = ops.attention(1, 32, 1024, 1024, 64, kv_heads=4, flash=False, causal=True)
    names = ("attn_scores", "softmax", "attn_values")
    assert sum(naive.op(n).op.bytes for n in names) == pytest.approx(ref.bytes)


def test_quantization_moves_decode_right():
    fp16 = tinyllama_decode()
    int4 = tinyllama_decode(weights="int4")
    assert int4.flop == fp16.flop
    assert int4.ai == pytest.approx(4 * fp16.ai, rel=0.06)  # group scales: 0.516 B/weight
    assert Settings(weights="int4").weight_bytes == 0.5 + 2 / 128
    assert Settings(weights="fp8").weight_bytes == 1.0


def test_batch_sweep_ai_stops_tracking_batch():
    sw = batch_sweep(load_config("tinyllama-1.1b"), FP16, T4, [1, 4, 16, 64, 128], 500)
    ai = [p.ai for p in sw.points]
    assert ai[0] == pytest.approx(1.0, abs=0.1)
    assert ai[1] == pytest.approx(4.0, rel=0.05)
    assert ai[-1] < 0.6 * 128                     # KV bytes: AI well below the batch
    assert all(a < b for a, b in zip(ai, ai[1:], strict=False))
    tput = [p.tokens_per_s for p in sw.points]
    assert all(a < b for a, b in zip(tput, tput[1:], strict=False))
    # KV = weights when B x 11.3 MB = 2.07 GB -> B ~ 183; GQA-4 TinyLlama never reaches
    # the T4 ridge (AI limit = FLOP / KV bytes per sequence ~ 144 < 203)
    assert sw.kv_equals_weights_batch == pytest.approx(2.069e9 / 11.29e6, rel=0.01)
    assert sw.knee_batch is None and sw.ai_limit < sw.ridge
    assert sw.ridge == pytest.approx(65e12 / 320e9)


def test_knee_exists_for_llama70b_on_h200_like_roof():
    roof = Roof(name="H200", compute=(Ceiling(989e12, precision="fp16", unit="tensor"),),
                memory=(Ceiling(4.8e12, level="DRAM"),))
    cfg = load_config("llama-2-70b")
    sw = batch_sweep(cfg, FP16, roof, [1, 64, 256, 512], 576)
    assert sw.knee_batch is not None
    assert decode_step(cfg, FP16, int(sw.knee_batch), 576).ai >= sw.ridge
    assert decode_step(cfg, FP16, int(sw.knee_batch) - 1, 576).ai < sw.ridge


def test_gqa_kv_cache_and_mla_compressed_cache():
    # Llama-3-8B: 2 x 32 layers x 8 KV heads x 128 x 2 B = 128 KiB per token
    assert kv_bytes_per_sequence(load_config("llama-3-8b"), FP16, 1) == 131072
    # DeepSeek-V2-Lite MLA: (512 + 64) x 27 layers x 2 B per token
    assert kv_bytes_per_sequence(load_config("deepseek-v2-lite"), FP16, 1) == 576 * 27 * 2


def test_sliding_window_caps_kv():
    mistral = load_config("mistral-7b")
    assert mistral.sliding_layers == tuple(range(32))
    full = kv_bytes_per_sequence(mistral, FP16, 4096)
    assert kv_bytes_per_sequence(mistral, FP16, 16000) == full
    gemma = load_config("gemma-2-9b")
    assert gemma.sliding_layers == tuple(range(0, 42, 2))   # local layers alternate
    st = decode_step(gemma, FP16, 1, 8000)
    names = [o.op.name for o in st.ops]
    assert "attention (window 4096)" in names
    assert st.op("attention (window 4096)").calls == 21
    assert st.op("attention").op.bytes_split["kv"] == 8000 * 2 * 8 * 256 * 2
    qwen = load_config("qwen2.5-7b")                          # use_sliding_window false
    assert qwen.sliding_window is None


def test_moe_expected_distinct_experts():
    moe = load_config("mixtral-8x7b").moe
    assert moe.expected_distinct(1) == pytest.approx(2.0)
    assert moe.expected_distinct(4) == pytest.approx(8 * (1 - 0.75 ** 4))
    assert moe.expected_distinct(1000) == pytest.approx(8.0)
    st = decode_step(load_config("mixtral-8x7b"), FP16, 1, 100)
    gate = st.op("expert_gate_proj").op
    assert gate.bytes_split["weights"] == pytest.approx(2 * 4096 * 14336 * 2)
    assert gate.flop == 2 * 2 * 4096 * 14336                  # one token through 2 experts
    st64 = decode_step(load_config("mixtral-8x7b"), FP16, 64, 100)
    assert st64.op("expert_gate_proj").op.bytes_split["weights"] == pytest.approx(
        8 * 4096 * 14336 * 2, rel=1e-6)


def test_deepseek_shared_experts_and_dense_first_layer():
    cfg = load_config("deepseek-v2-lite")
    st = decode_step(cfg, FP16, 1, 100)
    assert st.op("gate_proj").calls == 1 and st.op("expert_gate_proj").calls == 26
    assert st.op("shared_gate_proj").op.flop == 2 * 2048 * 2 * 1408


def test_gpt2_family():
    cfg = load_config("gpt2")
    assert (cfg.gated_mlp, cfg.norm, cfg.positions, cfg.tied_embeddings) == (
        False, "layernorm", "learned", True)
    names = [o.op.name for o in decode_step(cfg, FP16, 1, 10).ops]
    assert "gate_proj" not in names and "rope" not in names and "act" in names


def test_config_errors_name_missing_fields(tmp_path):
    with pytest.raises(InputError, match="hidden_size"):
        parse_config({"num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 10})
    with pytest.raises(InputError, match="num_experts_per_tok"):
        parse_config({"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
                      "vocab_size": 10, "intermediate_size": 128, "num_local_experts": 8})
    bad = tmp_path / "config.json"
    bad.write_text("{\n  \"hidden_size\": 64,\n")
    with pytest.raises(ParseError, match="config.json:3"):
        load_config(str(bad))
    with pytest.raises(InputError, match="llm list"):
        load_config("no-such-model")
    with pytest.raises(InputError, match="int5"):
        Settings(weights="int5")
    with pytest.raises(InputError, match="batch"):
        Request(batches=(0,))


def test_config_file_and_forgiving_names(tmp_path):
    p = tmp_path / "config.json"
    p.write_text(json.dumps({"model_type": "llama", "hidden_size": 64, "intermediate_size": 128,
                             "num_hidden_layers": 2, "num_attention_heads": 4,
                             "vocab_size": 100}))
    cfg = load_config(str(p))
    assert cfg.kv_heads == 4 and cfg.head_dim == 16 and not cfg.tied_embeddings
    assert load_config("TinyLlama-1.1B").name == "tinyllama-1.1b"
    assert load_config("meta-llama/Llama-2-7b").name == "llama-2-7b"


def test_context_beyond_max_positions_warns_not_errors():
    with pytest.warns(ContextWarning, match="max_position_embeddings"):
        # RoPE (tinyllama, 2048 positions); a learned table (gpt2) past its rows is an
        # error (tests/test_s33_e_llm_inputs.py)
        r = analyze_llm(load_config("tinyllama-1.1b"), T4, FP16,
                        Request(prompt=512, context=4000))
    assert any("max_position_embeddings" in n for n in r.notes)


def test_footprint_and_largest_batch():
    cfg = load_config("llama-2-7b")
    fp = footprint(cfg, FP16, batch=1, context=4096, prompt=2048, device_bytes=16e9)
    # Llama-2-7B: 13.5 GB of fp16 weights, 2 GB of KV per 4096-token sequence (0.5 MB/token)
    assert fp.weights == pytest.approx(13.48e9, rel=0.01)
    assert fp.kv == 2 * 32 * 4096 * 4096 * 2
    assert fp.max_batch == 1
    assert footprint(cfg, Settings(weights="int4"), batch=1, context=4096, prompt=2048,
                     device_bytes=16e9).max_batch == 5
    assert footprint(load_config("llama-2-70b"), FP16, batch=1, context=10, prompt=10,
                     device_bytes=80e9).max_batch == 0


def test_tensor_parallel():
    cfg = load_config("llama-2-70b")
    part = shard(cfg, 8)
    assert (part.heads, part.kv_heads, part.intermediate) == (8, 1, 3584)
    assert count_params(part).total == pytest.approx(count_params(cfg).total / 8, rel=0.01)
    r = tensor_parallel(cfg, FP16, T4, batch=4, context=100, tp=8, link=Link("NVLink", 300e9))
    assert r.allreduces == 160 and r.allreduce_bytes == 4 * 8192 * 2
    assert r.comm_s == pytest.approx(160 * 2 * 7 / 8 * 65536 / 300e9)
    assert tensor_parallel(cfg, FP16, T4, batch=4, context=100, tp=1).comm_s == 0.0
    with pytest.raises(InputError, match="link-bw"):
        tensor_parallel(cfg, FP16, T4, batch=1, context=10, tp=2)
    with pytest.raises(InputError, match="divide"):
        shard(cfg, 3)


def test_whatifs_and_measured_point():
    cfg = load_config("tinyllama-1.1b")
    rows = {w.label: w for w in compare_settings(cfg, T4, standard_variants(FP16),
                                                  batch=1, context=500)}
    assert rows["weights int4"].tpot_s < rows["weights int8"].tpot_s < rows["as given"].tpot_s
    assert rows["KV fp8"].tpot_s < rows["as given"].tpot_s
    # seed 004: 15 ms TPOT -> ~147 GFLOP/s at AI ~1: below the roof (46 % of 320 GB/s)
    m = measured_point(tinyllama_decode(), T4, 0.015)
    assert m.achieved_flop_per_s == pytest.approx(2.2e9 / 0.015, rel=0.03)
    assert 40 < m.percent_of_roof < 50
    assert m.floor_ratio == pytest.approx(0.015 / 6.51e-3, rel=0.01)


def test_result_json_vocabulary():
    r = analyze_llm(load_config("tinyllama-1.1b"), T4, FP16,
                    Request(batches=(1, 4, 16, 64, 128), context=500), device_bytes=16e9)
    d = result_to_dict(r)
    json.dumps(d, allow_nan=False)
    assert d["schema_version"] == 2 and d["roof"]["name"] == "T4"
    assert len(d["kernels"]) == len(d["analysis"]) == len(r.decode.step.ops)
    llm = d["llm"]
    assert [p["batch"] for p in llm["sweep"]["points"]] == [1, 4, 16, 64, 128]
    assert llm["totals"]["tpot_s"] == pytest.approx(r.tpot_s)
    lm = next(k for k in llm["decode"]["kernels"] if k["name"] == "lm_head")
    assert lm["flop"] == 2 * 2048 * 32000 and lm["calls"] == 1
    assert math.isclose(sum(llm["decode"]["bytes_split"].values()), llm["decode"]["bytes"])


def test_seventy_b_twelve_point_sweep_analyses_every_batch():
    # Its speed (<= 200 ms) is measured by benchmarks/llm_speed.py, not asserted here.
    cfg = load_config("llama-3-70b")
    req = Request(batches=tuple(2 ** i for i in range(12)), prompt=1024, context=2048)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = analyze_llm(cfg, T4, FP16, req, device_bytes=80e9)
    assert [p.batch for p in r.sweep.points] == [2 ** i for i in range(12)]


def test_sliding_window_prefill_caps_scores():
    cfg = load_config("mistral-7b")
    p, w = 8192, 4096
    att = prefill_step(cfg, FP16, 1, p).op("attention").op
    pairs = w * (w + 1) // 2 + (p - w) * w
    assert att.flop == 4.0 * 32 * pairs * 128
    assert att.bytes_split["kv"] == p * 2 * 8 * 128 * 2      # every prompt K/V is read
    full = prefill_step(load_config("llama-3-8b"), FP16, 1, p).op("attention").op
    assert full.flop == 4.0 * 32 * (p * (p + 1) // 2) * 128
