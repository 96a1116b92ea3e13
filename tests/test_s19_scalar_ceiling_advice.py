"""A CPU kernel at or under the scalar (no SIMD) ceiling is told 'not vectorised?' with the
vector / scalar gain; a GPU roof never says it; the chart draws scalar ceilings under the
vector ones without crowding (s19 f3).

Hand-built roof: fp64 vector 100 GFLOP/s, fp64 scalar 25 GFLOP/s, DRAM 20 GB/s (ridge 5
FLOP/B). A kernel of 20 GFLOP in 1 s over 0.1 GB (AI 200: compute side) reaches 20
GFLOP/s: 80 % of the scalar ceiling; vectorised at the same 80 % of the vector one it
reaches 80 GFLOP/s, 4.00x.
"""

from __future__ import annotations

import pytest

from rooflab.model.advice import advise
from rooflab.model.analysis import analyze
from rooflab.model.ceiling import Ceiling, Roof
from rooflab.model.kernel import Kernel
from rooflab.report.chart import roofline_data
from rooflab.report.chart_ceilings import select_ceilings

PROBE = "rooflab probe (numba kernels, this machine)"


def _roof(name: str, source: str = PROBE, extra=()) -> Roof:
    def c(v, p, u):
        return Ceiling(v, precision=p, unit=u, provenance="measured",
                       samples=(v, 0.99 * v, 0.98 * v))

    return Roof(name=name, kind="measured",
                compute=(c(100e9, "fp64", "vector"), c(25e9, "fp64", "scalar"), *extra),
                memory=(Ceiling(20e9, level="DRAM", provenance="measured"),), source=source)


CPU = _roof("AMD EPYC measured (2 threads)")
GPU = _roof("NVIDIA H100 measured", source="rooflab probe --device cuda")


def _kernel(flop: float = 20e9, unit=None, **meta) -> Kernel:
    return Kernel(name="loop", flop={"fp64": flop}, bytes={"DRAM": 1e8}, seconds=1.0,
                  unit=unit, meta=meta)


def _advice(roof: Roof, k: Kernel):
    p = analyze(roof, [k]).points[0]
    return p, advise(p, roof, k)


def _vectorise(items):
    return [a for a in items if a.action.startswith("not vectorised")]


@pytest.mark.parametrize("unit, shrinks", [(None, "below roof"), ("scalar", "roof")])
def test_a_kernel_under_the_scalar_ceiling_is_told_to_vectorise_for_4x(unit, shrinks):
    p, items = _advice(CPU, _kernel(unit=unit))
    assert p.bound == "compute"
    # unit None is held to the fastest (vector) ceiling, unit "scalar" to the scalar one
    assert p.peak_flop_per_s == (100e9 if unit is None else 25e9)
    [a] = _vectorise(items)
    assert a.speedup == pytest.approx(4.0, rel=1e-12)
    assert a.new_flop_per_s == pytest.approx(80e9, rel=1e-12)
    assert a.shrinks == shrinks
    # the wording of s19 r4 F2 (test_s19_vectorize_advice.py): both causes, "up to"
    assert a.action == ("not vectorised, or one dependency chain (or not on every core)? "
                        "vectorise, or split the chain into independent accumulators: up "
                        "to 4.00x (SIMD; the fp64 vector / scalar ceiling)")
    assert a.detail == ("it reaches 20 GFLOP/s, at or under the measured fp64 scalar ceiling "
                        "(25 GFLOP/s, one lane, no SIMD); the fp64 vector one is 100 GFLOP/s")
    assert "keeping the 80 % of the scalar ceiling it reaches now" in a.assumption
    # the generic 'vectorise with FMA on every core' would repeat it at the same 4x
    assert not [b for b in items if b.action.startswith("vectorise with FMA")]


def test_within_the_scalar_ceilings_spread_it_still_reads_at_it():
    # samples 25, 24.75, 24.5: spread 2 % -> the 5 % floor: 26.25 GFLOP/s is "at" it
    _, items = _advice(CPU, _kernel(26e9))
    [a] = _vectorise(items)
    assert a.speedup == pytest.approx(100 / 26, rel=1e-9)   # capped: 100 % of scalar kept
    _, items = _advice(CPU, _kernel(27e9))
    assert _vectorise(items) == []


def test_kernel_threads_scale_the_scalar_ceiling():
    # 1 of the roof's 2 threads: its scalar ceiling is 12.5 GFLOP/s; at 10 it is at 80 %
    _, items = _advice(CPU, _kernel(10e9, threads=1))
    [a] = _vectorise(items)
    assert a.speedup == pytest.approx(4.0, rel=1e-12)
    assert a.action == ("not vectorised, or one dependency chain? vectorise, or split the "
                        "chain into independent accumulators: up to 4.00x (SIMD; the fp64 "
                        "vector / scalar ceiling)")
    assert "fp64 scalar ceiling for its 1 of the roof's 2 threads (12.5 GFLOP/s" in a.detail
    # a vectorised one-thread loop at 20 GFLOP/s is above its threads' scalar ceiling
    _, items = _advice(CPU, _kernel(20e9, threads=1))
    assert _vectorise(items) == []


def test_a_gpu_roof_never_says_vectorise():
    _, items = _advice(GPU, _kernel())
    assert _vectorise(items) == []
    _, items = _advice(GPU, _kernel(unit="scalar"))
    assert _vectorise(items) == []


def test_a_latency_bound_scalar_loop_gets_it_unwrapped():
    # 5 GFLOP/s: 5 % of the vector roof (under 10 %: latency), 20 % of the scalar one,
    # kept on the vector one: 20 GFLOP/s, 4.00x, not held 'after the latency is fixed'
    p, items = _advice(CPU, _kernel(5e9))
    assert p.bound == "latency"
    [a] = _vectorise(items)
    assert a.speedup == pytest.approx(4.0, rel=1e-12)
    assert "only after the latency is fixed" not in a.assumption


# --- the chart --------------------------------------------------------------------------
def _zen3() -> Roof:
    def c(v, p, u):
        return Ceiling(v, precision=p, unit=u, provenance="measured")

    return Roof(name="EPYC measured (2 threads)", kind="measured", source=PROBE,
                compute=(c(100e9, "fp64", "vector"), c(200e9, "fp32", "vector"),
                         c(25e9, "fp64", "scalar"), c(24.5e9, "fp32", "scalar")),
                memory=(Ceiling(20e9, level="DRAM", provenance="measured"),))


def test_the_chart_draws_one_scalar_ceiling_per_height_without_kernels():
    kept, hidden, notes = select_ceilings([_zen3()])
    assert [c.label for c in kept[0]] == ["fp64 vector", "fp32 vector", "fp64 scalar"]
    # an in-core line at a drawn one's height: left out without a warning on every plot
    assert hidden == [] and notes == []
    every, hidden, _ = select_ceilings([_zen3()], precisions="all")
    assert len(every[0]) == 4 and hidden == []


def test_the_chart_draws_the_kernels_scalar_ceiling_labelled():
    k = Kernel(name="loop", flop={"fp32": 20e9}, bytes={"DRAM": 1e8}, seconds=1.0)
    kept, _, _ = select_ceilings([_zen3()], [k])
    assert [c.label for c in kept[0]] == ["fp64 vector", "fp32 vector", "fp32 scalar"]
    d = roofline_data([_zen3()], [k])
    lines = {ln.label: ln for ln in d.lines if ln.kind == "compute"}
    assert set(lines) == {"fp64 vector 100 GFLOP/s", "fp32 vector 200 GFLOP/s",
                          "fp32 scalar 24.5 GFLOP/s"}
    assert lines["fp32 scalar 24.5 GFLOP/s"].ys == (24.5e9, 24.5e9)


def test_a_roof_without_scalar_ceilings_draws_as_before():
    roof = Roof(name="T", kind="nominal", compute=tuple(
        Ceiling(v, precision=p, unit="vector") for v, p in ((1e12, "fp64"), (2e12, "fp32"))),
        memory=(Ceiling(1e11, level="DRAM"),))
    kept, hidden, notes = select_ceilings([roof])
    assert kept == [roof.compute] and hidden == [] and notes == []


def test_a_scalar_kernel_is_not_told_that_fp32_is_8x():
    # unit "scalar" fp64 at 20 GFLOP/s: fp32 is priced at the fp32 scalar ceiling (24.5
    # GFLOP/s, below fp64 scalar's 25), not the fp32 vector one (200: "8x" was vectorising)
    roof = _zen3()
    k = Kernel(name="loop", flop={"fp64": 20e9}, bytes={"DRAM": 1e8}, seconds=1.0,
               unit="scalar")
    p = analyze(roof, [k]).points[0]
    items = advise(p, roof, k)
    assert [a for a in items if "fp32" in a.action] == []
    [a] = _vectorise(items)
    assert a.speedup == pytest.approx(4.0, rel=1e-12)
