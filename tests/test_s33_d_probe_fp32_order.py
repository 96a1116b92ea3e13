"""A CPU probe whose fp32 vector peak reads below its fp64 one (review s33 D: a loaded
2-vCPU Xeon VM wrote fp32 9.36 GFLOP/s under fp64's 71.3 with no word that this is
impossible, and `rooflab ai matmul --dtype fp32 --on` then judged by the 9.36). An fp32
SIMD vector holds twice the fp64 lanes on the same FMA pipes: an undisturbed fp32 peak is
about 2x fp64's, so under 1x the fp32 ceiling is flagged (table `!`) and a note says why."""

from __future__ import annotations

from cpu_probe_fakes import assembled_profile

from rooflab.model.ceiling import Ceiling
from rooflab.probe.cpu.flops import fp32_below_fp64


def _vec(p: str, v: float) -> Ceiling:
    return Ceiling(v, precision=p, unit="vector")


def test_fp32_under_fp64_is_flagged():
    # the review's run: fp64 71.3 GFLOP/s, fp32 9.36 GFLOP/s (0.13x, not ~2x)
    compute = [_vec("fp64", 71.3e9), _vec("fp32", 9.36e9)]
    out, note = fp32_below_fp64(compute)
    assert note is not None
    assert "9.36 GFLOP/s measured below fp64's 71.3 GFLOP/s" in note
    assert "rerun on a quiet machine" in note
    f64, f32 = out
    assert f64 == compute[0]                       # fp64 untouched
    assert f32.value == 9.36e9 and f32.warnings == (note,)   # value kept, flagged


def test_fp32_at_twice_fp64_is_quiet():
    # AVX-512, 2 FMA pipes, 2 cores at 4.1 GHz: fp64 262, fp32 525 GFLOP/s (FACTS.md)
    compute = [_vec("fp64", 262e9), _vec("fp32", 525e9), Ceiling(4e9, precision="fp64",
                                                                  unit="scalar")]
    out, note = fp32_below_fp64(compute)
    assert note is None and out == compute


def test_assembled_profile_carries_the_flag():
    # the probe's own assembly: fp64 FMA 48 GFLOP/s (one Zen 4 core at 3 GHz: 3e9 x 4 lanes
    # x 2 pipes x 2 = 48e9), fp32 measured at 6e9 (an eighth of fp64)
    prof = assembled_profile(48e9, 6e9)
    f32 = prof.measured.find_compute("fp32", "vector")
    assert f32.value == 6e9
    assert any("measured below fp64's" in w for w in f32.warnings)
    assert any("fp32 vector peak 6 GFLOP/s measured below fp64's 48 GFLOP/s" in n
               for n in prof.measured.notes)
    # an ordered run (fp32 = 2x fp64) says nothing of the kind
    ok = assembled_profile(48e9, 96e9)
    assert not any("measured below fp64's" in n for n in ok.measured.notes)
