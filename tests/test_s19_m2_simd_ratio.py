"""A scalar FMA ceiling far under the vector one is flagged (review s19 x2 F17).

The ratio of the vector to the scalar FMA peak is the SIMD lanes (2-16: both kernels issue
on the same FMA pipes). A loaded 2-CPU VM measured fp64 vector 102 GFLOP/s beside scalar
0.196 (522x): the scalar kernel was held up, and its ceiling and ridges read 100x low. Over
32x (2x the widest lane count) gets the note the < 1.5x case gets, and the scalar ceiling
carries it among its warnings (the chart's `*`, the table's `!`), as a disturbed one does.
"""

from __future__ import annotations

import pytest
from test_s19_scalar_ceiling_probe import _profile

from rooflab.hardware.profile import load_profile, save_profile

NOTE_522 = ("fp64: the vector FMA peak is 522x the scalar one (SIMD lanes would give "
            "2-16x): other load held the scalar kernel up, so the fp64 scalar ceiling and "
            "its ridges are too low; rerun on a quiet machine")


def test_a_scalar_peak_522x_under_the_vector_one_is_noted_and_flagged(tmp_path):
    prof = _profile(102.3e9, 0.196e9, 12e9)     # 102.3 / 0.196 = 522; fp32 204.6/12 = 17
    assert [n for n in prof.measured.notes if "scalar one" in n] == [NOTE_522]
    s64 = prof.measured.find_compute("fp64", "scalar")
    assert s64.warnings == (NOTE_522,)
    assert prof.measured.find_compute("fp32", "scalar").warnings == ()   # 17x: lanes
    path = tmp_path / "p.json"
    save_profile(path, prof)
    assert load_profile(path).measured.find_compute("fp64", "scalar").warnings == (NOTE_522,)


def test_lane_counts_up_to_32x_are_not_flagged():
    prof = _profile(48e9, 1.5e9, 3e9)       # fp64 32x, fp32 96/3 = 32x: at the limit
    assert not [n for n in prof.measured.notes if "scalar one" in n]
    assert all(not c.warnings for c in prof.measured.compute if c.unit == "scalar")


def test_a_scaling_rows_scalar_figure_is_flagged_too():
    from rooflab.probe.cpu.scaling import flag_scalar_row

    row = {"threads": 1, "fp64": {"flop_per_s": 102.3e9}, "fp32": {"flop_per_s": 204.6e9},
           "scalar": {"fp64": {"flop_per_s": 0.196e9}, "fp32": {"flop_per_s": 25.6e9}}}
    flag_scalar_row(row)
    assert row["scalar"]["fp64"]["warnings"] == [NOTE_522]
    assert "warnings" not in row["scalar"]["fp32"]                      # 8x
    assert 102.3 / 0.196 == pytest.approx(522, abs=0.5)
