"""whatif --batch on convolutions (review s28 R3 F1) and conv names / row pairing (F8).
Values by hand: A100 80GB SXM, fp16 tensor 312 TFLOP/s, DRAM 2.039 TB/s."""

from __future__ import annotations

import json

import pytest

from rooflab import load_roof
from rooflab.cli.main import main
from rooflab.model.kernel import Kernel
from rooflab.model.whatif_batch import change_batch, meta_batch
from rooflab.model.whatif_conv import conv_batch, conv_filter_share, with_recorded_batch
from rooflab.model.whatif_weights import weight_share_of
from rooflab.workloads import ops

A100 = "A100 80GB SXM"


def _c8():
    return ops.conv2d(n=8, c=512, h=7, w=7, k=512, r=3, s=3, padding=1, dtype="fp16").kernel()


def test_ai_conv2d_batch_8_to_32_scales_from_8_and_holds_the_filter():
    k = _c8()
    assert meta_batch(k) == 8   # shape n, not the old default 1
    share, src = weight_share_of(k, None)
    # filter 512·512·9·2 B = 4,718,592 of 5,521,408 B
    assert share == pytest.approx(4_718_592 / 5_521_408)
    assert "filter" in src
    w = change_batch(load_roof(A100), [k], 32)
    (old, new), = w.moves
    assert new.total_flop == pytest.approx(4 * 1_849_688_064)   # 7.40 GFLOP, 4x
    # activations 802,816 B x 4 + the filter once: 7,929,856 B
    assert new.bytes["DRAM"] == pytest.approx(4 * 802_816 + 4_718_592)
    assert new.total_flop / new.bytes["DRAM"] == pytest.approx(933.02, abs=0.01)
    assert new.meta["shape"]["n"] == 32 and new.meta["bytes_split"]["filter"] == 4_718_592
    point = w.after.primary()[0]
    assert point.bound == "compute"
    # floor max(7.40e9 / 312e12, 7.93e6 / 2.039e12) = 23.7 us
    assert point.floor_s == pytest.approx(7.398752256e9 / 312e12, rel=1e-3)


def _trace_conv(n=4, calls=1):
    # aten::convolution [4x512x7x7, 512x512x3x3] fp32: in 401,408 B, filter 9,437,184 B,
    # out 401,408 B per call
    flop = 2.0 * n * 512 * 49 * 512 * 9
    nbytes = (2 * n * 512 * 49 + 512 * 512 * 9) * 4.0
    return Kernel(name=f"aten::convolution [{n}x512x7x7, 512x512x3x3]",
                  flop={"fp32": flop * calls}, bytes={"DRAM": nbytes * calls}, calls=calls,
                  seconds=1e-3, meta={"source": "torch.profiler", "op": "conv2d",
                                      "file": "t.json",
                                      "shapes": [[n, 512, 7, 7], [512, 512, 3, 3], [], []],
                                      "dtypes": ["float", "float", "", "ScalarList"]})


def _trace_relu():
    return Kernel(name="aten::relu_ [4x512x7x7]", flop={"fp32": 0.0},
                  bytes={"DRAM": 2 * 4 * 512 * 49 * 4.0}, seconds=1e-4,
                  meta={"source": "torch.profiler", "op": "relu", "file": "t.json",
                        "shapes": [[4, 512, 7, 7]], "dtypes": ["float"]})


def test_a_trace_conv_reads_its_batch_and_filter_off_the_recorded_shapes():
    k = _trace_conv(calls=8)
    assert conv_batch(k) == 4
    share, _ = conv_filter_share(k)
    assert share == pytest.approx(9_437_184 / 10_240_000)   # 2.36 M of 2.56 M elements
    w = change_batch(load_roof(A100), [k], 32)
    (_, new), = w.moves
    # AI 90.3 -> 466.5: FLOP 8x, activations 8x, the filter once per call
    assert k.total_flop / k.bytes["DRAM"] == pytest.approx(90.32, abs=0.01)
    assert new.total_flop / new.bytes["DRAM"] == pytest.approx(
        8 * 924_844_032 / (8 * 802_816 + 9_437_184), rel=1e-9)
    assert new.total_flop / new.bytes["DRAM"] == pytest.approx(466.51, abs=0.01)


def test_the_trace_s_other_ops_take_the_batch_its_convs_agree_on():
    kernels, said = with_recorded_batch([_trace_conv(), _trace_relu()])
    assert [k.meta["batch"] for k in kernels] == [4, 4]
    assert "4" in said
    w = change_batch(load_roof(A100), [_trace_conv(), _trace_relu()], 32)
    relu_old, relu_new = w.moves[1]
    assert relu_new.bytes["DRAM"] == pytest.approx(8 * relu_old.bytes["DRAM"])   # 32 / 4


def test_whatif_batch_on_images_says_samples_not_tokens(tmp_path, capsys):
    path = tmp_path / "k.json"
    doc = {"kernels": [{"name": k.name, "flop": k.flop, "bytes": k.bytes, "calls": k.calls,
                        "seconds": k.seconds, "meta": k.meta}
                       for k in (_trace_conv(), _trace_relu())]}
    path.write_text(json.dumps(doc))
    assert main(["whatif", str(path), "--on", A100, "--batch", "32"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "per sample" in out and "samples/s" in out
    assert "tokens/s" not in out and "per token" not in out
    assert "batch 4 -> 32" in out


def test_conv_names_carry_stride_and_groups():
    def name(**kw):
        return ops.conv2d(n=32, c=96, h=56, w=56, k=96, r=7, s=7, padding=3, **kw).name

    assert name() == "conv2d_7x7_n32c96k96_56x56_fp16"
    assert name(groups=96) == "conv2d_7x7_g96_n32c96k96_56x56_fp16"
    assert name(stride=2) == "conv2d_7x7_s2_n32c96k96_56x56_fp16"
    assert name(stride=(2, 1)) == "conv2d_7x7_s2x1_n32c96k96_56x56_fp16"


def test_whatif_rows_pair_by_kernel_not_by_name(tmp_path, capsys):
    paths = []
    for i, kw in enumerate(({"groups": 96}, {}, {"stride": 2})):
        k = ops.conv2d(n=32, c=96, h=56, w=56, k=96, r=7, s=7, padding=3, **kw).kernel()
        p = tmp_path / f"{i}.json"
        p.write_text(json.dumps({"kernels": [{"name": "same", "flop": k.flop,
                                              "bytes": k.bytes, "meta": k.meta,
                                              "unit": k.unit}]}))
        paths.append(str(p))
    assert main(["whatif", *paths, "--on", "H100 SXM", "--precision", "fp8"]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("│ same")]
    # depthwise 24.5, dense 2298, stride 2 907: each its own AI, not the last one's
    assert [r.split("│")[2].split("->")[0].strip() for r in rows] == ["24.5", "2298", "907"]
    assert "memory" in rows[0] and "compute" in rows[1]
