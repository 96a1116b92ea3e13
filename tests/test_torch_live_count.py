"""Review 12d, the live PyTorch counter (bench/torch_count.py, measure(), the torch zoo):
gathers and expanded inputs (A), attention FLOP (B), mv/dot/_int_mm and the CountWarning
(C), FLOP units (H), write-only in-place ops and the triad (M), lerp (L9), the zoo's torch
sort / layernorm (L11) and its fp32 conv without TF32 (I). Hand figures from the review."""

from __future__ import annotations

import warnings

import pytest

import rooflab
from rooflab.workloads import ops

torch = pytest.importorskip("torch")
F = torch.nn.functional
from rooflab.bench import kernels  # noqa: E402
from rooflab.bench.torch_count import count_call  # noqa: E402
from rooflab.measuring import CountWarning  # noqa: E402
from rooflab.workloads.torch_rules.flop import causal_pairs  # noqa: E402


def count(fn, *args, **kwargs):
    return count_call(fn, args, kwargs)[1]


def _quiet_measure(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return rooflab.measure(*args, plan="quick", **kwargs)


# --- A: gathers read the rows they look up; expanded inputs read their storage ----------

@pytest.mark.parametrize("how", ["embedding", "index_select", "index"])
def test_a_gather_is_charged_the_looked_up_rows_not_the_table(how):
    # review: 131 104 832 B (the whole 32000 x 2048 fp16 table) for each of the three;
    # hand: 8 x 2048 x 2 rows read + 8 x 8 ids + 8 x 2048 x 2 written = 65 600 B,
    # what ops.embedding (`rooflab ai embedding 8 2048`) gives
    table = torch.empty(32000, 2048, dtype=torch.float16)
    ids = torch.tensor([0, 5, 31999, 7, 100, 2048, 9, 12])
    call = {"embedding": lambda: F.embedding(ids, table),
            "index_select": lambda: torch.index_select(table, 0, ids),
            "index": lambda: table[ids]}[how]
    c = count(call)
    assert c.bytes == 65_600
    assert c.bytes == ops.embedding(8, 2048, "fp16").bytes
    assert c.flop == {}


def test_a_gather_op_reads_one_element_per_index():
    # torch.gather(W, 0, idx) with idx [8, 2048] int64: 8·2048·2 B gathered + 8·2048·8 B
    # indices + 8·2048·2 B written = 196 608 B (the table is 131 MB)
    table = torch.empty(32000, 2048, dtype=torch.float16)
    idx = torch.zeros(8, 2048, dtype=torch.int64)
    assert count(lambda: torch.gather(table, 0, idx)).bytes == 196_608


def test_a_expanded_input_reads_its_storage_once():
    # review: x + bias.expand(4096, 4096) fp32 counted 201 MB; the broadcast x + bias 134.2 MB.
    # hand: 4096² x 4 read + 4096 x 4 bias + 4096² x 4 written = 134 234 112 B for both
    x, bias = torch.empty(4096, 4096), torch.empty(4096)
    assert count(lambda: x + bias.expand(4096, 4096)).bytes == 134_234_112
    assert count(lambda: x + bias).bytes == 134_234_112


def test_a_repeat_kv_reads_the_kv_heads_once():
    # HF repeat_kv, 4 KV heads -> 32, 500 x 64 fp16: review's 4.096 MB counted, compulsory
    # 4·500·64·2 = 256 000 B read + 32·500·64·2 = 2 048 000 B written = 2 304 000 B
    k = torch.empty(1, 4, 500, 64, dtype=torch.float16)
    c = count(lambda: k[:, :, None].expand(1, 4, 8, 500, 64).reshape(1, 32, 500, 64))
    assert c.bytes == 2_304_000


# --- B: attention FLOP, CPU kernel counted, causal as the unmasked top-left pairs --------

def test_b1_cpu_sdpa_is_counted_dense_and_causal():
    # review: {} and uncounted ['aten._scaled_dot_product_flash_attention_for_cpu'];
    # hand: 4·B·H·L²·D = 4·8·512²·64 = 536 870 912; causal 4·8·64·(512·513/2) = 268 959 744
    # (what `rooflab ai attention --causal` and the trace rule give for the square case)
    q = torch.randn(1, 8, 512, 64)
    dense = count(lambda: F.scaled_dot_product_attention(q, q, q))
    causal = count(lambda: F.scaled_dot_product_attention(q, q, q, is_causal=True))
    assert dense.flop == {"fp32": 536_870_912}
    assert causal.flop == {"fp32": 268_959_744}
    assert causal.uncounted == ()
    assert ops.attention(1, 8, 512, 512, 64, dtype="fp32", causal=True).flop == 268_959_744


def test_b_causal_pairs_are_top_left_aligned():
    # PyTorch's is_causal: query i sees keys 0..i. q 16 against kv 4096: 16·17/2 = 136 pairs
    # per head, 4 x 8 x 64 x 136 = 278 528 FLOP (the bottom-right mask gives 133 971 968)
    assert causal_pairs(16, 4096) == 136
    assert causal_pairs(7, 4) == 1 + 2 + 3 + 4 + 4 + 4 + 4
    assert causal_pairs(2048, 2048) == 2048 * 2049 // 2
    q, kv = torch.randn(1, 8, 16, 64), torch.randn(1, 8, 4096, 64)
    c = count(lambda: F.scaled_dot_product_attention(q, kv, kv, is_causal=True))
    assert c.flop == {"fp32": 278_528}


def test_b_causal_mask_really_is_top_left():
    # the alignment the count assumes, checked on torch itself (review: equals tril(0))
    q, kv = torch.randn(1, 1, 4, 8), torch.randn(1, 1, 10, 8)
    got = F.scaled_dot_product_attention(q, kv, kv, is_causal=True)
    top_left = torch.ones(4, 10, dtype=torch.bool).tril(0)
    assert torch.allclose(got, F.scaled_dot_product_attention(q, kv, kv, attn_mask=top_left))


@pytest.mark.parametrize("op", ["flash", "efficient"])
def test_b2_cuda_sdpa_counts_causal_pairs(op):
    # the ops CUDA SDPA dispatches, on meta tensors: q [1, 32, 2048, 128] fp16.
    # review: 68.7 GFLOP for causal and not; hand dense 4·32·2048²·128 = 68 719 476 736,
    # causal 4·32·128·(2048·2049/2) = 34 376 515 584 (= `ai attention --causal`'s 34.4 G)
    q = torch.empty(1, 32, 2048, 128, dtype=torch.float16, device="meta")
    aten = torch.ops.aten

    def run(causal):
        if op == "flash":
            return lambda: aten._scaled_dot_product_flash_attention(q, q, q, 0.0, causal)
        return lambda: aten._scaled_dot_product_efficient_attention(q, q, q, None, False, 0.0,
                                                                    causal)

    assert count(run(False)).flop == {"fp16": 68_719_476_736}
    c = count(run(True))
    assert c.flop == {"fp16": 34_376_515_584}
    assert c.unit == "tensor"


# --- C: mv, addmv, dot, vdot, _int_mm; a warning when FLOP are missing ---------------------

def test_c_gemv_and_dot_are_counted():
    # review: flop {} for all; hand 2·4096² = 33 554 432 (mv, A @ x), + 4096 for addmv's add,
    # 2n = 8192 for dot/vdot; bytes already right: 4 x (4096² + 2 x 4096) = 67 141 632
    a, x = torch.randn(4096, 4096), torch.randn(4096)
    mv = count(torch.mv, a, x)
    assert mv.flop == {"fp32": 33_554_432} and mv.bytes == 67_141_632
    assert (sum(mv.flop.values()), mv.bytes) == (ops.gemv(4096, 4096, "fp32").flop,
                                                 ops.gemv(4096, 4096, "fp32").bytes)
    assert count(lambda: a @ x).flop == {"fp32": 33_554_432}
    assert count(torch.addmv, x, a, x).flop == {"fp32": 33_554_432 + 4096}
    assert count(torch.dot, x, x).flop == {"fp32": 8192}
    assert count(torch.vdot, x, x).flop == {"fp32": 8192}
    assert mv.unit == "vector" and mv.uncounted == ()


def test_c_int_mm_is_an_int8_tensor_gemm():
    # W8A8: a [64, 1024] x b [1024, 512] int8. review: flop {}; hand 2·64·512·1024 =
    # 67 108 864 int8 ops; bytes 65 536 + 524 288 + 131 072 (int32 out) = 720 896
    a = torch.ones(64, 1024, dtype=torch.int8)
    b = torch.ones(1024, 512, dtype=torch.int8)
    c = count(torch._int_mm, a, b)
    assert c.flop == {"int8": 67_108_864} and c.bytes == 720_896
    assert c.unit == "tensor"
    # aten.mm on int8 (FlopCounterMode's figure): the same ops, int8 output
    mm = count(torch.mm, a, b)
    assert mm.flop == {"int8": 67_108_864} and mm.bytes == 65_536 + 524_288 + 32_768
    assert mm.unit == "tensor"


def test_c_measure_warns_when_ops_have_no_flop_formula():
    # a QR has no formula: the kernel's FLOP are missing, and a notebook shows warnings
    a = torch.randn(64, 64)
    with pytest.warns(CountWarning, match=r"aten\.linalg_qr"):
        rooflab.measure(torch.linalg.qr, a, plan="quick")
    with warnings.catch_warnings():   # a fully counted call: no CountWarning
        warnings.simplefilter("error", CountWarning)
        warnings.simplefilter("ignore", rooflab.measuring.TimingWarning)
        k = rooflab.measure(torch.mv, torch.randn(256, 256), torch.randn(256), plan="quick")
        rooflab.measure(torch.linalg.qr, a, flop=1e5, plan="quick")   # flop given
    assert k.flop == {"fp32": 2 * 256 * 256}


# --- H: FLOP units ------------------------------------------------------------------------

def test_h_bf16_silu_is_vector_work():
    # review: unit tensor, peak 9.895e14, ridge 295.37 on H100; hand: the bf16 vector ceiling
    # 134 TFLOP/s over 3.35 TB/s = ridge 40, as `ai elementwise --dtype bf16` gets
    x = torch.randn(512, 512, dtype=torch.bfloat16)
    k = _quiet_measure(F.silu, x)
    assert k.unit == "vector" and k.meta["flop_by_unit"] == {"vector": 512 * 512}
    p = rooflab.analyze(rooflab.load_roof("H100 SXM"), [k]).points[0]
    assert p.peak_flop_per_s == pytest.approx(134e12)
    assert p.ridge == pytest.approx(40.0)


def test_h_mixed_kernel_takes_the_larger_share_and_says_so():
    # bf16 (256 x 256) @ (256 x 256): 2·256³ = 33 554 432 tensor FLOP; silu 65 536 vector
    x, w = torch.randn(256, 256, dtype=torch.bfloat16), torch.randn(256, 256,
                                                                    dtype=torch.bfloat16)
    k = _quiet_measure(lambda: F.silu(x @ w))
    assert k.unit == "tensor"
    assert k.meta["flop_by_unit"] == {"tensor": 33_554_432, "vector": 65_536}
    assert "tensor unit, the larger share" in k.meta["unit_note"]


# --- M: write-only in-place ops; the triad --------------------------------------------------

N = 1_000_000


def test_m_copy_reads_its_source_and_writes_its_destination():
    # review: 24 000 000 B; STREAM copy fp64 = 16 B/element = 16 000 000 B
    a, b = torch.randn(N, dtype=torch.float64), torch.empty(N, dtype=torch.float64)
    assert count(lambda: b.copy_(a)).bytes == 16_000_000

    def slice_assign():
        b[:] = a

    assert count(slice_assign).bytes == 16_000_000


@pytest.mark.parametrize("op", ["zero_", "fill_", "normal_", "uniform_"])
def test_m_fills_write_only(op):
    # review: 16 000 000 B; hand: 8 B written per element, nothing read
    b = torch.empty(N, dtype=torch.float64)
    call = {"zero_": b.zero_, "fill_": lambda: b.fill_(1.0), "normal_": b.normal_,
            "uniform_": b.uniform_}[op]
    assert count(call).bytes == 8_000_000


def test_m_kv_cache_write_is_not_charged_a_read_of_the_cache():
    # cache[:, 5] = k: 2 x 64 fp32 read from k, the same written into the cache slice
    cache, k = torch.zeros(2, 100, 64), torch.randn(2, 64)

    def put():
        cache[:, 5] = k

    assert count(put).bytes == 2 * (2 * 64 * 4)
    rows, idx, new = torch.zeros(100, 64), torch.tensor([3, 7]), torch.ones(2, 64)

    def index_put():
        rows[idx] = new

    # index_put_: 2 x 64 fp32 values read, 2 x 8 B ids, 2 rows of 64 fp32 written (the
    # 25 600 B table is neither read nor written whole)
    assert count(index_put).bytes == 512 + 16 + 512


def test_m_in_place_arithmetic_still_reads_its_self():
    a, b = torch.randn(N), torch.randn(N)
    assert count(lambda: a.add_(b)).bytes == 12_000_000   # review: right as it was


def test_m_triad_is_two_flop_per_element():
    # review: torch.add(b, c, alpha=3.0, out=a) counted 1e6; STREAM triad: 2 per element
    a, b, c = (torch.randn(N, dtype=torch.float64) for _ in range(3))
    assert count(lambda: torch.add(b, c, alpha=3.0, out=a)).flop == {"fp64": 2e6}
    assert count(lambda: torch.sub(b, c, alpha=3.0)).flop == {"fp64": 2e6}
    assert count(lambda: torch.add(b, c, out=a)).flop == {"fp64": 1e6}
    # a scalar scaled by alpha is one multiply, not one per element
    assert count(lambda: torch.add(b, 2.0, alpha=3.0)).flop == {"fp64": 1e6}


def test_l9_lerp_is_three_flop():
    # lerp = a + w·(b - a): subtract, multiply, add
    a, b = torch.randn(1000), torch.randn(1000)
    assert count(lambda: torch.lerp(a, b, 0.5)).flop == {"fp32": 3000}


# --- L11 / I: the zoo's torch calls -------------------------------------------------------

def test_l11_sort_writes_preallocated_values_and_indices():
    call = kernels.torch_call(torch, "sort", {"n": 1000}, "fp64", "cpu")
    values, indices = call()
    again = call()
    assert again[0].data_ptr() == values.data_ptr()   # no fresh output per call
    assert indices.dtype == torch.int64
    assert bool((values[1:] >= values[:-1]).all())
    c = count(call)
    # read 8 kB, write 8 kB values + 8 kB int64 indices: the 24 B/element the review found,
    # now at least written into the same buffers every call
    assert c.bytes == 24 * 1000


def test_l11_layernorm_reuses_its_output():
    # 4096 x 1024 fp32 (16 MiB): several L2-sized row blocks, one output buffer
    rows, cols = 4096, 1024
    call = kernels.torch_call(torch, "layernorm", {"rows": rows, "cols": cols}, "fp32", "cpu")
    first = call()
    assert call().data_ptr() == first.data_ptr()
    x = kernels._t(torch, (rows, cols), "fp32", "cpu")
    g, b = kernels._t(torch, cols, "fp32", "cpu", 1), kernels._t(torch, cols, "fp32", "cpu", 2)
    assert torch.allclose(first, F.layer_norm(x, (cols,), g, b), atol=1e-5)
    assert len(kernels._row_blocks(rows, cols, 4)) > 1


def _tf32_allowed() -> bool:
    conv = getattr(torch.backends.cudnn, "conv", None)
    if conv is not None and hasattr(conv, "fp32_precision"):
        return conv.fp32_precision != "ieee"
    return bool(torch.backends.cudnn.allow_tf32)


def test_i_fp32_conv_runs_without_tf32_and_restores_it(monkeypatch):
    seen = []
    real = F.conv2d

    def spy(*args, **kwargs):
        seen.append(_tf32_allowed())
        return real(*args, **kwargs)

    monkeypatch.setattr(torch.nn.functional, "conv2d", spy)
    shape = {"n": 1, "c": 4, "h": 8, "w": 8, "k": 4, "r": 3, "s": 3, "padding": 1}
    before = _tf32_allowed()
    assert before   # PyTorch's default: fp32 convs may run as TF32
    out = kernels.torch_call(torch, "conv2d", shape, "fp32", "cpu")()
    assert out.shape == (1, 4, 8, 8)
    assert seen == [False] and _tf32_allowed() == before
    seen.clear()
    kernels.torch_call(torch, "conv2d", shape, "fp64", "cpu")()   # other dtypes untouched
    assert seen == [before] and _tf32_allowed() == before


def test_i_tf32_setting_restored_when_the_conv_fails(monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("conv failed")

    monkeypatch.setattr(torch.nn.functional, "conv2d", broken)
    shape = {"n": 1, "c": 4, "h": 8, "w": 8, "k": 4, "r": 3, "s": 3, "padding": 1}
    before = _tf32_allowed()
    with pytest.raises(RuntimeError, match="conv failed"):
        kernels.torch_call(torch, "conv2d", shape, "fp32", "cpu")()
    assert _tf32_allowed() == before


def test_h_unit_also_in_the_with_and_decorator_forms():
    # the function form set Kernel.unit; `with` and @measure kept it in meta only, so a bf16
    # SiLU measured that way was still held to the tensor peak
    x = torch.randn(256, 256, dtype=torch.bfloat16)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with rooflab.measure(name="silu") as m:
            F.silu(x)

        @rooflab.measure(name="silu2")
        def step(a):
            return F.silu(a)

        step(x)
    assert m.kernel.unit == "vector"
    assert step.kernel.unit == "vector"
