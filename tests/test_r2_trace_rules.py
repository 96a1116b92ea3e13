"""`rooflab torch` rules added after review r2_torch (F1, F2, F4, F5, F9, F10): profiler
traces recorded here with the CPU torch (record_shapes=True) on tiny shapes, every total by
hand. Conventions (bench.torch_flop_rules.PER_ELEMENT, the table `rooflab.measure` uses):
2 FLOP per multiply-add, log_softmax 4 per element, b + alpha·c 2, addcmul/addcdiv 2 (3
with value != 1), lerp 3, batch norm 4 (7 training), SDPA backward 2.5x the forward.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional

from rooflab.ingest.torch_ops import RULES  # noqa: E402
from rooflab.ingest.torch_trace import load_torch_trace  # noqa: E402
from rooflab.workloads.torch_rules.flop import PER_ELEMENT  # noqa: E402


def _kernels(tmp_path, fn):
    """{op name: (FLOP, bytes)} summed over a trace of fn() (record_shapes=True)."""
    from torch.profiler import profile

    with profile(record_shapes=True) as prof:
        fn()
    path = tmp_path / "t.json"
    prof.export_chrome_trace(str(path))
    out: dict[str, list[float]] = {}
    for k in load_torch_trace(str(path)).kernels:
        name = k.name.split(" [")[0]
        got = out.setdefault(name, [0.0, 0.0])
        got[0] += sum(k.flop.values())
        got[1] += sum(k.bytes.values())
    return {n: tuple(v) for n, v in out.items()}


def test_log_softmax_forward_of_cross_entropy_is_counted(tmp_path):
    x = torch.randn(8, 100, requires_grad=True)
    t = torch.arange(8)
    got = _kernels(tmp_path, lambda: F.cross_entropy(x, t).backward())
    # 4 FLOP per element: 4·8·100 = 3,200; x read and y written: 2·4·800 = 6,400 B
    assert got["aten::_log_softmax"] == (3200.0, 6400.0)
    assert got["aten::_log_softmax_backward_data"][0] == 3200.0   # the forward's 4


def test_addmm_activation_of_encoder_layer_inference_is_counted(tmp_path):
    layer = torch.nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True).eval()
    x = torch.randn(2, 4, 16)

    def run():
        with torch.no_grad():
            layer(x)

    got = _kernels(tmp_path, run)
    # linear1 + ReLU on 8 tokens: 2·8·16·32 = 8,192 FLOP (ReLU a comparison, 0); bytes
    # 4·(8·16 + 16·32 + 8·32) + bias 4·32 = 3,584 + 128 = 3,712
    assert got["aten::_addmm_activation"] == (8192.0, 3712.0)


def test_alpha_addcmul_addcdiv_lerp_count_their_multiply_adds(tmp_path):
    n = 1000
    a, b, c = torch.randn(n), torch.randn(n), torch.rand(n) + 1

    def run():
        torch.add(a, b, alpha=2.0)          # b·2 + a: 2 per element
        torch.sub(a, b)                     # alpha 1: 1 per element
        a.addcmul_(b, c, value=0.5)         # 3 per element (value != 1)
        a.addcdiv_(b, c, value=-0.1)        # 3
        torch.addcmul(a, b, c)              # value 1: 2
        a.lerp_(b, 0.1)                     # a + w·(b - a): 3

    got = _kernels(tmp_path, run)
    assert got["aten::add"][0] == 2 * n
    assert got["aten::sub"][0] == n
    assert got["aten::addcmul_"] == (3 * n, 4 * 4 * n)   # 3 read + 1 written, 4 B each
    assert got["aten::addcdiv_"][0] == 3 * n
    assert got["aten::addcmul"][0] == 2 * n
    assert got["aten::lerp_"] == (3 * n, 3 * 4 * n)      # a, b read, a written


def test_sgd_and_adam_steps_count_measure_s_table(tmp_path):
    n = 1 << 12
    p = torch.nn.Parameter(torch.randn(n))
    p.grad = torch.randn(n)
    sgd = torch.optim.SGD([p], lr=0.1, foreach=False)
    got = _kernels(tmp_path, sgd.step)
    # p <- p - lr·g: add_(g, alpha=-0.1), one multiply-add = 2n
    assert sum(f for f, _ in got.values()) == 2 * n
    adam = torch.optim.Adam([p], lr=1e-3, foreach=False)
    got = _kernels(tmp_path, adam.step)
    # per element: lerp 3 + mul_ 1 + addcmul_ (value 1 - beta2) 3 + sqrt 1 + div 1 +
    # add_ eps 1 + addcdiv_ (value -lr/bias_correction) 3 = 13; + 1 for the step count
    assert sum(f for f, _ in got.values()) == 13 * n + 1


def test_batch_norm_eval_and_train(tmp_path):
    bn = torch.nn.BatchNorm2d(3)
    x = torch.randn(2, 3, 4, 4)   # 96 elements, C = 3

    def run():
        bn.eval()
        bn(x)

    got = _kernels(tmp_path, run)
    # 4·96 = 384 FLOP; x, weight, bias, running mean/var read 4·(96 + 4·3) = 432, y 384
    assert got["aten::native_batch_norm"] == (384.0, 816.0)
    bn.train()
    got = _kernels(tmp_path, lambda: bn(x))
    # training: + var's 3 per element for the batch statistics = 7·96 = 672 FLOP; + the
    # saved mean and invstd written, 2·3·4 = 24 B
    assert got["aten::native_batch_norm"] == (672.0, 840.0)


def test_table_ops_without_a_rule_before(tmp_path):
    x = torch.randn(4, 6)

    def run():
        F.hardswish(x)
        F.softplus(x)
        torch.log1p(x.abs())
        torch.var(x, dim=1)
        torch.logsumexp(x, dim=0)
        torch.cumsum(x, dim=1)

    got = _kernels(tmp_path, run)
    assert got["aten::hardswish"] == (24.0, 192.0)    # 1 per element; 4·(24 + 24) B
    assert got["aten::softplus"][0] == 24.0
    assert got["aten::log1p"][0] == 24.0
    assert got["aten::var"] == (72.0, 112.0)          # 3·24; 4·(24 read + 4 written)
    assert got["aten::logsumexp"] == (72.0, 120.0)    # 3·24; 4·(24 + 6)
    assert got["aten::cumsum"] == (24.0, 192.0)


def test_every_per_element_op_has_a_trace_rule():
    missing = [n for n in PER_ELEMENT if f"aten::{n}" not in RULES]
    assert missing == []


def test_sdpa_backward_on_cpu_is_2_5x_the_forward(tmp_path):
    q = torch.randn(1, 4, 6, 8, requires_grad=True)      # B 1, Hq 4, L 6, D 8
    kv = torch.randn(1, 2, 6, 8, requires_grad=True)     # GQA: Hkv 2

    def run():
        F.scaled_dot_product_attention(q, kv, kv, is_causal=True,
                                       enable_gqa=True).sum().backward()

    got = _kernels(tmp_path, run)
    # causal pairs 6·7/2 = 21; forward 4·B·Hq·pairs·D = 4·1·4·21·8 = 2,688
    assert got["aten::scaled_dot_product_attention"][0] == 2688.0
    bwd = [v for n, v in got.items() if n.endswith("_attention_for_cpu_backward")]
    assert bwd and bwd[0][0] == 2.5 * 2688.0   # 5 matmuls per pair = 6,720


def test_transposed_convolution_is_counted(tmp_path):
    x = torch.randn(2, 4, 5, 5)
    w = torch.randn(4, 3, 3, 3)   # [C_in 4, C_out 3, 3, 3]
    got = _kernels(tmp_path, lambda: F.conv_transpose2d(x, w, stride=2, padding=1,
                                                        output_padding=1))
    # FLOP 2·N·C_in·H_in·W_in·C_out·R·S = 2·2·4·25·3·9 = 10,800; output (5-1)·2 - 2 + 2 + 1
    # + 1 = 10; bytes 4·(2·4·25 + 4·3·9 + 2·3·10·10) = 4·(200 + 108 + 600) = 3,632
    assert got["aten::convolution"] == (10800.0, 3632.0)


def test_transposed_convolution_backward_is_twice_the_forward(tmp_path):
    x = torch.randn(2, 4, 5, 5, requires_grad=True)
    w = torch.randn(4, 3, 3, 3, requires_grad=True)
    got = _kernels(tmp_path, lambda: F.conv_transpose2d(x, w, stride=2, padding=1,
                                                        output_padding=1).sum().backward())
    # grad_input and grad_weight each the forward's 10,800 (FlopCounterMode's
    # conv_backward_flop for a transposed conv gives the same 21,600)
    assert got["aten::convolution"][0] == 10800.0
    assert got["aten::convolution_backward"][0] == 2 * 10800.0


Q, LSE, I64, NONE = (1, 2, 4, 8), (1, 2, 4), (1,), ()   # B 1, H 2, L 4, D 8


@pytest.mark.parametrize(("name", "layout", "causal_at"), [
    # the schemas (native_functions.yaml; CUDA-only ops): tensor args in order, Q-shaped
    # (grad_out, q, k, v, out), the logsumexp, int64 (cum_seq, philox), NONE (no tensor)
    ("aten::_scaled_dot_product_flash_attention_backward",
     [Q] * 5 + [LSE, I64, I64, NONE, NONE, NONE, NONE, I64, I64, NONE], 11),
    ("aten::_scaled_dot_product_efficient_attention_backward",
     [Q] * 4 + [NONE, Q, LSE, I64, I64, NONE, NONE, NONE, NONE], 11),
    ("aten::_scaled_dot_product_cudnn_attention_backward",
     [Q] * 5 + [LSE, I64, I64, NONE, NONE, NONE, NONE, NONE, NONE, NONE, NONE], 14),
])
def test_cuda_sdpa_backwards_count_causal_pairs(name, layout, causal_at):
    from rooflab.ingest.torch_ops import op_work
    from rooflab.ingest.torch_ops_base import OpCall

    types = tuple("long int" if d == I64 else "c10::BFloat16" if d else "Scalar"
                  for d in layout)
    concrete = ["True" if i == causal_at else "" for i in range(len(layout))]
    work = op_work(OpCall(name, tuple(layout), types, tuple(concrete)))
    # causal pairs 4·5/2 = 10; forward 4·1·2·10·8 = 640; backward 2.5x = 1,600
    assert work.flop == 1600.0
    # read grad_out, q, k, v, out (5·64 bf16) + lse 8, written dq, dk, dv 3·64: 2 B each;
    # + the int64 tensors (cum_seq, philox), 8 B each
    assert work.bytes == 2 * (5 * 64 + 8 + 3 * 64) + 8 * layout.count(I64)


def test_addmm_activation_with_gelu_adds_one_per_output():
    from rooflab.ingest.torch_ops import op_work
    from rooflab.ingest.torch_ops_base import OpCall

    call = OpCall("aten::_addmm_activation", ((32,), (8, 16), (16, 32), (), (), ()),
                  ("c10::BFloat16",) * 3 + ("Scalar",) * 3, ("", "", "", "1", "1", "True"))
    work = op_work(call)
    # 2·8·16·32 = 8,192 + GELU 1 per output element 8·32 = 256 -> 8,448; bytes
    # 2·(8·16 + 16·32 + 8·32) + bias 2·32 = 1,792 + 64 = 1,856
    assert (work.flop, work.bytes) == (8448.0, 1856.0)
