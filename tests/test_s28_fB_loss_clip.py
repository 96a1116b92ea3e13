"""`rooflab train --loss fused` (Liger-Kernel's FusedLinearCrossEntropy, chunked) and
`--clip-grad` (clip_grad_norm_'s two passes; fp16's GradScaler unscale), checked by hand.

TinyLlama-1.1B: V 32000, H 2048, 1,100,048,384 parameters. Llama-3-8B: V 128256, H 4096.
Liger's chunk (chunk_mem_const 1): inc_factor = ceil(V / H), chunk =
min(next_power_of_2(ceil(BT / inc_factor)), BT)."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from rooflab.cli.main import main
from rooflab.hardware.resolve import load_roof
from rooflab.workloads.llm import load_config
from rooflab.workloads.llm.train import TrainSetup, run_train
from rooflab.workloads.llm.train_clip import CLIP_NORM, CLIP_SCALE, UNSCALE
from rooflab.workloads.llm.train_loss import FUSED, FUSED_BWD, chunking
from rooflab.workloads.llm.train_memory import largest_batch, loss_peak_bytes, train_memory

PARAMS = 1_100_048_384
T, H, V = 1024, 2048, 32000           # TinyLlama, batch 1 x 1024
W = V * H * 2                         # the lm_head's bf16 weight: 131,072,000 B
EAGER = ("lm_head", "loss", "loss.bwd", "lm_head.bwd_dx", "lm_head.bwd_dw")


@pytest.fixture(scope="module")
def tiny():
    cfg, roof = load_config("tinyllama-1.1b"), load_roof("H100 SXM")
    return {loss: run_train(cfg, roof, TrainSetup(batch=1, seq=T, loss=loss))
            for loss in ("eager", "fused")}


def _op(r, name):
    return next(o for o in r.step.ops if o.op.name == name)


def test_liger_chunk_rule():
    # ceil(32000 / 2048) = 16; ceil(1024 / 16) = 64, a power of two: 16 chunks
    assert (chunking(1024, 32000, 2048).chunk, chunking(1024, 32000, 2048).chunks) == (64, 16)
    # Llama-3: ceil(128256 / 4096) = 32; 8192 / 32 = 256 -> 32 chunks
    assert (chunking(8192, 128256, 4096).chunk, chunking(8192, 128256, 4096).chunks) == (256, 32)
    # 3000 tokens: ceil(3000 / 16) = 188 -> 256 rows, ceil(3000 / 256) = 12 chunks
    assert (chunking(3000, 32000, 2048).chunk, chunking(3000, 32000, 2048).chunks) == (256, 12)
    # a vocabulary under the hidden size: inc_factor 1, one chunk of every token
    assert (chunking(1000, 512, 2048).chunk, chunking(1000, 512, 2048).chunks) == (1000, 1)
    assert chunking(1024, 32000, 2048).launches == 4 * 16 + 6


def test_fused_kernel_bytes_and_flop_by_hand(tiny):
    eager, fused = tiny["eager"], tiny["fused"]
    names = {o.op.name for o in fused.step.ops}
    assert not names & set(EAGER) and {FUSED, FUSED_BWD} <= names
    f = _op(fused, FUSED)
    assert fused.step.part_of(FUSED) == "forward" and f.calls == 70
    # FLOP: the eager rows' sum, 3 x 2 T H V + (4 + 3) T V
    assert f.flop == pytest.approx(3 * 2 * T * H * V + 7 * T * V) == 402_882_560_000
    assert f.flop == pytest.approx(sum(_op(eager, n).flop for n in EAGER))
    # W read twice per chunk, dW read and written per chunk and zeroed once: 65 W
    assert f.split("weights") == pytest.approx(65 * W) == 8_519_680_000
    # X twice, dX zeroed and written (4 T H 2 B), the logits 5 passes (5 T V 2 B), the
    # fp32 loss zeroed, written, summed (12 B per token)
    acts = 4 * T * H * 2 + 5 * T * V * 2 + 12 * T
    assert acts == 344_469_504
    assert f.split("activations") == pytest.approx(acts)
    assert f.bytes == pytest.approx(8_864_149_504)
    # the backward's grad_output scale: dX and dW read and written
    b = _op(fused, FUSED_BWD)
    assert fused.step.part_of(FUSED_BWD) == "backward" and b.calls == 2
    assert b.bytes == pytest.approx(2 * (T * H * 2 + W)) == 270_532_608
    assert b.flop == pytest.approx(T * H + V * H)
    # memory-bound at 2.65 ms on the H100 SXM (3.35 TB/s), against 466 us for the eager rows
    floor = {p.kernel: p.floor_s for p in fused.timing.points}
    assert floor[FUSED] == pytest.approx(8_864_149_504 / 3.35e12, rel=1e-3)
    eager_s = sum(p.floor_s for p in eager.timing.points if p.kernel in EAGER)
    # three compute-bound matmuls at 989.5 TFLOP/s, the loss's 65.5 + 131 MB at 3.35 TB/s
    by_hand = 3 * 2 * T * H * V / 989.5e12 + (T * V * 2 + 4 * T + 2 * T * V * 2) / 3.35e12
    assert eager_s == pytest.approx(by_hand, rel=1e-6)
    assert eager_s == pytest.approx(465.6e-6, rel=1e-4)


def test_mfu_numerator_unchanged_counted_adds_the_scale(tiny):
    eager, fused = tiny["eager"], tiny["fused"]
    assert fused.model_flop == eager.model_flop
    assert fused.counted_flop == pytest.approx(eager.counted_flop + T * H + V * H)
    # 5 eager launches become 70 + 2
    assert fused.timing.step.launches == eager.timing.step.launches - 5 + 72


def test_loss_peak_memory_tinyllama_by_hand():
    cfg = load_config("tinyllama-1.1b")
    eager = train_memory(cfg, TrainSetup(batch=1, seq=T), 80e9)
    fused = train_memory(cfg, TrainSetup(batch=1, seq=T, loss="fused"), 80e9)
    assert loss_peak_bytes(cfg, TrainSetup(batch=1, seq=T)) == 12 * T * V == 393_216_000
    # one chunk's bf16 logits 64 x 32000 x 2, the dX buffer T x H x 2, the fp32 loss
    peak = 64 * V * 2 + T * H * 2 + 4 * T
    assert peak == 8_294_400
    assert loss_peak_bytes(cfg, TrainSetup(batch=1, seq=T, loss="fused")) == peak
    # outside the layers: the final norm's and lm_head's inputs (2 x T H 2 B) + the peak
    assert eager.outside_layers == 2 * T * H * 2 + 393_216_000 == 401_604_608
    assert fused.outside_layers == 2 * T * H * 2 + peak == 16_683_008
    assert eager.total - fused.total == pytest.approx(393_216_000 - peak)


def test_loss_peak_memory_llama3_8k_by_hand():
    cfg = load_config("llama-3-8b")
    # docs/train.md: eager keeps 12.6 GB of logits at 8192 tokens
    assert loss_peak_bytes(cfg, TrainSetup(batch=1, seq=8192)) == 12 * 8192 * 128256
    assert 12 * 8192 * 128256 == 12_608_077_824
    # fused: 256 x 128256 x 2 (65.7 MB) + 8192 x 4096 x 2 (67.1 MB) + 4 x 8192
    fused = loss_peak_bytes(cfg, TrainSetup(batch=1, seq=8192, loss="fused"))
    assert fused == 65_667_072 + 67_108_864 + 32_768 == 132_808_704
    # fp32 (Liger's logits chunk at the input dtype, 4 B)
    f32 = loss_peak_bytes(cfg, TrainSetup(batch=1, seq=8192, loss="fused", dtype="fp32"))
    assert f32 == 2 * (65_667_072 + 67_108_864) + 32_768


def test_largest_batch_checks_the_rounded_chunk():
    # the chunk rounds up to a power of two of tokens: the proportion alone said 367
    cfg = load_config("tinyllama-1.1b")
    setup = TrainSetup(batch=1, seq=T, loss="fused", recompute="full")
    n = largest_batch(cfg, setup, 80e9)
    assert n == 363
    assert train_memory(cfg, replace(setup, batch=n), 80e9).fits
    assert not train_memory(cfg, replace(setup, batch=n + 1), 80e9).fits


def test_clip_grad_and_fp16_unscale_passes():
    cfg, roof = load_config("tinyllama-1.1b"), load_roof("H100 SXM")
    plain = run_train(cfg, roof, TrainSetup(batch=1, seq=T))
    assert [o.op.name for o in plain.step.optimizer] == ["optimizer.adamw"]
    r = run_train(cfg, roof, TrainSetup(batch=1, seq=T, clip_grad=True))
    assert [o.op.name for o in r.step.optimizer] == [CLIP_NORM, CLIP_SCALE, "optimizer.adamw"]
    norm, scale = _op(r, CLIP_NORM), _op(r, CLIP_SCALE)
    # bf16 gradients: the norm reads each once (2 B, 2 FLOP), the scale reads and writes
    assert (norm.bytes, norm.flop) == (2 * PARAMS, 2 * PARAMS)
    assert (scale.bytes, scale.flop) == (4 * PARAMS, PARAMS)
    assert r.floor_s - plain.floor_s == pytest.approx(6 * PARAMS / 3.35e12, rel=1e-6)
    assert r.model_flop == plain.model_flop
    # fp32 gradients: 4 B each
    f32 = run_train(cfg, roof, TrainSetup(batch=1, seq=T, clip_grad=True, dtype="fp32"))
    assert _op(f32, CLIP_SCALE).bytes == 8 * PARAMS
    # fp16: GradScaler.unscale_ reads and writes every gradient, with or without clipping
    f16 = run_train(cfg, roof, TrainSetup(batch=1, seq=T, dtype="fp16"))
    assert [o.op.name for o in f16.step.optimizer] == [UNSCALE, "optimizer.adamw"]
    assert (_op(f16, UNSCALE).bytes, _op(f16, UNSCALE).flop) == (4 * PARAMS, 2 * PARAMS)
    # once per optimizer step, whatever --accumulate
    acc = run_train(cfg, roof, TrainSetup(batch=1, seq=T, clip_grad=True, accumulate=4))
    assert _op(acc, CLIP_NORM).calls == 1


def test_gradient_passes_are_held_like_the_optimizer():
    cfg, roof = load_config("tinyllama-1.1b"), load_roof("H100 SXM")
    r = run_train(cfg, roof, TrainSetup(batch=1, seq=T, clip_grad=True, dtype="fp16"))
    meta = {k.name: k.meta for k in r.timing.analysis.kernels}
    for name in (UNSCALE, CLIP_NORM, CLIP_SCALE):
        assert meta[name]["train_part"] == "optimizer"
        assert meta[name]["held_unquantized"]
        assert meta[name]["weight_dtype"] == "fp16"      # the gradients', not fp32 state
        assert meta[name]["op"] == "elementwise"
    assert meta["optimizer.adamw"]["weight_dtype"] == "fp32"


def _json(capsys, *args):
    code = main(["train", *args, "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def test_cli_json_text_and_errors(capsys):
    base = ("tinyllama-1.1b", "--on", "H100 SXM", "--seq", "1024")
    d = _json(capsys, *base)
    assert d["train"]["setup"]["loss"] == "eager" and d["train"]["setup"]["clip_grad"] is False
    assert d["train"]["memory"]["loss_peak_bytes"] == 393_216_000
    f = _json(capsys, *base, "--loss", "fused", "--clip-grad")
    t = f["train"]
    assert t["setup"]["loss"] == "fused" and t["setup"]["clip_grad"] is True
    assert t["memory"]["loss_peak_bytes"] == 8_294_400
    rows = {k["name"]: k for k in t["kernels"]}
    assert rows[FUSED]["calls"] == 70 and rows[FUSED]["bytes"] == pytest.approx(8_864_149_504)
    assert rows[CLIP_NORM]["part"] == "optimizer"
    kernels = {k["name"]: k for k in f["kernels"]}
    assert kernels[FUSED]["meta"]["weight_gradient"]
    notes = " ".join(t["notes"])
    assert "16 chunks of 64 tokens" in notes and "zero_grad() sets the gradients to None" in notes
    # the table's title and rows
    assert main(["train", *base, "--loss", "fused", "--clip-grad"]) == 0
    out = " ".join(capsys.readouterr()[0].split())
    assert "fused loss (Liger), clip-grad" in out
    assert FUSED in out and CLIP_SCALE in out and "lm_head.bwd_dx" not in out
    # a bad --loss: what, the choices, exit 2, no traceback
    assert main(["train", *base, "--loss", "liger"]) == 2
    err = capsys.readouterr()[1]
    assert "--loss must be one of eager, fused; got 'liger'" in err
    assert "Traceback" not in err


def test_whatif_quantize_leaves_the_fused_rows_and_clip(capsys, tmp_path):
    path = str(tmp_path / "fused.json")
    assert main(["train", "tinyllama-1.1b", "--on", "H100 SXM", "--seq", "1024", "--loss",
                 "fused", "--clip-grad", "-o", path]) == 0
    capsys.readouterr()
    assert main(["whatif", path, "--quantize", "int4", "--json"]) == 0
    doc = json.loads(capsys.readouterr()[0])
    before = {k["name"]: k for k in json.load(open(path))["kernels"]}
    after = {k["name"]: k for k in doc["after"]["kernels"]}
    for name in (FUSED, FUSED_BWD, CLIP_NORM, CLIP_SCALE):
        assert after[name]["bytes"] == before[name]["bytes"], name
    # --batch keeps the clip passes (once per optimizer step)
    assert main(["whatif", path, "--batch", "4", "--json"]) == 0
    doc = json.loads(capsys.readouterr()[0])
    after = {k["name"]: k for k in doc["after"]["kernels"]}
    assert after[CLIP_SCALE]["bytes"] == before[CLIP_SCALE]["bytes"]


def test_fused_row_takes_the_matmuls_precision_and_width():
    cfg, roof = load_config("tinyllama-1.1b"), load_roof("H100 SXM")
    r = run_train(cfg, roof, TrainSetup(batch=1, seq=T, loss="fused", dtype="tf32"))
    f = _op(r, FUSED)
    assert (f.op.precision, f.op.unit) == ("tf32", "tensor")
    # fp32 storage: every byte of the bf16 count doubles but the loss vector's 12 B/token
    assert f.bytes == pytest.approx(2 * (8_864_149_504 - 12 * T) + 12 * T)
