"""Review s19 r1 (`rooflab ai` op counts by hand): F1 conv input rows a stride skips, F11
top-left causal K/V, F12 spmv write-allocate on a GPU, F10 strided lines on a CPU, F5
int8/fp8 output dtypes. Every number is the review's hand count."""

from __future__ import annotations

import pytest
from cli_inproc import json_of as _json

from rooflab.workloads import ops

# --- F1: conv2d reads only the input rows/columns some output reads ----------------------

# ResNet's 1x1 stride-2 shortcut: 28 x 28 of 56 x 56 pixels read
DOWNSAMPLE = ["ai", "conv2d", "--n", "32", "--c", "256", "--h", "56", "--w", "56",
              "--k", "512", "--r", "1", "--s", "1", "--stride", "2"]


def test_f1_downsample_bytes_and_verdict(capsys):
    d = _json(capsys, DOWNSAMPLE + ["--on", "NVIDIA A100 80GB SXM", "--json"])
    assert d["flop"] == 2 * 32 * 512 * 28 * 28 * 256                     # 6.577e9
    assert d["bytes_split"]["input"] == 32 * 256 * 28 * 28 * 2            # 12.85 MB
    assert d["bytes"] == pytest.approx(38.8e6, rel=1e-3)
    assert d["ai"] == pytest.approx(169.5, abs=0.05)
    assert d["roof_side"] == "compute"
    assert d["work_floor_s"] == pytest.approx(6.577e9 / 312e12, rel=1e-3)   # 21.1 us


def test_f1_gaps_between_taps(capsys):
    # 2x2 filter at stride 4 on 16 x 16: rows 0,1,4,5,8,9,12,13 -> 8 x 8 pixels
    d = _json(capsys, ["ai", "conv2d", "--n", "1", "--c", "8", "--h", "16", "--w", "16",
                       "--k", "8", "--r", "2", "--s", "2", "--stride", "4", "--dtype",
                       "fp32", "--json"])
    assert d["bytes_split"]["input"] == 2048
    assert d["bytes"] == 3584
    assert d["ai"] == pytest.approx(2.2857, rel=1e-4)


@pytest.mark.parametrize("size,kernel,stride,pad,dil,want", [
    (56, 3, 1, 1, 1, 56),     # a plain 3x3: every row
    (56, 3, 2, 1, 1, 56),     # kernel > stride: every row still read
    (56, 1, 2, 0, 1, 28),
    (16, 2, 4, 0, 1, 8),
    (16, 2, 2, 0, 2, 8),      # stride = dilation: even rows only
])
def test_f1_touched_rows(size, kernel, stride, pad, dil, want):
    from rooflab.workloads.ops_conv import conv_touched

    out = ops.conv_output_size(size, kernel, stride, pad, dil)
    assert conv_touched(size, kernel, stride, pad, dil, out) == want


def test_f1_touched_rows_against_enumeration():
    from rooflab.workloads.ops_conv import conv_touched

    for size in range(1, 20):
        for kernel in range(1, 5):
            for stride in range(1, 6):
                for pad in range(0, 3):
                    for dil in range(1, 4):
                        out = ops.conv_output_size(size, kernel, stride, pad, dil)
                        if out < 1:
                            continue
                        rows = {p * stride - pad + dil * i for p in range(out)
                                for i in range(kernel)} & set(range(size))
                        assert conv_touched(size, kernel, stride, pad, dil, out) == len(rows)


# --- F11: top-left causal, q-len < kv-len: K/V of the keys some query sees ----------------

def test_f11_top_left_kv_bytes(capsys):
    d = _json(capsys, ["ai", "attention", "--heads", "32", "--q-len", "1024", "--kv-len",
                       "8192", "--head-dim", "128", "--causal", "--causal-align", "top-left",
                       "--on", "NVIDIA H100 SXM", "--json"])
    assert d["flop"] == pytest.approx(8.598e9, rel=1e-3)
    assert d["bytes_split"]["kv"] == 2 * 32 * 1024 * 128 * 2             # 16.8 MB
    assert d["bytes"] == 4 * 32 * 1024 * 128 * 2       # q + k + v + o: 33.6 MB
    assert d["ai"] == pytest.approx(256, rel=1e-2)
    assert d["time_floor_s"] == pytest.approx(10.0e-6, rel=0.01)


def test_f11_docs_example_and_naive_dense():
    op = ops.attention(1, 4, 16, 64, 64, causal=True, causal_align="top-left")
    assert op.bytes == 32768 and op.ai == pytest.approx(4.25)
    naive = ops.attention(1, 4, 16, 64, 64, causal=True, causal_align="top-left",
                          flash=False)
    assert naive.bytes_split["kv"] == 2 * 4 * 64 * 64 * 2                # all keys
    bottom = ops.attention(1, 4, 16, 64, 64, causal=True)
    assert bottom.bytes_split["kv"] == 2 * 4 * 64 * 64 * 2               # the last sees all


# --- F12: spmv on a GPU roof has no write-allocate read of y ------------------------------

def test_f12_spmv_h100(capsys):
    d = _json(capsys, ["ai", "spmv", "1e6", "5e6", "--on", "NVIDIA H100 SXM", "--json"])
    assert "write_allocate" not in d["bytes_split"]
    assert d["bytes"] == 80e6 + 4                 # rowptr is rows + 1 entries
    assert d["ai"] == pytest.approx(0.125)
    assert d["work_floor_s"] == pytest.approx(8e7 / 3.35e12, rel=1e-3)   # 23.9 us


def test_f12_spmv_cpu_keeps_it(capsys):
    d = _json(capsys, ["ai", "spmv", "1e6", "5e6", "--on", "AMD EPYC 9654", "--json"])
    assert d["bytes_split"]["write_allocate"] == 8e6 and d["bytes"] == 88e6 + 4
    d = _json(capsys, ["ai", "spmv", "1e6", "5e6", "--json"])
    assert d["bytes"] == 88e6 + 4 and "--on a GPU leaves it out" in d["byte_model"]


# --- F10: strided elementwise on a CPU moves 64-byte lines --------------------------------

def test_f10_cpu_lines(capsys):
    d = _json(capsys, ["ai", "elementwise", "1e8", "--dtype", "fp64", "--stride", "16",
                       "--on", "AMD EPYC 9654", "--json"])
    assert d["bytes"] == 12.8e9
    assert d["coalescing"]["sector_bytes"] == 64
    assert d["coalescing"]["efficiency"] == pytest.approx(0.125)
    assert d["time_floor_s"] == pytest.approx(12.8e9 / 460.8e9, rel=1e-3)   # 27.8 ms


def test_f10_gpu_sectors_unchanged(capsys):
    d = _json(capsys, ["ai", "elementwise", "100", "--dtype", "fp32", "--stride", "3",
                       "--json"])
    assert d["coalescing"]["sectors_per_array"] == 38 and d["bytes"] == 2 * 38 * 32
    assert "a GPU's sectors assumed" in d["byte_model"]


# --- F5: int8 GEMM writes int32; fp8 attention writes bf16; conv2d --out-dtype ------------

def test_f5_int8_matmul_int32(capsys):
    d = _json(capsys, ["ai", "matmul", "4096", "4096", "4096", "--dtype", "int8", "--json"])
    assert d["bytes_split"]["c"] == 4096 * 4096 * 4
    assert d["ai"] == pytest.approx(1365.33, rel=1e-4)
    assert "torch._int_mm" in d["byte_model"]
    d = _json(capsys, ["ai", "matmul", "4096", "4096", "4096", "--dtype", "int8",
                       "--out-dtype", "int8", "--json"])
    assert d["ai"] == pytest.approx(2730.67, rel=1e-4)


def test_f5_fp8_attention_bf16_out(capsys):
    d = _json(capsys, ["ai", "attention", "--heads", "32", "--q-len", "1024", "--kv-len",
                       "1024", "--head-dim", "128", "--dtype", "fp8", "--json"])
    assert d["bytes_split"]["o"] == 32 * 1024 * 128 * 2
    assert "O bf16" in d["byte_model"]


def test_f5_conv_out_dtype(capsys):
    d = _json(capsys, ["ai", "conv2d", "--n", "1", "--c", "3", "--h", "8", "--w", "8",
                       "--k", "4", "--dtype", "int8", "--out-dtype", "fp16", "--json"])
    assert d["bytes_split"]["output"] == 4 * 6 * 6 * 2


# --- F8: per-axis padding, so a conv1d is --h 1 --r 1 --padding 0,P -----------------------

def test_f8_conv1d_per_axis_padding(capsys):
    # F.conv1d(x[1,64,100], w[64,64,3], padding=1): 2·64·100·64·3 FLOP (FlopCounterMode)
    d = _json(capsys, ["ai", "conv2d", "--n", "1", "--c", "64", "--h", "1", "--w", "100",
                       "--k", "64", "--r", "1", "--s", "3", "--padding", "0,1", "--dtype",
                       "fp32", "--json"])
    assert d["flop"] == 2_457_600
    assert d["bytes"] == 4 * (6_400 + 12_288 + 6_400)                    # 100,352


def test_f8_padded_height_is_said(capsys):
    d = _json(capsys, ["ai", "conv2d", "--n", "1", "--c", "64", "--h", "1", "--w", "100",
                       "--k", "64", "--r", "1", "--s", "3", "--padding", "1", "--dtype",
                       "fp32", "--json"])
    assert d["flop"] == 7_372_800                                        # 3 rows, 2 of zeros
    assert any("--padding 0,1" in n for n in d["notes"])
