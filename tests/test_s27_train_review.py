"""Review s27 v1 of `rooflab train`, one test per finding fixed (fT2): the attention term
of MFU (F1), the default dtype on a roof without bf16 math (F2), a measured step below
the floor (F3), a sequence past a learned position table (F12), gradient accumulation
(F4), MoE and loss activation memory (F5, F9), the floor with launches (F10), the fit
verdict (F7) and report's precision advice on the optimizer (F6). Values by hand from
the bundled configs and the catalog's H100 SXM (989.5 TFLOP/s bf16 tensor, 3.35 TB/s,
80 GB) and V100 (125 TFLOP/s fp16 tensor, no bf16)."""

from __future__ import annotations

import json
import math

import pytest

from rooflab.cli.main import main
from rooflab.hardware.resolve import load_roof
from rooflab.workloads.llm import load_config
from rooflab.workloads.llm import train as tr
from rooflab.workloads.llm import train_memory as tm
from rooflab.workloads.llm.train import TrainSetup, palm_flop_per_token, run_train
from rooflab.workloads.llm.train_memory import layer_activation_bytes, train_memory

# TinyLlama-1.1B: 22 layers, 32 heads of 64 (tests/test_s27_train.py's hand counts)
L, A, D = 22, 32, 64
H100 = 989.5e12


def run(capsys, *args):
    code = main(["train", *args])
    out, err = capsys.readouterr()
    return code, out, err


def train_json(capsys, *args):
    code, out, err = run(capsys, *args, "--json")
    assert code == 0, err
    return json.loads(out)["train"], err


# v1-F1: PaLM's 12 L H Q T counts the full T x T scores; --attention-flops causal the half
# the causal kernels compute (Megatron-LM), and an MFU at the floor past 100 % says why


def test_causal_keys_by_hand():
    assert tr.causal_keys(1024, None) == 1025 / 2            # queries see 1, 2, ..., 1024 keys
    assert tr.causal_keys(4, 2) == (1 + 2 + 2 + 2) / 4        # a window of 2 caps the rows
    assert tr.causal_keys(2, 4) == 1.5                         # a window past the sequence


def test_causal_attention_term_is_half_plus_the_diagonal():
    cfg, s = load_config("tinyllama-1.1b"), 1024
    six_n, full, _ = palm_flop_per_token(cfg, s)
    six_n_c, causal, _ = palm_flop_per_token(cfg, s, "causal")
    assert full == 12 * L * A * D * s
    assert causal == 12 * L * A * D * (s + 1) / 2 and six_n_c == six_n


def test_mfu_at_the_floor_past_100_is_explained_and_causal_stays_under(capsys):
    args = ("llama-3-8b", "--on", "H100 SXM", "--seq", "32768")
    t, _ = train_json(capsys, *args)
    assert t["mfu_at_floor"] > 1                      # PaLM's count, 1.18 (the review's)
    assert "full T x T" in t["model_flop_source"]
    c, _ = train_json(capsys, *args, "--attention-flops", "causal")
    assert c["setup"]["attention_flops"] == "causal"
    assert c["mfu_at_floor"] < 1 and c["model_flop"] < c["counted_flop"]
    assert "Megatron-LM" in c["model_flop_source"]
    code, out, _ = run(capsys, *args)
    assert code == 0
    line = next(x for x in out.splitlines() if x.startswith("MFU at the floor"))
    assert "above 100 %" in line and "--attention-flops causal" in line
    assert f"it is {100 * c['mfu_at_floor']:.0f} %" in line


# v1-F2: V100/T4 have fp16 tensor math and no bf16: the default is fp16 (rooflab scale's)


def test_v100_defaults_to_fp16_against_its_tensor_peak(capsys):
    t, _ = train_json(capsys, "gpt2", "--on", "V100", "--batch", "8", "--seq", "1024")
    assert t["setup"]["dtype"] == "fp16"
    assert t["peak_flop_per_s"] == 125e12 and t["peak"] == "fp16 tensor"
    assert any("fp16 (the default is bf16)" in n for n in t["notes"])
    b, _ = train_json(capsys, "gpt2", "--on", "V100", "--batch", "8", "--seq", "1024",
                      "--dtype", "bf16")
    assert b["setup"]["dtype"] == "bf16" and b["floor_s"] > t["floor_s"]
    h, _ = train_json(capsys, "gpt2", "--on", "H100 SXM", "--seq", "1024")
    assert h["setup"]["dtype"] == "bf16"


# v1-F3: a measured step below the floor is a warning with llm's words, not a reading


def test_step_faster_than_the_floor_is_warned(capsys):
    t, err = train_json(capsys, "tinyllama-1.1b", "--on", "H100 SXM", "--seq", "1024",
                        "--step-ms", "1")
    assert t["floor_s"] > 0.001 and t["measured"]["faster_than_floor"] is True
    assert "warning: --step-ms 1 is faster than the floor" in err
    assert "no step can beat max(FLOP / P, bytes / B)" in err
    assert "milliseconds, not seconds" in err
    _, err = train_json(capsys, "tinyllama-1.1b", "--on", "H100 SXM", "--seq", "1024",
                        "--step-ms", "30")
    assert "faster than the floor" not in err


# v1-F12: a learned position table has max_position_embeddings rows: an error; RoPE past
# it is a stderr warning (llm's words)


def test_seq_past_a_learned_table_is_an_error(capsys):
    code, out, err = run(capsys, "gpt2", "--on", "H100 SXM", "--seq", "4096")
    assert code == 2 and out == "" and "Traceback" not in err
    assert "learned position table (1024 rows" in err and "--seq 1024 or less" in err


def test_seq_past_rope_context_is_a_stderr_warning(capsys):
    code, out, err = run(capsys, "tinyllama-1.1b", "--on", "H100 SXM", "--seq", "4096")
    assert code == 0
    assert "warning: context of 4096 tokens is longer than" in err
    assert "max_position_embeddings (2048)" in err and "longer than" not in out


# v1-F4: --accumulate N: forward and backward N times, the optimizer once


def test_accumulation_bills_the_optimizer_once():
    cfg, roof = load_config("tinyllama-1.1b"), load_roof("H100 SXM")
    one = run_train(cfg, roof, TrainSetup(batch=1, seq=1024))
    acc = run_train(cfg, roof, TrainSetup(batch=1, seq=1024, accumulate=32))
    opt = one.part_s("optimizer")
    assert opt == pytest.approx(28 * 1_100_048_384 / 3.35e12)       # 9.19 ms, once
    assert acc.part_s("optimizer") == pytest.approx(opt)
    assert acc.part_s("forward") == pytest.approx(32 * one.part_s("forward"))
    # the backward 32 times, and micro-batches 2..32 read the gradient their dW adds into
    # (s36 N: train_ops.accumulated), so a little more than 32 x its own
    assert acc.floor_s > 32 * (one.floor_s - opt) + opt   # 274 ms
    assert acc.floor_s == pytest.approx(0.273, abs=0.001)
    assert acc.model_flop == 32 * one.model_flop
    assert acc.tokens_per_s == pytest.approx(32 * 1024 / acc.floor_s)
    assert acc.mfu_at_floor == pytest.approx(32 * one.model_flop / acc.floor_s / H100)
    assert acc.mfu_at_floor == pytest.approx(0.82, abs=0.005)          # review's ~82 %
    m1 = train_memory(cfg, TrainSetup(batch=1, seq=1024), 80e9)
    m32 = train_memory(cfg, TrainSetup(batch=1, seq=1024, accumulate=32), 80e9)
    assert m32.total == m1.total                                        # the micro-batch's


def test_cli_accumulate(capsys):
    t, _ = train_json(capsys, "tinyllama-1.1b", "--on", "H100 SXM", "--seq", "1024",
                      "--accumulate", "4", "--step-ms", "80")
    assert t["setup"]["step_tokens"] == 4096 and t["setup"]["accumulate"] == 4
    assert t["measured"]["tokens_per_s"] == pytest.approx(4096 / 0.080)
    code, _, err = run(capsys, "tinyllama-1.1b", "--on", "H100 SXM", "--accumulate", "0")
    assert code == 2 and "--accumulate must be an integer >= 1" in err


# v1-F5: a MoE layer keeps its routed rows' gathered inputs and outputs and the router's
# softmax


def test_moe_activations_count_the_routed_copies():
    # qwen3-30b-a3b: hidden 2048, 32 heads of 128 (q 4096), 4 KV heads (kv 512), 8 of 128
    # experts of 768, two norms; s = 4096, batch 1, flash
    s, h = 4096, 2048
    attention = 2 * s * (h + 4096 + 2 * 512 + 4096) + 4 * 32 * s
    mlp = 2 * s * h + 2 * s * 3 * 768 * 8
    norms = 2 * s * h * 2
    assert attention + mlp + norms == 294_125_568          # the review's (old) figure
    routed = 2 * s * h * 8 * 2 + 4 * s * 128                # inputs and outputs, router
    got = layer_activation_bytes(load_config("qwen3-30b-a3b"), 1, s)
    assert got == 294_125_568 + routed == 564_658_176


# v1-F9: the loss's peak per logit on Hugging Face's path (train_memory's docstring)


def test_logits_at_the_hf_loss_peak():
    cfg, s = load_config("llama-3-8b"), 8192
    mem = train_memory(cfg, TrainSetup(batch=1, seq=s), 80e9)
    # final norm and lm_head inputs (2 B) + 12 B per logit: the saved fp32 log_softmax
    # output, nll_loss's fp32 gradient and log_softmax's fp32 input gradient
    assert mem.outside_layers == 2 * 2 * s * 4096 + 12 * s * 128_256
    assert mem.outside_layers == pytest.approx(12.74e9, rel=1e-3)


# v1-F10: the floor with launches, as llm, whatif and choose give it


def test_floor_with_launches_in_text_and_json(capsys, tmp_path):
    t, _ = train_json(capsys, "tinyllama-1.1b", "--on", "H100 SXM", "--seq", "1024")
    rows = t["kernels"]
    by_hand = sum(max(k["floor_s"], k["calls"] * 5e-6) for k in rows)   # 5 us a launch
    assert t["with_launches_s"] == pytest.approx(by_hand)
    assert t["with_launches_s"] > t["work_floor_s"] == t["floor_s"]
    assert t["launches"]["per_step"] == sum(k["calls"] for k in rows) == 780
    assert t["mfu_with_launches"] == pytest.approx(t["model_flop"] / by_hand / H100)
    code, out, _ = run(capsys, "tinyllama-1.1b", "--on", "H100 SXM", "--seq", "1024")
    assert "with launches 18.3 ms: 780 launches" in out
    # the same figure whatif reads from the file
    path = tmp_path / "step.json"
    assert run(capsys, "tinyllama-1.1b", "--on", "H100 SXM", "--seq", "1024", "-o",
               str(path))[0] == 0
    assert main(["whatif", str(path), "--precision", "fp8"]) == 0
    assert "with launches: 18.3 ms" in capsys.readouterr()[0]


# v1-F7: remedies that can close the gap, the largest batch, ZeRO-3's device count


def test_states_past_the_device_ask_for_sharding(capsys):
    t, _ = train_json(capsys, "llama-3-8b", "--on", "H100 SXM", "--batch", "4", "--seq",
                      "2048")
    m = t["memory"]
    assert m["states_bytes"] == 16 * m["params"] > 80e9 and m["fits"] is False
    n = m["zero3_devices"]                     # states / N + activations <= 80 GB
    assert n == math.ceil(m["states_bytes"] / (80e9 - m["activations_bytes"]))
    assert m["states_bytes"] / n + m["activations_bytes"] <= 80e9
    assert m["states_bytes"] / (n - 1) + m["activations_bytes"] > 80e9
    code, out, _ = run(capsys, "llama-3-8b", "--on", "H100 SXM", "--batch", "4", "--seq",
                       "2048")
    line = next(x for x in out.splitlines() if x.startswith("memory:"))
    assert "no --batch or --recompute fits" in line and f"ZeRO-3 / FSDP: {n} devices" in line
    assert "try --recompute full" not in line and "largest --batch" not in line


def test_largest_batch_that_fits(capsys):
    cfg = load_config("tinyllama-1.1b")
    setup = TrainSetup(batch=1, seq=1024)
    n = tm.largest_batch(cfg, setup, 80e9)
    fits = train_memory(cfg, TrainSetup(batch=n, seq=1024), 80e9)
    over = train_memory(cfg, TrainSetup(batch=n + 1, seq=1024), 80e9)
    assert fits.fits is True and over.fits is False
    t, _ = train_json(capsys, "tinyllama-1.1b", "--on", "H100 SXM", "--seq", "1024")
    assert t["memory"]["largest_batch"] == n
    assert t["memory"]["largest_batch_recompute_full"] > n
    code, out, _ = run(capsys, "tinyllama-1.1b", "--on", "H100 SXM", "--seq", "1024")
    assert f"largest --batch that fits: {n} (" in out


# v1-F6: report leaves the optimizer's fp32 state alone (meta held_unquantized), and the
# optimizer is a known (element-wise) kind


def test_report_gives_no_precision_advice_on_the_optimizer(capsys, tmp_path):
    path = tmp_path / "step.json"
    assert run(capsys, "tinyllama-1.1b", "--on", "H100 SXM", "--seq", "1024", "-o",
               str(path))[0] == 0
    doc = json.loads(path.read_text())
    opt = next(k for k in doc["kernels"] if k["name"] == "optimizer.adamw")
    assert opt["meta"]["op"] == "elementwise" and opt["meta"]["held_unquantized"]
    assert main(["report", str(path)]) == 0
    out = capsys.readouterr()[0]
    row = next(x for x in out.splitlines() if "optimizer.adamw" in x)
    assert "instead of fp32" not in row and "2.00x" not in row
    assert "kind is unknown" not in out


def test_over_100_note_in_json(capsys):
    t, _ = train_json(capsys, "llama-3-8b", "--on", "H100 SXM", "--seq", "32768")
    assert "above 100 % because PaLM's count" in t["mfu_at_floor_note"]
    u, _ = train_json(capsys, "llama-3-8b", "--on", "H100 SXM", "--seq", "4096")
    assert u["mfu_at_floor"] < 1 and u["mfu_at_floor_note"] is None


# v1-F8 (a note): scale does not extend this step; v1-F4/F6: what amortizes the optimizer


def test_notes_on_scale_and_the_optimizer_share(capsys):
    t, _ = train_json(capsys, "tinyllama-1.1b", "--on", "H100 SXM", "--seq", "1024")
    notes = " ".join(t["notes"])
    assert "rooflab scale adds the gradient all-reduce" not in notes
    assert "no gradient all-reduce counted" in notes and "--dp N" in notes
    share = t["parts_s"]["optimizer"] / t["floor_s"]
    assert f"the optimizer is {100 * share:.0f} % of the floor" in notes      # 53 %
    assert "--accumulate N" in notes
    a, _ = train_json(capsys, "tinyllama-1.1b", "--on", "H100 SXM", "--seq", "1024",
                      "--accumulate", "32")
    assert "the optimizer is" not in " ".join(a["notes"])          # 3 % of 274 ms


def test_measured_mfu_past_100_at_or_above_the_floor_says_why(capsys):
    # llama-3-8b at 32k on an H100: floor 2.70 s, MFU at the floor 118 % (PaLM's count);
    # a measured 2.8 s step is slower than the floor and still above 100 %
    code, out, err = run(capsys, "llama-3-8b", "--on", "H100 SXM", "--seq", "32768",
                         "--step-ms", "2800")
    line = next(x for x in out.splitlines() if x.startswith("measured step"))
    assert "MFU above 100 %: PaLM's full T x T count" in line
    assert "faster than the floor" not in err
