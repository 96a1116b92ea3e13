"""Fresh-user audit of `rooflab llm`: MoE sweeps and Qwen2-MoE shared experts, checked
against hand calculations."""

from __future__ import annotations

import pytest

from rooflab.workloads.llm.config import load_config, parse_config
from rooflab.workloads.llm.kernels import decode_step
from rooflab.workloads.llm.params import count_params
from rooflab.workloads.llm.settings import Settings
from rooflab.workloads.llm.sweep import kv_equals_weights

FP16 = Settings()

# Qwen1.5-MoE-A2.7B's published config.json (the fields rooflab reads).
QWEN_MOE = {
    "architectures": ["Qwen2MoeForCausalLM"], "model_type": "qwen2_moe",
    "hidden_size": 2048, "intermediate_size": 5632, "moe_intermediate_size": 1408,
    "shared_expert_intermediate_size": 5632, "num_experts": 60, "num_experts_per_tok": 4,
    "num_hidden_layers": 24, "num_attention_heads": 16, "num_key_value_heads": 16,
    "vocab_size": 151936, "max_position_embeddings": 8192, "tie_word_embeddings": False,
}


def test_moe_kv_equals_weights_uses_the_weights_read_at_that_batch():
    # Mixtral at context 1000: KV per sequence = 32 layers x 2 (K, V) x 8 heads x 128 x 2 B
    # x 1000 tokens = 131.072 MB. At batch ~700 every expert is touched (1 - 0.75^700 ~ 1),
    # so the weights read are all matrices: 2 B x (46.70e9 - 131.07e6 gathered embedding).
    cfg = load_config("mixtral-8x7b")
    kv = 32 * 2 * 8 * 128 * 2 * 1000
    all_weights = 2 * (count_params(cfg).total - 32000 * 4096)
    b = kv_equals_weights(cfg, FP16, 1000)
    assert b == pytest.approx(all_weights / kv, rel=0.01)          # ~710, not 194
    split = decode_step(cfg, FP16, round(b), 1000).bytes_split
    assert split["kv"] == pytest.approx(split["weights"], rel=0.01)


def test_dense_kv_equals_weights_unchanged():
    # TinyLlama, context 500 (seed 004): 2.069 GB of weights / 11.29 MB of KV ~ 183.
    b = kv_equals_weights(load_config("tinyllama-1.1b"), FP16, 500)
    assert b == pytest.approx(2.069e9 / 11.29e6, rel=0.01)


def test_qwen2_moe_shared_expert_is_counted():
    cfg = parse_config(QWEN_MOE, name="qwen1.5-moe-a2.7b")
    assert cfg.moe.shared == 4                          # 5632 = 4 x 1408
    assert cfg.qkv_bias                                 # Qwen2MoeAttention: q/k/v bias
    # Hand count: embedding and untied lm_head 151936 x 2048 each; per layer q/k/v/o
    # 4 x 2048^2 + 3 x 2048 bias, router 2048 x 60, 60 experts x 3 x 2048 x 1408, the
    # shared expert 3 x 2048 x 5632, two norms 2 x 2048; final norm 2048. (transformers
    # also has a 2048-weight shared_expert_gate per layer, not counted: 49 k of 14.3 G.)
    layer = (4 * 2048**2 + 3 * 2048 + 2048 * 60 + 60 * 3 * 2048 * 1408
             + 3 * 2048 * 5632 + 2 * 2048)
    total = 24 * layer + 2 * 151936 * 2048 + 2048
    assert total == 14_315_735_040                      # "14.3B" on the model card
    p = count_params(cfg)
    assert p.total == total
    assert p.shared_experts == 24 * 3 * 2048 * 5632
    # active: 4 of 60 routed experts plus everything else ("A2.7B")
    routed = 24 * 60 * 3 * 2048 * 1408
    assert p.active == pytest.approx(total - routed + routed * 4 / 60, rel=1e-9)
    names = [o.op.name for o in decode_step(cfg, FP16, 1, 500).ops]
    assert "shared_down_proj" in names


def test_shared_width_not_a_multiple_is_a_clear_error():
    from rooflab.errors import InputError

    bad = dict(QWEN_MOE, shared_expert_intermediate_size=5000)
    with pytest.raises(InputError, match="shared_expert_intermediate_size 5000"):
        parse_config(bad, name="odd")


def test_tensor_parallel_totals_include_the_all_reduces(capsys):
    import json

    from rooflab.cli.main import main

    # Llama-3-70B, --tp 8, batch 16, prompt 512 on an H200 (NVLink 900 GB/s both ways ->
    # 450 GB/s per direction). 2 all-reduces per layer x 80 layers = 160 per step; ring
    # time 2 x 7/8 x payload / 450e9. Decode payload 16 x 8192 x 2 B = 262144 B; prefill
    # payload x 512 tokens = 134217728 B.
    assert main(["llm", "llama-3-70b", "--on", "H200", "--tp", "8", "--batch", "16",
                 "--json"]) == 0
    llm = json.loads(capsys.readouterr().out)["llm"]
    t, par = llm["totals"], llm["parallel"]
    decode_comm = 160 * 1.75 * 262144 / 450e9                      # 163 us
    prefill_comm = 160 * 1.75 * 262144 * 512 / 450e9               # 83.5 ms
    assert par["comm_s"] == pytest.approx(decode_comm)
    assert par["prefill_comm_s"] == pytest.approx(prefill_comm)
    # + the logits gather (review 18d E): 16 x 128,256 x 2 B = 4.10 MB, 7/8 of it over
    # 450 GB/s = 7.98 us, once a step and once a prefill (the last position)
    gather = 7 / 8 * 16 * 128_256 * 2 / 450e9
    assert par["logits_gather_s"] == pytest.approx(gather)
    # + the vocab-parallel embedding's one all-reduce a forward (H1): 1.75 x 262144 /
    # 450e9 = 1.02 us a step; its prefill all-reduces 512 x that payload: 522 us
    embedding = 1.75 * 262144 / 450e9
    prefill_embedding = 1.75 * 262144 * 512 / 450e9
    assert par["embedding_allreduce_s"] == pytest.approx(embedding)
    assert par["prefill_embedding_allreduce_s"] == pytest.approx(prefill_embedding)
    assert t["tpot_s"] == pytest.approx(t["compute_tpot_s"] + decode_comm + embedding
                                        + gather)
    assert t["tpot_s"] == pytest.approx(par["tpot_s"])
    assert t["ttft_s"] == pytest.approx(t["compute_ttft_s"] + prefill_comm
                                        + prefill_embedding + gather)
    assert t["tokens_per_s"] == pytest.approx(16 / t["tpot_s"])
    # the prefill makes the first token: TTFT + (128 - 1) x TPOT
    assert t["request_s"] == pytest.approx(t["ttft_s"] + 127 * t["tpot_s"])
    assert main(["llm", "llama-3-70b", "--on", "H200", "--tp", "8", "--batch", "16"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    # 3.79 ms + 163 us + 1.02 us + 7.98 us = 3.96 ms
    assert ("TPOT floor 3.96 ms with all-reduces (compute 3.79 ms + all-reduces 163 us + "
            "embedding all-reduce 1.02 us + logits gather 7.98 us; with launches") in out


def test_whatif_reads_the_llm_weight_split():
    # `rooflab llm --json | rooflab whatif --quantize/--batch`: the kernels carry
    # meta bytes_split (weights / activations / kv); attention reads no weights.
    from rooflab.model.whatif_weights import weight_share

    ops = {o.op.name: o.kernel() for o in decode_step(load_config("tinyllama-1.1b"), FP16,
                                                       1, 500).ops}
    # q_proj per layer: weights 2048 x 2048 x 2 B, activations x in + y out 2 x 4096 B.
    q = ops["q_proj"]
    assert weight_share(q, None) == pytest.approx(2048 * 2048 * 2 / (2048 * 2048 * 2
                                                                     + 2 * 4096))
    assert weight_share(ops["attention"], None) == 0.0
    assert weight_share(ops["rope"], None) == 0.0
    from rooflab.model import Kernel

    # ai's own attention (no llm split) reads no weights either.
    assert weight_share(Kernel("attn", {"fp16": 1.0}, {"DRAM": 1.0},
                               meta={"op": "attention"}), None) == 0.0


def test_measured_step_counts_its_launches():
    # Seed 004: TPOT 15 ms on a T4 for a step of 14 kernels x 22 layers + embedding, final
    # norm, lm_head = 311 launches; at the T4's 5 us launch floor that is 1.555 ms of it.
    from rooflab.hardware.resolve import load_roof
    from rooflab.model import analyze
    from rooflab.model.diagnose import diagnose
    from rooflab.workloads.llm.whatif import measured_point

    roof = load_roof("T4")
    step = decode_step(load_config("tinyllama-1.1b"), FP16, 1, 500)
    m = measured_point(step, roof, 0.015)
    assert m.kernel.calls == 14 * 22 + 3 == 311
    assert m.point.overhead_floor_s == pytest.approx(311 * 5e-6)
    assert m.point.percent_of_roof == pytest.approx(43.4, abs=0.1)  # unchanged by calls
    (d,) = diagnose(analyze(roof, [m.kernel]))
    below = next(x for x in d.distances if x.name == "below roof")
    assert "1.56 ms" in below.words and "negligible" not in below.words


def test_llm_help_shows_the_defaults(capsys):
    # rich reads "[default: ...]" inside help text as markup and drops it silently.
    import re

    from rooflab.cli.main import main

    main(["llm", "--help"])
    out = re.sub(r"[\s│]+", " ", capsys.readouterr().out)    # unwrap the help panel
    assert "prompt + generate/2" in out and "the --act dtype" in out
