"""The pure model: ceilings, roofs, kernels, analyze, and the JSON vocabulary."""

from __future__ import annotations

import math

import pytest

from rooflab.errors import InputError
from rooflab.model import Ceiling, Kernel, Roof, analyze, attainable, ridge, time_floor
from rooflab.model.roof_schema import roof_from_dict, roof_to_dict
from rooflab.model.roofline import cpu_peak_flop_per_s
from rooflab.model.schema import analysis_to_dict, kernel_from_dict, kernel_to_dict


def t4(overhead_s=None) -> Roof:
    # Seed 004: T4 nominal fp16 tensor 65 TFLOP/s, 320 GB/s; fp32 8.1 TFLOP/s.
    return Roof(name="T4", compute=(Ceiling(65e12, precision="fp16", unit="tensor"),
                                    Ceiling(8.1e12, precision="fp32", unit="vector")),
                memory=(Ceiling(320e9, level="DRAM"),), overhead_s=overhead_s)


def test_ridge_points_of_the_seeds():
    assert ridge(65e12, 320e9) == pytest.approx(203.125)          # T4 nominal
    assert ridge(50e12, 270e9) == pytest.approx(185.185, rel=1e-4)  # seed 004 measured example
    assert ridge(312e12, 2039e9) == pytest.approx(153.0, rel=1e-3)  # A100 80 GB fp16 tensor
    assert ridge(300e12, 2e12) == 150                              # seed 000 §2.1 example


def test_attainable_is_min_of_slope_and_roof():
    assert attainable(2.0, 1e15, 1000e9) == 2000e9   # seed 000: 1000 GB/s x 2 = 2000 GFLOP/s
    assert attainable(1e4, 65e12, 320e9) == 65e12
    assert list(attainable([1.0, 1000.0], 65e12, 320e9)) == [320e9, 65e12]


def test_time_floor_and_cpu_peak_formula():
    assert time_floor(2.2e9, 2.2e9, 65e12, 320e9) == pytest.approx(2.2e9 / 320e9)
    # 2 cores x 4.1 GHz x 8 fp64 lanes (512 bit) x 2 FMA pipes x 2 = 262.4 GFLOP/s (FACTS.md)
    assert cpu_peak_flop_per_s(2, 4.1, 512, 64, 2) == pytest.approx(262.4e9)


def test_seed_004_tpot_point_is_54_percent_of_measured_roof():
    roof = Roof(name="T4 measured", kind="measured",
                compute=(Ceiling(50e12, precision="fp16", unit="tensor", provenance="measured"),),
                memory=(Ceiling(270e9, level="DRAM", provenance="measured"),))
    k = Kernel("decode b=1", flop={"fp16": 2 * 1.1e9}, bytes={"DRAM": 2.2e9}, seconds=0.015)
    (p,) = analyze(roof, [k]).points
    assert p.ai == pytest.approx(1.0)
    assert p.achieved_flop_per_s == pytest.approx(146.7e9, rel=1e-3)
    assert p.percent_of_roof == pytest.approx(54.3, abs=0.1)
    assert p.bound == "memory"
    assert p.binding == "DRAM"
    # Three distances (seed 004): 1/0.543 below the slope, 185x along it, the roof itself.
    assert p.below_roof == pytest.approx(1 / 0.5432, rel=1e-3)
    assert p.along_slope == pytest.approx(185.185, rel=1e-4)
    assert p.roof_headroom == 1.0
    assert p.floor_s == pytest.approx(2.2e9 / 270e9)
    assert p.floor_ratio == pytest.approx(0.015 / (2.2e9 / 270e9))


def test_bound_classes():
    roof = t4(overhead_s=5e-6)
    # Large matmul at 90 % of the fp16 roof: compute.
    mm = Kernel("mm", flop={"fp16": 2 * 4096**3}, bytes={"DRAM": 6 * 4096**2},
                seconds=2 * 4096**3 / (0.9 * 65e12), unit="tensor")
    # Elementwise at 80 % of bandwidth: memory.
    add = Kernel("add", flop={"fp16": 1e8}, bytes={"DRAM": 6e8}, seconds=6e8 / (0.8 * 320e9))
    # RMSNorm 2048: 12 KB moves in 0.04 us but a launch costs 5 us: overhead (seed 004).
    norm = Kernel("rmsnorm", flop={"fp16": 8e3}, bytes={"DRAM": 12e3}, seconds=7e-6)
    # Big enough that launch cost is small, but at 2 % of its roof: latency.
    slow = Kernel("slow", flop={"fp16": 1e9}, bytes={"DRAM": 1e9}, seconds=1e9 / (0.02 * 320e9))
    bounds = {p.kernel: p.bound for p in analyze(roof, [mm, add, norm, slow]).points}
    assert bounds == {"mm": "compute", "add": "memory", "rmsnorm": "overhead", "slow": "latency"}


def test_time_share_sums_to_one_and_unmeasured_kernels_are_predicted():
    roof = t4()
    ks = [Kernel("a", flop={"fp16": 1e9}, bytes={"DRAM": 1e9}, seconds=3e-3),
          Kernel("b", flop={"fp16": 1e9}, bytes={"DRAM": 1e9}, seconds=1e-3),
          Kernel("c", flop={"fp16": 1e12}, bytes={"DRAM": 1e9})]
    pts = {p.kernel: p for p in analyze(roof, ks).points}
    assert pts["a"].time_share == pytest.approx(0.75)
    assert pts["b"].time_share == pytest.approx(0.25)
    assert pts["c"].time_share is None and pts["c"].achieved_flop_per_s is None
    assert pts["c"].bound == "compute"  # AI 1000 > ridge 203


def test_missing_precision_falls_back_with_a_note_and_missing_level_is_noted():
    roof = Roof(name="cpu", compute=(Ceiling(2.6e11, precision="fp64", unit="vector"),
                                     Ceiling(5.2e11, precision="fp32", unit="vector")),
                memory=(Ceiling(4e10, level="DRAM"),))
    k = Kernel("half", flop={"fp16": 1e9}, bytes={"DRAM": 1e8, "L1": 1e9}, seconds=1e-2)
    a = analyze(roof, [k])
    (p,) = a.points
    assert p.peak_flop_per_s == 5.2e11 and "no fp16 ceiling" in p.note
    assert any("no L1 ceiling" in n for n in a.notes)


def test_hierarchical_points_and_primary_level():
    roof = Roof(name="gpu", compute=(Ceiling(1e13, precision="fp64", unit="vector"),),
                memory=(Ceiling(1e12, level="DRAM"), Ceiling(4e12, level="L2"),
                        Ceiling(2e13, level="L1")))
    k = Kernel("k", flop={"fp64": 1e10}, bytes={"DRAM": 1e9, "L2": 4e9, "L1": 2e10}, seconds=0.02)
    a = analyze(roof, [k])
    assert {p.level: p.ai for p in a.points} == {"DRAM": 10.0, "L2": 2.5, "L1": 0.5}
    # Attainable: DRAM 1e13 (ridge 10), L2 1e13, L1 1e13 -> all hit the flat roof; the
    # primary point is the lowest attainable, ties resolved by first seen.
    assert len(a.primary()) == 1


def test_bad_values_are_input_errors():
    with pytest.raises(InputError):
        Ceiling(0, precision="fp32")
    with pytest.raises(InputError):
        Ceiling(1e9)  # neither precision nor level
    with pytest.raises(InputError):
        Kernel("k", flop={"fp32": -1})
    with pytest.raises(InputError):
        Kernel("k", seconds=0)
    with pytest.raises(InputError):
        t4().bandwidth("L2")


def test_json_vocabulary_round_trip():
    roof = Roof(name="m", kind="measured",
                compute=(Ceiling(2.5e11, precision="fp64", unit="vector", provenance="measured",
                                 method="fma", samples=(2.4e11, 2.5e11, 2.45e11)),),
                memory=(Ceiling(4.1e10, level="DRAM", provenance="measured",
                                samples=(4.0e10, 4.1e10)),), overhead_s=2e-7)
    d = roof_to_dict(roof)
    assert d["compute"][0]["flop_per_s"] == 2.5e11 and d["compute"][0]["kind"] == "measured"
    assert d["compute"][0]["median"] == 2.45e11
    assert d["compute"][0]["spread"] == pytest.approx(0.1e11 / 2.45e11)
    assert roof_from_dict(d) == roof
    k = Kernel("g", flop={"fp16": 1.37e11}, bytes={"DRAM": 1e8}, seconds=2.7e-3,
               provenance={"flop": "derived", "bytes": "derived", "seconds": "measured"})
    assert kernel_from_dict(kernel_to_dict(k)) == k
    out = analysis_to_dict(analyze(t4(), [k]))
    row = out["analysis"][0]
    assert out["schema_version"] == 2
    assert row["ai"] == pytest.approx(1370.0) and row["bound"] == "compute"
    assert set(row) >= {"kernel", "precision", "level", "ai", "achieved_flop_per_s",
                        "attainable_flop_per_s", "percent_of_roof", "bound", "time_share"}
    assert not math.isnan(row["percent_of_roof"])


def test_vector_work_without_its_own_vector_ceiling_is_held_to_a_wider_vector_one():
    # MI300X-like: AMD lists no fp16 vector rate; fp16 elementwise runs on the vector ALUs at
    # (at least) the fp32 vector rate, never at the fp16 matrix peak 8x higher.
    roof = Roof("R", compute=(Ceiling(1.3074e15, precision="fp16", unit="tensor"),
                              Ceiling(1.634e14, precision="fp32", unit="vector")),
                memory=(Ceiling(5.3e12, level="DRAM"),))
    c, note = roof.compute_for("fp16", "vector")
    assert (c.precision, c.unit, c.value) == ("fp32", "vector", 1.634e14)
    assert "no fp16 vector ceiling; using fp32 vector" in note
    assert roof.compute_for("fp16", "tensor")[0].value == 1.3074e15    # matrix work: tensor
    assert roof.compute_for("fp16")[0].value == 1.3074e15              # any unit: the fastest
    # with no vector ceiling at all, the same precision's other unit is still used (noted)
    only_tensor = Roof("T", compute=(Ceiling(1e15, precision="fp16", unit="tensor"),),
                       memory=(Ceiling(1e12, level="DRAM"),))
    c, note = only_tensor.compute_for("fp16", "vector")
    assert (c.unit, "using fp16 tensor" in note) == ("tensor", True)


def test_a_stand_in_precision_is_sought_on_the_kernels_own_unit_first():
    # Xeon 8480+-like: no fp8 and no fp16 tensor; bf16 on AMX (tensor), fp16 on AVX-512 vector.
    # An fp8 matmul stands in on bf16 AMX, not on fp16 vector (8x slower).
    roof = Roof("X", compute=(Ceiling(1.15e14, precision="bf16", unit="tensor"),
                              Ceiling(1.43e13, precision="fp16", unit="vector")),
                memory=(Ceiling(3e11, level="DRAM"),))
    c, note = roof.compute_for("fp8", "tensor")
    assert (c.precision, c.unit) == ("bf16", "tensor") and "using bf16 tensor" in note
    assert roof.compute_for("fp8", "vector")[0].precision == "fp16"
    assert roof.compute_for("fp8")[0].precision == "fp16"    # any unit: the first stand-in
