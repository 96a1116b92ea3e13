"""Every zoo kernel's FLOP and bytes against a hand calculation (2 FLOP per multiply-add,
compulsory traffic: each input read once, each output written once)."""

from __future__ import annotations

import math

import pytest

from rooflab.bench import zoo
from rooflab.errors import InputError

MiB = 2**20


def by_name(small: bool = False) -> dict:
    return {sp.name: sp for sp in zoo.specs(small)}


def test_stream_arrays_exceed_the_llc():
    n64 = zoo._stream_elements(8, small=False)
    assert n64 * 8 >= 64 * MiB
    llc = zoo.llc_bytes()
    if llc:
        # copy's working set (2 arrays) is at least 4x the last-level cache (STREAM's rule)
        assert 2 * n64 * 8 >= 4 * llc


@pytest.mark.parametrize("small", [False, True])
def test_streaming_kernels(small):
    s = by_name(small)
    n = zoo._stream_elements(8, small)
    n32 = zoo._stream_elements(4, small)
    expect = {   # name: (FLOP, bytes) by hand
        "copy_fp64": (0, 16 * n),          # read a, write b
        "scale_fp64": (n, 16 * n),         # b = 3a
        "add_fp64": (n, 24 * n),           # c = a + b
        "triad_fp64": (2 * n, 24 * n),     # a = b + s*c: 2n FLOP, 24n bytes
        "triad_fp32": (2 * n32, 12 * n32),
        "sum_fp64": (n - 1, 8 * n + 8),    # n-1 additions, the scalar result written
        "dot_fp64": (2 * n, 16 * n),       # n multiply-adds, two vectors read
        "exp_fp32": (n32, 8 * n32),        # 1 FLOP per exp (ops.py convention)
    }
    for name, (flop, nbytes) in expect.items():
        c = s[name].count
        assert (c.flop, c.bytes) == (flop, nbytes), name
    assert s["triad_fp64"].count.precision == "fp64"
    assert s["triad_fp32"].count.precision == "fp32"


def test_matrix_kernels_default_sizes():
    s = by_name()
    assert s["gemv_fp64"].count.flop == 2 * 4096 * 4096
    assert s["gemv_fp64"].count.bytes == 8 * (4096 * 4096 + 4096 + 4096)
    for size, dtype, e in ((64, "fp64", 8), (256, "fp64", 8), (1024, "fp64", 8),
                           (1024, "fp32", 4), (2048, "fp32", 4)):
        c = s[f"gemm_{dtype}_{size}"].count
        assert c.flop == 2 * size**3
        assert c.bytes == e * 3 * size**2
        assert c.ai == pytest.approx(2 * size / (3 * e))     # N/3 FLOP per element size
    b = s["bgemm_fp32_32"].count
    assert b.flop == 256 * 2 * 32**3
    assert b.bytes == 256 * 4 * 3 * 32 * 32


def test_conv_softmax_layernorm_default_sizes():
    s = by_name()
    conv = s["conv2d_fp32"].count            # N4 C64 32x32, K64 3x3, padding 1 -> 32x32 out
    assert conv.flop == 2 * 4 * 64 * 32 * 32 * 64 * 3 * 3
    assert conv.bytes == 4 * (4 * 64 * 32 * 32 + 64 * 64 * 9 + 4 * 64 * 32 * 32)
    sm = s["softmax_fp32"].count
    e = 4096 * 4096
    assert (sm.flop, sm.bytes) == (4 * e, 8 * e)            # 4 FLOP/elem; x read, y written
    ln = s["layernorm_fp32"].count
    assert (ln.flop, ln.bytes) == (7 * e, 4 * (2 * e + 2 * 4096))   # + gamma and beta


def test_fft_and_sort_counts():
    c = zoo.fft_count(1024)
    assert c.flop == 5 * 1024 * 10                           # 5 N log2 N
    assert c.bytes == 32 * 1024                              # complex128 in + out
    assert c.precision == "fp64"
    s = by_name()
    n = s["fft_c128"].count.shape["n"]
    assert s["fft_c128"].count.flop == 5 * n * math.log2(n)
    srt = s["sort_fp64"].count
    assert srt.flop == 0
    assert srt.bytes == 16 * srt.shape["n"]                  # one read, one write
    assert "not counted" in srt.byte_model


def test_zoo_has_the_issue_kernels():
    names = set(zoo.kernel_names())
    for want in ("copy_fp64", "scale_fp64", "add_fp64", "triad_fp64", "sum_fp64", "dot_fp64",
                 "gemv_fp64", "gemm_fp64_64", "gemm_fp32_2048", "bgemm_fp32_32",
                 "conv2d_fp32", "softmax_fp32", "layernorm_fp32", "exp_fp32", "fft_c128",
                 "sort_fp64"):
        assert want in names
    assert set(zoo.DEMO_NAMES) <= names


def test_select_by_name_prefix_and_kind():
    assert [sp.name for sp in zoo.select(["triad"])] == ["triad_fp64", "triad_fp32"]
    gemm = [sp.name for sp in zoo.select(["gemm"])]
    assert gemm[:2] == ["gemm_fp64_64", "gemm_fp64_256"] and len(gemm) == 5
    assert [sp.name for sp in zoo.select(["copy_fp64", "copy"])] == ["copy_fp64"]
    with pytest.raises(InputError, match="unknown zoo kernel 'nope'.*triad_fp64"):
        zoo.select(["nope"])
