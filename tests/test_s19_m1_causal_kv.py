"""PyTorch's is_causal (top-left) attention with Lq < Lkv: no query sees keys Lq.., so a
flash kernel never loads those K and V rows. `rooflab ai attention --causal-align top-left`,
the torch trace rules (forward and backward) and the live counter count the K/V bytes of
the keys some query sees, through one rule (torch_rules.traffic.sdpa_kv_bytes; review s19
x1 F1). q [1, 4, 16, 64], k and v [1, 4, 64, 64], fp32, every byte by hand."""

from __future__ import annotations

import pytest

from rooflab.workloads import ops

torch = pytest.importorskip("torch")
F = torch.nn.functional

Q, KV = 1 * 4 * 16 * 64 * 4, 1 * 4 * 64 * 64 * 4     # 16,384 B; 65,536 B each of k and v
SEEN = 2 * KV * 16 // 64                              # k and v rows 0..15: 32,768 B
LSE = 1 * 4 * 16 * 4                                  # logsumexp [1, 4, 16] fp32: 256 B
FORWARD = Q + SEEN + Q                                # q, seen k/v read, O written: 65,536
# grad_out, q, out, logsumexp and the seen k/v read; dq, dk, dv written (dk, dv whole)
BACKWARD = 3 * Q + LSE + SEEN + Q + 2 * KV            # 229,632 (every k/v byte: 327,936)


def _qkv(grad=False):
    g = torch.Generator().manual_seed(0)
    return [torch.randn(*s, generator=g, requires_grad=grad)
            for s in ((1, 4, 16, 64), (1, 4, 64, 64), (1, 4, 64, 64))]


def test_ai_attention_top_left_counts_the_seen_keys():
    c = ops.attention(1, 4, 16, 64, 64, dtype="fp32", causal=True, causal_align="top-left")
    assert c.bytes == FORWARD == 65536.0   # every k/v byte would be 163,840


def test_trace_rules_count_the_seen_keys(tmp_path):
    from torch.profiler import profile

    from rooflab.ingest.torch_trace import load_torch_trace

    q, k, v = _qkv(grad=True)
    with profile(record_shapes=True) as prof:
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        o.backward(torch.ones_like(o))
    path = tmp_path / "t.json"
    prof.export_chrome_trace(str(path))
    got = {k.name.split(" [")[0]: sum(k.bytes.values())
           for k in load_torch_trace(str(path)).kernels}
    assert got["aten::scaled_dot_product_attention"] == FORWARD
    assert got["aten::_scaled_dot_product_flash_attention_for_cpu_backward"] == BACKWARD


def test_live_counter_counts_the_seen_keys():
    from rooflab.bench.torch_count import count_call

    q, k, v = _qkv(grad=True)

    def step():
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        o.backward(torch.ones_like(o))

    _, count = count_call(step)
    got = {r.op: r.bytes for r in count.ops}
    assert got["aten._scaled_dot_product_flash_attention_for_cpu"] == FORWARD + LSE
    assert got["aten._scaled_dot_product_flash_attention_for_cpu_backward"] == BACKWARD
    qkv = _qkv()
    _, fwd = count_call(lambda: F.scaled_dot_product_attention(*qkv, is_causal=True))
    assert fwd.fused_bytes == FORWARD   # one pass: q and the seen k/v in, O out


def test_not_causal_and_square_causal_read_every_key():
    q, k, v = _qkv()
    assert ops.attention(1, 4, 16, 64, 64, dtype="fp32").bytes == 2 * Q + 2 * KV
    from rooflab.bench.torch_count import count_call

    _, c = count_call(lambda: F.scaled_dot_product_attention(q, k, v))
    assert c.fused_bytes == 2 * Q + 2 * KV
    _, c = count_call(lambda: F.scaled_dot_product_attention(k, k, v, is_causal=True))
    assert c.fused_bytes == 3 * KV   # Lq == Lkv: every key seen (k read once as q and k)
