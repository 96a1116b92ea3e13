"""workloads/ops.py: hand-calculated FLOP and bytes, and the seeds' numbers."""

from __future__ import annotations

import pytest

from rooflab.errors import InputError
from rooflab.workloads import ops


def _split_sums(op):
    assert sum(op.bytes_split.values()) == pytest.approx(op.bytes)
    assert op.byte_model


@pytest.mark.parametrize(("n", "ai"), [(4096, 1365.333), (256, 85.333), (1024, 341.333)])
def test_square_fp16_matmul_ai_is_n_over_3(n, ai):
    # Seed 004 / FACTS.md: 2N³ FLOP over 3 N² fp16 elements of 2 bytes → N/3.
    op = ops.matmul(n, n, n, dtype="fp16")
    assert op.flop == 2 * n**3
    assert op.bytes == 3 * n * n * 2
    assert op.ai == pytest.approx(n / 3)
    assert op.ai == pytest.approx(ai, abs=1e-3)   # the seed's rounded figure
    assert op.unit == "tensor" and op.precision == "fp16"
    _split_sums(op)


def test_matmul_rectangular_batched_and_dtypes():
    op = ops.matmul(128, 256, 512, dtype="bf16", batch=4)
    assert op.flop == 2 * 4 * 128 * 256 * 512
    assert op.bytes_split == {"read": 2 * 4 * (128 * 512 + 512 * 256),
                              "write": 2 * 4 * 128 * 256}
    assert ops.matmul(64, 64, 64, "fp32").unit is None
    assert ops.matmul(64, 64, 64, "fp64").bytes == 3 * 64 * 64 * 8
    assert ops.matmul(64, 64, 64, "int4").bytes == 3 * 64 * 64 * 0.5
    assert ops.matmul(64, 64, 64, "tf32").unit == "tensor"
    assert ops.matmul(64, 64, 64, "float8_e4m3fn").precision == "fp8"
    assert ops.gemm is ops.matmul


def test_elementwise_seed_004():
    add1 = ops.elementwise(10**8, "fp16")                  # y = x + 1
    assert add1.ai == pytest.approx(0.25) and add1.bytes == 4e8   # seed: 1e8 FLOP, 400 MB
    add2 = ops.elementwise(10**8, "fp16", inputs=2)        # z = x + y
    assert add2.ai == pytest.approx(1 / 6)
    copy = ops.elementwise(1000, "fp32", flop_per_element=0)
    assert copy.flop == 0 and copy.bytes == 8000
    # Seed 004's SiLU × up over 5632: ≈ 17 K FLOP, 34 KB.
    silu = ops.elementwise(5632, "fp16", inputs=2, flop_per_element=3)
    assert silu.flop == pytest.approx(17e3, rel=0.01)
    assert silu.bytes == pytest.approx(34e3, rel=0.01)


def test_gemv_seed_004_decode_table():
    # TinyLlama decode, batch 1: q_proj 8.4 M FLOP / 8.4 MB, k_proj 1.0 M / 1.0 MB,
    # lm_head 131 M / 131 MB — all AI ≈ 1 in fp16. The seed rounds to two figures (k_proj's
    # exact 1.05 MB includes the vectors), hence 6 %.
    for (m, n), flop in (((2048, 2048), 8.4e6), ((256, 2048), 1.0e6), ((32000, 2048), 131e6)):
        op = ops.gemv(m, n, "fp16")
        assert op.flop == 2 * m * n
        assert op.flop == pytest.approx(flop, rel=0.06)
        assert op.bytes == pytest.approx(flop, rel=0.06)
        assert op.ai == pytest.approx(1.0, rel=0.01)


def test_reduction_softmax_norms():
    r = ops.reduction(1000, "fp32")
    assert (r.flop, r.bytes) == (999, 4004)
    assert ops.reduction(1000, "fp32", rows=3).flop == 3 * 999
    sm = ops.softmax(1400, 1000, "fp32")
    assert (sm.flop, sm.bytes) == (4 * 1.4e6, 8 * 1.4e6)
    ln = ops.layernorm(4, 1024, "bf16")
    assert ln.flop == 7 * 4 * 1024 and ln.bytes == 2 * (2 * 4 * 1024 + 2 * 1024)
    # Seed 004: RMSNorm over 2048 ≈ 8 K FLOP, 12 KB, AI ≈ 0.7.
    rms = ops.rmsnorm(1, 2048, "fp16")
    assert rms.flop == 8194 and rms.bytes == 12288 and rms.ai == pytest.approx(8194 / 12288)
    for op in (r, sm, ln, rms):
        _split_sums(op)


def test_conv2d_output_size_flop_and_bytes():
    op = ops.conv2d(8, 64, 56, 56, 64, 3, 3, stride=1, padding=1, dtype="fp32")
    assert (op.shape["p"], op.shape["q"]) == (56, 56)
    assert op.flop == 2 * 8 * 64 * 56 * 56 * 64 * 3 * 3
    assert op.bytes_split == {"input": 4 * 8 * 64 * 56 * 56, "filter": 4 * 64 * 64 * 9,
                              "output": 4 * 8 * 64 * 56 * 56}
    strided = ops.conv2d(1, 3, 224, 224, 64, 7, 7, stride=2, padding=3)
    assert (strided.shape["p"], strided.shape["q"]) == (112, 112)   # ResNet-50 stem
    assert strided.flop == 2 * 64 * 112 * 112 * 3 * 49
    assert strided.unit == "tensor"
    dw = ops.conv2d(1, 32, 10, 10, 32, 3, 3, groups=32)
    assert dw.flop == 2 * 32 * 8 * 8 * 1 * 9
    with pytest.raises(InputError, match="does not fit"):
        ops.conv2d(1, 3, 2, 2, 8, 3, 3)
    with pytest.raises(InputError, match="groups"):
        ops.conv2d(1, 3, 8, 8, 8, 3, 3, groups=2)


def test_attention_flash_naive_causal_gqa():
    b, h, lq, lkv, d = 2, 8, 128, 128, 64
    flash = ops.attention(b, h, lq, lkv, d, dtype="fp16")
    assert flash.flop == 4 * b * h * lq * lkv * d
    assert flash.bytes == 2 * (2 * b * h * lq * d + 2 * b * h * lkv * d)
    naive = ops.attention(b, h, lq, lkv, d, dtype="fp16", flash=False)
    assert naive.flop == flash.flop
    assert naive.bytes - flash.bytes == 4 * 2 * b * h * lq * lkv
    causal = ops.attention(b, h, lq, lkv, d, causal=True)
    assert causal.flop == 4 * b * h * (lq * (lq + 1) // 2) * d   # unmasked pairs only
    assert causal.flop / flash.flop == pytest.approx(0.5, abs=0.01)
    assert causal.bytes == flash.bytes
    gqa = ops.attention(1, 32, 1, 500, 64, kv_heads=4)
    # Seed 004, TinyLlama decode at context 500: K and V of 4 heads × 64 ≈ 0.5 MB. Its table
    # gives ≈ 2 M FLOP (one matmul's worth); we count both matmuls, 4·heads·dim·context as
    # in FACTS.md, 4.1 M.
    assert gqa.bytes_split["kv"] == 2 * 2 * 4 * 500 * 64
    assert gqa.bytes == pytest.approx(0.5e6, rel=0.05)
    assert gqa.flop == 4 * 32 * 64 * 500
    for op in (flash, naive, causal, gqa):
        _split_sums(op)
    with pytest.raises(InputError, match="kv_heads"):
        ops.attention(1, 32, 1, 10, 64, kv_heads=5)


def test_embedding_zero_flop():
    op = ops.embedding(8, 2048, "fp16")
    assert op.flop == 0 and op.ai == 0
    assert op.bytes == 2 * 8 * 2048 * 2 + 8 * 8
    _split_sums(op)


def test_kernel_conversion_keeps_byte_model():
    k = ops.matmul(4096, 4096, 4096).kernel(seconds=2.7e-3)
    assert k.flop == {"fp16": 2 * 4096**3} and k.bytes == {"DRAM": 3 * 4096**2 * 2}
    assert k.unit == "tensor" and k.meta["byte_model"].startswith("compulsory")
    assert k.provenance["flop"] == "derived" and k.provenance["seconds"] == "measured"


@pytest.mark.parametrize("call", [
    lambda: ops.matmul(0, 4, 4), lambda: ops.matmul(-1, 4, 4), lambda: ops.matmul(2.5, 4, 4),
    lambda: ops.elementwise(10, inputs=-1), lambda: ops.softmax(4, 0),
    lambda: ops.attention(1, 1, 0, 4, 4), lambda: ops.matmul(4, 4, 4, batch=0),
    lambda: ops.conv2d(1, 1, 4, 4, 1, 3, 3, padding=-1), lambda: ops.elementwise(10, inputs=0,
                                                                                  outputs=0),
])
def test_bad_sizes_raise_input_error(call):
    with pytest.raises(InputError, match="must|needs"):
        call()


def test_unknown_dtype():
    with pytest.raises(InputError, match="unknown dtype 'fp12'"):
        ops.matmul(4, 4, 4, dtype="fp12")
