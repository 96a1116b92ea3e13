"""Session 29 gD: printed-number leftovers of review s28 R2 (F14, F15).

- fmt_ai takes its side of the 1e9 exponent line after rounding (999999999.7 FLOP/B is
  '1e+09', as si/plain/fmt_factor print it, not the 10-digit '1000000000'), and
  sides.ai_apart, which the Position lines use, prints a huge AI as fmt_ai does: a kernel
  of 1e18 FLOP over 300 B (bytes miscounted) read 'AI 3333333333333334 FLOP/B >= ridge 20'.
- diagnose's "it runs Nx faster than its roof allows" is a factor in three figures
  (fmt_factor: '10x', not '10.00x'), with the digits that keep it past the 1.05 tolerance.
- the precision cap's derived-ceiling method writes the nominal ratio as fmt_factor does:
  fp64/fp32 = 1/64 is '0.0156x', not the 4-figure '0.01562x'.
"""

from __future__ import annotations

from rooflab.cli.main import main
from rooflab.model import Ceiling, Kernel, Roof, analyze
from rooflab.model.diagnose import diagnose
from rooflab.model.machine import Machine
from rooflab.model.whatif_precision_cap import capped_roof
from rooflab.sides import ai_apart
from rooflab.units import fmt_ai, si

G = 1e9


def test_fmt_ai_takes_the_exponent_line_after_rounding():
    assert fmt_ai(999_999_999.7) == "1e+09"            # was '1000000000'
    assert fmt_ai(1e9) == "1e+09"
    assert fmt_ai(1_333_333) == "1333333"              # whole numbers below 1e9, as before
    assert fmt_ai(99.96) == "100"
    assert fmt_ai(0.00099) == "0.00099"
    # under 1e-4 the exponent form, as si() prints the same number
    assert fmt_ai(2.5e-5) == "2.5e-05" == si(2.5e-5, "FLOP/B").split()[0]
    assert fmt_ai(-0.0) == "0"


def test_ai_apart_prints_a_huge_ai_as_fmt_ai():
    assert ai_apart(3.35e18, 20.0) == ("3.35e+18", "20")       # was a 19-digit integer
    assert ai_apart(1e9, 1.0001e9) == ("1e+09", "1.0001e+09")  # apart, in exponent form
    assert ai_apart(1_333_333, 20.0) == ("1333333", "20")      # unchanged below 1e9


def test_report_position_of_a_miscounted_kernel_reads_in_exponent_form(tmp_path, capsys,
                                                                      monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    csv = tmp_path / "k.csv"
    # 1e18 FLOP over 300 B: AI 3.33e15 FLOP/B, right of the H100's fp32 ridge 20
    csv.write_text("name,flop,bytes,seconds,precision\nmis,1e18,300,1,fp32\n")
    assert main(["report", str(csv), "--on", "H100"]) == 0
    out = capsys.readouterr().out
    assert "AI 3.33e+15 FLOP/B >= ridge 20" in out
    assert "3333333333333334" not in out


# a DRAM-bound dot on a 10 GB/s roof: 1e8 elements, 16 B each = 1.6 GB, floor 160 ms
ROOF = Roof("test", kind="measured", compute=(Ceiling(100 * G, precision="fp64", unit="vector"),),
            memory=(Ceiling(10 * G, level="DRAM"),))
CPU = Machine("cpu", caches={"L1": 32768.0, "L2": 524288.0, "L3": 33554432.0})


def _dot(seconds: float) -> Kernel:
    n = 1e8
    return Kernel("dot", {"fp64": 2 * n}, {"DRAM": 16 * n}, seconds=seconds,
                  provenance={"flop": "derived", "bytes": "derived"}, meta={"op": "dot"})


def test_faster_than_the_roof_is_a_three_figure_factor():
    (d,) = diagnose(analyze(ROOF, [_dot(0.016)]), CPU)       # 160 ms / 16 ms = 10x
    assert d.gain_words.startswith("none: it runs 10.0x faster than its roof allows")  # '10.00x'
    (d,) = diagnose(analyze(ROOF, [_dot(0.16 / 2.4567)]), CPU)
    assert d.gain_words.startswith("none: it runs 2.46x faster")       # as before: 3 figures
    # 1.0504x is past the 5 % tolerance: not '1.05x', which reads on the line
    (d,) = diagnose(analyze(ROOF, [_dot(0.16 / 1.0504)]), CPU)
    assert d.gain_words.startswith("none: it runs 1.0504x faster"), d.gain_words


def test_precision_cap_method_writes_the_nominal_ratio_in_three_figures():
    # measured fp64 is 1/1000 of fp32, past the nominal 1/64 of a consumer GPU: capped
    roof = Roof("probe", "measured",
                compute=(Ceiling(100 * G, "fp32", "vector", provenance="measured"),
                         Ceiling(0.1 * G, "fp64", "vector", provenance="measured")),
                memory=(Ceiling(100 * G, level="DRAM", provenance="measured"),))
    nominal = Roof("datasheet", "nominal",
                   compute=(Ceiling(64 * G, "fp32", "vector"), Ceiling(1 * G, "fp64", "vector")),
                   memory=(Ceiling(100 * G, level="DRAM"),))
    capped, notes = capped_roof(roof, nominal, "fp32", "fp64")
    assert notes
    fp64 = capped.find_compute("fp64", "vector")
    assert fp64.value == 100 * G / 64                         # 1.5625 GFLOP/s, derived
    assert fp64.method.startswith("0.0156x the measured fp32 ceiling (nominal ratio)")
