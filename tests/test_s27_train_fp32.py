"""`rooflab train --dtype fp32 | tf32` (no mixed precision: a CPU step, or a GPU one with
TF32 off or on), the summary's attention words under --attn naive, and the stand-in note
said once on a roof without bf16 (fixer fL, from fK's validation against PyTorch).

Hand numbers: TinyLlama-1.1B (1,100,048,384 parameters, test_s27_train.py) on an H100 SXM
(catalog: fp32 vector 67, tf32 tensor 494.5 TFLOP/s dense, 3.35 TB/s)."""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main
from rooflab.errors import InputError
from rooflab.hardware.resolve import load_roof
from rooflab.workloads.llm import load_config
from rooflab.workloads.llm.train import TrainSetup, run_train
from rooflab.workloads.llm.train_memory import layer_activation_bytes, train_memory

P = 1_100_048_384           # TinyLlama-1.1B's parameters (test_s27_train.TOTAL)
H, S = 2048, 1024
H100_FP32, H100_TF32, H100_BW = 67e12, 494.5e12, 3.35e12


def tiny(dtype: str, **kw):
    return run_train(load_config("tinyllama-1.1b"), load_roof("H100 SXM"),
                     TrainSetup(batch=1, seq=S, dtype=dtype, **kw))


def test_fp32_adamw_moves_28_bytes_and_keeps_m_and_v():
    # fp32, no master copy: AdamW's step reads p, g, m, v (4 x 4 = 16 B) and writes p, m,
    # v (12 B) per parameter: 28 B; its state is m and v, 8 B
    r = tiny("fp32")
    opt = r.step.optimizer[0]
    assert opt.op.name == "optimizer.adamw" and opt.bytes == (16 + 12) * P
    assert opt.flop == 15 * P
    assert r.part_s("optimizer") == pytest.approx(28 * P / H100_BW)     # 9.19 ms
    m = train_memory(load_config("tinyllama-1.1b"), r.setup, 80e9)
    assert (m.weights, m.grads, m.optimizer) == (4 * P, 4 * P, 8 * P)
    assert m.states == 16 * P          # as mixed precision's 2 + 2 + 12


def test_fp32_sgd_moves_20_bytes_and_keeps_the_momentum():
    # reads p, g, buf (12 B), writes p, buf (8 B); state: the momentum, 4 B
    r = tiny("fp32", optimizer="sgd")
    assert r.step.optimizer[0].bytes == 20 * P and r.step.optimizer[0].flop == 6 * P
    m = train_memory(load_config("tinyllama-1.1b"), r.setup, 80e9)
    assert m.optimizer == 4 * P and m.states == 12 * P


def test_fp32_kernels_are_4_bytes_wide_on_the_fp32_ceiling():
    r = tiny("fp32")
    q = next(o for o in r.step.forward if o.op.name == "q_proj")
    assert q.op.precision == "fp32"
    assert q.op.bytes_split["weights"] == 4 * H * H                     # W at 4 B
    assert q.op.bytes_split["activations"] == 4 * S * H * 2             # X in, Y out
    # MFU's peak: H100 has no fp32 tensor ceiling (TF32 off): the fp32 vector 67 TFLOP/s
    assert r.peak_flop_per_s == H100_FP32 and r.peak_label == "fp32 vector"
    # one note for the matmuls' stand-in and the peak's
    assert sum("has no fp32 tensor ceiling" in n for n in r.notes) == 1
    assert any(n.endswith("and MFU's peak)") for n in r.notes)
    # MI300X's matrix cores do fp32: its fp32 tensor ceiling (163.4 TFLOP/s)
    mi = run_train(load_config("tinyllama-1.1b"), load_roof("MI300X"),
                   TrainSetup(batch=1, seq=S, dtype="fp32"))
    assert mi.peak_flop_per_s == 163.4e12 and mi.peak_label == "fp32 tensor"


def test_tf32_puts_the_matmuls_on_tf32_tensor_and_keeps_fp32_bytes():
    r, f = tiny("tf32"), tiny("fp32")
    prec = {o.op.name: o.op.precision for o in r.step.ops}
    assert prec["q_proj"] == prec["q_proj.bwd_dw"] == prec["attention.bwd"] == "tf32"
    assert prec["norm"] == prec["loss"] == prec["optimizer.adamw"] == "fp32"
    assert r.timing.step.bytes == f.timing.step.bytes                   # fp32 storage
    assert r.peak_flop_per_s == H100_TF32 and r.peak_label == "tf32 tensor"
    # docs/train.md's worked numbers: fp32 112 ms (6.71 TFLOP at 67 TFLOP/s + AdamW's
    # 9.19 ms), tf32 25.7 ms
    assert f.floor_s == pytest.approx(0.112, rel=0.005)
    assert r.floor_s == pytest.approx(0.0257, rel=0.005)
    assert f.mfu_at_floor == pytest.approx(0.92, abs=0.005)
    # the weights in the kernels' meta are fp32 (whatif reads them), not "tf32"
    k = next(k for k in r.timing.analysis.kernels if k.name == "q_proj")
    assert k.meta["weight_dtype"] == "fp32" and k.precision == "tf32"


def test_fp32_activations_by_hand_on_gpt3_shapes():
    # Korthikanti's count at 4 B per element (GPT-2 small: 4h MLP, MHA, dropout, naive):
    # attention 4 (h + 3h + h) = 20, MLP 4 h + 4 (4h + 4h) = 36, two norms 8, two dropout
    # masks 2: 66 s b h; scores: softmax out 4 + mask 1 + dropout out 4 = 9 a s^2 b
    cfg = load_config("gpt2")
    s, b, h, a = 1024, 2, 768, 12
    got = layer_activation_bytes(cfg, b, s, attn="naive", dropout=True, width=4)
    assert got == s * b * h * 66 + 9 * a * s * s * b
    # and at 2 B Korthikanti's 34 s b h + 5 a s^2 b, unchanged
    assert layer_activation_bytes(cfg, b, s, "naive", dropout=True) == \
        s * b * h * 34 + 5 * a * s * s * b
    m = train_memory(cfg, TrainSetup(batch=b, seq=s, attn="naive", dtype="fp32"), None)
    assert m.per_layer == layer_activation_bytes(cfg, b, s, "naive", width=4)


def run(capsys, *args):
    code = main(["train", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_dtype_fp32_json(capsys):
    code, out, _ = run(capsys, "tinyllama-1.1b", "--on", "H100 SXM", "--seq", "1024",
                       "--dtype", "fp32", "--json")
    assert code == 0
    t = json.loads(out)["train"]
    assert t["setup"]["dtype"] == "fp32"
    assert "m and v (8 B/param" in t["setup"]["optimizer_state"]
    assert t["memory"]["optimizer_bytes"] == 8 * P
    opt = next(k for k in t["kernels"] if k["name"] == "optimizer.adamw")
    assert opt["bytes"] == 28 * P
    assert t["peak_flop_per_s"] == H100_FP32
    assert any(n.startswith("--dtype fp32: no mixed precision") for n in t["notes"])


def test_bad_dtype_names_the_choices(capsys):
    code, out, err = run(capsys, "tinyllama-1.1b", "--on", "H100 SXM", "--dtype", "int8")
    assert code == 2 and out == ""
    assert "--dtype must be one of bf16, fp16, fp32, tf32; got 'int8'" in err
    with pytest.raises(InputError):
        TrainSetup(dtype="fp64")


def test_naive_summary_says_dense_scores_were_counted(capsys):
    code, out, _ = run(capsys, "gpt2", "--on", "A100 80GB SXM", "--seq", "512", "--attn",
                       "naive")
    assert code == 0
    line = next(x for x in out.splitlines() if "counted in the kernels" in x)
    assert "(causal attention" not in line
    assert "naive attention's dense T x T scores, the masked half included" in line
    code, out, _ = run(capsys, "gpt2", "--on", "A100 80GB SXM", "--seq", "512")
    line = next(x for x in out.splitlines() if "counted in the kernels" in x)
    assert "(causal attention, norms and the rest" in line


def test_a_roof_without_bf16_says_the_stand_in_once(capsys):
    # an EPYC 7763 has fp32 and fp64 vector ceilings only: bf16 matmuls and MFU's peak
    # both fall back to fp32 vector, said in one note
    code, out, _ = run(capsys, "gpt2", "--on", "AMD EPYC 7763", "--seq", "256")
    assert code == 0
    notes = [x for x in out.splitlines() if x.startswith("note:")]
    assert sum("has no bf16 ceiling; using fp32 vector" in n for n in notes) == 1
    assert any("has no bf16 ceiling" in n and n.endswith("and MFU's peak)") for n in notes)
