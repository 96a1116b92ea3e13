"""s23 r1 mutants F1, F3, F5, F7, F8: model constants and clamps that no test pinned.

Each test asserts a number or a class worked by hand from the code's documented rule
(the comment beside it says how), so that moving the constant or dropping the clamp fails.
"""

from __future__ import annotations

import pytest

from rooflab.hardware.resolve import load_roof
from rooflab.model import Ceiling, Kernel, Roof, analyze
from rooflab.model.diagnose import diagnose
from rooflab.model.sample_spread import iqr_over_median, spread_name

# --- F1: IDLE_SMS_FRACTION, the 80 % line of a small grid (seed 000 §6.4) ---------------

H100ISH = Roof("H100-like", "nominal", compute=(Ceiling(67e12, precision="fp32"),),
               memory=(Ceiling(3.35e12, level="DRAM"),), overhead_s=5e-6)


def _small_grid(fraction: float) -> Kernel:
    # AI = 1e9 FLOP / 4e9 B = 0.25 FLOP/B, left of the ridge 67e12 / 3.35e12 = 20:
    # attainable 0.25 x 3.35e12 = 837.5 GFLOP/s, so `fraction` of the roof takes
    # 1e9 / (fraction x 837.5e9) s. 64 blocks < 132 SMs / 2 = 66: a small grid.
    return Kernel("small_grid", {"fp32": 1e9}, {"DRAM": 4e9},
                  seconds=1e9 / (fraction * 0.25 * 3.35e12),
                  meta={"grid": "(64, 1, 1)", "block": "(256, 1, 1)", "sms": 132})


@pytest.mark.parametrize(("fraction", "bound"), [
    (0.85, "memory"), (0.82, "memory"),      # at or past 80 %: DRAM holds it, not idle SMs
    (0.78, "latency"), (0.75, "latency"),    # under 80 %: the idle SMs (placement.py:28)
])
def test_a_small_grid_is_latency_bound_only_under_80_percent_of_its_roof(fraction, bound):
    (p,) = analyze(H100ISH, [_small_grid(fraction)]).points
    assert p.percent_of_roof == pytest.approx(100 * fraction)
    assert p.bound == bound


# --- F3: the gain of a kernel above its roof is 0, not negative --------------------------

def test_gain_of_a_kernel_above_its_roof_is_clamped_at_zero():
    roof = Roof("toy", "nominal", compute=(Ceiling(1e12, precision="fp32"),),
                memory=(Ceiling(1e11, level="DRAM"),))
    # floor = max(1e9 / 1e12, 1e9 / 1e11) = max(1 ms, 10 ms) = 10 ms for both kernels.
    # "above": 8 ms, 1.25x above its roof -> 8 - 10 = -2 ms, clamped to 0 (diagnose.py:285);
    # "below": 12 ms -> gain 2 ms, priority 2 ms / (8 + 12) ms = 0.1, ranked first.
    ks = [Kernel("above", {"fp32": 1e9}, {"DRAM": 1e9}, seconds=8e-3),
          Kernel("below", {"fp32": 1e9}, {"DRAM": 1e9}, seconds=12e-3)]
    d = {x.kernel: x for x in diagnose(analyze(roof, ks))}
    assert d["above"].headroom == pytest.approx(0.8)            # 8 ms / 10 ms
    assert d["above"].gain_s == 0.0 and d["above"].priority == 0.0
    assert d["below"].gain_s == pytest.approx(2e-3)
    assert d["below"].priority == pytest.approx(0.1)
    assert (d["below"].rank, d["above"].rank) == (1, 2)


# --- F5: Roof.find_compute(precision) with no unit is the fastest unit -------------------

def test_find_compute_without_a_unit_takes_the_fastest_catalog_unit():
    # NVIDIA A100 datasheet (SXM): FP16 tensor 312 TFLOP/s vs FP16 (non-tensor) 78;
    # FP64 tensor 19.5 vs FP64 9.7. No unit -> the faster of each pair.
    a100 = load_roof("A100 SXM")
    assert a100.find_compute("fp16").value == pytest.approx(312e12)
    assert a100.find_compute("fp64").value == pytest.approx(19.5e12)
    assert a100.find_compute("fp16", "vector").value == pytest.approx(78e12)
    assert a100.find_compute("fp64", "vector").value == pytest.approx(9.7e12)


def test_find_compute_picks_the_fastest_whatever_the_listed_order():
    slow_first = Roof("toy", "nominal", compute=(
        Ceiling(1e12, precision="fp16", unit="vector"),
        Ceiling(8e12, precision="fp16", unit="tensor"),
        Ceiling(2e12, precision="fp16", unit="other")),
        memory=(Ceiling(1e11, level="DRAM"),))
    got = slow_first.find_compute("fp16")
    assert (got.unit, got.value) == ("tensor", 8e12)


# --- F7: MOSTLY_LAUNCH (0.8): launch overhead alone, or both causes ----------------------

def _below_roof_words(launch_s: float, floor_s: float, gap_s: float) -> tuple[str, str]:
    """One call on a roof with a `launch_s` launch floor; the work floor `floor_s` (bytes
    = FLOP = floor x 1e11, AI 1, memory side of the ridge 10) and `gap_s` above it."""
    roof = Roof("toy", "nominal", compute=(Ceiling(1e12, precision="fp32"),),
                memory=(Ceiling(1e11, level="DRAM"),), overhead_s=launch_s)
    k = Kernel("k", {"fp32": floor_s * 1e11}, {"DRAM": floor_s * 1e11},
               seconds=floor_s + gap_s)
    (d,) = diagnose(analyze(roof, [k]))
    return d.bound, next(x.words for x in d.distances if x.name == "below roof")


@pytest.mark.parametrize(("launch_s", "gap_s"), [
    # 6 us of a 10 us gap = 60 %: over half, under 80 %. Efficiency without the launches
    # 10 / (20 - 6) = 71 % < the 80 % target: both causes are named.
    (6e-6, 10e-6),
    # 14 us of a 20 us gap = 70 %; efficiency 10 / (30 - 14) = 62.5 % < 80 %
    (14e-6, 20e-6),
])
def test_launch_between_half_and_80_percent_of_the_gap_names_both_causes(launch_s, gap_s):
    bound, words = _below_roof_words(launch_s, 10e-6, gap_s)
    assert bound == "memory"
    us = f"up to {launch_s * 1e6:.0f} us of the {gap_s * 1e6:.0f} us gap"
    assert f"launch overhead ({us}: CUDA graphs" in words
    assert "close the rest" in words and "mostly launch" not in words


def test_launch_over_80_percent_of_the_gap_is_mostly_launch_overhead():
    # 17 us of a 20 us gap = 85 % >= 80 %: the launch cure alone, though the work without
    # the launches runs at 10 / (30 - 17) = 77 % < 80 % (so efficiency does not decide it)
    bound, words = _below_roof_words(17e-6, 10e-6, 20e-6)
    assert "mostly launch/dispatch overhead" in words
    assert "of the 20 us gap" not in words and "close the rest" not in words
    assert bound == "overhead"     # 17 us >= half of 30 us and > the 10 us work floor


# --- F8: IQR / median from 4 samples on (statistics.quantiles "inclusive") ---------------

def test_four_samples_get_the_interquartile_range_not_the_full_range():
    # inclusive quartiles of [1, 2, 3, 4]: rank (n - 1) p = 0.75 -> 1.75, 2.25 -> 3.25;
    # IQR 1.5 / median 2.5 = 0.6 (the full range would read 3 / 2.5 = 1.2)
    assert iqr_over_median([4, 1, 3, 2]) == pytest.approx(0.6)
    # [10, 10, 10, 13]: Q1 10, Q3 10 + 0.25 x 3 = 10.75; 0.75 / 10 = 0.075 (range: 0.3)
    assert iqr_over_median([10, 10, 10, 13]) == pytest.approx(0.075)
    assert spread_name(4) == "interquartile range"
    # three samples: no quartiles, the full range (3 - 1) / 2 = 1.0, named so
    assert iqr_over_median([1, 2, 3]) == pytest.approx(1.0)
    assert spread_name(3) == "full range of the 3 samples"
