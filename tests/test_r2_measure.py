"""Review r2_torch, measure side (F3, F4, F6, F7, F10, F11, F12): the live counter
(`rooflab.measure`'s bench.torch_count.FlopCounter) on losses, attention backward, batch
norm, RMS norm, the TransformerEncoderLayer fast path and in-place views, against hand
counts."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional

from rooflab.bench.torch_count import FlopCounter  # noqa: E402


def _count(fn):
    with FlopCounter() as c:
        fn()
    return c.result


def test_linear_on_1d_input_has_no_uncounted_squeeze():
    """F7: linear on x[512] is unsqueeze -> mm -> squeeze_: squeeze_ moves nothing."""
    x, w = torch.randn(512), torch.randn(256, 512)
    r = _count(lambda: F.linear(x, w))
    assert r.uncounted == ()
    assert r.flop == {"fp32": 2 * 256 * 512}                 # 262,144
    assert r.bytes == 4 * (512 + 256 * 512 + 256)            # x, W read, y written: 527,360


def test_nll_loss_is_a_gather_forward_and_backward():
    """F3: cross_entropy(logits[64, 1000], tgt[64]) -> nll_loss reads 64 looked-up elements,
    not 64,000 (ingest/torch_ops_loss.py's rule, reduction 'mean')."""
    logits = torch.randn(64, 1000, requires_grad=True)
    tgt = torch.randint(0, 1000, (64,))
    ops = _count(lambda: F.cross_entropy(logits, tgt).backward()).summary()
    fwd, bwd = ops["aten.nll_loss_forward"], ops["aten.nll_loss_backward"]
    assert fwd["flop"] == 64 + 1                     # one negate a row, one mean divide
    assert fwd["bytes"] == 64 * 4 + 64 * 8 + 2 * 4   # rows, int64 targets, loss + total_weight
    assert bwd["flop"] == 2                          # -(grad / total_weight)
    # grad_output + total_weight, targets, grad_input written in full (zero fill) + 64 rows
    assert bwd["bytes"] == 2 * 4 + 64 * 8 + (64 * 1000 + 64) * 4
    assert "aten.nll_loss_forward" not in _count(lambda: F.cross_entropy(logits, tgt)).uncounted


def test_sdpa_backward_is_two_and_a_half_forwards_causal_gqa():
    """F4: causal GQA 8q/2kv, B=2 L=64 D=32: forward 4·2·8·(64·65/2)·32 = 4,259,840, the
    flash backward 2·16·2080·(3·32 + 2·32) = 10,649,600 = 2.5x."""
    q = torch.randn(2, 8, 64, 32, requires_grad=True)
    k = torch.randn(2, 2, 64, 32, requires_grad=True)
    v = torch.randn(2, 2, 64, 32, requires_grad=True)
    r = _count(lambda: F.scaled_dot_product_attention(
        q, k, v, is_causal=True, enable_gqa=True).sum().backward())
    ops = r.summary()
    assert ops["aten._scaled_dot_product_flash_attention_for_cpu"]["flop"] == 4_259_840
    assert ops["aten._scaled_dot_product_flash_attention_for_cpu_backward"]["flop"] == 10_649_600
    assert r.uncounted == ()


def test_sdpa_backward_formula_registered_for_the_cuda_backwards():
    """F4: the CUDA backwards take the causal-pairs formula too (FlopCounterMode counts them
    dense); checked on the formula, q/k/v as arguments 1-3, is_causal by name."""
    from rooflab.bench.torch_count import ALL_FORMULAS

    q = torch.empty(1, 2, 16, 8, device="meta")
    for name in ("_scaled_dot_product_flash_attention_backward",
                 "_scaled_dot_product_efficient_attention_backward",
                 "_scaled_dot_product_cudnn_attention_backward"):
        formula, _ = ALL_FORMULAS[name]
        # 2 heads, 16·17/2 = 136 pairs, D = 8: 2·2·136·(3·8 + 2·8) = 21,760
        got = formula(None, (q, q, q, q), {"is_causal": True})
        assert got == 21_760, name


def test_transformer_encoder_layer_fast_path_counted_from_its_weights():
    """F6: TransformerEncoderLayer(256, 8, 1024).eval() under no_grad on x[2, 64, 256]
    (128 tokens): matmuls 2·128·(768·256 + 256·256 + 2·1024·256) = 201,326,592; attention
    4·2·8·64·64·32 = 8,388,608 + softmax 4·2·8·64·64 = 262,144; two layer norms
    2·7·128·256 = 458,752; two residual adds 2·128·256 = 65,536; relu 0 → 210,501,632."""
    layer = torch.nn.TransformerEncoderLayer(256, 8, 1024, dropout=0.0,
                                             batch_first=True).eval()
    x = torch.randn(2, 64, 256)
    with torch.no_grad():
        r = _count(lambda: layer(x))
    assert "aten._transformer_encoder_layer_fwd" in r.summary()   # the fast path ran
    assert r.flop == {"fp32": 210_501_632}
    mha = torch.nn.MultiheadAttention(256, 8, batch_first=True).eval()
    with torch.no_grad():
        r = _count(lambda: mha(x, x, x))
    # q, k, v, out projections 4·2·128·256·256 = 67,108,864 + 8,388,608 + 262,144
    assert r.flop == {"fp32": 75_759_616}


def test_fast_path_on_a_padded_batch_warns_why():
    """F6: a padded (nested) batch stays uncounted; the warning says why and what to do."""
    from rooflab.measure_counts import _uncounted_hint

    layer = torch.nn.TransformerEncoderLayer(64, 4, 128, dropout=0.0, batch_first=True)
    enc = torch.nn.TransformerEncoder(layer, 1, enable_nested_tensor=True).eval()
    x, pad = torch.randn(2, 16, 64), torch.zeros(2, 16, dtype=torch.bool)
    pad[1, 10:] = True
    with torch.no_grad(), pytest.warns(UserWarning):   # torch's nested-tensor prototype note
        r = _count(lambda: enc(x, src_key_padding_mask=pad))
    assert r.uncounted == ("aten._transformer_encoder_layer_fwd",)
    hint = _uncounted_hint(r.uncounted)
    assert "fast path" in hint and "train()" in hint and "rooflab torch" in hint


@pytest.mark.parametrize("mode, per_element", [("eval", 4), ("train", 7)])
def test_eager_batch_norm_counted(mode, per_element):
    """F10: eager BatchNorm2d dispatches native_batch_norm: 4/elem with running statistics,
    7/elem in training (+ the batch statistics, var's 3), as the trace rule counts it."""
    bn = getattr(torch.nn.BatchNorm2d(8), mode)()
    x = torch.randn(4, 8, 16, 16)                       # 8,192 elements
    ops = _count(lambda: bn(x)).summary()
    assert ops["aten.native_batch_norm"]["flop"] == per_element * 8192
    plain = getattr(torch.nn.BatchNorm2d(8, affine=False), mode)()
    assert _count(lambda: plain(x)).summary()["aten.native_batch_norm"]["flop"] \
        == per_element * 8192


def test_fused_rms_norm_counts_as_its_cpu_decomposition():
    """F11: _fused_rms_norm (one kernel on CUDA) = what the CPU's decomposition counts:
    4·E + 2·rows = 4·524,288 + 2·1,024 = 2,099,200 for x[8, 128, 512] with a weight."""
    from rooflab.bench.torch_layer_rules import (
        fused_rms_norm_backward_flop,
        fused_rms_norm_flop,
    )

    x, w = torch.randn(8, 128, 512), torch.randn(512)
    decomposed = _count(lambda: F.rms_norm(x, (512,), w, 1e-6)).flop["fp32"]
    fused = fused_rms_norm_flop(torch.ops.aten._fused_rms_norm.default, (x, [512], w, 1e-6), {})
    assert fused == decomposed == 2_099_200
    rstd = torch.empty(8, 128, 1)
    back = torch.ops.aten._fused_rms_norm_backward.default
    # x̂ 1 + grad_input 5 + dy·γ 1 + grad_weight 2 = 9 per element
    assert fused_rms_norm_backward_flop(back, (x, x, [512], rstd, w, [True, True]), {}) \
        == 9 * 524_288


def test_safe_softmax_and_dropout_mask_on_the_math_path():
    """F12: SDPA with dropout runs the math path; its _safe_softmax is softmax, 4/elem, and
    bernoulli_ (the dropout mask) is movement, not missing FLOP."""
    s = torch.randn(2, 8, 128, 128)
    assert _count(lambda: torch.ops.aten._safe_softmax(s, -1)).flop == {"fp32": 4 * 262_144}
    q = torch.randn(2, 8, 128, 64)
    r = _count(lambda: F.scaled_dot_product_attention(q, q, q, dropout_p=0.1))
    assert r.uncounted == ()
    assert r.summary()["aten._safe_softmax"]["flop"] == 4 * 2 * 8 * 128 * 128   # 1,048,576


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("weighted", [False, True])
def test_live_nll_count_equals_the_trace_rule(reduction, weighted):
    """F3: one count for one call: the live counter's nll_loss forward and backward equal
    ingest/torch_ops_loss.py's rules fed the same shapes (the trace's OpCall)."""
    from rooflab.ingest.torch_ops_base import OpCall
    from rooflab.ingest.torch_ops_loss import LOSS_RULES

    logp = torch.randn(32, 100, requires_grad=True)
    tgt = torch.randint(0, 100, (32,))
    w = torch.rand(100) if weighted else None
    ops = _count(lambda: F.nll_loss(logp, tgt, weight=w, reduction=reduction)
                 .sum().backward()).summary()
    red = {"none": 0, "mean": 1, "sum": 2}[reduction]
    w_dims, w_type = ((100,), "float") if weighted else (None, "")
    fwd = OpCall("aten::nll_loss_forward", ((32, 100), (32,), w_dims, None, None),
                 ("float", "long int", w_type, "", ""), ("", "", "", str(red), "-100"))
    g_dims = (32,) if red == 0 else ()
    bwd = OpCall("aten::nll_loss_backward",
                 (g_dims, (32, 100), (32,), w_dims, None, None, ()),
                 ("float", "float", "long int", w_type, "", "", "float"),
                 ("", "", "", "", str(red), "-100", ""))
    for key, call in (("aten.nll_loss_forward", fwd), ("aten.nll_loss_backward", bwd)):
        rule = LOSS_RULES[call.name](call)
        assert (ops[key]["flop"], ops[key]["bytes"]) == (rule.flop, rule.bytes), key


def test_nll_loss_fused_bytes_read_only_the_looked_up_rows():
    """F3: the one-pass count of F.nll_loss(logp[64, 1000], tgt[64]) reads 64 elements of
    logp (64·4 B), the int64 targets (64·8 B) and writes the loss (4 B): 772 B, not the
    whole 256,000 B input."""
    from rooflab.bench.torch_count import count_call

    logp, tgt = torch.randn(64, 1000), torch.randint(0, 1000, (64,))
    _, count = count_call(F.nll_loss, (logp, tgt))
    assert count.fused_bytes == 64 * 4 + 64 * 8 + 4
