"""Pooling, group norm, upsample, pixel_shuffle and padding: one rule set for the live
counter and the trace (review s28 R3 F2, F5), the strided 1x1 conv's bytes (F3), the op
table gaps (F12). Layers built with torch.nn / torch.nn.functional, no torchvision.
Values by hand on x = 2x8x6x6 fp32 (576 elements)."""

from __future__ import annotations

import warnings

import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional
nn = torch.nn

from rooflab.bench.torch_count import count_call  # noqa: E402

X = (2, 8, 6, 6)


def _one(fn):
    with torch.no_grad():
        _, c = count_call(fn)
    return {r.op: r for r in c.ops}


def test_strided_1x1_conv_reads_only_the_pixels_its_outputs_use():
    # the review's case: 32x256x56x56 fp32, 512 filters 1x1, stride 2: input 784 of 3136
    # pixels, 25,690,112 + filter 524,288 + output 51,380,224 = 77,594,624 B (not 154.7 MB)
    x, w = torch.randn(32, 256, 56, 56), torch.randn(512, 256, 1, 1)
    rec = _one(lambda: F.conv2d(x, w, stride=2))["aten.convolution"]
    assert rec.bytes == 77_594_624


def test_forward_counts_by_hand():
    x = torch.randn(*X)
    got = {name: _one(fn) for name, fn in {
        "max": lambda: F.max_pool2d(x, 3, 2, 1),
        "avg": lambda: F.avg_pool2d(x, 2),
        "adaptive": lambda: F.adaptive_avg_pool2d(x, 3),
        "gn": lambda: F.group_norm(x, 4),
        "nearest": lambda: F.interpolate(x, scale_factor=2),
        "bilinear": lambda: F.interpolate(x, scale_factor=2, mode="bilinear"),
        "shuffle": lambda: F.pixel_shuffle(x, 2),
        "reflect": lambda: F.pad(x, (1, 1, 1, 1), mode="reflect"),
    }.items()}
    # max-pool 3x3/2 pad 1 compares: 0 FLOP, not uncounted; 144 outputs: bytes 576·4 +
    # 144·(4 + 8) (int64 indices)
    mp = got["max"]["aten.max_pool2d_with_indices"]
    assert (mp.flop, mp.flop_source, mp.bytes) == (0.0, "comparison", 576 * 4 + 144 * 12)
    # avg 2x2: 144 outputs x window 4 = 576; adaptive to 3x3 on 6x6: windows of 2x2
    assert got["avg"]["aten.avg_pool2d"].flop == 144 * 4
    assert got["adaptive"]["aten._adaptive_avg_pool2d"].flop == 144 * 4
    # group norm without weight and bias: 5 per element
    assert got["gn"]["aten.native_group_norm"].flop == 5 * 576
    # nearest, pixel_shuffle, reflect pad: movement, 0 FLOP
    assert got["nearest"]["aten.upsample_nearest2d"].flop_source == "movement"
    assert got["shuffle"]["aten.pixel_shuffle"].flop_source == "movement"
    assert got["reflect"]["aten.reflection_pad2d"].flop_source == "movement"
    # bilinear: 2304 outputs x 9 (three lerps of 2 multiplies + 1 add)
    assert got["bilinear"]["aten.upsample_bilinear2d"].flop == 2304 * 9


def test_backward_counts_by_hand():
    xg = torch.randn(*X, requires_grad=True)
    wb = (torch.ones(8, requires_grad=True), torch.zeros(8, requires_grad=True))

    def train():
        outs = [F.interpolate(xg, scale_factor=2, mode="bilinear"),
                F.interpolate(xg, scale_factor=2), F.group_norm(xg, 4, *wb),
                F.avg_pool2d(xg, 2), F.max_pool2d(xg, 2), F.pad(xg, (1, 1, 1, 1), mode="reflect")]
        for y in outs:
            y.backward(torch.ones_like(y))

    _, c = count_call(train)
    flop = {r.op: r.flop for r in c.ops if r.op.endswith("_backward")}
    assert flop["aten.upsample_bilinear2d_backward"] == 2304 * 8   # 4 taps x (mul + add)
    assert flop["aten.upsample_nearest2d_backward"] == 2304        # 1 add per grad_out
    assert flop["aten.native_group_norm_backward"] == 13 * 576     # layer norm's 13
    assert flop["aten.avg_pool2d_backward"] == 144 * (1 + 4)
    assert flop["aten.max_pool2d_with_indices_backward"] == 144
    assert flop["aten.reflection_pad2d_backward"] == 8 * 8 * 16 - 576   # the border, 448
    assert not c.uncounted


def test_measure_of_a_small_cnn_warns_nothing_missing():
    from rooflab import measure

    net = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                        nn.MaxPool2d(2), nn.GroupNorm(2, 8), nn.Upsample(scale_factor=2),
                        nn.AdaptiveAvgPool2d(1)).eval()
    x = torch.randn(1, 3, 16, 16)
    with warnings.catch_warnings(record=True) as caught, torch.no_grad():
        warnings.simplefilter("always")
        k = measure(net, x, plan="quick")
    assert not [w for w in caught if "no FLOP formula" in str(w.message)]
    assert "uncounted_ops" not in k.meta


def test_new_zeros_is_an_allocation_not_a_read():
    x = torch.randn(*X)
    rec = _one(lambda: x.new_zeros(3))["aten.new_zeros"]
    assert (rec.flop_source, rec.bytes) == ("movement", 12)


def _trace(tmp_path, fn):
    from torch.profiler import ProfilerActivity, profile

    from rooflab.ingest.torch_trace import load_torch_trace

    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as p:
        fn()
    path = str(tmp_path / "t.json")
    p.export_chrome_trace(path)
    return load_torch_trace(path)


@pytest.mark.parametrize("fn, op", [
    (lambda x: F.interpolate(x, scale_factor=2, mode="bilinear"), "upsample_bilinear2d"),
    (lambda x: F.avg_pool2d(x, 2), "avg_pool2d"),
    (lambda x: F.group_norm(x, 4), "native_group_norm"),
    (lambda x: F.adaptive_avg_pool2d(x, 3), "_adaptive_avg_pool2d"),
])
def test_the_trace_counts_what_the_live_counter_counts(tmp_path, fn, op):
    x = torch.randn(*X)
    live = _one(lambda: fn(x))[f"aten.{op}"].flop
    with torch.no_grad():
        imp = _trace(tmp_path, lambda: fn(x))
    (k,) = [k for k in imp.kernels if k.name.startswith(f"aten::{op} ")]
    assert k.total_flop == live > 0


def test_trace_rules_for_resampling_ops(tmp_path):
    xg = torch.randn(*X, requires_grad=True)

    def run():
        ys = [F.interpolate(xg, scale_factor=2), F.pixel_shuffle(xg, 2),
              F.adaptive_max_pool2d(xg, 1),
              F.pad(xg, (1, 1, 1, 1), mode="reflect")]
        sum(y.sum() for y in ys).backward()

    imp = _trace(tmp_path, run)
    by = {k.name.split(" [")[0]: k for k in imp.kernels}
    assert by["aten::upsample_nearest2d"].total_flop == 0
    assert by["aten::upsample_nearest2d"].bytes["DRAM"] == (576 + 2304) * 4
    assert by["aten::upsample_nearest2d"].calls == 1   # the .vec and inner calls: one
    assert by["aten::pixel_shuffle"].bytes["DRAM"] == 2 * 576 * 4
    # adaptive max to 1x1: 16 outputs, value + int64 index each
    assert by["aten::adaptive_max_pool2d"].bytes["DRAM"] == 576 * 4 + 16 * 12
    assert by["aten::adaptive_max_pool2d_backward"].total_flop == 16
    assert by["aten::reflection_pad2d_backward"].total_flop == 448
    names = {u["name"] for u in imp.uncounted}
    assert not names & {"aten::upsample_nearest2d", "aten::pixel_shuffle",
                        "aten::adaptive_max_pool2d", "aten::reflection_pad2d"}


def test_the_mha_fast_path_split_is_counted_in_the_trace(tmp_path):
    m = nn.MultiheadAttention(64, 4, batch_first=True).eval()
    x = torch.randn(2, 10, 64)
    with torch.no_grad():
        imp = _trace(tmp_path, lambda: m(x, x, x, need_weights=False))
    (k,) = [k for k in imp.kernels if "_transform_bias_rescale_qkv" in k.name]
    # qkv [2, 10, 192] read and q, k, v written (2 x 3840 x 4 B) + the bias 192 x 4 B
    assert (k.total_flop, k.bytes["DRAM"]) == (0.0, 2 * 3840 * 4 + 192 * 4)
