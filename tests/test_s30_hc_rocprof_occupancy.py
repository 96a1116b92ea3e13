"""rocprof's kernel resources (workgroup size, VGPRs, AccVGPRs, SGPRs, LDS) through HIP's
occupancy calculator, per kernel, as ncu's Occupancy section is shown for NVIDIA (session 30,
AMD loose ends 3). No shared fixture is a rocprof file: tests/data/rocprof_occupancy holds
three written from the documented headers (its README), one per rocprof layout.

By hand on gfx942 (a CU: 4 SIMDs x 8 waves = 32; 512 VGPRs per SIMD lane, granule 8; 800
SGPRs per SIMD, granule 16; 64 KiB LDS), workgroups of 256 = 4 waves:
  gemm_mfma_bf16  128 + 128 AccVGPRs = 256: 512 // 256 = 2 per SIMD x 4 = 8 waves = 2
                  workgroups -> 8 / 32 = 25 %, VGPRs bind
  lds_transpose   40960 B LDS: 65536 // 40960 = 1 workgroup -> 4 / 32 = 12.5 %, LDS binds
  triad           16 VGPRs, 16 SGPRs, no LDS: 8 workgroups -> 32 / 32 = 100 %
"""

import json
from pathlib import Path

import pytest

from rooflab.cli.main import main
from rooflab.hardware.cdna_limits import cu_limits
from rooflab.ingest.rocprof_occupancy import occupancy_meta, target_gfx
from rooflab.model.advice_compute import latency_detail, occupancy_words
from rooflab.model.kernel import Kernel

DATA = Path(__file__).parent / "data" / "rocprof_occupancy"
EXPECT = {"gemm_mfma_bf16": (25.0, "VGPRs", 2), "lds_transpose": (12.5, "LDS", 1),
          "triad": (100.0, "wave slots (workgroup size), VGPRs, SGPRs", 8)}


def _kernels(capsys, *argv):
    assert main(["-q", "rocprof", *argv, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    return {k["name"]: k["meta"] for k in doc["kernels"]}, doc.get("import_notes", [])


@pytest.mark.parametrize("path", ["results.csv", "run_counter_collection.csv", "MI300X_A1"])
def test_each_layout_gives_each_kernel_its_occupancy(capsys, path):
    metas, notes = _kernels(capsys, str(DATA / path), "--on", "mi300x")
    for name, (pct, limiter, blocks) in EXPECT.items():
        m = metas[name]
        assert m["occupancy_theoretical"] == pytest.approx(pct), name
        assert (m["occupancy_limiter"], m["occupancy_limit_blocks"]) == (limiter, blocks)
        assert (m["wave_size"], m["workgroup_size"]) == (64, 256)
        assert m["occupancy_from"].startswith("derived by HIP's occupancy calculator for gfx942")
    (note,) = [n for n in notes if "theoretical occupancy" in n]
    # longest first: triad 800 us, gemm 500 us, lds_transpose 400 us
    # one decimal, as occupancy_words prints each kernel's (s36 F: '100 %' beside '100.0 %')
    assert ("triad 100.0 % (wave slots (workgroup size), VGPRs, SGPRs), gemm_mfma_bf16 25.0 % "
            "(VGPRs), lds_transpose 12.5 % (LDS)") in note


def test_the_workload_folder_names_the_gpu_and_a_bare_file_asks_for_it(capsys):
    metas, _ = _kernels(capsys, str(DATA / "MI300X_A1"))     # no --on: MI300X_A1 says gfx942
    assert metas["gemm_mfma_bf16"]["occupancy_theoretical"] == pytest.approx(25.0)
    metas, notes = _kernels(capsys, str(DATA / "results.csv"))
    assert all("occupancy_theoretical" not in m for m in metas.values())
    assert any("name it (--on mi300x)" in n for n in notes)
    assert target_gfx("mi250x", []) == "gfx90a" and target_gfx("MI355X", []) == "gfx950"
    assert target_gfx(None, ["workloads/app/MI200/pmc_perf.csv"]) == "gfx90a"
    assert target_gfx("H100", []) is None


def test_lds_binds_later_on_gfx950():
    # MI355X's CU holds 160 KiB: 163840 // 40960 = 4 workgroups = 16 of 32 waves = 50 %;
    # waves, VGPRs (512 // 32 = 16 -> 8 per SIMD x 4 // 4) and SGPRs allow 8: LDS binds
    m = {"Workgroup_Size": 256.0, "Arch_VGPR": 32.0, "Accum_VGPR": 0.0, "SGPR": 32.0,
         "LDS_Per_Workgroup": 40960.0, "Wave_Size": 64.0}
    got = occupancy_meta(m, cu_limits("gfx950"))
    assert (got["occupancy_theoretical"], got["occupancy_limiter"]) == (50.0, "LDS")
    # a wave32 dispatch (an RDNA GPU) is not the CDNA calculator's: nothing said
    assert occupancy_meta({**m, "Wave_Size": 32.0}, cu_limits("gfx950")) == {}
    # no AccVGPR column: the arch count alone, and the meta says so
    arch = occupancy_meta({"wgr": 256.0, "arch_vgpr": 128.0}, cu_limits("gfx942"))
    assert arch["occupancy_theoretical"] == 50.0 and "arch only" in arch["occupancy_from"]


def test_advice_words_count_waves_of_64():
    metas = occupancy_meta({"Workgroup_Size": 256.0, "Arch_VGPR": 128.0, "Accum_VGPR": 128.0,
                            "SGPR": 48.0, "LDS_Per_Workgroup": 16384.0}, cu_limits("gfx942"))
    words = occupancy_words(metas)
    # 2 workgroups x 4 waves = 8 of 32 waves, not 16 of 64 warps
    assert words.startswith("theoretical 25.0 % (8 of 32 waves), limited by VGPRs (derived")
    k = Kernel(name="g", flop={"bf16": 1e9}, bytes={"DRAM": 1e6}, seconds=1e-3, meta=metas)
    assert latency_detail(k) == "theoretical occupancy 25.0 % (limit: VGPRs)"
    # NVIDIA's words stay: 2 blocks of 256 threads = 16 warps of 64 slots at 25 %
    nv = {"occupancy_theoretical": 25.0, "occupancy_limit_blocks": 2, "block": "(256, 1, 1)",
          "occupancy_limiter": "registers"}
    assert occupancy_words(nv) == "theoretical 25.0 % (16 of 64 warps), limited by registers"


def test_the_report_of_the_analysis_and_of_its_csv_cites_it(capsys, tmp_path):
    an, csv = tmp_path / "an.json", tmp_path / "k.csv"
    for out in (an, csv):
        assert main(["-q", "rocprof", str(DATA / "results.csv"), "--on", "mi300x", "-o",
                     str(out)]) == 0
    capsys.readouterr()
    for path in (an, csv):
        assert main(["report", str(path), "--on", "mi300x"]) == 0
        text = " ".join(capsys.readouterr().out.split())
        # gemm_mfma_bf16 is latency-bound (3 % of its roof): its diagnosis names the limit
        assert "the profile says: theoretical occupancy 25.0 % (limit: VGPRs)" in text, path


def test_docs_quote_the_note(capsys):
    assert main(["rocprof", str(DATA / "results.csv"), "--on", "mi300x"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    start = out.index("note: theoretical occupancy")
    note = out[start:out.index("occupancy_*", start) + len("occupancy_*")]
    docs = Path(__file__).resolve().parents[1] / "docs" / "ingest.md"
    assert note in " ".join(docs.read_text("utf-8").split())


def test_mfma_kernels_on_the_mi300x_datasheet_get_amds_measured_rate(capsys):
    # AMD's Table 1: bf16 708 TFLOP/s at 1207 MHz; 708 / 1307.4 = 54 % of the datasheet
    from rooflab.hardware.resolve import load_roof
    from rooflab.model.maf_note import maf_note

    assert main(["rocprof", str(DATA / "results.csv"), "--on", "mi300x"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert ("AMD's own measured max-achievable rate is bf16 708 TFLOP/s (54 % of the "
            "datasheet's 1307, at 1207 MHz)") in out
    assert "fp16 654" not in out           # no fp16 matrix kernel in the file
    roof = load_roof("MI325X")
    gemm = Kernel(name="g", flop={"fp8": 1e12}, bytes={"DRAM": 1e9}, seconds=1e-3,
                  unit="tensor")
    # 1519 / 2614.9 = 58 %
    assert "fp8 1519 TFLOP/s (58 % of the datasheet's 2615" in maf_note(roof, [gemm])
    vector = Kernel(name="v", flop={"fp32": 1e12}, bytes={"DRAM": 1e9}, seconds=1e-3,
                    unit="vector")
    assert maf_note(roof, [vector]) is None                       # no matrix kernel
    assert maf_note(load_roof("H100 SXM"), [gemm]) is None        # no AMD figure
