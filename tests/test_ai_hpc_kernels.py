"""rooflab ai stencil / spmv / dot / axpy: the hand counts of review 16a D (a 7-point
Jacobi on 256³ for 20 sweeps, a CSR SpMV of 2e6 rows and 27 nonzeros per row), from
Python and from the CLI, with the conventions (write-allocate, layer condition) said."""

from __future__ import annotations

import pytest
from cli_inproc import json_of as _json

from rooflab.cli.main import main
from rooflab.errors import InputError
from rooflab.hardware.profile import MachineProfile, save_profile
from rooflab.model import Ceiling, Roof
from rooflab.workloads import ops

# 256³ grid, radius 1: 254³ interior points per sweep, 20 sweeps.
POINTS = 254**3 * 20                 # 327 741 280 = 3.2774e8
JACOBI_FLOP = 8 * POINTS             # 6 adds + 2 muls: 2.6219e9
JACOBI_BYTES = 16 * POINTS           # read + write, fp64: 5.244e9
JACOBI_BYTES_WA = 24 * POINTS        # + the write-allocate read: 7.866e9
# CSR, 2e6 rows, 54e6 nonzeros, fp64 values, int32 indices.
SPMV_BYTES = 12 * 54e6 + 4 * (2e6 + 1) + 8 * 2e6 + 2 * 8 * 2e6    # 704e6 + 4 (y + its WA read)
SPMV_MATRIX = 12 * 54e6 + 4 * (2e6 + 1)                         # 656e6 + 4


def test_stencil_review_hand_count():
    op = ops.stencil("256x256x256", 7, "fp64", sweeps=20)
    assert op.shape["updated_points"] == POINTS == 327_741_280
    assert op.flop == JACOBI_FLOP == pytest.approx(2.6219e9, rel=1e-4)
    assert op.bytes == JACOBI_BYTES == pytest.approx(5.244e9, rel=1e-3)
    assert op.ai == 0.5
    assert dict(op.bytes_split) == {"read": 8 * POINTS, "write": 8 * POINTS}
    assert op.op == "stencil" and op.precision == "fp64"
    # the model says the layer condition it assumes: 3 planes of 256² fp64 = 1.5 MiB
    assert op.shape["layer_condition_bytes"] == 3 * 256 * 256 * 8 == 1_572_864
    assert "layer condition assumed" in op.byte_model and "16 B/point" in op.byte_model
    assert "no write-allocate" in op.byte_model


def test_stencil_write_allocate_adds_8_bytes_per_point():
    op = ops.stencil((256, 256, 256), 7, "fp64", sweeps=20, write_allocate=True)
    assert op.bytes == JACOBI_BYTES_WA == pytest.approx(7.866e9, rel=1e-3)
    assert op.ai == pytest.approx(1 / 3)
    assert op.bytes_split["write_allocate"] == 8 * POINTS
    assert "24 B/point" in op.byte_model


def test_stencil_radius_box_and_flop_override():
    # 13-point 3-D star: radius 2, interior 252³, 5 planes; default FLOP 12 adds + 2 muls
    op = ops.stencil("256x256x256", 13, "fp64")
    assert op.shape["radius"] == 2 and op.shape["updated_points"] == 252**3
    assert op.flop == 14 * 252**3 and op.shape["layer_condition_bytes"] == 5 * 256**2 * 8
    # 2-D 3x3 box (9 points, radius 1): 3 rows of 1000 fp32
    box = ops.stencil("1000x1000", 9, "fp32", box=True, flop_per_point=17)
    assert box.shape["updated_points"] == 998**2 and box.flop == 17 * 998**2
    assert box.shape["layer_condition_bytes"] == 3 * 1000 * 4
    # 1-D 3-point, fp64 (the HPC ops' default dtype since review 17a N10; fp16 before:
    # 4 B per point, now 16)
    one = ops.stencil(1e6, 3)
    assert one.flop == 4 * (1e6 - 2) and one.bytes == 16 * (1e6 - 2)


@pytest.mark.parametrize("kw, words", [
    ({"grid": "256x256", "points": 7}, "no symmetric 2-D star"),
    ({"grid": "2x256x256", "points": 7}, "every grid size > 2"),
    ({"grid": "256x256x1x3", "points": 7}, "1 to 3 dimensions"),
    ({"grid": "256xax256", "points": 7}, "sizes joined by x"),
    ({"grid": "64x64x64", "points": 7, "flop_per_point": -1}, "flop_per_point"),
])
def test_stencil_errors(kw, words):
    with pytest.raises(InputError, match=words):
        ops.stencil(**kw)


def test_spmv_review_hand_count():
    op = ops.spmv(2e6, 54e6, "fp64")
    assert op.bytes == SPMV_BYTES == 704_000_004
    assert op.flop == 1.08e8
    assert op.ai == pytest.approx(0.1534, abs=5e-4)   # 1.08e8 / 704e6
    assert dict(op.bytes_split) == {"values": 432e6, "indices": 216e6, "rowptr": 8_000_004,
                                    "x": 16e6, "y": 16e6, "write_allocate": 16e6}
    meta = op.kernel().meta
    assert meta["op"] == "spmv"
    assert meta["read_only_bytes"] == SPMV_MATRIX and meta["index_bytes"] == 224_000_004
    # 20 sweeps timed together: the meta totals scale with the bytes
    k20 = op.scaled(20).kernel(seconds=0.604588, calls=20)
    assert k20.bytes["DRAM"] == 20 * SPMV_BYTES == pytest.approx(1.408e10, rel=1e-3)
    assert k20.meta["read_only_bytes"] == 20 * SPMV_MATRIX


def test_spmv_rhs_and_x_reuse():
    # 8 vectors per matrix read: 656e6 + 8 x 48e6 = 1040e6 B (x, y, y's write-allocate
    # read per vector), 8.64e8 FLOP: 8 x 704 / 1040 = 5.42x the AI
    op = ops.spmv(2e6, 54e6, "fp64", rhs=8)
    assert op.bytes == SPMV_MATRIX + 8 * 48e6 and op.flop == 8.64e8
    assert op.ai / ops.spmv(2e6, 54e6, "fp64").ai == pytest.approx(5.42, abs=0.01)
    # no reuse of x: one x element per nonzero, 54e6 x 8 instead of 2e6 x 8
    none = ops.spmv(2e6, 54e6, "fp64", x_reuse="none")
    assert none.bytes_split["x"] == 432e6 and none.bytes == SPMV_MATRIX + 432e6 + 2 * 16e6
    # int64 indices: 16 B per nonzero
    wide = ops.spmv(2e6, 54e6, "fp64", index_bytes=8)
    assert wide.bytes == 16 * 54e6 + 8 * (2e6 + 1) + 48e6
    with pytest.raises(InputError, match="x_reuse"):
        ops.spmv(10, 20, x_reuse="some")
    with pytest.raises(InputError, match="exceeds rows"):
        ops.spmv(10, 101)


def test_dot_and_axpy():
    dot = ops.dot(1e8, "fp64")
    assert (dot.flop, dot.bytes, dot.ai) == (2e8, 1.6e9, 0.125)
    axpy = ops.axpy(1e8, "fp64")
    assert (axpy.flop, axpy.bytes) == (2e8, 2.4e9) and axpy.ai == pytest.approx(1 / 12)
    # in place, the store hits the line read for y: write-allocate adds nothing
    assert ops.axpy(1e8, "fp64", write_allocate=True).bytes == 2.4e9
    # z = a·x + y with write-allocate: 32 B per element, as counters see a triad
    assert ops.axpy(1e8, "fp64", write_allocate=True, out_of_place=True).bytes == 3.2e9
    # the HPC ops' default dtype (fp16 before review 17a N10)
    assert ops.dot(10).precision == "fp64"


def test_cli_stencil_json(capsys):
    d = _json(capsys, ["ai", "stencil", "256x256x256", "--points", "7", "--dtype", "fp64",
                       "--sweeps", "20", "--json"])
    assert (d["op"], d["flop"], d["bytes"], d["ai"]) == ("stencil", JACOBI_FLOP,
                                                         JACOBI_BYTES, 0.5)
    assert d["layer_condition"] == {"bytes": 1_572_864, "fits": {}}
    (k,) = d["kernels"]
    assert k["meta"]["op"] == "stencil" and k["bytes"] == {"DRAM": JACOBI_BYTES}
    d = _json(capsys, ["ai", "stencil", "256x256x256", "--points", "7", "--dtype", "fp64",
                       "--sweeps", "20", "--write-allocate", "--json"])
    assert d["bytes"] == JACOBI_BYTES_WA and d["ai"] == pytest.approx(1 / 3)
    d = _json(capsys, ["ai", "stencil", "64x64x64", "--points", "7", "--flop-per-point",
                       "13", "--json"])
    assert d["flop"] == 13 * 62**3


def test_cli_stencil_text(capsys):
    assert main(["ai", "stencil", "256x256x256", "--points", "7", "--dtype", "fp64",
                 "--sweeps", "20"]) == 0
    out = capsys.readouterr().out
    assert "(stencil, fp64, vector)" in out and "(2.62193e+09)" in out
    assert "(5.24386e+09; read 2.62 GB, write 2.62 GB)" in out and "(0.5)" in out
    assert "3 x 256x256 x 8 B = 1.57 MB" in out


def test_cli_stencil_on_profile_says_where_the_planes_fit(tmp_path, capsys):
    # The review's Zen 4 VM: L1d 32 KiB, L2 1 MiB, L3 32 MiB; 42.6 GB/s DRAM (STREAM triad)
    measured = Roof("Zen 4 VM measured", kind="measured",
                    compute=(Ceiling(118e9, precision="fp64", unit="vector",
                                     provenance="measured"),),
                    memory=(Ceiling(42.6e9, level="DRAM", provenance="measured"),))
    nominal = Roof("Zen 4 VM", compute=(Ceiling(118e9, precision="fp64", unit="vector",
                                                 provenance="derived"),))
    path = tmp_path / "zen4.json"
    save_profile(path, MachineProfile(
        host={"kind": "cpu", "caches": {"l1d": 32768, "l2": 1048576, "l3": 33554432}},
        nominal=nominal, measured=measured))
    argv = ["ai", "stencil", "256x256x256", "--points", "7", "--dtype", "fp64", "--sweeps",
            "20", "--write-allocate", "--on", str(path)]
    d = _json(capsys, argv + ["--json"])
    # 1.5 MiB of planes: more than the 1 MiB L2, inside the 32 MiB L3 (review 16a E)
    assert d["layer_condition"]["fits"] == {"L1": False, "L2": False, "L3": True}
    # attainable 0.333 x 42.6 GB/s = 14.2 GFLOP/s (review 16a D)
    assert d["attainable_flop_per_s"] == pytest.approx(14.2e9)
    assert d["bound"] == "memory"
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert ("3 planes (1.57 MB = 1.5 MiB) do not fit L1 (32 KiB), do not fit L2 (1 MiB), "
            "fit L3 (32 MiB)") in out


def test_cli_spmv(capsys):
    d = _json(capsys, ["ai", "spmv", "2e6", "54e6", "--dtype", "fp64", "--json"])
    assert (d["op"], d["flop"], d["bytes"]) == ("spmv", 1.08e8, SPMV_BYTES)
    assert d["ai"] == pytest.approx(0.15341, abs=1e-5)   # 1.08e8 / 704,000,004
    (k,) = d["kernels"]
    assert k["meta"]["op"] == "spmv" and k["meta"]["read_only_bytes"] == SPMV_MATRIX
    assert k["meta"]["index_bytes"] == 224_000_004
    d = _json(capsys, ["ai", "spmv", "2e6", "54e6", "--dtype", "fp64", "--rhs", "8",
                       "--index-bytes", "4", "--x-reuse", "none", "--json"])
    assert d["bytes"] == SPMV_MATRIX + 8 * (432e6 + 2 * 16e6) and d["flop"] == 8.64e8
    d = _json(capsys, ["ai", "spmv", "2e6", "54e6", "--dtype", "fp64", "--on", "h100",
                       "--json"])
    # a GPU writes whole sectors of y without reading them (no write-allocate read): 704e6
    # + 4 - 8 x 2e6 = 688,000,004 B; memory-bound: 688e6 B / 3.35 TB/s = 205.4 us
    assert d["bytes"] == SPMV_BYTES - 8 * 2e6 == 688_000_004
    assert d["bound"] == "memory" and d["work_floor_s"] == pytest.approx(688e6 / 3.35e12,
                                                                       rel=1e-3)
    # a CPU roof keeps y's write-allocate read: 704e6 B / 460.8 GB/s (EPYC 9654) = 1.528 ms
    d = _json(capsys, ["ai", "spmv", "2e6", "54e6", "--dtype", "fp64", "--on",
                       "AMD EPYC 9654", "--json"])
    assert d["bytes"] == SPMV_BYTES
    assert d["work_floor_s"] == pytest.approx(704e6 / 460.8e9, rel=1e-3)


def test_cli_dot_axpy(capsys):
    d = _json(capsys, ["ai", "dot", "1e8", "--dtype", "fp64", "--json"])
    assert (d["op"], d["flop"], d["bytes"], d["ai"]) == ("dot", 2e8, 1.6e9, 0.125)
    d = _json(capsys, ["ai", "axpy", "1e8", "--dtype", "fp64", "--json"])
    assert (d["op"], d["flop"], d["bytes"]) == ("axpy", 2e8, 2.4e9)
    d = _json(capsys, ["ai", "axpy", "1e8", "--dtype", "fp64", "--out-of-place",
                       "--write-allocate", "--json"])
    assert d["bytes"] == 3.2e9 and d["kernels"][0]["meta"]["op"] == "axpy"


@pytest.mark.parametrize("argv, words", [
    (["stencil", "256x256", "--points", "7"], "7 points is no symmetric 2-D star stencil"),
    (["stencil", "256x256x1x3", "--points", "7"], "GRID must be 1 to 3 sizes"),
    (["stencil", "256x256x256", "--points", "7", "--flop-per-point", "nan"],
     "--flop-per-point must be a finite number"),
    (["spmv", "2e6", "54e6", "--x-reuse", "some"], "--x-reuse must be perfect"),
    (["spmv", "10", "1000"], "nnz=1000 exceeds rows"),
    (["dot", "-4"], "n must be a positive whole number"),
])
def test_cli_errors_exit_2_without_traceback(capsys, argv, words):
    assert main(["ai", *argv]) == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err


def test_help_lists_the_hpc_kernels(capsys):
    for op in ("stencil", "spmv", "dot", "axpy"):
        assert main(["ai", op, "--help"]) == 0
        assert f"rooflab ai {op}" in capsys.readouterr().out


def test_cli_stencil_sweeps_are_launches(capsys):
    # 64³ fp64, 1000 sweeps on an H100: 16 B x 62³ x 1000 = 3.81e9 B / 3.35 TB/s = 1.14 ms
    # of work, 1000 launches x the nominal 5 us = 5 ms: the launches bind
    d = _json(capsys, ["ai", "stencil", "64x64x64", "--points", "7", "--dtype", "fp64",
                       "--sweeps", "1000", "--on", "h100", "--json"])
    assert d["calls"] == 1000 and d["kernels"][0]["calls"] == 1000
    assert d["work_floor_s"] == pytest.approx(16 * 62**3 * 1000 / 3.35e12, rel=1e-3)
    assert d["launch_floor_s"] == pytest.approx(5e-3)
    assert d["floor_binding"] == "launch" and d["bound"] == "overhead"
