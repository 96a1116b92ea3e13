"""Review s18 r4 (Nsight Compute recordings checked by hand): the advice and bound words
around numbers that were right.

F1: a latency-bound kernel's "keep the working set in L2" used an assumed 50 MB, not the
device's L2 (the RTX 4060 Laptop GPU's 32 MiB = 33.6 MB). F2: `--level L2` relabelled a
"not binding (DRAM binds)" point as latency. F3: the 4-block reduction on 24 SMs (17 % of
SMs get a block) was told to coalesce first, and `report` never named the grid. F6: `--on`
another catalog GPU of the same compute capability gave no warning. F4: on the envelope
roof (no --on) a single kernel was "compute" by a tie, and the latest step had "1.04x left
to the roof".
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import gpp_recording

from rooflab.cli.main import main
from rooflab.model import Ceiling, Kernel, Roof, analyze
from rooflab.model.advice import advise
from rooflab.model.machine import Machine

MIB = 2**20
L2_ADVICE = "keep the working set in L2 (layout, kernel order, persistence)"
GRID_LEVER = "launch at least one block per SM (smaller blocks, or split the work)"


def _gpp(name: str) -> Path:
    return gpp_recording(name)


def _flat(text: str) -> str:
    return " ".join(text.split())


# A GPU roof with an L2 ceiling faster than DRAM (what _keep_in_l2 needs).
GPU = Roof("test GPU", "nominal", compute=(Ceiling(10e12, precision="fp32"),),
           memory=(Ceiling(300e9, level="DRAM"), Ceiling(2e12, level="L2")))


def _latency_point(mb: float):
    # AI 4e6 / 10e6 = 0.4: attainable 0.4 x 300 GB/s = 120 GFLOP/s; 4e6 FLOP in 1 ms =
    # 4 GFLOP/s = 3.3 % of it (< 10 %): latency-bound, on the memory side
    k = Kernel("lat", {"fp32": 4e6}, {"DRAM": mb * 1e6}, seconds=1e-3)
    (p,) = analyze(GPU, [k]).points
    assert p.bound == "latency" and p.memory_bound_side
    return p, k


def test_f1_latency_l2_advice_uses_the_machines_l2():
    p, k = _latency_point(10)
    # 10 MB per call does not fit a 4 MiB L2 (a T4's): no "keep it in L2" lever
    small = advise(p, GPU, k, machine=Machine("gpu", caches={"L2": 4 * MIB}))
    assert L2_ADVICE not in [a.action for a in small]
    # it fits 48 MiB (50.3 MB), and the advice names that size, not an assumed 50 MB
    big = {a.action: a for a in advise(p, GPU, k, machine=Machine("gpu", caches={"L2": 48 * MIB}))}
    said = big[L2_ADVICE].assumption
    assert "fits in L2 (50.3 MB)" in said and "assumed" not in said


def test_f1_k40_on_the_rtx_4060_laptop_report(tmp_path, capsys):
    rep = _gpp("output1.ncu-rep")
    k40 = tmp_path / "k40.csv"
    k40.write_text("name,flop,bytes,seconds\nlat40,4000000,40000000,0.003\n"
                   "mem40,4000000,40000000,0.0005\n")
    assert main(["report", str(k40), "--on", str(rep)]) == 0
    out = _flat(capsys.readouterr().out)
    assert "lat40 latency-bound" in out
    # 40 MB does not fit the 32 MiB (33.6 MB) L2 the report records
    assert "keep the working set in L2" not in out and "50 MB, assumed" not in out


def test_f1_output5_reduction_names_33_6_mb(capsys):
    assert main(["report", str(_gpp("output5.ncu-rep"))]) == 0
    out = _flat(capsys.readouterr().out)
    assert "fits in L2 (33.6 MB)" in out and "50 MB" not in out


def test_f2_level_l2_keeps_not_binding(tmp_path, capsys):
    rep = str(_gpp("output1.ncu-rep"))
    assert main(["ncu", rep, "--level", "L2"]) == 0
    rows = [r for r in capsys.readouterr().out.splitlines() if "gpu__red" in r and "│" in r]
    # its DRAM point (16 %) binds: the L2 row (3 %) is not "latency"
    assert len(rows) == 1 and "L2" in rows[0] and "not binding (DRAM binds)" in rows[0]
    assert "latency" not in rows[0] and "DRAM " not in rows[0].split("L2")[0]
    # (--level L1 is the CARM reading since review s26 v2 F4: test_s26_level_more.py)
    assert main(["ncu", rep, "--level", "L2", "--json"]) == 0
    pts = json.loads(capsys.readouterr().out)["analysis"]
    assert {p["level"] for p in pts} == {"L2"}
    red = next(p for p in pts if p["kernel"] == "sigma_gpp_gpu_34_gpu__red")
    assert (red["bound"], red["binding_level"]) == ("not binding", "DRAM")
    out_csv = tmp_path / "l2.csv"
    assert main(["ncu", rep, "--level", "L2", "-o", str(out_csv)]) == 0
    # the CSV keeps every level's bytes (for read-back); the L2 row is the one judged
    l2 = [x for x in out_csv.read_text().splitlines() if ",L2," in x]
    assert len(l2) == 2
    assert "not binding (DRAM binds)" in next(x for x in l2 if "gpu__red" in x)


def _red(meta_grid: str) -> tuple:
    # AI 0.125; at 16 % of DRAM (memory-bound, above the 10 % latency line)
    k = Kernel("red", {"fp64": 5e5}, {"DRAM": 4e6}, seconds=4e6 / (0.16 * 300e9),
               meta={"grid": meta_grid, "block": "(256, 1, 1)", "sms": 24})
    (p,) = analyze(GPU, [k]).points
    # s21 m1 (r3 F6): fewer blocks than half the SMs is latency whatever the % of roof
    assert p.bound == ("latency" if meta_grid == "(4, 1, 1)" else "memory")
    return p, k


def test_f3_idle_sms_lead_a_memory_bound_kernel():
    p, k = _red("(4, 1, 1)")
    a = advise(p, GPU, k, machine=Machine("gpu"))
    assert a[0].action == GRID_LEVER
    assert "grid of 4 blocks x 256 threads on 24 SMs: 16.7 % of SMs get a block" in a[0].detail
    # the 80 %-of-roof model: 0.8 / 0.16 = 5x; it leads even the faster L2 lever (2 TB/s
    # here): the idle SMs reach neither (a latency-bound kernel gets no coalescing lever)
    assert a[0].speedup == pytest.approx(5.0, rel=1e-6)
    assert not any(x.action.startswith("coalesce") for x in a)
    # a grid of 48 blocks on 24 SMs gives every SM a block: no grid lever
    p, k = _red("(48, 1, 1)")
    assert GRID_LEVER not in [x.action for x in advise(p, GPU, k, machine=Machine("gpu"))]


def test_f3_report_names_the_grid_of_the_memory_bound_reduction(capsys):
    rep = str(_gpp("output1.ncu-rep"))
    assert main(["report", rep]) == 0
    out = capsys.readouterr().out
    row = next(r for r in out.splitlines() if "gpu__red" in r and "│" in r)
    assert "latency" in row and "launch at least one block per SM" in row and "4.95x" in row
    assert "grid of 4 blocks x 256 threads on 24 SMs: 16.7 % of SMs get a block" in _flat(out)
    assert main(["report", rep, "--json"]) == 0
    assert "grid of 4 blocks x 256 threads on 24 SMs" in capsys.readouterr().out


def test_f6_on_another_gpu_of_the_same_capability_warns(capsys):
    rep = str(_gpp("output1.ncu-rep"))
    assert main(["ncu", rep, "--on", "L4"]) == 0
    out = _flat(capsys.readouterr().out)
    assert ("warning: the kernels were profiled on NVIDIA GeForce RTX 4060 Laptop GPU, but the "
            "roof is NVIDIA L4's") in out
    assert main(["ncu", rep, "--on", "L4", "--json"]) == 0
    assert "warning: the kernels were profiled on NVIDIA GeForce RTX 4060 Laptop GPU" in \
        capsys.readouterr().err
    assert main(["ncu", rep, "--on", "RTX 4060 Laptop GPU"]) == 0
    assert "warning: the kernels were profiled on" not in capsys.readouterr().out


def test_f4_one_csv_without_on_is_not_classified_by_a_tie(capsys):
    path = str(_gpp("output3.csv"))
    assert main(["ncu", path]) == 0
    rows = [r for r in capsys.readouterr().out.splitlines() if "GFLOP/s" in r]
    # one kernel sets every ceiling of its own envelope: 100 % at the ridge, no class
    assert len(rows) == 3 and all("no roof (give --on)" in r for r in rows)
    assert not any(w in r for r in rows for w in ("compute", "memory"))
    assert main(["report", path]) == 0
    out = _flat(capsys.readouterr().out)
    assert "sigma_gpp_gpu_34 no roof to judge against; give --on" in out
    assert "compute-bound" not in out


def test_f4_steps_without_on_say_relative_and_no_gap_to_the_roof(capsys):
    files = [str(_gpp(f"output{n}.csv")) for n in ("", 1, 2, 3, 4, 5, 6, 7)]
    assert main(["report", *files]) == 0
    out = _flat(capsys.readouterr().out)
    # output7: 85.73 / 88.92 GFLOP/s (output5's best) = 96 % of the best here
    assert "Latest step (output7): 96 % of the best these kernels reached" in out
    assert "left to the roof" not in out
    assert "compute-bound relative to the best here (no roof: give --on)" in out
    # on the GPU's own roof the classes stand (output3 at 56 % of fp64: compute)
    assert main(["ncu", files[3], "--on", str(_gpp("output1.ncu-rep"))]) == 0
    dram = next(r for r in capsys.readouterr().out.splitlines() if "DRAM" in r and "%" in r)
    assert "56 %" in dram and "compute" in dram and "relative" not in dram
