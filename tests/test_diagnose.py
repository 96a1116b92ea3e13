"""Diagnosis per kernel on constructed kernels, one per bound class, numbers worked by hand.

The toy roof: fp32 vector P = 1e12 FLOP/s, tf32 tensor 4e12, fp16 tensor 8e12 (the top),
DRAM B = 1e11 B/s, launch floor 5 us. Ridge fp32 / DRAM = 1e12 / 1e11 = 10 FLOP/B.
"""

import pytest

from rooflab.model import Ceiling, Kernel, Roof, analyze
from rooflab.model.diagnose import diagnose, diagnosis_to_dict

ROOF = Roof("toy", compute=(Ceiling(1e12, precision="fp32", unit="vector"),
                            Ceiling(4e12, precision="tf32", unit="tensor"),
                            Ceiling(8e12, precision="fp16", unit="tensor")),
            memory=(Ceiling(1e11, level="DRAM"),), overhead_s=5e-6)

# AI = 1e9 / 1e10 = 0.1 < 10: memory side. Attainable = 1e11 x 0.1 = 1e10 FLOP/s.
# Floor = 1e10 B / 1e11 B/s = 0.1 s; measured 0.25 s -> achieved 4e9 = 40 % of roof.
STREAM = Kernel("stream", {"fp32": 1e9}, {"DRAM": 1e10}, seconds=0.25)
# AI = 1e12 / 1e9 = 1000 > 10: compute side. Floor = 1e12 / 1e12 = 1 s; measured 1.25 s.
GEMM = Kernel("gemm", {"fp32": 1e12}, {"DRAM": 1e9}, seconds=1.25, meta={"op": "matmul"})
# 100 calls x 5 us = 0.5 ms launch floor >= 50 % of 1 ms and > work floor
# max(1e3 / 1e12, 1e4 / 1e11) = 1e-7 s: overhead-bound.
TINY = Kernel("tiny", {"fp32": 1e3}, {"DRAM": 1e4}, seconds=1e-3, calls=100)
# Same work as STREAM (floor 0.1 s) but 2 s: 5 % of roof < 10 %, launch floor 5 us: latency.
SLOW = Kernel("slow", {"fp32": 1e9}, {"DRAM": 1e10}, seconds=2.0)


@pytest.fixture(scope="module")
def diags():
    return {d.kernel: d for d in diagnose(analyze(ROOF, [STREAM, GEMM, TINY, SLOW]))}


def test_each_bound_class(diags):
    assert diags["stream"].bound == "memory"
    assert diags["gemm"].bound == "compute"
    assert diags["tiny"].bound == "overhead"
    assert diags["slow"].bound == "latency"


def test_memory_bound_numbers_and_evidence(diags):
    d = diags["stream"]
    assert d.point.ai == pytest.approx(0.1)
    assert d.point.attainable_flop_per_s == pytest.approx(1e10)
    assert d.headroom == pytest.approx(2.5)          # 0.25 s / 0.1 s
    assert d.flagged                                  # 2.5 > 2: flagged (seed 000 §4.4)
    assert d.gain_s == pytest.approx(0.15)            # 0.25 - 0.1
    assert "ridge 10" in d.evidence and "40 %" in d.evidence
    assert "100x left" in d.evidence                  # ridge / AI = 10 / 0.1


@pytest.mark.parametrize(("seconds", "flagged"), [(0.19, False), (0.2, False), (0.21, True)])
def test_flagged_only_past_twice_the_floor(seconds, flagged):
    # seed 000 §4.4: "差距超过 2 倍的 kernel 列为重点优化对象" (more than 2x from the roof).
    # STREAM's work at its 0.1 s floor: 0.19 s is 1.9x, 0.2 s exactly 2x (not more), 0.21 s 2.1x
    k = Kernel("stream", {"fp32": 1e9}, {"DRAM": 1e10}, seconds=seconds)
    (d,) = diagnose(analyze(ROOF, [k]))
    assert d.headroom == pytest.approx(seconds / 0.1)
    assert d.flagged is flagged


def test_compute_bound_not_flagged(diags):
    d = diags["gemm"]
    assert d.headroom == pytest.approx(1.25)          # 1.25 s / 1 s
    assert not d.flagged
    assert "fp32 vector" in d.evidence and "80 %" in d.evidence


def test_overhead_evidence(diags):
    d = diags["tiny"]
    assert "100 call(s)" in d.evidence and "500 us" in d.evidence


def test_latency_evidence(diags):
    d = diags["slow"]
    assert d.headroom == pytest.approx(20.0)          # 2 s / 0.1 s
    assert "5 %" in d.evidence


def test_three_distances(diags):
    below, along, roof = diags["stream"].distances
    assert below.factor == pytest.approx(2.5)         # attainable / achieved = 1e10 / 4e9
    assert along.factor == pytest.approx(100.0)       # ridge / AI = 10 / 0.1
    assert roof.factor == pytest.approx(8.0)          # top 8e12 / fp32 1e12
    assert "batching does not close it" in below.words.lower()
    assert "left of the ridge" in along.words
    assert "8.00x higher" in roof.words
    # Right of the ridge: no slope distance.
    assert diags["gemm"].distances[1].factor == 1.0


def test_priority_weighs_time_and_headroom(diags):
    # total = 0.25 + 1.25 + 0.001 + 2 = 3.501 s; gains at the roof:
    # slow 2 - 0.1 = 1.9, gemm 0.25, stream 0.15, tiny 1e-3 - 1e-7.
    order = sorted(diags.values(), key=lambda d: d.rank)
    assert [d.kernel for d in order] == ["slow", "gemm", "stream", "tiny"]
    assert diags["slow"].priority == pytest.approx(1.9 / 3.501)
    assert diags["stream"].time_share == pytest.approx(0.25 / 3.501)
    # gemm has the larger time share but less headroom than slow.
    assert diags["gemm"].priority == pytest.approx(0.25 / 3.501)


def test_json_shape(diags):
    d = diagnosis_to_dict(diags["stream"])
    assert d["bound"] == "memory" and d["flagged"] is True
    assert [x["name"] for x in d["distances"]] == ["below roof", "along slope", "roof"]
    assert d["advice"] and all("assumption" in a for a in d["advice"])


def test_without_time_is_position_only():
    d = diagnose(analyze(ROOF, [Kernel("counted", {"fp32": 1e9}, {"DRAM": 1e10})]))[0]
    assert d.bound == "memory" and d.headroom is None and d.priority == 0.0
    assert d.distances[0].factor is None


def test_cpu_roof_reads_as_a_cpu():
    from rooflab.model.machine import machine_of

    cpu = Roof("AMD EPYC measured", kind="measured",
               source="rooflab probe (numba kernels, this machine)",
               compute=(Ceiling(118e9, precision="fp64", unit="vector"),
                        Ceiling(236e9, precision="fp32", unit="vector")),
               memory=(Ceiling(23.5e9, level="DRAM"),), overhead_s=421e-9)
    gemm = Kernel("gemm", {"fp64": 2e9}, {"DRAM": 1e7}, seconds=0.08, meta={"op": "matmul"})
    machine = machine_of(cpu, {"kind": "cpu", "flags": ["avx512f", "fma", "avx512_bf16"]})
    d = diagnose(analyze(cpu, [gemm]), machine)[0]
    below, _, roof = d.distances
    words = " ".join(x.words for x in d.distances)
    assert "AVX-512 FMA" in below.words and "occupancy" not in words
    # 421 ns of 80 ms: the launch/dispatch floor is said to be negligible.
    assert "Dispatch overhead is negligible here (421 ns of the 80 ms)" in below.words
    # fp32 236 / fp64 118 = 2x; the CPU's ways up, not tensor cores.
    assert roof.factor == pytest.approx(2.0) and "tensor cores" not in roof.words
    assert "AVX512-BF16" in roof.words
    # Same diagnosis on the toy GPU roof keeps the GPU words.
    assert "occupancy" in diagnose(analyze(ROOF, [GEMM]))[0].distances[0].words


def test_gain_at_roof_keeps_the_launch_floor():
    # 10 launches, 5 us in all, almost no work; the roof's dispatch floor is 181 ns per call.
    # Reaching the roof cannot remove the 10 x 181 ns = 1.81 us of launches.
    from rooflab.model.analysis import analyze
    from rooflab.model.ceiling import Ceiling, Roof
    from rooflab.model.diagnose import diagnose
    from rooflab.model.kernel import Kernel

    roof = Roof("cpu", kind="measured", overhead_s=181e-9,
                compute=(Ceiling(118e9, precision="fp64", unit="vector", provenance="measured"),),
                memory=(Ceiling(40e9, level="DRAM", provenance="measured"),))
    k = Kernel("tiny", flop={"fp64": 1000.0}, bytes={"DRAM": 6400.0}, seconds=5e-6, calls=10)
    (d,) = diagnose(analyze(roof, [k]))
    assert d.point.floor_s == pytest.approx(6400 / 40e9)          # 160 ns of work
    assert d.gain_s == pytest.approx(5e-6 - 10 * 181e-9)            # 3.19 us, not 4.84 us
