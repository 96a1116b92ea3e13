"""Review s20 x1 F4: the hint for ERT's per-run `sum` typed that run's GFLOPs as the fp64
peak, though at 1 FLOP per element the run is bandwidth-bound (11.03 GFLOPs = its L1
176.44 GB/s x 1/16 FLOP/B). The hint now types PEAK for such a run, and the largest GFLOPs
only where the file holds the sweep's highest FLOPs per element, as ERT's roofline.py does.

The sums are the real ones of ebugger/Empirical-Roofline-Toolkit, Empirical_Roofline_Tool-
1.1.0/Results.p100.01/Run.018 (FLOPS.nnn/MPI.nnnn/OpenMP.nnnn/sum), CONFIG lines cut to the
keys read; that Run's roofline.json has GFLOPs 288.33 (FLOPS 16, 4 x 2)."""

from __future__ import annotations

import re
import shlex

import pytest

from rooflab.cli.main import main
from rooflab.hardware.resolve import load_roofs

CONFIG = ("CONFIG  {'ERT_WORKING_SET_MIN': ['1'], 'ERT_PROCS_THREADS': ['1-8'], "
          "'ERT_FLOPS': ['1,2,4,8,16'], 'ERT_MPI_PROCS': ['1,2,4,8'], "
          "'ERT_OPENMP_THREADS': ['1,2,4,8'], 'ERT_DRIVER': ['driver1'], "
          "'ERT_KERNEL': ['kernel1']}")
# FLOPS.001/MPI.0001/OpenMP.0001/sum
F1_1X1 = f"""\
    11.03 GFLOPs

  1458.88 Weight

   176.44 L1
   102.18 L2
    45.70 L3
    22.90 L4
    18.30 DRAM

META_DATA
ERT_VERSION  1.1.0
TIMESTAMP_DATA  1560424073.46
HOSTNAME  ('kcadmin-UniServer-R5200-G3', [], ['127.0.1.1'])
MPI_PROCS      1
OPENMP_THREADS 1
{CONFIG}
FLOPS          1
TIMESTAMP_DATA  1560424060.31
"""
# FLOPS.016/MPI.0001/OpenMP.0001/sum
F16_1X1 = f"""\
    45.40 GFLOPs

   559.48 Weight

    45.27 L1
    23.71 L2
    18.03 DRAM

META_DATA
ERT_VERSION  1.1.0
TIMESTAMP_DATA  1560424784.36
MPI_PROCS      1
OPENMP_THREADS 1
{CONFIG}
FLOPS          16
"""
# FLOPS.016/MPI.0004/OpenMP.0002/sum: the run roofline.json takes its GFLOPs from
F16_4X2 = f"""\
   288.33 GFLOPs

  2744.40 Weight

   287.73 L1
   221.14 L2
    62.05 DRAM

META_DATA
ERT_VERSION  1.1.0
TIMESTAMP_DATA  1560425074.68
FLOPS          16
{CONFIG}
OPENMP_THREADS 2
MPI_PROCS      4
"""


def run(*args) -> int:
    try:
        return main([str(a) for a in args])
    except SystemExit as e:
        return int(e.code or 0)


def _hint(tmp_path, capsys, text: str) -> tuple[str, list[str]]:
    (tmp_path / "sum").write_text(text)
    k = tmp_path / "k.csv"
    k.write_text("name,flop,bytes,seconds,precision\nk,2e9,3.2e10,0.5,fp64\n")
    assert run("report", k, "--on", tmp_path / "sum") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    m = re.search(r"`rooflab (specs import [^`]+)`", err)
    assert m, err
    return err, shlex.split(m[1])


def _imported(tmp_path, argv: list[str], peak: str | None = None):
    out = tmp_path / "roof.json"
    argv = [peak if a == "PEAK" and peak else a for a in argv[:-1]] + [str(out)]
    assert run(*argv) == 0
    return load_roofs(str(out))[0]


def test_one_flop_run_gives_no_compute_peak(tmp_path, capsys):
    err, argv = _hint(tmp_path, capsys, F1_1X1)
    # the old hint typed --fp64 11.03GFLOP/s: 176.44 GB/s x 1/16 FLOP/B, the L1 roof
    assert "11.03GFLOP/s" not in err and argv[argv.index("--fp64") + 1] == "PEAK"
    assert "not its 11.03 GFLOPs, which is at 1 FLOP per element (the sweep goes to 16)" \
        in err and "bandwidth-bound" in err
    assert "roofline.json" in err and "rooflab specs show NAME" in err
    # a 1 x 1 run's bandwidths are one core's; the sweep ran up to 8
    assert "its bandwidths are of 1 process x 1 thread, and the sweep goes to 8" in err
    # the command with the Run's roofline.json peak typed in builds the roof
    roof = _imported(tmp_path, argv, "288.33GFLOP/s")
    assert roof.find_compute("fp64", "vector").value == pytest.approx(288.33e9)
    assert {c.level: c.value for c in roof.memory} == pytest.approx(
        {"L1": 176.44e9, "L2": 102.18e9, "L3": 45.70e9, "DRAM": 18.30e9})


def test_sweeps_top_run_gives_its_gflops(tmp_path, capsys):
    err, argv = _hint(tmp_path, capsys, F16_1X1)
    assert argv[argv.index("--fp64") + 1] == "45.40GFLOP/s"
    assert "its run at 16 FLOPs per element, the sweep's highest" in err
    assert "its figures are of 1 process x 1 thread" in err   # one core's peak, said
    roof = _imported(tmp_path, argv)
    assert roof.find_compute("fp64", "vector").value == pytest.approx(45.40e9)


def test_concatenated_runs_take_ert_roofline_py_choices(tmp_path, capsys):
    # `cat FLOPS.*/MPI.*/OpenMP.*/sum`, glob order: what Scripts/roofline.py reads
    err, argv = _hint(tmp_path, capsys, F1_1X1 + F16_1X1 + F16_4X2)
    assert "`sum` of 3 runs" in err
    assert "the best of its runs at 1, 16 FLOPs per element" in err
    roof = _imported(tmp_path, argv)
    # GFLOPs: the largest (288.33, as roofline.json); bandwidths: the largest Weight's run
    # (2744.40, the 4 x 2 one), no L3 there; neither is a 1 x 1 figure, so no count note
    assert roof.find_compute("fp64", "vector").value == pytest.approx(288.33e9)
    assert {c.level: c.value for c in roof.memory} == pytest.approx(
        {"L1": 287.73e9, "L2": 221.14e9, "DRAM": 62.05e9})
    assert "process x" not in err and "L4 left out" not in err


def test_low_flops_runs_without_the_sweeps_top_give_no_peak(tmp_path, capsys):
    two = F1_1X1 + F1_1X1.replace("FLOPS          1", "FLOPS          2").replace(
        "11.03 GFLOPs", "21.50 GFLOPs")
    err, argv = _hint(tmp_path, capsys, two)
    assert argv[argv.index("--fp64") + 1] == "PEAK"
    assert "which is at 1, 2 FLOPs per element (the sweep goes to 16)" in err
