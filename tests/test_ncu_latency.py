"""A latency-bound kernel's diagnosis cites what the profile recorded: the grid against
the SMs, achieved and theoretical occupancy with its limiter, pipes (review 14d C)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_ncu_hierarchy import output5_with

from rooflab.cli.main import main
from rooflab.ingest.ncu_files import load_ncu
from rooflab.ingest.ncu_launch import launch_details
from rooflab.ingest.ncu_metrics import is_used
from rooflab.model.advice_compute import grid_words, latency_detail
from rooflab.model.kernel import Kernel

GPP = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "ncu" / "nersc-gpp"


@pytest.fixture
def rep() -> Path:
    if not (GPP / "output5.ncu-rep").is_file():
        pytest.skip(f"NERSC GPP recordings absent at {GPP} (CI lays ../shared beside the clone)")
    pytest.importorskip("ncu_report")
    return GPP / "output5.ncu-rep"


def test_report_meta_holds_occupancy_and_shape(rep):
    kernels = {k.name: k for k in load_ncu([str(rep)]).kernels}
    red = kernels["sigma_gpp_gpu_34_gpu__red"].meta
    # launch__grid_dim_* / block_dim_*, device__attribute_multiprocessor_count = 24
    assert (red["grid"], red["block"], red["sms"]) == ("(2, 1, 1)", "(256, 1, 1)", 24)
    assert red["occupancy_achieved"] == pytest.approx(16.5438, rel=1e-4)
    assert red["occupancy_theoretical"] == 100.0
    # limits in blocks per SM: blocks 24, registers 10, shared memory 12, warps 6 (8
    # warps a block, 48 a SM): the block size limits
    assert red["occupancy_limiter"] == "warps per SM (block size)"
    main_k = kernels["sigma_gpp_gpu_34"].meta
    assert main_k["occupancy_limiter"] == "registers"      # 5 blocks: 92 registers/thread
    assert main_k["occupancy_theoretical"] == pytest.approx(41.667, rel=1e-4)  # 20/48 warps


def test_latency_position_cites_grid_and_occupancy(rep, capsys):
    assert main(["report", str(rep)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    # 2 blocks on 24 SMs: 2 / 24 = 8 %
    assert "grid of 2 blocks x 256 threads on 24 SMs: 8.3 % of SMs get a block" in out
    # occupancy in its one style, one decimal (model.occupancy_words.occupancy_pct, s36 D)
    assert "achieved occupancy 16.5 % of a theoretical 100.0 % (limit: warps per SM (block " \
        "size))" in out
    # 2 blocks < 24 SMs: the advice names the grid, not "expose more parallelism"
    assert "-> launch at least one block per SM (smaller blocks, or split the work)" in out


def test_ncu_table_notes_small_grid(capsys):
    path = GPP / "output1.ncu-rep"
    if not path.is_file():
        pytest.skip(f"NERSC GPP recordings absent at {GPP}")
    pytest.importorskip("ncu_report")
    assert main(["ncu", str(path)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    # 4 / 24 = 16.7 %
    assert ("sigma_gpp_gpu_34_gpu__red: grid of 4 blocks x 256 threads on 24 SMs: 16.7 % "
            "of SMs get a block") in out
    # the main kernel's 65535 blocks are 546 waves: no note for it
    assert "sigma_gpp_gpu_34: grid" not in out


def test_csv_occupancy_rows_are_read_not_warned(tmp_path, capsys):
    path = output5_with(tmp_path, "occ.csv", (
        ("sm__warps_active.avg.pct_of_peak_sustained_active", "%", "12.5"),
        ("sm__maximum_warps_per_active_cycle_pct", "%", "50"),
        ("launch__occupancy_limit_registers", "block", "4"),
        ("launch__occupancy_limit_warps", "block", "8"),
        ("sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active", "%", "8.2"),
        ("sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active", "%", "71")))
    (k,) = load_ncu([str(path)]).kernels
    assert k.meta["occupancy_achieved"] == 12.5
    assert k.meta["occupancy_theoretical"] == 50.0
    assert k.meta["occupancy_limiter"] == "registers"
    assert k.meta["pipe_busy"] == {"lsu": 71.0, "fma": 8.2}
    assert main(["ncu", str(path), "--on", "L4"]) == 0
    assert "is not used by rooflab" not in capsys.readouterr().err


def test_grid_words_hand_checked():
    def k(**meta):
        return Kernel(name="k", flop={"fp32": 1e9}, bytes={"DRAM": 1e8}, seconds=0.01,
                      meta=meta)

    assert grid_words({"grid": "(20, 1, 1)", "block": "(128, 1, 1)", "sms": 132}) == \
        "grid of 20 blocks x 128 threads on 132 SMs: 15.2 % of SMs get a block"
    # 150 blocks, 132 SMs x 1 block each: 1.14 waves
    assert grid_words({"grid": "(150, 1, 1)", "sms": 132}) == (
        "grid of 150 blocks on 132 SMs: 1.14 waves of 132 blocks (1 per SM): the last "
        "wave leaves SMs idle")
    assert grid_words({"grid": "(65535, 1, 1)", "sms": 24}) == ""
    assert latency_detail(k(occupancy_achieved=12.0, occupancy_theoretical=50.0,
                            occupancy_limiter="registers",
                            pipe_busy={"lsu": 71.0, "fma": 8.0})) == (
        "achieved occupancy 12.0 % of a theoretical 50.0 % (limit: registers); pipes busy: "
        "lsu 71 %, fma 8 %")
    assert latency_detail(k()) == ""


def test_latency_metrics_are_used():
    for m in ("sm__warps_active.avg.pct_of_peak_sustained_active",
              "sm__maximum_warps_per_active_cycle_pct", "launch__occupancy_limit_shared_mem",
              "sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active",
              "device__attribute_multiprocessor_count", "launch__grid_dim_x"):
        assert is_used(m), m
    assert launch_details({"launch__occupancy_limit_registers": 5.0,
                           "launch__occupancy_limit_warps": 5.0})["occupancy_limiter"] == \
        "registers, warps per SM (block size)"
