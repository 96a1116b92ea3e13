"""`rooflab train`: one training step's kernels, floors, MFU/HFU and memory, checked by
hand on TinyLlama-1.1B (bundled config) at batch 1 x 1024 tokens on an H100 SXM, and
Korthikanti et al. 2022's activation count on GPT-2's shapes."""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main
from rooflab.hardware.resolve import load_roof
from rooflab.workloads.llm import load_config
from rooflab.workloads.llm.train import TrainSetup, palm_flop_per_token, run_train
from rooflab.workloads.llm.train_memory import layer_activation_bytes, train_memory

# TinyLlama-1.1B (config.json: hidden 2048, 22 layers, 32 heads of 64, 4 KV heads,
# intermediate 5632, vocab 32000, untied lm_head), its parameters by hand:
H, L, A, D, KV, IM, V = 2048, 22, 32, 64, 4 * 64, 5632, 32000
ATTN_W = H * H + 2 * H * KV + H * H            # q, k, v, o per layer
MLP_W = 3 * H * IM                              # gate, up, down per layer
NORMS = (2 * L + 1) * H
MATMUL = L * (ATTN_W + MLP_W) + V * H          # every linear, lm_head included
TOTAL = MATMUL + V * H + NORMS                 # + the input embedding table
N = TOTAL - V * H                              # PaLM's N: all but the input embedding
S = 1024
H100_BF16 = 989.5e12                           # catalog: H100 SXM dense bf16 tensor


@pytest.fixture(scope="module")
def tiny():
    return run_train(load_config("tinyllama-1.1b"), load_roof("H100 SXM"),
                     TrainSetup(batch=1, seq=S))


def test_hand_parameter_counts():
    assert TOTAL == 1_100_048_384 and N == 1_034_512_384


def test_model_flop_is_palms_formula(tiny):
    # PaLM appendix B: 6 N + 12 L H Q T per token, T tokens per sequence
    per_token = 6 * N + 12 * L * A * D * S
    assert tiny.model_flop == per_token * S == 6_922_979_770_368
    six_n, attn, n = palm_flop_per_token(load_config("tinyllama-1.1b"), S)
    assert (six_n, attn, n) == (6 * N, 12 * L * A * D * S, N)


def test_counted_flop_is_6NT_plus_causal_attention_within_one_percent(tiny):
    # the kernels: every linear 2 x forward + 4 x backward = 6 FLOP per weight and token;
    # flash attention causal, S(S+1)/2 scores per head, 4 D FLOP each, forward 1x and
    # FlashAttention-2 backward 2.5x; the rest (norms, element-wise, loss, AdamW's 15
    # FLOP per parameter) is under 1 % of it
    linears = 6 * MATMUL * S
    attn_fwd = L * 2 * A * (S * (S + 1) // 2) * 2 * D
    by_hand = linears + 3.5 * attn_fwd
    fwd_linear = sum(o.flop for o in tiny.step.forward if o.op.op == "linear")
    assert fwd_linear == 2 * MATMUL * S
    assert sum(o.flop for o in tiny.step.forward if o.op.op == "attention") == attn_fwd
    assert tiny.counted_flop == pytest.approx(by_hand, rel=0.01)
    assert tiny.counted_flop > by_hand


def test_backward_is_two_matmuls_of_each_linears_shape(tiny):
    ops = {o.op.name: o for o in tiny.step.ops}
    for o in tiny.step.forward:
        if o.op.op != "linear":
            continue
        dx, dw = ops[o.op.name + ".bwd_dx"], ops[o.op.name + ".bwd_dw"]
        assert dx.flop + dw.flop == 2 * o.flop
        assert dx.bytes + dw.bytes == pytest.approx(2 * o.bytes)
        assert dx.calls == dw.calls == o.calls
    # down_proj: dW written at bf16, IM x H per layer; dX reads W and dY, writes dX
    dw = ops["down_proj.bwd_dw"]
    assert dw.split("weights") == 2 * IM * H * L
    assert ops["down_proj.bwd_dx"].split("activations") == 2 * S * (IM + H) * L
    att, bwd = ops["attention"], ops["attention.bwd"]
    assert bwd.flop == 2.5 * att.flop
    lse = 4 * A * S * L        # the saved logsumexp, fp32 per head and token
    assert bwd.bytes == pytest.approx(2 * (att.bytes - lse) + lse)


def test_adamw_moves_28_bytes_and_keeps_16_per_parameter(tiny):
    opt = tiny.step.optimizer[0].op
    assert opt.name == "optimizer.adamw"
    assert opt.bytes == 28 * TOTAL and opt.flop == 15 * TOTAL
    # its floor on the roof: 28 B x 1.1 G / 3.35 TB/s = 9.19 ms
    point = next(p for p in tiny.timing.points if p.kernel == opt.name)
    assert point.floor_s == pytest.approx(28 * TOTAL / 3.35e12)
    mem = train_memory(load_config("tinyllama-1.1b"), TrainSetup(batch=1, seq=S), 80e9)
    assert mem.weights + mem.grads + mem.optimizer == 16 * TOTAL   # ZeRO's 16 B/param
    assert mem.fits is True


def test_step_floor_is_the_sum_of_the_kernels_floors(tiny):
    total = sum(p.floor_s for p in tiny.timing.points)
    assert tiny.floor_s == pytest.approx(total)
    for p in tiny.timing.points:
        assert p.floor_s == pytest.approx(max(p.flop / p.peak_flop_per_s,
                                              p.bytes / p.bytes_per_s))
    assert tiny.tokens_per_s == pytest.approx(S / tiny.floor_s)
    assert tiny.mfu_at_floor == pytest.approx(tiny.model_flop / tiny.floor_s / H100_BF16)


def test_full_recompute_adds_the_layers_forward_and_raises_hfu_only():
    cfg, roof = load_config("tinyllama-1.1b"), load_roof("H100 SXM")
    none = run_train(cfg, roof, TrainSetup(batch=1, seq=S))
    full = run_train(cfg, roof, TrainSetup(batch=1, seq=S, recompute="full"))
    layer_fwd = sum(o.flop for o in none.step.forward if o.scope == "layer")
    assert sum(o.flop for o in full.step.recompute) == layer_fwd
    assert full.model_flop == none.model_flop
    assert full.floor_s > none.floor_s
    assert full.hfu(0.05) > full.mfu(0.05) == pytest.approx(none.mfu(0.05))
    mem_none = train_memory(cfg, TrainSetup(batch=1, seq=S), None)
    mem_full = train_memory(cfg, TrainSetup(batch=1, seq=S, recompute="full"), None)
    assert mem_full.per_layer == 2 * S * H and mem_full.activations < mem_none.activations


def test_korthikanti_activations_on_gpt2_shapes():
    # GPT-2 small is GPT-3's layer (4h MLP, GeLU, MHA): with dropout and naive attention
    # s b h (34 + 5 a s / h) bytes per layer (Korthikanti et al. 2022, eq. 1)
    cfg = load_config("gpt2")
    s, b, h, a = 1024, 2, 768, 12
    full = layer_activation_bytes(cfg, b, s, attn="naive", dropout=True)
    assert full == s * b * h * (34 + 5 * a * s / h)
    assert layer_activation_bytes(cfg, b, s, "naive", "selective", True) == 34 * s * b * h
    assert layer_activation_bytes(cfg, b, s, "naive", "full", True) == 2 * s * b * h


def run(capsys, *args):
    code = main(["train", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_json_gives_mfu_and_hfu_of_a_measured_step(capsys):
    code, out, _ = run(capsys, "tinyllama-1.1b", "--on", "H100 SXM", "--batch", "1", "--seq",
                       "1024", "--step-ms", "30", "--json")
    assert code == 0
    d = json.loads(out)
    t = d["train"]
    # by hand: 6,922,979,770,368 FLOP / 0.030 s / 989.5 TFLOP/s = 23.3 %
    assert t["measured"]["mfu"] == pytest.approx(6_922_979_770_368 / 0.030 / 989.5e12)
    assert t["measured"]["mfu"] == pytest.approx(0.2332, abs=1e-4)
    assert t["measured"]["hfu"] > t["measured"]["mfu"]
    assert t["peak_flop_per_s"] == H100_BF16
    assert t["memory"]["fits"] is True
    names = [k["name"] for k in d["kernels"]]
    assert "q_proj.bwd_dx" in names and names[-1] == "optimizer.adamw"


def test_cli_table_and_a_kernel_file_report_reads(capsys, tmp_path):
    path = tmp_path / "step.json"
    code, out, err = run(capsys, "gpt2", "--on", "A100 80GB SXM", "--batch", "4", "--seq",
                         "512", "--recompute", "full", "-o", str(path))
    assert code == 0
    for text in ("training step", "attention.bwd", "q_proj.recompute", "optimizer.adamw",
                 "step floor", "MFU at the floor", "memory: weights"):
        assert text in out, text
    assert "wrote" in err
    assert main(["report", str(path)]) == 0
    capsys.readouterr()


def test_does_not_fit_is_said(capsys):
    code, out, err = run(capsys, "llama-3-8b", "--on", "H100 SXM", "--seq", "4096")
    assert code == 0
    # weights, gradients and AdamW alone are 128 GB: only sharding helps (review v1-F7)
    assert "DOES NOT FIT" in out and "shard them over devices (ZeRO-3 / FSDP" in out
    assert "does not fit" in err


@pytest.mark.parametrize("args, words", [
    (("--seq", "0"), "--seq must be an integer >= 1"),
    (("--optimizer", "lion"), "--optimizer must be one of adamw, sgd"),
    (("--recompute", "most"), "--recompute must be one of none, selective, full"),
    (("--step-ms", "-3"), "--step-ms must be a positive, finite time"),
])
def test_bad_input_is_a_clear_error(capsys, args, words):
    code, out, err = run(capsys, "tinyllama-1.1b", "--on", "H100 SXM", *args)
    assert code == 2
    assert words in err and "Traceback" not in err + out
    assert out == ""
