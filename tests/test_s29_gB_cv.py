"""Session 29 gB: computer-vision leftovers of review s28 R3.

- whatif --batch renames `rooflab ai`'s image kernels to the new N, and reads the N of
  `ai pool2d` / `batchnorm` (they were scaled from batch 1: 32x, not 4x);
- pooling, upsampling and the batch / group norms have op kinds (fusion advice said
  "its op kind is unknown");
- `ai conv3d` and `ai conv_transpose2d`, checked against torch's FlopCounterMode;
- the BN fold advice's speed-up is the step's, not the kernel's (2.46e+05x before).
Hand values: A100 80GB SXM, fp16 tensor 312 TFLOP/s, fp16 vector 78, DRAM 2.039 TB/s.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rooflab import analyze, load_roof
from rooflab.cli.main import main
from rooflab.model.advice import advise
from rooflab.model.kernel import Kernel
from rooflab.model.opkind import is_streaming, kernel_kind, kind_from_name, kind_word
from rooflab.model.sanity_counts import check_ai_high
from rooflab.model.whatif_batch import change_batch, meta_batch
from rooflab.workloads import ops, ops_cv
from rooflab.workloads.ops_convnd import conv3d, conv_transpose2d

A100 = "A100 80GB SXM"
DOCS = Path(__file__).resolve().parents[1] / "docs"


# --- 1. whatif --batch: the name carries the new N -------------------------------------

def test_batch_renames_an_ai_conv_to_its_new_n():
    k = ops.conv2d(n=8, c=512, h=7, w=7, k=512, r=3, s=3, padding=1, dtype="fp16").kernel()
    (old, new), = change_batch(load_roof(A100), [k], 32).moves
    assert old.name == "conv2d_3x3_n8c512k512_7x7_fp16"
    assert new.name == "conv2d_3x3_n32c512k512_7x7_fp16"
    # and back: a chained what-if reads n32 and renames it again
    (_, back), = change_batch(load_roof(A100), [new], 8).moves
    assert back.name == old.name


def test_batch_keeps_a_name_that_says_no_n():
    k = ops.conv2d(n=8, c=64, h=56, w=56, k=64, r=3, s=3, dtype="fp16", name="my_conv").kernel()
    (_, new), = change_batch(load_roof(A100), [k], 32).moves
    assert new.name == "my_conv"


def test_cli_whatif_batch_json_new_kernel(tmp_path, capsys):
    f = tmp_path / "c.json"
    assert main(["ai", "conv2d", "--n", "8", "--c", "512", "--h", "7", "--w", "7", "--k",
                 "512", "--padding", "1", "--dtype", "fp16", "--json", "-q"]) == 0
    f.write_text(capsys.readouterr().out)
    assert main(["whatif", str(f), "--on", A100, "--batch", "32", "--json"]) == 0
    move = json.loads(capsys.readouterr().out)["moves"][0]
    assert (move["kernel"], move["new_kernel"]) == ("conv2d_3x3_n8c512k512_7x7_fp16",
                                                    "conv2d_3x3_n32c512k512_7x7_fp16")
    # 5.93 us -> 23.7 us (7.40 GFLOP / 312 TFLOP/s), unchanged by the rename
    assert move["after_work_floor_s"] == pytest.approx(4 * 1_849_688_064 / 312e12, rel=1e-6)


def test_batch_reads_an_ai_pool_n_and_renames_it():
    # 8x64x112x112 fp16 max pool 3x3/2 -> 56x56: 12,845,056 + 3,211,264 B at 2.039 TB/s
    k = ops_cv.pool2d(8, 64, 112, 112, 3, 2, 1, "max", "fp16").kernel()
    assert meta_batch(k) == 8
    w = change_batch(load_roof(A100), [k], 32)
    (old, new), = w.moves
    assert new.name == "maxpool_3x3_s2_n32c64_112x112_fp16"
    # 4x the bytes (batch 8 -> 32), not 32x (scaled from batch 1 before)
    assert new.bytes["DRAM"] == pytest.approx(4 * (12_845_056 + 3_211_264))
    assert new.meta["shape"]["n"] == 32
    assert "sequences" not in w.assumption   # images: not the LLM words


def test_batch_on_ai_batchnorm_and_transposed_conv():
    bn = ops_cv.norm2d(8, 64, 56, 56, "batch", dtype="fp16").kernel()
    (_, new), = change_batch(load_roof(A100), [bn], 16).moves
    assert new.total_flop == pytest.approx(2 * bn.total_flop)      # 8 -> 16: 2x
    assert new.name == "batchnorm_n16c64_56x56_fp16"
    ct = conv_transpose2d(8, 256, 32, 32, 128, 4, 4, stride=2, padding=1).kernel()
    (_, new), = change_batch(load_roof(A100), [ct], 32).moves
    assert new.total_flop == pytest.approx(4 * ct.total_flop)
    assert new.name == "conv_transpose2d_4x4_s2_n32c256k128_32x32_fp16"
    # the filter (256·128·16·2 B = 1,048,576) is read once whatever the batch
    assert new.bytes["DRAM"] == pytest.approx(4 * (ct.bytes["DRAM"] - 1_048_576) + 1_048_576)


# --- 2. op kinds of the vision layers --------------------------------------------------

@pytest.mark.parametrize("kind, word", [
    ("max_pool2d", "max_pool"), ("aten::max_pool2d_with_indices", "max_pool"),
    ("avg_pool2d", "avg_pool"), ("adaptive_avg_pool2d", "adaptive_avg_pool"),
    ("upsample_nearest2d", "upsample"), ("upsample_bilinear", "upsample"),
    ("batchnorm", "batchnorm"), ("groupnorm", "groupnorm"),
    ("aten::native_batch_norm", "native_batch_norm"),
    ("_native_batch_norm_legit_no_training", "_native_batch_norm_legit"), ("mean", "mean"),
])
def test_vision_layers_have_a_kind(kind, word):
    assert kind_word(kind) == word


def test_norms_stream_pools_do_not():
    assert is_streaming("batchnorm") and is_streaming("native_group_norm")
    # a pool's window FLOP can pass the streaming AI bound (below): a known kind, not
    # a streaming one
    assert not is_streaming("avg_pool2d") and not is_streaming("upsample_bilinear2d")
    assert kind_from_name("max_pool_forward_nchw") == "pool"
    assert kind_from_name("maxpool_3x3_s2_n8c64_112x112_fp16") == "max_pool"


def test_avg_pool_5x5_stride_1_is_no_miscount():
    # 5x5 stride 1 pad 2 fp16: 25 FLOP per output over 2 + 2 B: AI 6.25 > 4
    k = ops_cv.pool2d(8, 64, 56, 56, 5, 1, 2, "avg", "fp16").kernel()
    pts = analyze(load_roof(A100), [k]).points
    assert k.total_flop / k.bytes["DRAM"] == pytest.approx(6.25)
    assert check_ai_high(k, tuple(pts)) is None


def test_max_pool_fusion_advice_knows_its_kind():
    k = ops_cv.pool2d(8, 64, 112, 112, 3, 2, 1, "max", "fp16").kernel()
    assert kernel_kind(k) == ("max_pool2d", False)
    (p,) = analyze(load_roof(A100), [k]).primary()
    fuse = [a for a in advise(p, load_roof(A100), k) if a.action.startswith("fuse")]
    assert fuse and all("op kind is unknown" not in a.assumption for a in fuse)


# --- 3. ai conv3d and ai conv_transpose2d -----------------------------------------------

def test_conv3d_hand_count():
    op = conv3d(8, 64, 16, 56, 56, 64, padding=1)
    assert op.flop == 2 * 8 * 64 * 64 * 27 * 16 * 56 * 56 == 88_785_027_072
    assert op.bytes_split == {"input": 51_380_224, "filter": 221_184, "output": 51_380_224}
    assert op.unit == "tensor" and op.name == "conv3d_3x3x3_n8c64k64_16x56x56_fp16"


def test_conv_transpose2d_hand_count():
    op = conv_transpose2d(8, 256, 32, 32, 128, 4, 4, stride=2, padding=1, dtype="fp32")
    # each of the 8·256·32·32 inputs through 128 x 4 x 4 taps
    assert op.flop == 2 * 8 * 256 * 128 * 16 * 32 * 32 == 8_589_934_592
    assert (op.shape["p"], op.shape["q"]) == (64, 64)   # (32 - 1)·2 - 2 + 3 + 1
    assert op.bytes_split == {"input": 8 * 256 * 32 * 32 * 4, "filter": 256 * 128 * 16 * 4,
                              "output": 8 * 128 * 64 * 64 * 4}


@pytest.mark.parametrize("case", [
    dict(n=2, c=8, d=6, h=10, w=12, k=16, t=3, r=3, s=3, stride=(1, 2, 2), padding=1,
         groups=2),
    dict(n=1, c=4, d=5, h=9, w=9, k=8, t=1, r=3, s=3, stride=2, padding=0, dilation=2),
    dict(n=3, c=6, d=4, h=8, w=8, k=6, t=3, r=3, s=3, padding=1, groups=6),   # depthwise
])
def test_conv3d_matches_torch_flop_counter(case):
    torch = pytest.importorskip("torch")
    from torch.utils.flop_counter import FlopCounterMode

    x = torch.randn(case["n"], case["c"], case["d"], case["h"], case["w"])
    g = case.get("groups", 1)
    wt = torch.randn(case["k"], case["c"] // g, case["t"], case["r"], case["s"])
    with FlopCounterMode(display=False) as fc:
        y = torch.nn.functional.conv3d(x, wt, stride=case.get("stride", 1),
                                       padding=case.get("padding", 0),
                                       dilation=case.get("dilation", 1), groups=g)
    op = conv3d(**case, dtype="fp32")
    assert op.flop == fc.get_total_flops()
    assert (op.shape["do"], op.shape["p"], op.shape["q"]) == tuple(y.shape[2:])
    assert op.bytes_split["output"] == y.numel() * 4


@pytest.mark.parametrize("case", [
    dict(n=2, c=8, h=7, w=9, k=12, r=4, s=4, stride=2, padding=1, output_padding=1,
         groups=2),
    dict(n=1, c=16, h=5, w=6, k=8, r=3, s=3, stride=(2, 3), padding=(1, 0), dilation=2),
    dict(n=2, c=4, h=8, w=8, k=4, r=3, s=3, stride=1, padding=1, groups=4),   # depthwise
])
def test_conv_transpose2d_matches_torch_flop_counter(case):
    torch = pytest.importorskip("torch")
    from torch.utils.flop_counter import FlopCounterMode

    g = case.get("groups", 1)
    x = torch.randn(case["n"], case["c"], case["h"], case["w"])
    wt = torch.randn(case["c"], case["k"] // g, case["r"], case["s"])
    with FlopCounterMode(display=False) as fc:
        y = torch.nn.functional.conv_transpose2d(
            x, wt, stride=case.get("stride", 1), padding=case.get("padding", 0),
            output_padding=case.get("output_padding", 0), groups=g,
            dilation=case.get("dilation", 1))
    op = conv_transpose2d(**case, dtype="fp32")
    assert op.flop == fc.get_total_flops()
    assert (op.shape["p"], op.shape["q"]) == tuple(y.shape[2:])
    assert op.bytes_split["output"] == y.numel() * 4
    assert op.unit == ("vector" if g == case["c"] else "tensor") or op.unit is None


def test_cli_conv3d_and_transposed(capsys):
    assert main(["ai", "conv3d", "--n", "8", "--c", "64", "--d", "16", "--h", "56", "--w",
                 "56", "--k", "64", "--padding", "1", "--json", "-q"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["flop"] == 88_785_027_072 and d["op"] == "conv3d"
    for verb in ("deconv2d", "conv_transpose2d"):   # the listed name and torch's
        assert main(["ai", verb, "--n", "8", "--c", "256", "--h", "32", "--w", "32",
                     "--k", "128", "--r", "4", "--s", "4", "--stride", "2", "--padding",
                     "1", "--dtype", "fp32", "--on", A100, "--json", "-q"]) == 0
        d = json.loads(capsys.readouterr().out)
        assert d["flop"] == 8_589_934_592 and d["op"] == "conv_transpose2d"
        assert any("TF32" in n for n in d.get("notes", []))   # conv2d's note, fp32, A100


@pytest.mark.parametrize("args, words", [
    (["conv3d", "--n", "1", "--c", "3", "--d", "4", "--h", "8", "--w", "8", "--k", "8",
      "--stride", "1,2"], "one value or three"),
    (["conv3d", "--n", "1", "--c", "3", "--d", "1", "--h", "8", "--w", "8", "--k", "8"],
     "does not fit"),
    (["conv_transpose2d", "--n", "1", "--c", "4", "--h", "8", "--w", "8", "--k", "8",
      "--stride", "2", "--output-padding", "2"], "smaller than the stride"),
    (["conv_transpose2d", "--n", "1", "--c", "4", "--h", "8", "--w", "8", "--k", "6",
      "--groups", "4"], "must divide"),
])
def test_cli_conv_errors_exit_2(capsys, args, words):
    assert main(["ai", *args]) == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err


# --- 4. docs ---------------------------------------------------------------------------

def test_docs_carry_the_pool_rules_and_the_new_convs():
    bench = (DOCS / "bench.md").read_text()
    assert "native_group_norm" in bench and "avg_pool2d" in bench and "upsample" in bench
    ai = (DOCS / "ai.md").read_text()
    assert "`conv3d --n" in ai and "`deconv2d --n" in ai and "88,785,027,072" in ai


# --- 5. the BN fold's speed-up is the step's --------------------------------------------

def _bn_and_conv():
    n, c, h, w = 32, 256, 56, 56
    e = n * c * h * w
    conv = Kernel(name="aten::convolution [32x256x56x56, 256x256x3x3]",
                  flop={"fp16": 2.0 * n * 256 * h * w * c * 9},
                  bytes={"DRAM": 2.0 * (2 * e + 256 * 256 * 9)}, seconds=900e-6,
                  meta={"op": "conv2d"})
    bn = Kernel(name="aten::native_batch_norm [32x256x56x56, 256, 256, 256, 256]",
                flop={"fp16": 4.0 * e}, bytes={"DRAM": 2.0 * (2 * e + 4 * c)},
                seconds=61.7e-6, meta={"op": "batchnorm",
                                       "shapes": [[n, c, h, w], [c], [c], [c], [c]]})
    return conv, bn


def test_fold_speedup_is_the_steps():
    roof = load_roof(A100)
    conv, bn = _bn_and_conv()
    p = next(q for q in analyze(roof, [conv, bn]).primary() if q.kernel == bn.name)
    (fold,) = [a for a in advise(p, roof, bn) if a.action.startswith("fold")]
    # the BN is 61.7 / 961.7 = 6.4 % of the step; folding it leaves the bias read,
    # 256 x 2 B at 2.039 TB/s = 0.25 ns: 961.7 / (900 + 0.00025) = 1.0686x
    left = 256 * 2 / 2.039e12
    assert fold.new_seconds == pytest.approx(left)
    assert fold.speedup == pytest.approx(961.7e-6 / (900e-6 + left), rel=1e-6)
    assert "recorded step's" in fold.assumption and "the step 1.07x faster" in fold.detail


def test_a_foldable_batchnorm_is_advised_the_fold_not_fusion():
    # the fold removes the whole pass; fusion's per-kernel 1.85x would outrank its 1.07x
    # step speed-up and show as the best advice (lead, s29)
    roof = load_roof(A100)
    conv, bn = _bn_and_conv()
    p = next(q for q in analyze(roof, [conv, bn]).primary() if q.kernel == bn.name)
    actions = [a.action for a in advise(p, roof, bn)]
    assert actions[0].startswith("fold")
    assert not any(a.startswith("fuse") for a in actions)
