"""A point carries the ceilings analyze() judged it by (Point.memory_ceiling and kin), and
the JSON rows name them from the point: before, schema.analysis_to_dict found them again by
re-running the placing rules (model/point_ceilings.py, gone) and kept them where the
figures matched. Values as review s19 r2 F16 had them."""

from __future__ import annotations

from dataclasses import replace

from rooflab import Kernel, analyze, load_roof
from rooflab.model.ceiling import Ceiling, Roof
from rooflab.model.schema import analysis_to_dict, points_to_dicts

# a probed CPU: DRAM 7.68 GB/s measured (STREAM-counted), the real-traffic ceiling 11.35
# GB/s derived beside it; fp64 vector 50 GFLOP/s measured
ROOF = Roof(name="test cpu",
            compute=(Ceiling(5e10, precision="fp64", unit="vector", provenance="measured"),),
            memory=(Ceiling(7.68e9, level="DRAM", provenance="measured"),
                    Ceiling(1.135e10, level="DRAM (real traffic)", provenance="derived")))
COUNTED = Kernel(name="k", flop={"fp64": 1e10}, bytes={"DRAM": 1e7}, seconds=1.0,
                 provenance={"flop": "counted", "bytes": "counted", "seconds": "measured"})
COPY = Kernel(name="copy", flop={"fp64": 0}, bytes={"DRAM": 1e9}, seconds=1.0)


def _ceilings(x):
    get = x.get if isinstance(x, dict) else lambda k: getattr(x, k)
    return tuple(get(k) for k in ("memory_ceiling", "memory_ceiling_kind",
                                  "compute_ceiling", "compute_ceiling_kind"))


def test_analyze_puts_the_judging_ceilings_on_the_point():
    k, copy = analyze(ROOF, [COUNTED, COPY]).points
    # counter bytes are real traffic: judged by 11.35 GB/s, the derived ceiling
    assert k.bytes_per_s == 1.135e10
    assert _ceilings(k) == ("DRAM (real traffic)", "derived", "fp64 vector", "measured")
    # hand-counted bytes: the STREAM-counted 7.68 GB/s; the point keeps its compute ceiling
    # (its ridge is of it), the JSON writes none for a kernel without FLOP
    assert copy.bytes_per_s == 7.68e9
    assert _ceilings(copy) == ("DRAM", "measured", "fp64 vector", "measured")


def test_the_json_rows_read_the_ceilings_off_the_points():
    a = analysis_to_dict(analyze(ROOF, [COUNTED, COPY]))
    k, copy = a["analysis"]
    assert _ceilings(k) == ("DRAM (real traffic)", "derived", "fp64 vector", "measured")
    assert _ceilings(copy) == ("DRAM", "measured", None, None)
    # the row says what the point says, not what the rules would find again
    p = replace(analyze(ROOF, [COUNTED]).points[0], memory_ceiling="DRAM", compute_ceiling="x")
    (row,) = points_to_dicts([p])
    assert (row["memory_ceiling"], row["compute_ceiling"]) == ("DRAM", "x")


def test_a_mixed_kernels_weighted_ceiling_and_a_point_built_by_hand():
    # A100: 9e9 fp16 tensor + 1e9 fp32 FLOP are held to the weighted ceiling (derived)
    mixed = Kernel(name="mixed", flop={"fp16": 9e9, "fp32": 1e9}, unit="tensor",
                   bytes={"DRAM": 1e8}, seconds=0.002)
    (p,) = analyze(load_roof("A100"), [mixed]).points
    assert _ceilings(p) == ("DRAM", "nominal", "weighted fp16 tensor + fp32 vector", "derived")
    assert p.binding == p.compute_ceiling   # AI 100 > ridge: the compute side binds
    # a point built outside analyze names no ceiling: its row has none
    (row,) = points_to_dicts([replace(p, memory_ceiling="")])
    assert "memory_ceiling" not in row and "compute_ceiling" not in row
