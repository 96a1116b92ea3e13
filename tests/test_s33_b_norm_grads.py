"""--sequence-parallel: the norms' weight gradients all-reduced across the TP group once per
optimizer step (session 33, helper B item 3).

Megatron-LM, megatron/core/distributed/finalize_model_grads.py, _allreduce_layernorm_grads
("All-reduce layernorm grads (for sequence parallelism)"): the params marked
sequence_parallel (the norms'), and q_layernorm / k_layernorm, in one coalesced all-reduce
over the tensor-model-parallel group, called once from finalize_model_grads.

By hand (llama-2-7b: 32 layers, hidden 4096, RMSNorm: one weight of 4096 per norm):
  norms: (2 x 32 + 1) x 4096 = 266 240 params; fp32 grads: 1 064 960 B (Megatron-LM's
  main_grad under bf16: tests/test_s33_g_norm_grad_dtype.py); bf16: 532 480 B
  MI300X --tp 4 (192 GB/s): 2 x 3/4 x 1 064 960 B / 192e9 = 8.32 us
  H100 --tp 8 (450 GB/s), --grad-dtype fp32, --dp 2: 2 x 7/8 x 1 064 960 / 450e9 = 4.14 us
"""

import json

import pytest

from rooflab.cli.main import main

ARGS = ["llama-2-7b", "--batch", "1", "--seq", "4096", "--sequence-parallel"]


def _collectives(capsys, *extra):
    assert main(["-q", "train", *ARGS, *extra, "--json"]) == 0
    tp = json.loads(capsys.readouterr().out)["train"]["tp"]
    return {c["name"]: c for c in tp["collectives"]}


def test_norm_grads_all_reduce_counted(capsys):
    c = _collectives(capsys, "--on", "MI300X", "--tp", "4")["tp.allreduce.norm_grads"]
    assert (c["kind"], c["calls"]) == ("all-reduce", 1)
    assert c["bytes"] == (2 * 32 + 1) * 4096 * 4     # fp32 main_grad (s33 G)
    assert c["seconds_each"] == pytest.approx(2 * 3 / 4 * 1_064_960 / 192e9)   # 8.32 us
    # without sequence parallelism each device's norms see every token: nothing to reduce
    assert main(["-q", "train", *ARGS[:-1], "--on", "MI300X", "--tp", "4", "--json"]) == 0
    tp = json.loads(capsys.readouterr().out)["train"]["tp"]
    assert "tp.allreduce.norm_grads" not in {c["name"] for c in tp["collectives"]}


def test_norm_grads_at_the_gradients_width_once_per_step(capsys):
    c = _collectives(capsys, "--on", "H100", "--tp", "8", "--dp", "2", "--grad-dtype",
                     "fp32", "--accumulate", "4")["tp.allreduce.norm_grads"]
    assert c["bytes"] == (2 * 32 + 1) * 4096 * 4
    assert c["calls"] == 1          # after the last micro-batch, not x --accumulate
    assert c["seconds_each"] == pytest.approx(2 * 7 / 8 * 1_064_960 / 450e9)


def test_qk_norms_alone_without_sequence_parallel():
    """Qwen3-style q/k norms (one head_dim gamma each per layer) are all-reduced under TP
    even without sequence parallelism (q_layernorm / k_layernorm in Megatron's list)."""
    from rooflab.workloads.llm.config_names import load_config
    from rooflab.workloads.llm.train_tp import replicated_norm_params

    cfg = load_config("llama-2-7b").with_(qk_norm=True)
    assert replicated_norm_params(cfg, False) == 32 * 2 * 128
    assert replicated_norm_params(cfg, True) == (2 * 32 + 1) * 4096 + 32 * 2 * 128


def test_note_says_it_is_counted(capsys):
    assert main(["train", *ARGS, "--on", "MI300X", "--tp", "4"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "tp.allreduce.norm_grads (all-reduce of 1.06 MB, 1x per step): 8.32 us" in text
    assert "weight gradients' all-reduce across the group and" not in text
