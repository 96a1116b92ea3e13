"""Audit 5 of `rooflab llm`: configs outside the bundled families, and device-memory input.

Hand numbers: Falcon-7B (tiiuae/falcon-7b config.json) has 6,921,720,704 parameters
(`sum(p.numel())` of transformers' FalconForCausalLM on the meta device): multi-query
attention (one K/V head of 64 shared by 71 query heads), tied embeddings, no biases.
"""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main
from rooflab.workloads.llm import load_config
from rooflab.workloads.llm.params import count_params

FALCON_7B = {"alibi": False, "apply_residual_connection_post_layernorm": False,
             "architectures": ["FalconForCausalLM"], "bias": False, "hidden_size": 4544,
             "layer_norm_epsilon": 1e-05, "model_type": "falcon", "multi_query": True,
             "new_decoder_architecture": False, "num_attention_heads": 71,
             "num_hidden_layers": 32, "parallel_attn": True, "torch_dtype": "bfloat16",
             "vocab_size": 65024}


def _write(tmp_path, d, name="config.json"):
    p = tmp_path / name
    p.write_text(json.dumps(d))
    return p


def test_falcon_multi_query_counts_one_kv_head_and_published_params(tmp_path):
    # Before: kv_heads = 71 (multi_query ignored), lm_head untied, biases added:
    # 8.52 G parameters, 23 % over the published 6.92 G, and 71x the KV cache.
    c = load_config(str(_write(tmp_path, FALCON_7B)))
    assert c.kv_heads == 1 and c.head_dim == 64
    assert c.tied_embeddings and not c.out_bias
    total = count_params(c).total
    # rooflab counts two LayerNorms per layer; Falcon-7B's parallel block has one
    # (32 x 2 x 4544 = 290,816 parameters, 0.004 %)
    assert total == pytest.approx(6_921_720_704, rel=1e-4)
    # KV cache per token: 2 (K, V) x 32 layers x 1 head x 64 x 2 B = 8192 B
    assert c.kv_elems_per_token() * 2 * c.layers == 8192


def test_falcon_40b_num_kv_heads(tmp_path):
    d = {**FALCON_7B, "hidden_size": 8192, "num_attention_heads": 128, "num_kv_heads": 8,
         "new_decoder_architecture": True, "num_hidden_layers": 60}
    assert load_config(str(_write(tmp_path, d))).kv_heads == 8


def test_unchecked_model_type_says_so(tmp_path, capsys):
    # Before: a starcoder2 config (non-gated MLP in reality) was counted as a gated
    # Llama MLP without a word; now a note names the assumption.
    d = {"model_type": "starcoder2", "hidden_size": 3072, "num_hidden_layers": 30,
         "num_attention_heads": 24, "num_key_value_heads": 2, "intermediate_size": 12288,
         "vocab_size": 49152}
    c = load_config(str(_write(tmp_path, d)))
    (note,) = c.notes
    assert "'starcoder2' is not one rooflab has checked" in note
    assert "gated MLP (gate, up, down)" in note and "2 KV heads of 128" in note
    rc = main(["llm", str(tmp_path / "config.json"), "--on", "T4", "--phase", "decode"])
    assert rc == 0
    assert "is not one rooflab has checked" in capsys.readouterr().out
    # the bundled families stay quiet
    for name in ("tinyllama-1.1b", "mixtral-8x7b", "deepseek-v2-lite", "gemma-2-9b", "gpt2"):
        assert load_config(name).notes == ()


def test_memory_without_unit_is_an_error(capsys):
    # Before: `--memory 16` meant 16 bytes: "2.23 GB of 16 B on the device (does NOT fit);
    # largest batch that fits: 0".
    rc = main(["llm", "tinyllama-1.1b", "--on", "T4", "--memory", "16", "--phase", "decode"])
    err = capsys.readouterr().err
    assert rc == 2
    assert "--memory" in err and "16GB" in err and "Traceback" not in err
    rc = main(["llm", "tinyllama-1.1b", "--on", "T4", "--memory", "16GiB", "--phase",
               "decode", "--json"])
    assert rc == 0
    fp = json.loads(capsys.readouterr().out)["llm"]["footprint"]
    assert fp["device_bytes"] == 16 * 2**30
    # (17,179,869,184 - 2,200,096,768 - 13,759,488 of one prompt's activations) /
    # (639 x 22,528 = 14,395,392 B KV per sequence: 512 + 128 - 1 tokens; + 32,000 x 4 =
    # 128,000 B of fp32 decode logits, H1) = 14,966,012,928 / 14,523,392 = 1030.5 (KV
    # alone 1039.6)
    assert fp["max_batch"] == 1030


def test_tp_note_says_all_reduce_latency_is_not_counted(capsys):
    # Before: `--tp 8 --batch 16` on H200 printed 160 all-reduces of 262 kB = 163 us
    # (2 x 7/8 x 262144 B / 450 GB/s = 1.02 us each) as if that were all they cost.
    rc = main(["llm", "llama-3-70b", "--on", "H200", "--tp", "8", "--batch", "16",
               "--phase", "decode", "--json"])
    assert rc == 0
    llm = json.loads(capsys.readouterr().out)["llm"]
    par = llm["parallel"]
    assert par["allreduces_per_step"] == 160 and par["allreduce_bytes"] == 16 * 8192 * 2
    assert par["comm_s"] == pytest.approx(160 * 2 * 7 / 8 * 262144 / 450e9)
    (note,) = [n for n in llm["notes"] if "no latency" in n]
    assert "160 all-reduces" in note
    rc = main(["llm", "tinyllama-1.1b", "--on", "T4", "--phase", "decode", "--json"])
    assert not any("no latency" in n for n in json.loads(capsys.readouterr().out)["llm"]
                   .get("notes", []))


def test_phase_prefill_json_carries_the_prefill_kernels(capsys, tmp_path):
    # Before: `--phase prefill --json` put the decode kernels (q_proj m=1, 184.5 MFLOP in 22
    # calls) in `kernels`/`analysis`, which plot/choose/whatif read.
    out = tmp_path / "pre.json"
    rc = main(["llm", "tinyllama-1.1b", "--on", "T4", "--phase", "prefill", "--json",
               "-o", str(out)])
    assert rc == 0
    d = json.loads(capsys.readouterr().out)
    assert json.loads(out.read_text())["kernels"] == d["kernels"]
    q = next(k for k in d["kernels"] if k["name"] == "q_proj")
    # 22 layers x 2 x 512 tokens x 2048 x 2048 = 94.49 GFLOP, shape m = 512
    assert q["flop"]["fp16"] == 22 * 2 * 512 * 2048 * 2048
    assert q["meta"]["shape"]["m"] == 512
    att = next(p for p in d["analysis"] if p["kernel"] == "attention")
    # causal: 32 heads x 512 x 513 / 2 scores x 4 x 64 FLOP x 22 layers
    assert att["flop"] == 22 * 32 * (512 * 513 // 2) * 4 * 64 and att["bound"] == "compute"
    main(["llm", "tinyllama-1.1b", "--on", "T4", "--phase", "both", "--json"])
    q = next(k for k in json.loads(capsys.readouterr().out)["kernels"] if k["name"] == "q_proj")
    assert q["meta"]["shape"]["m"] == 1          # both: the decode step, as documented


def test_tp_tokens_per_second_is_said_per_gpu_and_per_request(capsys):
    # 16 requests at TPOT 3.96 ms on 8 GPUs (3.7887 ms compute + 163.1 us all-reduces =
    # 3.9518 ms, + the 1.02 us embedding all-reduce (H1) + the 7.98 us logits gather,
    # review 18d E = 3.9609 ms): 16 / 3.9609 ms = 4039.5 tokens/s for the group, / 8 =
    # 504.9 per GPU (505.1 before the embedding's), / 16 = 252.5 per request.
    from rooflab.cli.main import main as cli

    assert cli(["llm", "llama-3-70b", "--on", "H200", "--tp", "8", "--batch", "16",
                "--json"]) == 0
    t = json.loads(capsys.readouterr().out)["llm"]["totals"]
    assert t["tokens_per_s_per_gpu"] == pytest.approx(t["tokens_per_s"] / 8)
    assert cli(["llm", "llama-3-70b", "--on", "H200", "--tp", "8", "--batch", "16"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "(the 8-GPU group: 504.9 per GPU, 252.5 per request)" in out
