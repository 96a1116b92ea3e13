"""A kernel whose FLOP are split across precisions is held to the time-weighted peak
(seed 000 §3.2: "按实际占比加权"): P = sum FLOP / sum(FLOP_p / P_p).

Hand calculations in the comments: SI units, 2 FLOP per multiply-add.
"""

from __future__ import annotations

import pytest

from rooflab.hardware.catalog import lookup_roof
from rooflab.model import Ceiling, Kernel, Roof, analyze
from rooflab.model.ceiling import kernel_ceiling


def _point(roof, kernel):
    a = analyze(roof, [kernel], levels=("DRAM",))
    (p,) = a.points
    # the catalog's datasheet roof says so in a note of its own (review 18a F8): not the
    # mixed-precision notes these tests are about
    return p, tuple(n for n in a.notes if not n.startswith("judged on datasheet peaks"))


def test_a100_tensor_kernel_with_an_fp32_epilogue():
    # A100: fp16 tensor 312 TFLOP/s, fp32 vector 19.5 TFLOP/s, DRAM 2039 GB/s.
    # 9e9 / 312e12 = 28.846 µs, 1e9 / 19.5e12 = 51.282 µs; 10e9 / 80.128 µs = 124.8 TFLOP/s
    # (exactly: 10e9 / (9e9/312e12 + 1e9/19.5e12) = 124.8e12). Ridge 124.8e12 / 2039e9 =
    # 61.21; AI 10e9 / 1e7 = 1000 >= ridge: compute side. Achieved 10e9 / 1 ms = 10 TFLOP/s
    # = 8.01 % of 124.8 (under 10 %: latency-bound).
    k = Kernel("mixed", {"fp16": 9e9, "fp32": 1e9}, {"DRAM": 1e7}, seconds=1e-3, unit="tensor")
    p, notes = _point(lookup_roof("A100"), k)
    assert p.peak_flop_per_s == pytest.approx(124.8e12, rel=1e-12)
    assert p.ridge == pytest.approx(124.8e12 / 2039e9, rel=1e-12)
    assert p.attainable_flop_per_s == pytest.approx(124.8e12, rel=1e-12)
    assert p.percent_of_roof == pytest.approx(100 * 10e12 / 124.8e12, rel=1e-12)
    assert p.bound == "latency"
    assert p.precision == "fp16" and p.unit == "tensor"   # the dominant part names it
    assert p.binding == "weighted fp16 tensor + fp32 vector"
    words = ("held to a weighted 124.8 TFLOP/s: 90.0 % fp16 tensor (312 TFLOP/s) + "
             "10.0 % fp32 vector (19.5 TFLOP/s)")
    assert notes == (f"mixed: {words}",)
    assert p.note == ""   # a point's note is for stand-ins (sanity reads it as a fallback)


def test_cpu_fp64_with_fp32():
    # A vector CPU whose fp32 rate is twice its fp64 one (one SIMD register holds twice
    # the lanes): 6e9 fp64 / 1e12 = 6 ms, 4e9 fp32 / 2e12 = 2 ms; 10e9 / 8 ms = 1.25 TFLOP/s
    # (a FLOP-weighted arithmetic mean would say 0.6 x 1 + 0.4 x 2 = 1.4: too high).
    roof = Roof("cpu", compute=(Ceiling(1e12, precision="fp64", unit="vector"),
                                Ceiling(2e12, precision="fp32", unit="vector")),
                memory=(Ceiling(100e9, level="DRAM"),))
    k = Kernel("stencil", {"fp64": 6e9, "fp32": 4e9}, {"DRAM": 1e9}, seconds=0.1,
               unit="vector")
    p, notes = _point(roof, k)
    assert p.peak_flop_per_s == pytest.approx(1.25e12, rel=1e-12)
    # AI 10, ridge 1.25e12 / 100e9 = 12.5: memory side, attainable 100e9 x 10 = 1 TFLOP/s
    assert p.ridge == pytest.approx(12.5, rel=1e-12)
    assert p.bound == "memory" and p.binding == "DRAM"
    assert p.attainable_flop_per_s == pytest.approx(1e12, rel=1e-12)
    assert notes == ("stencil: held to a weighted 1.25 TFLOP/s: 60.0 % fp64 vector "
                     "(1 TFLOP/s) + 40.0 % fp32 vector (2 TFLOP/s)",)


def test_single_precision_kernel_unchanged():
    # One precision (or a second one with 0 FLOP): Roof.compute_for's ceiling, as before.
    roof = lookup_roof("A100")
    for flop in ({"fp16": 9e9}, {"fp16": 9e9, "fp32": 0.0}):
        k = Kernel("gemm", flop, {"DRAM": 1e7}, seconds=1e-3, unit="tensor")
        p, notes = _point(roof, k)
        assert p.peak_flop_per_s == 312e12
        assert p.binding == "fp16 tensor" and p.note == "" and notes == ()
        held = kernel_ceiling(roof, k.flop, k.unit, k.precision)
        assert held.ceiling == roof.compute_for("fp16", "tensor")[0]
        assert not held.weighted


def test_stand_in_precision_inside_a_mix():
    # A roof with fp16 tensor 100 TFLOP/s and fp32 vector 10 TFLOP/s, no fp8: the fp8 part
    # stands in on fp16 tensor (PRECISION_FALLBACK fp8 -> fp16) and says so. (This was bf16,
    # whose stand-in is now fp32: review s19 r1 F9; fp8 keeps a tensor stand-in to test.)
    # 8e9 / 100e12 = 80 µs, 2e9 / 10e12 = 200 µs; 10e9 / 280 µs = 35.714 TFLOP/s.
    roof = Roof("r", compute=(Ceiling(100e12, precision="fp16", unit="tensor"),
                              Ceiling(10e12, precision="fp32", unit="vector")),
                memory=(Ceiling(1e12, level="DRAM"),))
    k = Kernel("attn", {"fp8": 8e9, "fp32": 2e9}, {"DRAM": 1e6}, seconds=1e-3, unit="tensor")
    p, notes = _point(roof, k)
    assert p.peak_flop_per_s == pytest.approx(10e9 / 280e-6, rel=1e-12)
    assert p.precision == "fp8"
    assert notes == (
        "attn: roof 'r' has no fp8 ceiling; using fp16 tensor",
        "attn: held to a weighted 35.71 TFLOP/s: 80.0 % fp8 on fp16 tensor (100 TFLOP/s) + "
        "20.0 % fp32 vector (10 TFLOP/s)")
    assert p.note == "roof 'r' has no fp8 ceiling; using fp16 tensor"


def test_bf16_inside_a_mix_stands_in_on_fp32_vector():
    # The same roof and split with bf16: without bf16 math bf16 runs at the fp32 rate, so
    # both parts are on fp32 vector: 8e9 / 10e12 + 2e9 / 10e12 = 1 ms; 10e9 / 1 ms = 10
    # TFLOP/s, one ceiling (no weighted note), the stand-in named (it was fp16 tensor:
    # 35.71 TFLOP/s, 3.6x too high for a machine without bf16 math).
    roof = Roof("r", compute=(Ceiling(100e12, precision="fp16", unit="tensor"),
                              Ceiling(10e12, precision="fp32", unit="vector")),
                memory=(Ceiling(1e12, level="DRAM"),))
    k = Kernel("attn", {"bf16": 8e9, "fp32": 2e9}, {"DRAM": 1e6}, seconds=1e-3, unit="tensor")
    p, notes = _point(roof, k)
    assert p.peak_flop_per_s == pytest.approx(10e12, rel=1e-12)
    assert p.precision == "bf16" and p.binding == "fp32 vector"
    assert p.note.startswith("roof 'r' has no bf16 ceiling; using fp32 vector (")
    assert notes == (f"attn: {p.note}",)


def test_parts_on_one_ceiling_read_as_before():
    # A roof of one fp64 ceiling (a .ncu-rep's fp64-only peaks): the fp32 part stands in on
    # it too, the weighted value is that ceiling's; the fp32 part's stand-in note is kept,
    # as a pure fp32 kernel's is (review 12b H).
    roof = Roof("one", compute=(Ceiling(88e9, precision="fp64", unit="vector"),),
                memory=(Ceiling(6e9, level="DRAM"),))
    k = Kernel("gpp", {"fp64": 1.96e12, "fp32": 4.9e10}, {"DRAM": 1.3e11}, seconds=22.8,
               unit="vector")
    p, notes = _point(roof, k)
    assert p.peak_flop_per_s == 88e9 and p.binding == "fp64 vector"
    fallback = ("roof 'one' has no fp32 ceiling; using fp64 vector (the slowest float "
                "ceiling), so this point's percent of roof is only indicative")
    assert p.note == fallback and notes == (f"gpp: {fallback}",)


def test_tiny_share_counts_exactly_and_never_reads_zero():
    # 0.1 % fp32 on an A100 tensor kernel: 9.99e9 / 312e12 + 1e7 / 19.5e12 = 32.019 µs +
    # 0.513 µs = 32.532 µs; 10e9 / 32.532 µs = 307.4 TFLOP/s (no threshold: exact).
    k = Kernel("gemm", {"fp16": 9.99e9, "fp32": 1e7}, {"DRAM": 1e7}, seconds=1e-3,
               unit="tensor")
    p, notes = _point(lookup_roof("A100"), k)
    assert p.peak_flop_per_s == pytest.approx(10e9 / (9.99e9 / 312e12 + 1e7 / 19.5e12))
    assert notes == ("gemm: held to a weighted 307.4 TFLOP/s: 99.9 % fp16 tensor (312 "
                     "TFLOP/s) + 0.1 % fp32 vector (19.5 TFLOP/s)",)


def test_ncu_gpp_fixture_on_a100(tmp_path):
    # NERSC GPP output.csv: 1.963812e12 fp64 + 4.908272e10 fp32 FLOP, vector pipes only.
    # A100 fp64 vector 9.7, fp32 vector 19.5 TFLOP/s: 0.202455 s + 0.002517 s = 0.204972 s
    # for 2.012895e12 FLOP = 9.82 TFLOP/s (was 9.7: the fp32 2.4 % runs twice as fast).
    from pathlib import Path

    from rooflab.cli.main import main

    gpp = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "ncu" / "nersc-gpp"
    if not (gpp / "output.csv").exists():
        pytest.skip("NERSC GPP fixtures not present")
    out = tmp_path / "a.json"
    assert main(["ncu", str(gpp / "output.csv"), "--on", "A100", "--json", "-o",
                 str(out)]) == 0
    import json

    (pt,) = json.loads(out.read_text())["analysis"]
    assert pt["peak_flop_per_s"] == pytest.approx(
        2012894935052 / (1963812210336 / 9.7e12 + 49082724716 / 19.5e12), rel=1e-12)
    assert pt["binding"] == "weighted fp64 vector + fp32 vector"
