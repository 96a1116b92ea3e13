"""rooflab ai matmul --tile / --out-dtype / --weights (review 12a #11, review 12d K 1-2).

Hand numbers, square 4096 GEMM (FLOP 2·4096³ = 1.374e11):
- --tile BMxBN, fp16: bytes = 2·4096²·(ceil(N/BN) + ceil(M/BM) + 1): 64x64 -> 129 passes,
  AI 4096/129 = 31.75; 256x128 -> 32 + 16 + 1 = 49, AI 4096/49 = 83.59; compulsory 4096/3.
- fp8 in, bf16 out: 16.8 MB + 16.8 MB + 33.6 MB = 67.1 MB, AI 2048 (not fp8's 2731).
- W4A16 (int4 weights, group 128 fp16 scales: 0.5 + 2/128 = 0.515625 B/weight), m = 1:
  A 8192 B, B 4096²·0.515625 = 8 650 752 B, C 8192 B; math fp16 on the A100's 312 TFLOP/s
  tensor ceiling, so 4096³ W4A16 has a 1.374e11 / 312e12 = 441 us floor (not int4's 110 us).
"""

from __future__ import annotations

import pytest
from cli_inproc import json_of as _json

from rooflab.cli.main import main
from rooflab.units import stored_weight_bytes
from rooflab.workloads import ops

N = 4096
FLOP = 2.0 * N**3


def _text(capsys, argv):
    assert main(argv) == 0
    return capsys.readouterr().out


# --- --tile -------------------------------------------------------------------------------

@pytest.mark.parametrize("tile, passes, ai", [((64, 64), 129, 31.7519), ((256, 128), 49, 83.5918),
                                              ((128, 128), 65, 63.0154)])
def test_tile_bytes_and_ai_by_hand(tile, passes, ai):
    op = ops.matmul(N, N, N, "fp16", tile=tile)
    assert op.bytes == 2 * N**2 * passes
    assert op.ai == pytest.approx(N / passes) == pytest.approx(ai, abs=1e-4)
    assert op.flop == FLOP and op.unit == "tensor" and op.precision == "fp16"


def test_tile_splits_a_b_c_with_their_rereads():
    # 256x128: BM 256 -> B read 4096/256 = 16 times; BN 128 -> A read 4096/128 = 32 times
    op = ops.matmul(N, N, N, "fp16", tile=(256, 128))
    assert dict(op.bytes_split) == {"a": 2 * N**2 * 32, "b": 2 * N**2 * 16, "c": 2 * N**2}
    assert "A is read ceil(n/BN) = 32 times" in op.byte_model
    assert "B ceil(m/BM) = 16 times" in op.byte_model
    assert "no L2 reuse between tiles: an upper bound on DRAM bytes" in op.byte_model


def test_tile_rounds_partial_tiles_up_and_caps_at_compulsory():
    # m 100 with BM 64: 2 row tiles; n 100 with BN 64: 2 column tiles
    op = ops.matmul(100, 100, 10, "fp32", tile=(64, 64))
    assert op.bytes == 4 * (100 * 10 * 2 + 10 * 100 * 2 + 100 * 100)
    # a tile as big as the matrix reads everything once: the compulsory bytes
    assert ops.matmul(N, N, N, tile=(N, N)).bytes == ops.matmul(N, N, N).bytes


def test_tile_with_batch_scales_every_operand():
    op = ops.matmul(256, 256, 64, "fp16", batch=3, tile=(128, 128))
    assert op.bytes == 3 * 2 * (256 * 64 * 2 + 64 * 256 * 2 + 256 * 256)


def test_cli_tile_text_prints_both_ais_and_the_model(capsys):
    out = _text(capsys, ["ai", "matmul", "4096", "4096", "4096", "--tile", "64x64"])
    assert "AI          31.8 FLOP/byte  (31.7519)" in out
    assert "compulsory  AI 1365 FLOP/byte, 101 MB" in out
    assert "tiled 64x64" in out and "an upper bound on DRAM bytes" in out
    assert "a 2.15 GB, b 2.15 GB, c 33.6 MB" in out


def test_cli_tile_json_has_tile_and_both_ais(capsys):
    d = _json(capsys, ["ai", "matmul", "4096", "4096", "4096", "--tile", "256x128", "--json"])
    assert d["tile"] == [256, 128] and d["shape"]["tile"] == [256, 128]
    assert d["ai"] == pytest.approx(N / 49)
    assert d["compulsory_ai"] == pytest.approx(N / 3)
    assert d["compulsory_bytes"] == 3 * 2 * N**2
    assert d["bytes"] == 2 * N**2 * 49
    assert d["kernels"][0]["bytes"] == {"DRAM": 2 * N**2 * 49}


def test_tile_on_h100_is_memory_bound():
    # 1.644 GB / 3.35 TB/s = 491 us, above 1.374e11 / 990e12 = 139 us: tiles this small
    # leave the 4096 GEMM memory-bound although its compulsory AI 1365 > ridge 295
    from rooflab.cli.ai import result_dict
    from rooflab.hardware.resolve import load_roofs

    roof = load_roofs("h100")[0]
    d = result_dict(ops.matmul(N, N, N, tile=(256, 128)), roof)
    assert d["roof_side"] == "memory"
    assert d["work_floor_s"] == pytest.approx(2 * N**2 * 49 / 3.35e12)
    assert d["work_floor_s"] == pytest.approx(490.8e-6, rel=1e-3)


@pytest.mark.parametrize("bad", ["64", "0x64", "axb", "64x64x2x2", "-8x8", "x"])
def test_cli_bad_tile_is_a_clear_error(capsys, bad):
    assert main(["ai", "matmul", "64", "64", "64", "--tile", bad]) == 2
    err = capsys.readouterr().err
    assert "--tile must be BMxBN" in err and "128x128" in err and "Traceback" not in err


# --- --out-dtype ----------------------------------------------------------------------------

def test_fp8_gemm_writing_bf16_by_hand(capsys):
    d = _json(capsys, ["ai", "matmul", "4096", "4096", "4096", "--dtype", "fp8",
                       "--out-dtype", "bf16", "--json"])
    assert d["bytes"] == N**2 + N**2 + 2 * N**2 == 67108864
    assert d["ai"] == 2048.0
    assert d["bytes_split"] == {"a": N**2, "b": N**2, "c": 2 * N**2}
    assert d["precision"] == "fp8" and d["unit"] == "tensor"
    assert d["shape"]["out_dtype"] == "bf16" and d["shape"]["dtype"] == "fp8"
    assert "C bf16" in d["byte_model"]
    # without --out-dtype fp8's own C: 50.3 MB, AI 2731 (the old, only answer)
    assert ops.matmul(N, N, N, "fp8").ai == pytest.approx(2730.67, abs=0.01)


def test_out_dtype_text(capsys):
    out = _text(capsys, ["ai", "matmul", "4096", "4096", "4096", "--dtype", "fp8",
                         "--out-dtype", "bf16"])
    assert "bytes       67.1 MB" in out and "a 16.8 MB, b 16.8 MB, c 33.6 MB" in out
    assert "AI          2048 FLOP/byte" in out


def test_bad_out_dtype_is_a_clear_error(capsys):
    assert main(["ai", "matmul", "4", "4", "4", "--out-dtype", "fp12"]) == 2
    assert "unknown dtype 'fp12'" in capsys.readouterr().err


# --- --weights ------------------------------------------------------------------------------

def test_w4a16_gemv_bytes_like_llm():
    op = ops.matmul(1, N, N, "fp16", weights="int4")
    w = N * N * stored_weight_bytes("int4")
    assert stored_weight_bytes("int4") == 0.5 + 2 / 128
    assert dict(op.bytes_split) == {"a": 2 * N, "weights": w, "c": 2 * N}
    assert op.bytes == 8192 + 8650752 + 8192
    assert op.precision == "fp16" and op.unit == "tensor"
    assert op.shape["weight_dtype"] == "int4" and op.shape["group_size"] == 128
    # group 64: 0.5 + 2/64 per weight
    assert ops.matmul(1, N, N, weights="int4", group_size=64).bytes_split["weights"] == \
        N * N * (0.5 + 2 / 64)


def test_w4a16_on_a100_held_to_fp16_tensor(capsys):
    d = _json(capsys, ["ai", "matmul", "1", "4096", "4096", "--weights", "int4",
                       "--on", "a100-80gb", "--json"])
    assert d["compute_ceiling"] == "fp16 tensor"
    assert d["analysis"][0]["peak_flop_per_s"] == 312e12
    # floor from the bytes: 8 667 136 B / 2.039 TB/s = 4.25 us (the FLOP take 0.11 us)
    assert d["work_floor_s"] == pytest.approx(8667136 / 2.039e12, rel=1e-3)
    assert d["roof_side"] == "memory"


def test_w4a16_square_floor_is_fp16_math():
    from rooflab.cli.ai import result_dict
    from rooflab.hardware.resolve import load_roofs

    d = result_dict(ops.matmul(N, N, N, weights="int4"), load_roofs("a100-80gb")[0])
    assert d["work_floor_s"] == pytest.approx(FLOP / 312e12)      # 441 us, not 110 us
    assert d["work_floor_s"] == pytest.approx(440.5e-6, rel=1e-3)


def test_weights_with_tile_rereads_the_quantized_weights():
    op = ops.matmul(N, N, N, "fp16", weights="int4", tile=(128, 128))
    assert op.bytes_split["weights"] == N * N * stored_weight_bytes("int4") * 32
    assert op.bytes_split["a"] == 2 * N * N * 32


def test_bad_group_is_a_clear_error(capsys):
    assert main(["ai", "matmul", "1", "64", "64", "--weights", "int4", "--group", "0"]) == 2
    assert "--group must be a positive whole number" in capsys.readouterr().err


# --- nothing changes without the options ------------------------------------------------------

def test_defaults_unchanged(capsys):
    op = ops.matmul(N, N, N)
    assert op.name == "matmul_4096x4096x4096_fp16"
    assert dict(op.bytes_split) == {"read": 4 * N**2, "write": 2 * N**2}
    assert dict(op.shape) == {"m": N, "n": N, "k": N, "batch": 1, "dtype": "fp16"}
    assert op.byte_model.startswith("compulsory traffic") and "A fp16" not in op.byte_model
    d = _json(capsys, ["ai", "matmul", "4096", "4096", "4096", "--json"])
    # + "generator" (review 14d J: every document names the rooflab and the command that
    # wrote it), the one key added on purpose
    assert set(d) == {"schema_version", "op", "name", "flop", "bytes", "ai", "precision",
                      "unit", "byte_model", "bytes_split", "shape", "kernels", "notes",
                      "generator"}
    out = _text(capsys, ["ai", "matmul", "4096", "4096", "4096"])
    assert "compulsory  AI" not in out and "read 67.1 MB, write 33.6 MB" in out


def test_gemm_alias_takes_the_options(capsys):
    d = _json(capsys, ["ai", "gemm", "4096", "4096", "4096", "--tile", "64x64", "--json"])
    assert d["ai"] == pytest.approx(N / 129) and d["compulsory_ai"] == pytest.approx(N / 3)


def test_docs_ai_md_tile_example_is_what_the_cli_prints(capsys):
    from pathlib import Path

    docs = Path(__file__).resolve().parents[1] / "docs"
    page = (docs / "ai.md").read_text(encoding="utf-8")
    start = page.index("$ rooflab ai matmul 4096 4096 4096 --tile 64x64\n")
    block = page[start:page.index("```", start)].splitlines()[1:]
    out = _text(capsys, ["ai", "matmul", "4096", "4096", "4096", "--tile", "64x64"])
    assert block == out.splitlines()
    assert "--tile 64x64` (AI 31.8) vs `--tile 256x128` (83.6) vs compulsory 1365" in \
        (docs / "seeds.md").read_text(encoding="utf-8")
