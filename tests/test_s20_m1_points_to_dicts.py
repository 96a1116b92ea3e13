"""schema.points_to_dicts takes the points alone: the ceilings a row was judged by travel on
the point (Point.memory_ceiling, set by analyze_point), so its roof and kernels arguments,
no longer read, are gone (callers: schema.analysis_to_dict, workloads/llm/analysis.py)."""

from __future__ import annotations

import inspect

from rooflab.model.analysis import analyze
from rooflab.model.ceiling import Ceiling, Roof
from rooflab.model.kernel import Kernel
from rooflab.model.schema import analysis_to_dict, points_to_dicts


def test_points_alone():
    assert list(inspect.signature(points_to_dicts).parameters) == ["points"]


def test_a_row_names_the_ceilings_it_was_judged_by():
    # 1 GFLOP fp64 over 1 GB of DRAM in 1 s on a 10 GFLOP/s, 2 GB/s roof: AI 1, ridge 5,
    # memory-bound at 1 GB/s = 50 % of the DRAM roof
    roof = Roof(name="r", kind="nominal",
                compute=(Ceiling(value=1e10, precision="fp64", unit="vector",
                                 provenance="nominal"),),
                memory=(Ceiling(value=2e9, level="DRAM", provenance="nominal"),))
    a = analyze(roof, [Kernel(name="k", flop={"fp64": 1e9}, bytes={"DRAM": 1e9},
                              seconds=1.0)])
    (row,) = points_to_dicts(a.points)
    assert row == analysis_to_dict(a)["analysis"][0]
    assert (row["bound"], row["memory_ceiling"], row["compute_ceiling"]) == (
        "memory", "DRAM", "fp64 vector")
    assert row["percent_of_roof"] == 50.0
