"""Tile and wave quantization and the shared-memory fit of `rooflab ai matmul --tile`
(seed 004: "矩阵尺寸不是 tile 大小的整数倍时,边上的 tile 只有一部分在干活"; NVIDIA's Matrix
Multiplication Background User's Guide §3.1/§3.2).

Hand numbers:
- 1000 x 1000 in 128x128 tiles: ceil(1000/128) = 8, 8 x 8 = 64 tiles covering 1024 x 1024:
  useful 1e6 / 1048576 = 0.95367 (95.4 %).
- A100, 108 SMs, 1 tile per SM: 64 / 108 = 0.593 wave -> 1 wave, efficiency 64/108 = 59.3 %.
  4096² in 256x128: 16 x 32 = 512 tiles, 512/108 = 4.74 -> 5 waves, last 512 - 432 = 80,
  efficiency 512/540 = 94.8 %.
- Shared memory, 3 stages of 128x32 + 32x128 fp16: 3·8192·2 = 49152 B = 48 KiB; A100 (cc 8.0,
  164 KiB per SM, 163 per block, 1 KiB reserved per block): 167936 // (49152 + 1024) = 3.
  256x128x64, 4 stages: 4·(16384 + 8192)·2 = 196608 B = 192 KiB > 163 KiB (max 3 stages:
  166912 // 49152); on an H100 (cc 9.0, 227 KiB per block) it fits, 233472 // 197632 = 1.
- fp32 1000³, 128x128 on an A100: compute-bound on the fp32 ceiling (AI 29.4 > ridge 9.56),
  quantized 19.5e12 x 0.95367 x 0.59259 = 11.02 TFLOP/s. In fp16 the tiled AI 58.8 < ridge
  153: memory-bound at 120 TFLOP/s, under 312e12 x 0.95367 x 0.59259 = 176.3 TFLOP/s: the
  quantizations cost compute, not bytes, so it stays 120.
"""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main
from rooflab.hardware import smem
from rooflab.model import tile_quantization as tq

KIB = 1024


def _run(capsys, argv):
    assert main(argv) == 0, capsys.readouterr().err
    return capsys.readouterr().out


def _tq(capsys, argv):
    return json.loads(_run(capsys, [*argv, "--json"]))["tile_quantization"]


# --- the model ---------------------------------------------------------------------------

def test_tile_quantization_by_hand():
    c = tq.tile_count(1000, 1000, 128, 128)
    assert (c.tiles_m, c.tiles_n, c.tiles) == (8, 8, 64)
    assert c.useful_fraction == 1e6 / (1024 * 1024) == pytest.approx(0.95367, abs=1e-5)
    assert tq.tile_count(1000, 1000, 128, 128, batch=3).tiles == 192
    assert tq.tile_count(4096, 4096, 256, 128).useful_fraction == 1.0
    # a decode GEMM: 1 row in a 16-row tile
    assert tq.tile_count(1, 4096, 16, 128).useful_fraction == 1 / 16


def test_wave_quantization_by_hand():
    w = tq.wave_count(64, 108)
    assert (w.full_waves, w.last_wave_tiles) == (1, 64)
    assert w.waves == w.efficiency == pytest.approx(64 / 108) == pytest.approx(0.5926, abs=1e-4)
    w = tq.wave_count(512, 108)
    assert w.waves == pytest.approx(4.7407, abs=1e-4)
    assert (w.full_waves, w.last_wave_tiles) == (5, 80)
    assert w.efficiency == pytest.approx(512 / 540) == pytest.approx(0.9481, abs=1e-4)
    w = tq.wave_count(512, 108, tiles_per_sm=2)   # waves of 216: 3 waves, 512/648
    assert (w.slots, w.full_waves) == (216, 3) and w.efficiency == pytest.approx(512 / 648)
    assert tq.wave_count(432, 108).efficiency == 1.0     # 4 full waves


def test_smem_table_is_the_programming_guides():
    want = {"7.0": (96, 96), "7.5": (64, 64), "8.0": (164, 163), "8.6": (100, 99),
            "8.7": (164, 163), "8.9": (100, 99), "9.0": (228, 227), "10.0": (228, 227),
            "12.0": (100, 99)}
    for cc, (sm, block) in want.items():
        lim = smem.smem_limits(cc)
        assert (lim.per_sm_bytes, lim.per_block_bytes) == (sm * KIB, block * KIB), cc
    assert smem.smem_limits("8.0").reserved_per_block_bytes == KIB
    assert smem.smem_limits("7.0").reserved_per_block_bytes == 0
    for cc in ("7.2", "11.0", "12.1", None):      # no sourced row: skipped, not guessed
        assert smem.smem_limits(cc) is None
    assert [smem.default_stages(cc) for cc in ("7.0", "7.5", "8.0", "9.0", "12.0", None)] \
        == [2, 2, 3, 3, 3, 3]


def test_smem_fit_by_hand():
    a100, h100 = smem.smem_limits("8.0"), smem.smem_limits("9.0")
    f = tq.smem_fit(128, 128, 32, 3, 2, 2, a100)
    assert f.bytes_per_tile == 49152 and f.fits and f.tiles_per_sm == 3
    big = tq.smem_fit(256, 128, 64, 4, 2, 2, a100)
    assert big.bytes_per_tile == 196608 and not big.fits and big.tiles_per_sm == 0
    assert big.max_stages == 3 and "--stages 3 or fewer" in tq.fit_remedy(big)
    on_h100 = tq.smem_fit(256, 128, 64, 4, 2, 2, h100)
    assert on_h100.fits and on_h100.tiles_per_sm == 1
    # Volta reserves nothing per block: 98304 // 32768 = 3
    assert tq.smem_fit(128, 128, 32, 2, 2, 2, smem.smem_limits("7.0")).tiles_per_sm == 3
    # W4A16: B staged at 0.515625 B/weight: 4·(16·64·2 + 64·128·0.515625) = 25088
    assert tq.smem_bytes(16, 128, 64, 4, 2, 0.515625) == 25088
    huge = tq.smem_fit(256, 256, 256, 1, 4, 4, a100)   # one stage is 512 KiB
    assert huge.max_stages == 0 and "even one stage does not fit" in tq.fit_remedy(huge)


def test_quantized_rate_lowers_only_the_compute_ceiling():
    c, w = tq.tile_count(1000, 1000, 128, 128), tq.wave_count(64, 108)
    assert tq.quantized_rate(19.5e12, 19.5e12, c, w) == pytest.approx(11.0202e12, rel=1e-4)
    assert tq.quantized_rate(120e12, 312e12, c, w) == 120e12      # memory binds below
    assert tq.quantized_rate(312e12, 312e12, c, None) == pytest.approx(312e12 * c.useful_fraction)


def test_model_refuses_bad_numbers():
    with pytest.raises(Exception, match="tile BM must be a positive whole number"):
        tq.tile_count(10, 10, 0, 8)
    with pytest.raises(Exception, match="--tiles-per-sm must be a positive"):
        tq.wave_count(10, 108, 0)


# --- the CLI -----------------------------------------------------------------------------

def test_cli_text_a100_1000_cube(capsys):
    out = _run(capsys, ["ai", "matmul", "1000", "1000", "1000", "--tile", "128x128", "--on",
                        "a100"])
    assert ("  tiles       64 (8 x 8 of 128x128): 95.4 % of their area is output (the edge "
            "tiles compute padding)") in out
    assert ("  waves       0.593 wave: 64 tiles on 108 SMs x 1 tile per SM (default) -> 1 "
            "wave; 59.3 % of SM slots busy") in out
    assert ("  on chip     fits: 48 KiB per tile <= 163 KiB per block; 3 tiles per SM by "
            "shared memory (164 KiB per SM, cc 8.0)") in out
    # fp16: memory-bound (AI 58.8 < 153), the quantized compute ceiling 176 is above 120
    assert "  attainable  120 TFLOP/s" in out
    assert ("  quantized   120 TFLOP/s (as attainable): compute ceiling 312 TFLOP/s x 95.4 % "
            "(tiles) x 59.3 % (waves) = 176 TFLOP/s, above the memory roof") in out


def test_cli_json_fp32_compute_bound(capsys):
    t = _tq(capsys, ["ai", "matmul", "1000", "1000", "1000", "--tile", "128x128", "--dtype",
                     "fp32", "--on", "a100"])
    assert t["tile"] == [128, 128, 32] and t["bk_source"] == "default"
    assert (t["tiles"], t["tiles_m"], t["tiles_n"]) == (64, 8, 8)
    assert t["useful_fraction"] == pytest.approx(0.95367431640625)
    assert t["stages"] == 3 and t["stages_source"] == "default"
    assert t["smem_bytes_per_tile"] == 98304                   # 3·8192·4
    w = t["waves"]
    assert (w["sms"], w["sms_source"], w["tiles_per_sm"], w["full_waves"]) == (108, "catalog",
                                                                               1, 1)
    assert w["efficiency"] == pytest.approx(64 / 108)
    c = t["on_chip"]
    assert c["fits"] and c["tiles_per_sm"] == 1 and c["per_block_bytes"] == 163 * KIB
    assert c["compute_capability"] == "8.0" and c["provenance"] == "nominal"
    assert t["quantized_attainable_flop_per_s"] == pytest.approx(11.0202e12, rel=1e-4)
    assert t["quantized_binding"] == "compute" and t["provenance"] == "derived"
    assert "edge tiles" in t["quantized_why"] and "partial wave" in t["quantized_why"]


def test_cli_does_not_fit_on_a100_fits_on_h100(capsys):
    argv = ["ai", "matmul", "4096", "4096", "4096", "--tile", "256x128x64", "--stages", "4",
            "--on"]
    out = _run(capsys, [*argv, "a100"])
    assert ("on chip     does not fit: 192 KiB > 163 KiB per block (cc 8.0): use --stages 3 "
            "or fewer, or a smaller BK/BN") in out
    assert ("waves       4.74 waves: 512 tiles on 108 SMs x 1 tile per SM (default) -> 5 "
            "waves, the last 80 tiles; 94.8 % of SM slots busy") in out
    t = _tq(capsys, [*argv, "h100"])
    assert t["on_chip"]["fits"] and t["on_chip"]["tiles_per_sm"] == 1
    assert t["bk_source"] == "given" and t["stages_source"] == "given"
    assert t["waves"]["sms"] == 132 and t["waves"]["full_waves"] == 4


def test_cli_says_why_a_check_is_skipped(capsys):
    gb200 = _tq(capsys, ["ai", "matmul", "8192", "8192", "8192", "--tile", "128x256x64",
                         "--on", "gb200"])
    assert gb200["waves"] is None and "no SM count" in gb200["waves_skipped"]
    assert gb200["on_chip"]["compute_capability"] == "10.0"
    # tile loss alone where the waves cannot be counted (every tile full here)
    assert gb200["quantized_why"] == "edge tiles compute padding (tile quantization)"
    amd = _tq(capsys, ["ai", "matmul", "4096", "4096", "4096", "--tile", "128x128", "--on",
                       "mi300x"])
    assert amd["on_chip"] is None and "NVIDIA GPUs only" in amd["on_chip_skipped"]
    out = _run(capsys, ["ai", "matmul", "4096", "4096", "4096", "--tile", "128x128", "--on",
                        "EPYC 9654"])
    assert "waves       not counted: AMD EPYC 9654 is a CPU" in out
    out = _run(capsys, ["ai", "matmul", "1000", "1000", "1000", "--tile", "128x128"])
    assert "waves       not counted: add --on GPU for its SM count" in out
    assert ("on chip     48 KiB per tile = 3 stages x (128x32 + 32x128) x 2 B (default BK 32, "
            "3 stages); fit not checked: add --on GPU") in out


def test_cli_profile_host_gives_sms_and_cc(capsys, tmp_path):
    from rooflab.hardware.catalog import lookup_roof
    from rooflab.hardware.profile import MachineProfile, save_profile

    path = tmp_path / "l4.json"
    save_profile(path, MachineProfile(host={"name": "NVIDIA L4", "backend": "cuda",
                                            "multiprocessors": 58, "compute_capability": "8.9"},
                                      nominal=lookup_roof("l4")))
    t = _tq(capsys, ["ai", "matmul", "2048", "2048", "2048", "--tile", "128x128", "--on",
                     str(path)])
    assert t["waves"]["sms"] == 58 and "profile" in t["waves"]["sms_source"]
    assert t["waves"]["full_waves"] == 5        # 256 tiles / 58 = 4.41
    assert t["on_chip"]["per_block_bytes"] == 99 * KIB and t["on_chip"]["tiles_per_sm"] == 2


def test_cli_tiles_per_sm_and_w4a16(capsys):
    t = _tq(capsys, ["ai", "matmul", "1", "4096", "4096", "--weights", "int4", "--tile",
                     "16x128x64", "--stages", "4", "--on", "a10", "--tiles-per-sm", "8"])
    assert t["b_element_bytes"] == 0.515625 and t["smem_bytes_per_tile"] == 25088
    assert t["waves"]["tiles_per_sm"] == 8 and t["waves"]["tiles_per_sm_source"] == "given"
    assert t["waves"]["efficiency"] == pytest.approx(32 / (72 * 8))
    assert t["on_chip"]["tiles_per_sm"] == 3       # 102400 // (25088 + 1024)
    assert t["notes"] == ["--tiles-per-sm 8 is more than shared memory holds (3 of these "
                          "tiles per SM)"]
    # 1 of 16 tile rows used, 32 of 576 slots busy: the A10's fp16 tensor 125 TFLOP/s
    # falls to 125e12 / 16 · 32 / 576 = 0.434 TFLOP/s, below its memory roof (2.26)
    assert t["quantized_attainable_flop_per_s"] == pytest.approx(125e12 / 16 * 32 / 576)
    assert t["quantized_binding"] == "compute"
    assert t["attainable_flop_per_s"] == pytest.approx(2.2567e12, rel=1e-4)


@pytest.mark.parametrize("extra, said", [
    (["--tile", "128x128x0"], "--tile must be BMxBN or BMxBNxBK"),
    (["--tile", "128x128x32x2"], "--tile must be BMxBN or BMxBNxBK"),
    (["--tile", "99999999999999999999x8"], "--tile BM is"),
    (["--tile", "128x128", "--stages", "0"], "--stages must be a positive whole number"),
    (["--tile", "128x128", "--stages", "1e3"], "--stages must be a positive whole number"),
    (["--tile", "128x128", "--stages", "9" * 30], "larger than rooflab takes"),
    (["--tile", "128x128", "--on", "a100", "--tiles-per-sm", "0"],
     "--tiles-per-sm must be a positive whole number"),
    (["--stages", "3"], "add --tile BMxBN[xBK]"),
    (["--tiles-per-sm", "2"], "add --tile BMxBN[xBK]"),
    (["--tile", "128x128", "--tiles-per-sm", "2"], "add --on GPU"),
])
def test_cli_bad_input_is_a_clear_error(capsys, extra, said):
    assert main(["ai", "matmul", "1000", "1000", "1000", *extra]) == 2
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err


def test_gemm_alias_passes_the_new_options(capsys):
    t = _tq(capsys, ["ai", "gemm", "1000", "1000", "1000", "--tile", "128x128", "--stages",
                     "2", "--on", "a100", "--tiles-per-sm", "2"])
    assert t["stages"] == 2 and t["waves"]["tiles_per_sm"] == 2


def test_docs_ai_md_worked_example_is_what_the_cli_prints(capsys):
    from pathlib import Path

    page = (Path(__file__).resolve().parents[1] / "docs" / "ai.md").read_text(encoding="utf-8")
    cmd = "$ rooflab ai matmul 1000 1000 1000 --tile 128x128 --dtype fp32 --on a100\n"
    start = page.index(cmd)
    block = page[start:page.index("```", start)].splitlines()[1:]
    out = _run(capsys, ["ai", "matmul", "1000", "1000", "1000", "--tile", "128x128",
                        "--dtype", "fp32", "--on", "a100"])
    assert block == out.splitlines()
    assert "  quantized   11 TFLOP/s = compute ceiling 19.5 TFLOP/s x 95.4 % (tiles)" in out
    assert "1e6 / 1048576 = 95.4 %" in page and "19.5 x 0.954 x 0.593" in page
