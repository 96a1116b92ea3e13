"""Sanity checks (seed 000 §6): each classic mistake caught on a constructed kernel.

Toy roof: fp32 vector 1e12 FLOP/s, DRAM 1e11 B/s, L2 4e11 B/s; ridge fp32/DRAM = 10.
"""

import pytest

from rooflab.model import Ceiling, Kernel, Roof, analyze
from rooflab.model.sanity import check_analysis, check_kernel

ROOF = Roof("toy", compute=(Ceiling(1e12, precision="fp32", unit="vector"),),
            memory=(Ceiling(1e11, level="DRAM"), Ceiling(4e11, level="L2")))


def findings(kernel, roof=ROOF):
    return {f.check: f for f in check_kernel(analyze(roof, [kernel]), kernel)}


def test_point_above_the_slope():
    # AI = 1e9 / 1e10 = 0.1; attainable 1e11 x 0.1 = 1e10 FLOP/s.
    # 0.05 s -> achieved 2e10 = 200 % of the roof; bytes/s = 1e10 / 0.05 = 2e11 > 1e11.
    f = findings(Kernel("cached", {"fp32": 1e9}, {"DRAM": 1e10}, seconds=0.05))["above_roof"]
    assert f.level == "DRAM" and "200 % of roof" in f.message
    text = " ".join(f.causes)
    assert "wrong memory level" in text and "cache effects" in text
    assert "200 GB/s through DRAM exceeds its 100 GB/s" in text


def test_point_above_the_flat_roof_blames_precision():
    # AI 1e12 / 1e9 = 1000; 0.5 s -> 2e12 FLOP/s > the fp32 peak 1e12: wrong precision roof.
    f = findings(Kernel("tc", {"fp32": 1e12}, {"DRAM": 1e9}, seconds=0.5))["above_roof"]
    assert "wrong precision" in " ".join(f.causes)
    assert "counting error" in " ".join(f.causes)


def test_point_on_the_roof_is_clean():
    # Exactly at the roof: 1e9 FLOP at 1e10 FLOP/s = 0.1 s; samples tight, long enough.
    k = Kernel("ok", {"fp32": 1e9}, {"DRAM": 1e10, "L2": 2e10}, seconds=0.1,
               samples=(0.1, 0.101, 0.1005))
    assert findings(k) == {}


def test_ai_abnormally_high_for_elementwise():
    # y = x + 1 in fp32 over 1e6 elements: 1e6 FLOP, 8e6 bytes (AI 0.125). Bytes counted
    # as 1e5 (writes and most reads missing) -> AI 10 > 4: flagged.
    f = findings(Kernel("add", {"fp32": 1e6}, {"DRAM": 1e5}, meta={"op": "elementwise"}))
    assert "ai_high" in f and "AI 10" in f["ai_high"].message
    assert any("writes were not counted" in c for c in f["ai_high"].causes)
    # The correct count is not flagged.
    assert "ai_high" not in findings(Kernel("add", {"fp32": 1e6}, {"DRAM": 8e6},
                                            meta={"op": "elementwise"}))


def test_ai_abnormally_low_l2_counted_as_dram():
    # 2e9 B "DRAM" but only 1e9 B through L2: every DRAM byte passes L2, so impossible.
    f = findings(Kernel("k", {"fp32": 1e9}, {"DRAM": 2e9, "L2": 1e9}))["ai_low"]
    assert "L2 traffic counted as DRAM" in f.causes[0]
    assert "AI 0.5" in f.message                       # 1e9 / 2e9


def test_ai_abnormally_low_faster_than_dram():
    # 1e10 B in 0.04 s = 2.5e11 B/s = 2.5x the DRAM bandwidth: the bytes are too many.
    f = findings(Kernel("k", {"fp32": 1e9}, {"DRAM": 1e10}, seconds=0.04))
    assert "ai_low" in f and "2.50x the DRAM bandwidth" in f["ai_low"].message


def test_noisy_timing():
    # samples 1.0, 1.1, 1.5 ms: (1.5 - 1.0) / 1.1 = 45 % > 20 %.
    k = Kernel("n", {"fp32": 1e9}, {"DRAM": 1e10}, seconds=0.36, calls=3,
               samples=(1.0e-3, 1.1e-3, 1.5e-3))
    f = findings(k)["noisy"]
    assert "spread 45 %" in f.message


def test_too_short_timing():
    f = findings(Kernel("t", {"fp32": 1e3}, {"DRAM": 1e4}, seconds=4e-6))
    assert "too_short" in f and "4 us per call" in f["too_short"].message
    # A time given by a profiler counter is not a timer reading: not flagged.
    k = Kernel("t", {"fp32": 1e3}, {"DRAM": 1e4}, seconds=4e-6,
               provenance={"seconds": "counted"})
    assert "too_short" not in findings(k)


def test_precision_fallback_is_reported():
    f = findings(Kernel("q", {"fp8": 1e9}, {"DRAM": 1e9}))
    assert f["precision_fallback"].severity == "info"
    assert "no fp8 ceiling" in f["precision_fallback"].message


def test_check_analysis_covers_every_kernel():
    ks = [Kernel("a", {"fp32": 1e9}, {"DRAM": 1e10}, seconds=0.05),
          Kernel("b", {"fp32": 1e3}, {"DRAM": 1e4}, seconds=4e-6)]
    names = {(f.kernel, f.check) for f in check_analysis(analyze(ROOF, ks))}
    assert ("a", "above_roof") in names and ("b", "too_short") in names


@pytest.mark.parametrize("bad", [0.0501, 0.06])
def test_tolerance(bad):
    # 5 % tolerance: 0.1 s at the roof; 0.0952 s would be 5 % above. 0.0501 s is ~2x above.
    assert "above_roof" in findings(Kernel("x", {"fp32": 1e9}, {"DRAM": 1e10}, seconds=bad))


def test_fallback_to_narrower_math_is_a_warning():
    # An fp64 kernel on a roof with only an fp16 ceiling is judged against faster math.
    roof = Roof("r", compute=(Ceiling(1e14, precision="fp16", unit="tensor"),),
                memory=(Ceiling(1e11, level="DRAM"),))
    f = findings(Kernel("dp", {"fp64": 1e9}, {"DRAM": 1e8}, seconds=1.0), roof)
    assert f["precision_fallback"].severity == "warning"
    assert "not meaningful" in f["precision_fallback"].message


def test_noisy_outliers_are_information():
    # 8 samples, one preempted: 1.0 ... 1.07 ms and 24 ms. Range (24 - 1.035) / 1.035 ~ 22x,
    # but the middle half spans ~4 %: the median stands.
    s = (1.0e-3, 1.01e-3, 1.02e-3, 1.03e-3, 1.04e-3, 1.05e-3, 1.07e-3, 24e-3)
    k = Kernel("o", {"fp32": 1e9}, {"DRAM": 1e10}, seconds=0.1, samples=s)
    f = findings(k)["noisy"]
    assert f.severity == "info" and "a few outliers, the median stands" in f.message
    # Spread in the middle half too: a warning.
    k = Kernel("w", {"fp32": 1e9}, {"DRAM": 1e10}, seconds=0.1,
               samples=(1.0e-3, 1.2e-3, 1.4e-3, 1.6e-3, 1.8e-3))
    assert findings(k)["noisy"].severity == "warning"


def test_cpu_fixes_name_cpu_tools():
    from rooflab.model.machine import Machine

    k = Kernel("n", {"fp32": 1e9}, {"DRAM": 1e10}, seconds=0.36, calls=3,
               samples=(1.0e-3, 1.1e-3, 1.5e-3))
    got = {f.check: f for f in check_kernel(analyze(ROOF, [k]), k, Machine("cpu"))}
    assert "taskset" in got["noisy"].fix
    k = Kernel("k", {"fp32": 1e9}, {"DRAM": 1e10}, seconds=0.04)
    got = {f.check: f for f in check_kernel(analyze(ROOF, [k]), k, Machine("cpu"))}
    assert "memory-controller counters" in got["ai_low"].fix and "dram__" not in got["ai_low"].fix
