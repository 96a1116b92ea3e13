"""Session 22 f4, review r4 F7 and F8.

F7: the notebook display of a kernel without FLOP (a copy moving 1 GB in 12.5 ms on a
100 GB/s DRAM roof: 80 GB/s = 80 %) read '0 FLOP/s of 0 FLOP/s  -' and its Diagnosis
'floor 10 ms, attainable 0 FLOP/s', worded as if untimed; every CLI format says 80 GB/s.

F8: kernels of several profiler files (separate runs, meta step_index) take their time
share of their own file; their gain's share was of every file's summed time, so a report
printed 'time share 100.0 %' beside 'gain 0.7 %' (1.29 s of 174 s, where its own run was
30.5 s: 4.2 %).
"""

from __future__ import annotations

import pytest

from rooflab.model.analysis import analyze
from rooflab.model.ceiling import Ceiling, Roof
from rooflab.model.diagnose import diagnose, diagnosis_to_dict
from rooflab.model.display import analysis_text
from rooflab.model.display_results import diagnosis_text
from rooflab.model.kernel import Kernel

ROOF = Roof(name="toy", compute=(Ceiling(1e12, precision="fp64"),),
            memory=(Ceiling(1e11, level="DRAM"),))
COPY = Kernel(name="copy0flop", flop={}, bytes={"DRAM": 1e9}, seconds=1e9 / 0.8e11)


def test_notebook_shows_a_copys_bandwidth():
    a = analyze(ROOF, [COPY])
    line = analysis_text(a).splitlines()[1]
    # old: 'copy0flop  DRAM  12.5 ms  AI 0  0 FLOP/s of 0 FLOP/s  -  memory-bound (DRAM)'
    assert line == ("  copy0flop  DRAM  12.5 ms  AI 0  80 GB/s = 80 % of DRAM bandwidth "
                    "100 GB/s  memory-bound (DRAM)")
    (d,) = diagnose(a)
    # old: "memory-bound (DRAM), floor 10 ms, attainable 0 FLOP/s"
    assert diagnosis_text(d).splitlines()[0] == (
        "Diagnosis #1 'copy0flop': memory-bound (DRAM), 80 GB/s = 80 % of DRAM bandwidth "
        "100 GB/s")
    # old: '...attainable 0 FLOP/s; achieved 0 FLOP/s = - of roof; moves 80 GB/s ...'
    assert d.evidence == ("AI 0 (no FLOP: pure data movement): held by DRAM at 100 GB/s; "
                          "moves 80 GB/s = 80 % of DRAM bandwidth")


def _run(name: str, step: int, seconds: float) -> Kernel:
    # AI 100 (compute side): 1e10 FLOP on a 1 TFLOP/s roof; its floor is 10 ms
    return Kernel(name=name, flop={"fp64": 1e10}, bytes={"DRAM": 1e8},
                  seconds=seconds, meta={"step_index": step})


def test_gain_share_is_of_the_kernels_own_file():
    # run 0: one kernel of 40 ms (floor 10 ms: gain 30 ms); run 1: one of 20 ms (gain 10 ms)
    a = analyze(ROOF, [_run("k", 0, 0.04), _run("k", 1, 0.02)])
    ds = diagnose(a)
    assert [d.time_share for d in ds] == [1.0, 1.0]
    # old: 30 / 60 = 50 % and 10 / 60 = 17 % of the two runs' summed 60 ms
    assert [d.priority for d in ds] == [pytest.approx(0.75), pytest.approx(0.5)]
    assert all(d.per_file for d in ds)
    assert "gain at roof 30 ms (75.0 % of its own file)" in diagnosis_text(ds[0])
    assert "30 ms saved (75.0 % of its own file)" in ds[0].gain_words
    assert diagnosis_to_dict(ds[0])["priority_of"] == "file"


def test_one_file_keeps_the_share_of_the_total():
    a = analyze(ROOF, [_run("a", 0, 0.04), _run("b", 0, 0.02)])
    ds = diagnose(a)
    assert [d.priority for d in ds] == [pytest.approx(0.5), pytest.approx(10 / 60)]
    assert not any(d.per_file for d in ds)
    assert diagnosis_to_dict(ds[0])["priority_of"] == "total"
    assert "(50.0 % of the total)" in diagnosis_text(ds[0])
