"""`rooflab ai` defects of review s33 D (machine-side user audit), each with its hand count:
an int4 GEMM's C counted in int4, group scales of a group that does not divide k counted
as a fraction, sizes past the count range blamed on a unit, int32 CSR indices past
2**31 - 1 nonzeros, and 'FLOP / time floor' printed for integer work."""

from __future__ import annotations

import pytest
from cli_inproc import json_of, one_line_error, run_cli

from rooflab.errors import InputError
from rooflab.workloads import ops


# --- int4 GEMMs return int32, as int8 ones do -------------------------------------------
def test_int4_matmul_writes_int32(capsys):
    # 1024³ int4: A, B 1024² x 0.5 B = 524,288 B each; C int32 1024² x 4 B = 4,194,304 B;
    # 5,242,880 B in all; FLOP 2 x 1024³ = 2,147,483,648; AI = 2048 / 5 = 409.6.
    # (The old count wrote C in int4: 3 x 524,288 = 1,572,864 B, AI 1365.3.)
    d = json_of(capsys, ["ai", "matmul", "1024", "1024", "1024", "--dtype", "int4",
                         "--json"])
    assert d["bytes_split"] == {"a": 524_288.0, "b": 524_288.0, "c": 4_194_304.0}
    assert d["bytes"] == 5_242_880.0
    assert d["ai"] == pytest.approx(409.6)
    assert d["shape"]["out_dtype"] == "int32"
    assert "int4 GEMMs return int32" in d["byte_model"]
    assert "--out-dtype int4" in d["byte_model"]
    # --out-dtype int4 is the requantizing epilogue: C at 0.5 B, 3 x 524,288 = 1,572,864 B,
    # AI 2048 / 1.5 = 1365.3, and no int32 note
    d = json_of(capsys, ["ai", "matmul", "1024", "1024", "1024", "--dtype", "int4",
                         "--out-dtype", "int4", "--json"])
    assert d["bytes"] == 1_572_864.0 and d["ai"] == pytest.approx(1365.33, rel=1e-4)
    assert "return int32" not in d["byte_model"]


def test_int4_matmul_bound_on_a100_is_memory_side(capsys):
    # A100 int4 tensor 1248 TOP/s / 2039 GB/s = ridge 612; AI 409.6 < 612: the work alone
    # is memory-side (with C in int4, AI 1365 called it compute-side).
    d = json_of(capsys, ["ai", "matmul", "1024", "1024", "1024", "--dtype", "int4", "--on",
                         "a100-80gb", "--json"])
    assert d["roof_side"] == "memory"
    assert d["ridge"] == pytest.approx(1248e12 / 2039e9, rel=2e-3)


def test_integer_rate_with_launch_says_op():
    # integer work on an integer ceiling prints OP, not FLOP, beside its rate with the launch
    r = run_cli("ai", "matmul", "1024", "1024", "1024", "--dtype", "int4", "--on",
                "a100-80gb")
    assert r.returncode == 0
    line = next(x for x in r.stdout.splitlines() if "attainable" in x)
    assert "with the launch (OP / time floor)" in line, line


# --- group scales: one per started group along k -------------------------------------------
def test_group_that_does_not_divide_k_stores_whole_scales():
    # k 4, n 4, group 3: 16 weights x 0.5 B = 8 B + ceil(4/3) = 2 fp16 scales per column
    # x 4 columns x 2 B = 16 B: 24 B (the old fraction 16 x (0.5 + 2/3) = 18.67 B)
    op = ops.matmul(4, 4, 4, "fp16", weights="int4", group_size=3)
    assert op.bytes_split["weights"] == 24.0
    # k 64 under a group of 128: one scale per column, 4 x 64 x 0.5 + 4 x 2 = 136 B
    # (the fraction gave 256 x (0.5 + 2/128) = 132 B)
    assert ops.matmul(4, 4, 64, weights="int4").bytes_split["weights"] == 136.0
    # a group that divides k is unchanged: 4096² x (0.5 + 2/128) = 8,650,752 B
    assert ops.matmul(1, 4096, 4096, weights="int4").bytes_split["weights"] == 8_650_752.0


# --- sizes past the count range: an error about the sizes --------------------------------
@pytest.mark.parametrize("argv, count", [
    (["matmul", "1e12", "1e12", "1e12"], "2e+36 FLOP"),          # 2 x 1e36
    (["elementwise", "9e18", "--flop-per-element", "1e300"], "inf FLOP"),
    (["embedding", "9e18", "9e18"], "bytes"),                    # 2 x 8.1e37 x 2 B
])
def test_sizes_past_the_range_name_the_sizes(capsys, argv, count):
    err = one_line_error(capsys, ["ai", *argv])
    assert count in err and "check the sizes" in err
    # the old message blamed a unit the user never typed and named an internal kernel
    assert "GFLOP" not in err and "kernel '" not in err


# --- CSR index width ----------------------------------------------------------------------
def test_spmv_int32_indices_cannot_hold_3e9_nonzeros(capsys):
    # the last row pointer is nnz = 3e9 > 2**31 - 1 = 2,147,483,647
    err = one_line_error(capsys, ["ai", "spmv", "1e8", "3e9"])
    assert "2,147,483,647" in err and "--index-bytes 8" in err
    with pytest.raises(InputError, match="index_bytes 8"):
        ops.spmv(1e8, 3e9)
    # int64: 3e9 x (8 + 8) + 8 x (1e8 + 1) + 3 x 8e8 (x, y, y's WA read) = 5.12e10 + 8 B
    assert ops.spmv(1e8, 3e9, index_bytes=8).bytes == 3e9 * 16 + 8 * (1e8 + 1) + 3 * 8e8


def test_spmv_index_bytes_is_an_integer_width(capsys):
    err = one_line_error(capsys, ["ai", "spmv", "10", "30", "--index-bytes", "3"])
    assert "1, 2, 4 or 8" in err
    # 2 B are relative (delta) column indices, the advice's 16-bit lever: not bounded by
    # the matrix, so 2e6 x 54e6 stays countable: 54e6 x (8 + 2) + 2 x (2e6 + 1) + 3 x 16e6
    assert ops.spmv(2e6, 54e6, index_bytes=2).bytes == 592_000_002
    # rows alone past int32 (column indices up to rows - 1 = 3e9 - 1) ask for 8 too
    with pytest.raises(InputError, match="rows=3000000000 does not fit int32"):
        ops.spmv(3e9, 1e9)
    # the review's 2e6 x 54e6 int32 SpMV is unchanged: 704e6 + 4 B
    assert ops.spmv(2e6, 54e6).bytes == 704e6 + 4
