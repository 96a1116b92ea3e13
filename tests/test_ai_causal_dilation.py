"""Review 16b #1 and #10: `ai attention --causal-align` (which key a causal query sees when
Lq != Lkv, said in the byte model) and `ai conv2d --dilation`; and `ai stencil --points 1`
naming its option. Hand counts from the review, checked against torch where it is here."""

from __future__ import annotations

import pytest
from cli_inproc import json_of as _json
from cli_inproc import one_line_error as _error

from rooflab.cli.main import main
from rooflab.workloads import ops

# H 4, Lq 16, Lkv 64, D 64, fp32: 4·H·D = 1024 FLOP per (query, key) pair.
ATTN = ["ai", "attention", "--heads", "4", "--q-len", "16", "--kv-len", "64",
        "--head-dim", "64", "--dtype", "fp32", "--causal"]
BOTTOM_RIGHT_PAIRS = sum(i + 49 for i in range(16))    # query i sees keys 0..i + 48: 904
TOP_LEFT_PAIRS = sum(i + 1 for i in range(16))         # query i sees keys 0..i: 136
# x 2x16x32x32, w 32x16x3x3, padding 2, dilation 2: P = (32 + 4 - 2·2 - 1) // 1 + 1 = 32
CONV = ["ai", "conv2d", "--n", "2", "--c", "16", "--h", "32", "--w", "32", "--k", "32",
        "--padding", "2", "--dilation", "2", "--dtype", "fp32"]
CONV_FLOP = 2 * 2 * 32 * 32 * 32 * 16 * 9              # 18,874,368


# --- #1: causal alignment ---------------------------------------------------------------

def test_hand_pair_counts():
    assert (BOTTOM_RIGHT_PAIRS, TOP_LEFT_PAIRS) == (904, 136)
    assert BOTTOM_RIGHT_PAIRS * 1024 == 925_696 and TOP_LEFT_PAIRS * 1024 == 139_264


# Bytes, fp32 (4 B) x H 4 x D 64 x rows of (Q + K + V + O). Bottom-right: query 0 already
# sees keys 0..48 and query 15 all 64, so K and V are read whole: 4*4*64*(16+64+64+16) =
# 163,840. Top-left (q_len 16 < kv_len 64): the queries together see keys 0..15 only, so
# K and V are read for min(16, 64) = 16 keys: 4*4*64*(16+16+16+16) = 65,536.
@pytest.mark.parametrize(("align", "flop", "nbytes"), [
    ("bottom-right", 925_696, 4 * 4 * 64 * (16 + 64 + 64 + 16)),
    ("top-left", 139_264, 4 * 4 * 64 * (16 + 16 + 16 + 16)),
])
def test_cli_causal_align_counts(capsys, align, flop, nbytes):
    d = _json(capsys, [*ATTN, "--causal-align", align, "--json"])
    assert d["flop"] == flop
    assert d["shape"]["scores"] == flop / 1024
    assert d["bytes"] == nbytes
    assert f"{align} causal mask" in d["byte_model"]
    assert d["kernels"][0]["meta"]["byte_model"] == d["byte_model"]


def test_default_stays_bottom_right_and_says_so(capsys):
    # the default is the decode step's mask (`ai attention --q-len 1 --kv-len 500`: one
    # query sees all 500 keys; top-left would count 1), now named in the byte model
    d = _json(capsys, [*ATTN, "--json"])
    assert d["flop"] == 925_696
    model = d["byte_model"]
    assert "bottom-right causal mask: query i sees keys 0..i + Lkv - Lq" in model
    assert "PyTorch's is_causal is top-left (--causal-align top-left)" in model
    assert main(ATTN) == 0
    assert "bottom-right causal mask" in capsys.readouterr().out
    decode = _json(capsys, ["ai", "attention", "--heads", "32", "--kv-heads", "4", "--q-len",
                            "1", "--kv-len", "500", "--head-dim", "64", "--causal", "--json"])
    assert decode["flop"] == 4 * 32 * 64 * 500


def test_alignment_not_mentioned_where_it_makes_no_difference(capsys):
    for align in ("bottom-right", "top-left"):
        d = _json(capsys, ["ai", "attention", "--heads", "4", "--q-len", "64", "--kv-len",
                           "64", "--head-dim", "64", "--causal", "--causal-align", align,
                           "--json"])
        assert d["flop"] == 1024 * 64 * 65 // 2
        assert "causal mask" not in d["byte_model"] and "--causal-align" not in d["byte_model"]
    plain = _json(capsys, [*ATTN[:-1], "--json"])      # not causal: every pair
    assert plain["flop"] == 1024 * 16 * 64 and "causal" not in plain["byte_model"]


def test_top_left_lets_queries_past_kv_len_see_every_key(capsys):
    # Lq 64, Lkv 16, top-left: 16·17/2 + 48·16 = 904 pairs; bottom-right has no such mask
    d = _json(capsys, ["ai", "attention", "--heads", "4", "--q-len", "64", "--kv-len", "16",
                       "--head-dim", "64", "--causal", "--causal-align", "top-left", "--json"])
    assert d["flop"] == (136 + 48 * 16) * 1024
    err = _error(capsys, ["ai", "attention", "--heads", "4", "--q-len", "64", "--kv-len",
                          "16", "--head-dim", "64", "--causal"])
    assert "--q-len 64 > --kv-len 16" in err and "--causal-align top-left" in err


@pytest.mark.parametrize(("extra", "needle"), [
    (["--causal-align", "diagonal"], "--causal-align must be bottom-right"),
    (["--causal-align", "top-left"], "add --causal"),       # without --causal
])
def test_causal_align_errors(capsys, extra, needle):
    argv = [*ATTN, *extra] if "diagonal" in extra else [*ATTN[:-1], *extra]
    assert needle in _error(capsys, argv)


def test_model_byte_model_names_alignment():
    br = ops.attention(1, 4, 16, 64, 64, dtype="fp32", causal=True)
    tl = ops.attention(1, 4, 16, 64, 64, dtype="fp32", causal=True, causal_align="top-left")
    assert (br.flop, tl.flop) == (925_696, 139_264)
    assert "bottom-right causal mask" in br.byte_model
    assert "top-left causal mask: query i sees keys 0..i (PyTorch's is_causal)" in tl.byte_model
    assert ops.conv_output_size(32, 3, 1, 2, 2) == 32


def test_top_left_equals_rooflabs_torch_counter_and_torchs_mask(capsys):
    torch = pytest.importorskip("torch")
    from rooflab.bench.torch_count import count_call

    F = torch.nn.functional
    q, kv = torch.randn(1, 4, 16, 64), torch.randn(1, 4, 64, 64)
    _, counted = count_call(lambda: F.scaled_dot_product_attention(q, kv, kv, is_causal=True))
    d = _json(capsys, [*ATTN, "--causal-align", "top-left", "--json"])
    assert counted.flop == {"fp32": d["flop"]} == {"fp32": 139_264}
    # the two masks as torch applies them: is_causal is tril(0) (136 pairs); the
    # bottom-right mask is tril(Lkv - Lq) (904 pairs)
    top_left = torch.ones(16, 64, dtype=torch.bool).tril(0)
    bottom_right = torch.ones(16, 64, dtype=torch.bool).tril(64 - 16)
    assert (int(top_left.sum()), int(bottom_right.sum())) == (136, 904)
    assert torch.allclose(F.scaled_dot_product_attention(q, kv, kv, is_causal=True),
                          F.scaled_dot_product_attention(q, kv, kv, attn_mask=top_left))


# --- #10: conv2d --dilation ------------------------------------------------------------

def test_cli_conv2d_dilation_hand_count(capsys):
    d = _json(capsys, [*CONV, "--json"])
    assert d["flop"] == CONV_FLOP == 18_874_368
    assert (d["shape"]["p"], d["shape"]["q"], d["shape"]["dilation"]) == (32, 32, 2)
    # input 2·16·32² + filter 32·16·9 + output 2·32·32², 4 B each
    assert d["bytes"] == 4 * (2 * 16 * 32 * 32 + 32 * 16 * 9 + 2 * 32 * 32 * 32) == 411_648
    assert "dil2" in d["name"]
    plain = _json(capsys, [*CONV[:-4], "--dtype", "fp32", "--json"])   # dilation 1: P = 34
    assert plain["shape"]["p"] == 34 and plain["flop"] == 2 * 2 * 32 * 34 * 34 * 16 * 9


@pytest.mark.parametrize(("size", "r", "stride", "pad", "dil", "p"), [
    (32, 3, 1, 2, 2, 32), (32, 3, 1, 0, 2, 28), (56, 3, 2, 1, 3, 26), (9, 5, 1, 0, 2, 1),
    (32, 3, 1, 1, 1, 32),
])
def test_conv_output_size_with_dilation(size, r, stride, pad, dil, p):
    # floor((H + 2·pad - dil·(R - 1) - 1) / stride) + 1, by hand: e.g. (56 + 2 - 6 - 1)//2 + 1
    assert ops.conv_output_size(size, r, stride, pad, dil) == p


def test_dilation_too_wide_and_invalid(capsys):
    err = _error(capsys, ["ai", "conv2d", "--n", "1", "--c", "3", "--h", "4", "--w", "4",
                          "--k", "8", "--dilation", "2"])
    assert "dilation 2 spreads it over 5x5 inputs" in err and "does not fit" in err
    assert "dilation must be a positive whole number; got 0" in _error(
        capsys, ["ai", "conv2d", "--n", "1", "--c", "3", "--h", "8", "--w", "8", "--k", "8",
                 "--dilation", "0"])


def test_dilated_conv_equals_torch_flop_counter(capsys):
    torch = pytest.importorskip("torch")
    from torch.utils.flop_counter import FlopCounterMode

    x, w = torch.randn(2, 16, 32, 32), torch.randn(32, 16, 3, 3)
    with FlopCounterMode(display=False) as mode:
        y = torch.nn.functional.conv2d(x, w, padding=2, dilation=2)
    assert tuple(y.shape) == (2, 32, 32, 32)
    assert mode.get_total_flops() == _json(capsys, [*CONV, "--json"])["flop"] == CONV_FLOP
    # and a strided one, output sizes from torch itself
    x2, w2 = torch.randn(1, 8, 56, 56), torch.randn(16, 8, 3, 3)
    with FlopCounterMode(display=False) as mode:
        y2 = torch.nn.functional.conv2d(x2, w2, stride=2, padding=1, dilation=3)
    op = ops.conv2d(1, 8, 56, 56, 16, 3, 3, stride=2, padding=1, dilation=3, dtype="fp32")
    assert (op.shape["p"], op.shape["q"]) == tuple(y2.shape[2:]) == (26, 26)
    assert op.flop == mode.get_total_flops()


# --- stencil --points names its option ---------------------------------------------------

@pytest.mark.parametrize(("argv", "needle"), [
    (["ai", "stencil", "256x256", "--points", "1"], "--points must be a whole number >= 3"),
    (["ai", "stencil", "256x256", "--points", "5", "--sweeps", "0"],
     "--sweeps must be a positive whole number"),
])
def test_stencil_errors_name_the_option(capsys, argv, needle):
    assert needle in _error(capsys, argv)
