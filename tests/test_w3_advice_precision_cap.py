"""The advice's precision lever holds the lower precision's ceiling to the nominal ratio,
as `whatif --precision` does (whatif_precision_cap.capped_roof; review r4 F3): a naive
fp64 matmul on a loaded Zen 4 probe was told "use fp32 instead of fp64: 3.40x" because the
probe read fp32 235 GFLOP/s against a disturbed fp64 69.2; the nominal roof is 236/118 = 2x.

Kernel (review r4 F3): n = 512, FLOP 2 n^3 = 268,435,456, bytes 3 n^2 x 8 = 6,291,456,
AI 42.67 FLOP/B, 394 ms. DRAM 50 GB/s, so both precisions sit on the compute side
(fp64 ridge 69.2e9 / 50e9 = 1.38; fp32 AI 85.3). At the kernel's current efficiency the
predicted gain is the ceiling ratio: uncapped 235 / 69.2 = 3.396x; capped at the nominal
236 / 118 = 2.00x, i.e. fp32 taken as 2 x 69.2 = 138.4 GFLOP/s (derived).
"""

import pytest

from rooflab.model import Kernel, analyze
from rooflab.model.advice_core import efficiency_of
from rooflab.model.advice_precision import _lower_precision
from rooflab.model.ceiling import Ceiling, Roof

N = 512
MEASURED = Roof(name="zen4", kind="measured",
                compute=(Ceiling(69.2e9, "fp64", "vector", provenance="measured"),
                         Ceiling(235e9, "fp32", "vector", provenance="measured")),
                memory=(Ceiling(50e9, level="DRAM", provenance="measured"),))
NOMINAL = Roof(name="zen4", kind="nominal",
               compute=(Ceiling(118e9, "fp64", "vector"), Ceiling(236e9, "fp32", "vector")),
               memory=(Ceiling(60e9, level="DRAM"),))
KERNEL = Kernel("mm_512", {"fp64": 2 * N**3}, {"DRAM": 3 * N * N * 8}, seconds=0.394,
                unit="vector", meta={"op": "matmul"})


def _fp32(nominal):
    p = analyze(MEASURED, [KERNEL]).primary()[0]
    extra = {} if nominal is None else {"nominal": nominal}   # the old signature: none
    a = _lower_precision(p, efficiency_of(p), MEASURED, "matmul", kernel=KERNEL, **extra)
    assert a is not None and a.action == "use fp32 instead of fp64"
    return a


def test_the_gain_is_held_to_the_nominal_ratio():
    a = _fp32(NOMINAL)
    assert a.speedup == pytest.approx(2.0, rel=1e-9)          # 138.4 / 69.2
    # now 268,435,456 / 0.394 s = 681.3 MFLOP/s; x 2 = 1362.6 MFLOP/s
    assert a.new_flop_per_s == pytest.approx(2 * (2 * N**3 / 0.394), rel=1e-9)
    assert "measured fp32/fp64 vector = 3.40x" in a.assumption
    assert "nominal 2.00x: past the nominal ratio" in a.assumption
    assert "138 GFLOP/s (derived)" in a.assumption   # 2 x 69.2, 3 figures
    assert "fp32 vector 138 GFLOP/s" in a.detail


def test_without_a_nominal_roof_the_measured_ratio_is_said_unchecked():
    a = _fp32(None)
    assert a.speedup == pytest.approx(235 / 69.2, rel=1e-9)   # 3.396x, as before
    assert ("fp32 vector/fp64 vector ratio priced, 3.40x, is two measured ceilings, not "
            "checked against a nominal ratio") in a.assumption


def test_a_measured_ratio_within_the_nominal_one_is_left_alone():
    fine = Roof(name="zen4", kind="measured",
                compute=(Ceiling(110e9, "fp64", "vector", provenance="measured"),
                         Ceiling(200e9, "fp32", "vector", provenance="measured")),
                memory=MEASURED.memory)
    p = analyze(fine, [KERNEL]).primary()[0]
    a = _lower_precision(p, efficiency_of(p), fine, "matmul", kernel=KERNEL, nominal=NOMINAL)
    assert a.speedup == pytest.approx(200 / 110, rel=1e-9)    # 1.82x < 2x: no cap
    assert "nominal" not in a.assumption
