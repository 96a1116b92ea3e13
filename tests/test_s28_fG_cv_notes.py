"""Notes and advice a CV engineer reads (review s28 R3): no TF32 note for a depthwise conv
(F6), a TF32 note when fp32 convs move to an Ampere+ GPU (F7), the channel-multiple note
(F10), folding an inference BatchNorm into its conv (F11), a max-pool's int64 indices under
narrower storage (F12), a vision model's pointer in llm/train (F13). Values by hand."""

from __future__ import annotations

import json

import pytest

from rooflab import analyze, load_roof
from rooflab.cli.main import main
from rooflab.model.advice import advise
from rooflab.model.kernel import Kernel
from rooflab.model.tf32_note import tf32_devices_note, tf32_note
from rooflab.workloads.ops_conv import channel_pad_note

A100 = "A100 80GB SXM"
DW = ["ai", "conv2d", "--n", "32", "--c", "96", "--h", "56", "--w", "56", "--k", "96",
      "--r", "7", "--s", "7", "--padding", "3", "--dtype", "fp32", "--on", A100, "--json"]


def _notes(capsys, args) -> str:
    assert main(args) == 0
    return " ".join(json.loads(capsys.readouterr().out).get("notes", []))


def test_no_tf32_note_for_a_depthwise_fp32_conv(capsys):
    assert "TF32" not in _notes(capsys, [*DW, "--groups", "96"])
    assert "TF32" in _notes(capsys, DW)   # the dense one keeps it


def test_live_counter_keeps_a_cuda_depthwise_conv_fp32(monkeypatch):
    torch = pytest.importorskip("torch")
    from rooflab.bench import torch_count

    # no GPU here: the counter is told its tensors are on CUDA with TF32 on
    monkeypatch.setattr(torch_count, "_device_of", lambda tensors: "cuda:0")
    monkeypatch.setattr(torch_count, "tf32_enabled", lambda kind: True)
    x = torch.randn(1, 8, 6, 6)
    with torch.no_grad():
        _, dw = torch_count.count_call(lambda: torch.nn.functional.conv2d(
            x, torch.randn(8, 1, 3, 3), groups=8))
        _, dense = torch_count.count_call(lambda: torch.nn.functional.conv2d(
            x, torch.randn(8, 8, 3, 3)))
    conv = [r for r in dw.ops if r.op == "aten.convolution"]
    # fp32 FLOP (unit None: fp32 has no tensor unit, any fp32 ceiling), not tf32
    assert [(r.precision, r.unit) for r in conv] == [("fp32", None)]
    assert [r.precision for r in dense.ops if r.op == "aten.convolution"] == ["tf32"]


def _trace_conv(groups_one=False):
    wt = [512, 1, 3, 3] if groups_one else [512, 512, 3, 3]
    return Kernel(name="aten::convolution [4x512x7x7]", flop={"fp32": 9.25e8},
                  bytes={"DRAM": 1.0e7}, seconds=1e-3,
                  meta={"source": "torch.profiler", "op": "conv2d", "file": "t.json",
                        "shapes": [[4, 512, 7, 7], wt], "dtypes": ["float", "float"]})


def test_tf32_note_on_a_gpu_with_a_tf32_ceiling_only():
    note = tf32_note([_trace_conv()], load_roof(A100))
    assert note is not None and "156 TFLOP/s" in note and "19.5 TFLOP/s" in note
    assert tf32_note([_trace_conv()], load_roof("T4")) is None   # Turing: no TF32
    assert tf32_note([_trace_conv(groups_one=True)], load_roof(A100)) is None  # depthwise
    both = tf32_devices_note([_trace_conv()], [load_roof("T4"), load_roof(A100)])
    assert "A100" in both and "T4" not in both


def test_channel_multiple_note():
    # C = 3 padded to 8 for fp16: 8/3 = 2.67x the MACs; int8 to 16: 5.33x
    assert "2.67x" in channel_pad_note("fp16", 3, 64)
    assert "5.33x" in channel_pad_note("int8", 3, 64)
    assert channel_pad_note("fp16", 64, 64) is None
    assert channel_pad_note("fp32", 3, 64) is None   # no tensor-core rule for fp32


def test_ai_conv2d_stem_says_the_channels_do_not_fill_tensor_cores(capsys):
    args = ["ai", "conv2d", "--n", "1", "--c", "3", "--h", "224", "--w", "224", "--k", "64",
            "--r", "7", "--s", "7", "--stride", "2", "--padding", "3", "--dtype", "fp16",
            "--on", A100, "--json"]
    assert "multiples of 8" in _notes(capsys, args)


def _bn(training: bool) -> Kernel:
    # native_batch_norm over 4x256x56x56 fp32: 3,211,264 elements x 4 (eval) or 7
    e = 4 * 256 * 56 * 56
    return Kernel(name="aten::native_batch_norm [4x256x56x56, 256, 256, 256, 256]",
                  flop={"fp32": (7.0 if training else 4.0) * e}, bytes={"DRAM": 2 * e * 4.0},
                  seconds=20e-3, unit="vector",
                  meta={"source": "torch.profiler", "op": "batchnorm",
                        "shapes": [[4, 256, 56, 56], [256], [256], [256], [256]],
                        "dtypes": ["float"] * 5})


def test_an_inference_batchnorm_is_folded_into_its_conv():
    roof = load_roof(A100)
    for training, want in ((False, True), (True, False)):
        k = _bn(training)
        (p,) = analyze(roof, [k]).primary()
        actions = [a.action for a in advise(p, roof, k)]
        assert any(a.startswith("fold it into the preceding conv") for a in actions) is want


def test_max_pool_indices_do_not_narrow():
    # 4x64x112x112 fp32 -> 4x64x56x56: input 12,845,056 B, values 3,211,264 B, int64
    # indices 6,422,528 B; bf16 values: 8,028,160 + 6,422,528 = 14,450,688 B, 1.56x
    x, out = 4 * 64 * 112 * 112, 4 * 64 * 56 * 56
    k = Kernel(name="aten::max_pool2d_with_indices [4x64x112x112]", flop={"fp32": 0.0},
               bytes={"DRAM": x * 4.0 + out * 12.0}, seconds=20e-3,
               meta={"source": "torch.profiler", "op": "max_pool2d",
                     "shapes": [[4, 64, 112, 112], [], [], [], [], []],
                     "dtypes": ["float"]})
    roof = load_roof(A100)
    (p,) = analyze(roof, [k]).primary()
    (narrow,) = [a for a in advise(p, roof, k) if a.action == "store the data in a narrower type"]
    assert "14.5 MB" in narrow.detail
    assert "indices" in narrow.assumption


@pytest.mark.parametrize("verb", ["llm", "train"])
def test_a_vision_model_name_gets_a_pointer_not_an_llm(verb, capsys):
    assert main([verb, "resnet50", "--on", "A100"]) == 2
    err = capsys.readouterr().err
    assert "rooflab torch --run" in err and "closest" not in err


def test_a_vit_config_is_pointed_to_the_profiler(tmp_path, capsys):
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps({"model_type": "vit", "hidden_size": 768,
                               "num_hidden_layers": 12, "num_attention_heads": 12,
                               "architectures": ["ViTForImageClassification"]}))
    assert main(["llm", str(cfg), "--on", "A100"]) == 2
    err = capsys.readouterr().err
    assert "vocab_size" in err and "rooflab.measure" in err


# --- F9: `rooflab ai` pool2d / batchnorm / groupnorm / upsample, by hand -------------------

def _ai(capsys, *args):
    assert main(["ai", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_ai_vision_layers_by_hand(capsys):
    # ResNet's stem pool: 4x64x112x112 fp32, 3x3/2 pad 1 -> 56x56: 0 FLOP,
    # 4·(3,211,264 + 802,816) = 16,056,320 B
    d = _ai(capsys, "pool2d", "--n", "4", "--c", "64", "--h", "112", "--w", "112",
            "--kernel", "3", "--stride", "2", "--padding", "1", "--dtype", "fp32")
    assert (d["flop"], d["bytes"]) == (0.0, 16_056_320.0)
    d = _ai(capsys, "pool2d", "--n", "1", "--c", "8", "--h", "6", "--w", "6", "--mode", "avg",
            "--dtype", "fp32")
    assert d["flop"] == 72 * 4   # 72 outputs x window 4
    # eval BatchNorm 4x256x56x56 fp32: 4/element; x, y and 4 x 256 parameters
    d = _ai(capsys, "batchnorm", "--n", "4", "--c", "256", "--h", "56", "--w", "56",
            "--dtype", "fp32")
    assert (d["flop"], d["bytes"]) == (12_845_056.0, 25_694_208.0)
    d = _ai(capsys, "batchnorm", "--n", "4", "--c", "256", "--h", "56", "--w", "56",
            "--dtype", "fp32", "--training")
    assert d["flop"] == 7 * 3_211_264
    # SD UNet GroupNorm 2x320x64x64 fp16: 7/element, bytes 2·(2·2,621,440 + 640)
    d = _ai(capsys, "groupnorm", "--n", "2", "--c", "320", "--h", "64", "--w", "64")
    assert (d["flop"], d["bytes"]) == (18_350_080.0, 10_487_040.0)
    d = _ai(capsys, "upsample", "--n", "2", "--c", "8", "--h", "6", "--w", "6", "--mode",
            "bilinear", "--dtype", "fp32")
    assert (d["flop"], d["bytes"]) == (2304 * 9.0, (576 + 2304) * 4.0)


def test_ai_vision_layer_errors_are_clean(capsys):
    assert main(["ai", "groupnorm", "--n", "1", "--c", "10", "--h", "4", "--w", "4",
                 "--groups", "3"]) == 2
    assert "must divide --c 10" in capsys.readouterr().err
    assert main(["ai", "pool2d", "--n", "1", "--c", "1", "--h", "2", "--w", "2",
                 "--kernel", "5"]) == 2
    assert "does not fit" in capsys.readouterr().err
