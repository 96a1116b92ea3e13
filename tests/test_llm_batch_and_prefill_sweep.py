"""Review 11b, finding 14 (smaller items): the batch sweep's order and repeats, a prefill
(TTFT) sweep under --phase prefill, Qwen3's q_norm/k_norm kernels, DeepSeek-V3's bf16
router in its fp8 checkpoint, and `compare` on two untimed llm files showing work floors.

Hand numbers:
- TinyLlama-1.1B on a T4 (320 GB/s, 65 TFLOP/s fp16): decode at batch 1, context 576 reads
  2.086 GB: TPOT 6.52 ms. A prefill of 4 x 512 prompts: 22 layers x 44.04 M matrix weights
  = 968.9 M; 2 x 2048 tokens x 968.9 M = 3.969 TFLOP of projections alone = 61.1 ms at
  65 TFLOP/s, + causal attention 4 x (512 x 513 / 2) x 32 heads x 4 x 64 x 22 = 94.7 GFLOP
  (1.46 ms): TTFT >= 62.5 ms (74.8 ms with the memory-bound kernels); batch 1: 19.1 ms.
- Qwen3-8B (hidden 4096, 32 heads, 8 KV heads, head_dim 128, 36 layers), decode batch 1:
  q_norm = RMSNorm of 32 rows x 128: 4 x 4096 = 16,384 FLOP; x read + y written 2 x 4096 x
  2 B = 16,384 B + one 128-wide gamma 256 B = 16,640 B; k_norm 8 rows: 4,096 FLOP,
  4,096 + 256 = 4,352 B; 36 calls each.
- DeepSeek-V3 (hidden 7168, 256 routed experts, 61 layers of which the first 3 dense): the
  router is 7168 x 256 = 1.835 M weights per MoE layer: 3,670,016 B in bf16 (1,835,008 B
  when read at fp8, as before), x 58 MoE layers = 212.9 MB per step.
- TinyLlama on an A100 (2.039 TB/s), decode: fp16 q_proj 22 x 2048^2 x 2 B + activations
  = 184.73 MB -> 90.6 us; int4 (0.5 B + a 2 B scale per 128 = 0.515625 B) 47.76 MB ->
  23.4 us (3.87x); the step 2.086 GB -> 1.023 ms vs about 550 MB -> 270 us (3.79x).
"""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main
from rooflab.hardware.resolve import load_roof
from rooflab.workloads.llm import Request, analyze_llm, load_config, parse_config
from rooflab.workloads.llm.kernels import decode_step
from rooflab.workloads.llm.params import count_params
from rooflab.workloads.llm.settings import settings_for

QWEN3_8B = {"model_type": "qwen3", "hidden_size": 4096, "num_hidden_layers": 36,
            "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
            "intermediate_size": 12288, "vocab_size": 151936,
            "max_position_embeddings": 40960, "tie_word_embeddings": False,
            "torch_dtype": "bfloat16"}

DEEPSEEK_V3 = {"model_type": "deepseek_v3", "hidden_size": 7168, "num_hidden_layers": 61,
               "num_attention_heads": 128, "num_key_value_heads": 128,
               "intermediate_size": 18432, "moe_intermediate_size": 2048,
               "n_routed_experts": 256, "n_shared_experts": 1, "num_experts_per_tok": 8,
               "first_k_dense_replace": 3, "moe_layer_freq": 1, "kv_lora_rank": 512,
               "q_lora_rank": 1536, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64,
               "v_head_dim": 128, "vocab_size": 129280, "max_position_embeddings": 163840,
               "torch_dtype": "bfloat16",
               "quantization_config": {"activation_scheme": "dynamic", "fmt": "e4m3",
                                       "quant_method": "fp8",
                                       "weight_block_size": [128, 128]}}


def _run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def _json(capsys, *args) -> dict:
    code, out, _ = _run(capsys, *args, "--json")
    assert code == 0
    return json.loads(out)


# --- 1. --batch 4,1,1: sorted, each batch once -----------------------------------------

def test_sweep_is_sorted_and_deduplicated(capsys):
    d = _json(capsys, "llm", "tinyllama-1.1b", "--on", "T4", "--batch", "4,1,1",
              "--context", "576")
    pts = d["llm"]["sweep"]["points"]
    assert [p["batch"] for p in pts] == [1, 4]          # was 4, 1, 1
    assert pts[0]["tpot_s"] == pytest.approx(2.086e9 / 320e9, rel=3e-3)   # 6.52 ms
    assert d["llm"]["request"]["batch"] == 4            # the tables: the first batch given


def test_repeated_single_batch_is_no_sweep(capsys):
    d = _json(capsys, "llm", "tinyllama-1.1b", "--on", "T4", "--batch", "2,2")
    assert "sweep" not in d["llm"]                      # one batch: nothing to sweep


def test_help_says_the_sweep_is_sorted(capsys):
    code, out, _ = _run(capsys, "llm", "--help")
    assert code == 0
    out = " ".join(out.replace("│", " ").split())
    assert "increasing" in out and "repeats dropped" in out


# --- 2. --phase prefill --batch 1,4: a TTFT sweep ----------------------------------------

def test_prefill_phase_sweeps_prefills(capsys):
    code, out, _ = _run(capsys, "llm", "tinyllama-1.1b", "--on", "T4", "--phase", "prefill",
                        "--batch", "1,4")
    assert code == 0
    assert "prefill batch sweep" in out
    assert "decode batch sweep" not in out              # was the only sweep printed
    d = _json(capsys, "llm", "tinyllama-1.1b", "--on", "T4", "--phase", "prefill",
              "--batch", "1,4")
    rows = d["llm"]["prefill_sweep"]["points"]
    assert [r["batch"] for r in rows] == [1, 4]
    assert rows[0]["ttft_s"] == pytest.approx(19.1e-3, rel=5e-3)
    projections = 2 * 4 * 512 * 22 * (2 * 2048**2 + 2 * 2048 * 256 + 3 * 2048 * 5632)
    attention = 4 * (512 * 513 / 2) * 32 * 4 * 64 * 22
    assert projections == pytest.approx(3.969e12, rel=1e-3)
    assert rows[1]["ttft_s"] > (projections + attention) / 65e12      # >= 62.5 ms
    assert rows[1]["ttft_s"] == pytest.approx(74.8e-3, rel=5e-3)
    assert rows[1]["prompt_tokens_per_s"] == pytest.approx(4 * 512 / rows[1]["ttft_s"])
    # the same step as a --batch 4 run's prefill table
    d4 = _json(capsys, "llm", "tinyllama-1.1b", "--on", "T4", "--batch", "4")
    assert rows[1]["ttft_s"] == pytest.approx(d4["llm"]["totals"]["ttft_s"])


def test_prefill_sweep_keeps_the_memory_line_not_the_decode_knee(capsys):
    # TinyLlama on a T4: (16e9 - 2,200,096,768 weights - 13,759,488 one prompt's
    # activations) / (KV 639 x 22,528 B per sequence at context 639 (512 + 128 - 1) +
    # 32,000 x 4 B of fp32 decode logits, H1) = 13,786,143,744 / 14,523,392 = 949.2 -> at
    # most 949 (KV alone 957.7); batch 1024 of the sweep does not fit in either phase
    code, out, _ = _run(capsys, "llm", "tinyllama-1.1b", "--on", "T4", "--phase", "prefill",
                        "--batch", "1,1024")
    assert code == 0
    assert ("memory: at most batch 949 fits in 16 GB (context 639); too big: batch 1024 of "
            "this sweep") in out
    assert "KV bytes equal weight bytes" not in out     # a decode-step notion
    code, out, _ = _run(capsys, "llm", "llama-3-70b", "--on", "H200", "--pp", "2",
                        "--phase", "prefill", "--batch", "4,1")
    assert code == 0 and "the KV = weights batch" not in out


def test_prefill_sweep_under_tp_says_one_device(capsys):
    code, out, _ = _run(capsys, "llm", "llama-3-70b", "--on", "H200", "--tp", "8",
                        "--phase", "prefill", "--batch", "1,4")
    assert code == 0
    assert "(TTFT per batch; one device's kernels, no all-reduces)" in out


def test_both_phases_print_both_sweeps(capsys):
    code, out, _ = _run(capsys, "llm", "tinyllama-1.1b", "--on", "T4", "--phase", "both",
                        "--batch", "1,4")
    assert code == 0
    assert "prefill batch sweep" in out and "decode batch sweep" in out


# --- 3. Qwen3's per-head q_norm / k_norm ----------------------------------------------

def test_qwen3_counts_q_norm_and_k_norm():
    cfg = parse_config(QWEN3_8B, "qwen3-8b")
    step = decode_step(cfg, settings_for(cfg), 1, 576)
    q, k = step.op("q_norm"), step.op("k_norm")          # KeyError before
    assert (q.calls, q.op.flop, q.op.bytes) == (36, 16448, 16640)   # 32 x (4 x 128 + 2)
    assert (k.calls, k.op.flop, k.op.bytes) == (36, 4112, 4352)   # 8 heads x (4 x 128 + 2)
    assert q.split("weights") == 36 * 128 * 2
    names = [o.op.name for o in step.ops]
    assert names.index("k_proj") < names.index("q_norm") < names.index("rope")
    # two head_dim gammas per layer among the parameters
    plain = parse_config({**QWEN3_8B, "model_type": "llama"}, "llama-shaped")
    assert count_params(cfg).total - count_params(plain).total == 36 * 2 * 128


def test_qwen3_moe_has_them_and_llama_does_not():
    moe = parse_config({**QWEN3_8B, "model_type": "qwen3_moe", "num_experts": 128,
                        "num_experts_per_tok": 8, "moe_intermediate_size": 768}, "q3moe")
    assert decode_step(moe, settings_for(moe), 1, 100).op("k_norm").calls == 36
    llama = load_config("tinyllama-1.1b")
    with pytest.raises(KeyError):
        decode_step(llama, settings_for(llama), 1, 100).op("q_norm")


# --- 4. DeepSeek-V3's fp8 checkpoint keeps the router in bf16 ---------------------------

def test_deepseek_v3_fp8_router_at_bf16():
    cfg = parse_config(DEEPSEEK_V3, "deepseek-v3")
    s = settings_for(cfg)
    assert s.weights == "fp8" and "router" in s.keep
    step = decode_step(cfg, s, 1, 1024)
    router = step.op("router")
    assert router.calls == 58
    assert router.op.bytes_split["weights"] == 7168 * 256 * 2   # was 1,835,008 (fp8)
    assert router.split("weights") == pytest.approx(212.9e6, rel=1e-3)
    assert router.op.precision == "bf16"
    q_a = step.op("q_a_proj")                            # the other linears stay fp8
    assert q_a.op.bytes_split["weights"] == 7168 * 1536 and q_a.op.precision == "fp8"


def test_dense_fp8_and_overridden_weights_keep_no_router():
    dense = parse_config({**QWEN3_8B, "quantization_config": DEEPSEEK_V3[
        "quantization_config"]}, "q3-fp8")
    # no router to keep in a dense model; lm_head stays bf16 as in DeepSeek-V3's own
    # checkpoint (transformers' fp8 quantizer skips the output embeddings)
    assert settings_for(dense).keep == ("lm_head",)
    cfg = parse_config(DEEPSEEK_V3, "deepseek-v3")
    assert settings_for(cfg, "int4").keep == ()          # --weights int4 quantizes all


# --- 5. compare on two untimed llm files: work floors --------------------------------

def _llm_file(tmp_path, capsys, name, *extra):
    code, out, _ = _run(capsys, "llm", "tinyllama-1.1b", "--on", "A100", "--json", *extra)
    assert code == 0
    p = tmp_path / name
    p.write_text(out)
    return str(p)


def test_compare_llm_files_shows_work_floors(tmp_path, capsys):
    a = _llm_file(tmp_path, capsys, "d.json")
    b = _llm_file(tmp_path, capsys, "d4.json", "--weights", "int4")
    code, out, _ = _run(capsys, "compare", a, b)
    assert code == 0
    assert "no speed-up to show" not in out             # was all it said
    assert "Work floors (derived, not measured)" in out
    assert "step (TPOT floor): 1.02 ms -> 270 us (3.79x)" in out
    code, text, _ = _run(capsys, "compare", a, b, "--json")
    d = json.loads(text)
    assert d["speedup"] is None and d["total_before_s"] is None   # still no measured one
    fl = d["floors"]
    assert fl["provenance"] == "derived"
    q = next(r for r in fl["kernels"] if r["kernel"] == "q_proj")
    assert q["before_floor_s"] == pytest.approx((22 * 2048**2 * 2 + 22 * 2048 * 2 * 2)
                                                / 2.039e12, rel=1e-3)       # 90.6 us
    assert q["after_floor_s"] == pytest.approx(23.4e-6, rel=2e-3)
    assert q["speedup"] == pytest.approx(3.87, rel=2e-3)
    step = fl["step"]
    assert step["kernel"] == "step (TPOT floor)"
    assert step["before_floor_s"] == pytest.approx(2.086e9 / 2.039e12, rel=2e-3)
    assert step["after_floor_s"] == pytest.approx(270e-6, rel=3e-3)


def test_compare_llm_prefill_files_name_the_ttft(tmp_path, capsys):
    a = _llm_file(tmp_path, capsys, "p.json", "--phase", "prefill")
    b = _llm_file(tmp_path, capsys, "p8.json", "--phase", "prefill", "--weights", "fp8")
    d = json.loads(_run(capsys, "compare", a, b, "--json")[1])
    r = analyze_llm(load_config("tinyllama-1.1b"), load_roof("A100"), None, Request())
    assert d["floors"]["step"]["kernel"] == "step (TTFT floor)"
    assert d["floors"]["step"]["before_floor_s"] == pytest.approx(r.ttft_s)


def test_compare_gate_on_untimed_llm_files_still_refused(tmp_path, capsys):
    a = _llm_file(tmp_path, capsys, "d.json")
    b = _llm_file(tmp_path, capsys, "d4.json", "--weights", "int4")
    code, _, err = _run(capsys, "compare", a, b, "--fail-if-slower", "5")
    assert code == 2 and "no matched kernel has a time in both runs" in err
