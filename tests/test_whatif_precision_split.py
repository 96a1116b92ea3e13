"""`rooflab whatif --precision` rescales a kernel's byte breakdown with its bytes.

Before the fix an SpMV moved fp64 -> fp32 had 52,004 bytes but still said bytes_split
values 40,000 (8-byte values) and read_only_bytes 64,004 in the -o file: the file
contradicted itself, and a what-if run on it again read the stale split. Each test fails on
that code.

Hand calculation, `rooflab ai spmv 1000 5000` (CSR, int32 indices, x read once):
  fp64: values 5000 x 8 = 40,000; indices 5000 x 4 = 20,000; rowptr 1001 x 4 = 4,004;
        x 1000 x 8 = 8,000; y 1000 x 8 = 8,000; y's write-allocate read 8,000;
        total 88,004 B
  fp32: values 20,000; indices 20,000 and rowptr 4,004 (index width, unchanged);
        x 4,000; y 4,000; write-allocate 4,000; total 56,004 B
  the matrix (read_only_bytes): 64,004 -> 44,004; its indices (index_bytes) 24,004 stay.
"""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main
from rooflab.model import Ceiling, Kernel, Roof
from rooflab.model.whatif import change_precision

ROOF = Roof("A", compute=(Ceiling(1e12, precision="fp64", unit="vector"),
                          Ceiling(2e12, precision="fp32", unit="vector"),
                          Ceiling(4e12, precision="fp16", unit="vector")),
            memory=(Ceiling(1e11, level="DRAM"),))

FP32_SPLIT = {"values": 20_000, "indices": 20_000, "rowptr": 4_004, "x": 4_000, "y": 4_000,
              "write_allocate": 4_000}


def _run(capsys, *args) -> str:
    code = main(list(args))
    out = capsys.readouterr()
    assert code == 0, out.err
    return out.out


def _after_kernel(path) -> dict:
    doc = json.loads(path.read_text())
    (kernel,) = doc["after"]["kernels"]
    return kernel


@pytest.fixture
def spmv_file(tmp_path, capsys):
    path = tmp_path / "spmv.json"
    path.write_text(_run(capsys, "ai", "spmv", "1000", "5000", "--json"))
    return path


def test_whatif_output_file_says_the_split_in_the_new_precision(spmv_file, tmp_path, capsys):
    out = tmp_path / "fp32.json"
    _run(capsys, "whatif", str(spmv_file), "--on", "a100", "--precision", "fp32",
         "-o", str(out))
    k = _after_kernel(out)
    assert k["bytes"]["DRAM"] == pytest.approx(56_004)
    assert k["meta"]["bytes_split"] == pytest.approx(FP32_SPLIT)
    # the file agrees with itself: the parts sum to the kernel's bytes
    assert sum(k["meta"]["bytes_split"].values()) == pytest.approx(k["bytes"]["DRAM"])
    assert k["meta"]["read_only_bytes"] == pytest.approx(44_004)   # 20,000 + 24,004
    assert k["meta"]["index_bytes"] == pytest.approx(24_004)       # integers: unchanged
    assert k["meta"]["shape"]["dtype"] == "fp32"


def test_a_whatif_on_the_whatif_output_goes_back_to_the_fp64_bytes(spmv_file, tmp_path,
                                                                      capsys):
    # fp32 -> fp64 again from the -o file: values and vectors double, indices stay:
    # 20,000 x 2 + 24,004 + 4,000 x 3 x 2 = 88,004 (the stale fp64 split's shares, 56,000
    # of 80,004 B doubling, gave 52,004 x 1.70 = 88,405)
    fp32, back = tmp_path / "fp32.json", tmp_path / "fp64.json"
    _run(capsys, "whatif", str(spmv_file), "--on", "a100", "--precision", "fp32",
         "-o", str(fp32))
    _run(capsys, "whatif", str(fp32), "--on", "a100", "--precision", "fp64", "-o", str(back))
    k = _after_kernel(back)
    assert k["bytes"]["DRAM"] == pytest.approx(88_004)
    assert k["meta"]["bytes_split"] == pytest.approx(
        {"values": 40_000, "indices": 20_000, "rowptr": 4_004, "x": 8_000, "y": 8_000,
         "write_allocate": 8_000})


def test_a_sparse_read_write_split_keeps_its_index_reads():
    # the same SpMV with a read/write split and the matrix totals: y (8,000 B) is the
    # only write and halves; the reads take the rest of the 52,004 B: 52,004 - 4,000
    k = Kernel("spmv", {"fp64": 10_000}, {"DRAM": 80_004},
               meta={"op": "spmv", "shape": {"dtype": "fp64"},
                     "bytes_split": {"read": 72_004, "write": 8_000},
                     "read_only_bytes": 64_004, "index_bytes": 24_004})
    new = change_precision(ROOF, [k], "fp32").moves[0][1]
    assert new.bytes["DRAM"] == pytest.approx(52_004)
    assert new.meta["bytes_split"] == pytest.approx({"read": 48_004, "write": 4_000})
    assert new.meta["read_only_bytes"] == pytest.approx(44_004)
    assert new.meta["index_bytes"] == 24_004


def test_a_dense_kernels_split_and_weight_bytes_scale_with_every_byte():
    # fp32 -> fp16: every byte is element data, every part halves
    triad = Kernel("triad", {"fp32": 2e6}, {"DRAM": 12e6},
                   meta={"op": "triad", "bytes_split": {"read": 8e6, "write": 4e6}})
    new = change_precision(ROOF, [triad], "fp16").moves[0][1]
    assert new.meta["bytes_split"] == pytest.approx({"read": 4e6, "write": 2e6})
    # an llm-style split and a weight total: the weight share (3/4) stays
    gemv = Kernel("linear", {"fp32": 2e9}, {"DRAM": 4e9},
                  meta={"op": "linear", "weight_bytes": 3e9,
                        "bytes_split": {"weights": 3e9, "activations": 1e9, "kv": 0.0}})
    new = change_precision(ROOF, [gemv], "fp16").moves[0][1]
    assert new.bytes["DRAM"] == pytest.approx(2e9)
    assert new.meta["bytes_split"] == pytest.approx(
        {"weights": 1.5e9, "activations": 0.5e9, "kv": 0.0})
    assert new.meta["weight_bytes"] == pytest.approx(1.5e9)
