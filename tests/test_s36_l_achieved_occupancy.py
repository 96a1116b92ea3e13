"""Achieved occupancy of AMD kernels from rocprof's SQ wave-level counters (session 36 L):
rocprof-compute's "Wavefront Occupancy" (0200_system-speed-of-light.yaml, gfx90a/942/950):
    waves = SQ_ACCUM_PREV_HIRES / (GRBM_GUI_ACTIVE / XCDs),  % = 100 x waves / (32 x CUs)
into meta occupancy_achieved, as ncu's sm__warps_active: the -o CSV column, --json, and
the latency advice. Before, rocprof's achieved occupancy was never read (the counters were
ignored; the advice said the theoretical figure alone).

tests/data/rocprof_achieved (its README), by hand on an MI300X (8 XCDs, 304 CUs, 32 waves
per CU = 9728 slots):
  triad           GRBM 13,440,000 / 8 = 1,680,000 cycles; 8,171,520,000 / 1,680,000
                  = 4864 waves -> 4864 / 9728 = 50.0 %
  gemm_mfma_bf16  GRBM 8,400,000 / 8 = 1,050,000; 1,276,800,000 / 1,050,000 = 1216 waves
                  -> 1216 / 9728 = 12.5 %   (theoretical 25 %: VGPRs)
"""

import csv
import json
from pathlib import Path

import pytest

from rooflab.cli.main import main
from rooflab.ingest.rocprof import load_rocprof
from rooflab.model.advice_compute import latency_detail, occupancy_words

FILE = Path(__file__).parent / "data" / "rocprof_achieved" / "run_counter_collection.csv"


def _by_name(kernels):
    return {k.name: k for k in kernels}


def test_rocprofv3_counters_give_each_kernel_its_achieved_occupancy(capsys):
    """The --json meta and the import note carry the hand values above (50.0, 12.5 %)."""
    assert main(["-q", "rocprof", str(FILE), "--on", "mi300x", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    metas = {k["name"]: k["meta"] for k in doc["kernels"]}
    assert metas["triad"]["occupancy_achieved"] == pytest.approx(50.0)
    assert metas["gemm_mfma_bf16"]["occupancy_achieved"] == pytest.approx(12.5)
    assert metas["gemm_mfma_bf16"]["occupancy_theoretical"] == pytest.approx(25.0)
    (note,) = [n for n in doc["import_notes"] if n.startswith("achieved occupancy")]
    assert "(GRBM_GUI_ACTIVE / 8 XCDs) / (32 waves x 304 CUs)" in note
    assert "triad 50.0 %, gemm_mfma_bf16 12.5 %" in note


def test_the_csv_column_and_the_latency_advice_cite_it(tmp_path, capsys):
    """-o k.csv has an occupancy_achieved column (12.5 for the GEMM); the latency advice
    says 'achieved occupancy 12.5 % of a theoretical 25.0 %', as it says ncu's."""
    out = tmp_path / "k.csv"
    assert main(["-q", "rocprof", str(FILE), "--on", "mi300x", "-o", str(out)]) == 0
    capsys.readouterr()
    rows = {r["kernel"]: r for r in csv.DictReader(out.open())}
    assert float(rows["gemm_mfma_bf16"]["occupancy_achieved"]) == pytest.approx(12.5)
    k = _by_name(load_rocprof(str(FILE), device="mi300x").kernels)["gemm_mfma_bf16"]
    assert ("achieved occupancy 12.5 % of a theoretical 25.0 % (limit: VGPRs)"
            in latency_detail(k))
    words = occupancy_words(k.meta)
    # the source after the achieved % says it was measured, not derived by HIP's calculator
    assert "achieved 12.5 %" in words and "achieved measured: rocprof-compute's" in words


def test_without_a_gpu_or_the_busy_cycles_a_note_says_what_to_add(tmp_path):
    """No --on: the XCDs and CUs are unknown, so no figure and a note asking for the GPU;
    without GRBM_GUI_ACTIVE the note asks for that counter."""
    got = load_rocprof(str(FILE))
    assert all("occupancy_achieved" not in k.meta for k in got.kernels)
    assert any("name it (--on mi300x) for each kernel's achieved occupancy" in n
               for n in got.notes)
    cut = tmp_path / "run_counter_collection.csv"
    cut.write_text("".join(line for line in FILE.open() if "GRBM_GUI_ACTIVE" not in line))
    got = load_rocprof(str(cut), device="mi300x")
    assert all("occupancy_achieved" not in k.meta for k in got.kernels)
    assert any("add GRBM_GUI_ACTIVE to --pmc" in n for n in got.notes)


def test_a_rocprof_compute_folder_on_mi355x(tmp_path):
    """pmc_perf.csv's wide columns, in a folder named MI355X_A1 (8 XCDs, 256 CUs = 8192
    slots): GRBM 8,000,000 / 8 = 1,000,000 cycles, 2,048,000,000 / 1,000,000 = 2048
    waves -> 2048 / 8192 = 25.0 %."""
    folder = tmp_path / "MI355X_A1"
    folder.mkdir()
    (folder / "pmc_perf.csv").write_text(
        "Dispatch_ID,GPU_ID,Queue_ID,PID,TID,Grid_Size,Workgroup_Size,LDS_Per_Workgroup,"
        "Scratch_Per_Workitem,Arch_VGPR,Accum_VGPR,SGPR,Wave_Size,Kernel_Name,"
        "Start_Timestamp,End_Timestamp,Correlation_ID,SQ_INSTS_VALU_FMA_F32,"
        "TCC_EA0_RDREQ_sum,TCC_EA0_WRREQ_sum,SQ_ACCUM_PREV_HIRES,GRBM_GUI_ACTIVE\n"
        '2,2,0,100,100,16777216,256,0,0,16,0,16,64,"triad(float*, float*, float*)",'
        "3000000,3800000,3,16777216,16777216,8388608,2048000000,8000000\n")
    (k,) = load_rocprof(str(folder)).kernels
    assert k.meta["occupancy_achieved"] == pytest.approx(25.0)
    assert k.meta["occupancy_theoretical"] == pytest.approx(100.0)
