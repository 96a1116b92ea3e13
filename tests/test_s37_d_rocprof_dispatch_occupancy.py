"""Session 37 D: rocprof's theoretical occupancy per dispatch, and rocprofv3's own
OccupancyPercent beside rooflab's figures.

- The theoretical occupancy was computed from each kernel's first dispatch only: a kernel
  whose dispatches had other workgroups, LDS or registers kept the first's figure, with no
  word that the others differed (the achieved one already had its spread noted, s36 M).
- rocprofv3 has an occupancy counter of its own: OccupancyPercent, a derived counter of
  rocprofiler-sdk (counter_defs.yaml: 400 * SQ_WAVE_CYCLES / GRBM_GUI_ACTIVE / CU_NUM / 32
  on CDNA), not a kernel-trace column. The file's value was read as no figure at all.

Hand numbers (tests/data/rocprof_dispatch_occupancy/README.md), MI300X (gfx942, 32 waves a
CU, 512 VGPRs a SIMD lane, 64 KiB LDS, 8 XCDs x 38 CUs = 9728 wave slots), workgroups of
256 = 4 waves of 64:
  gemm    dispatch 1: 256 VGPRs -> 512 // 256 = 2 waves a SIMD = 8 of 32 = 25.0 %;
          dispatch 2: 16 VGPRs -> 8 workgroups = 32 waves = 100.0 %;
          achieved 4,085,760,000 / 1,680,000 = 2432 waves / 9728 = 25.0 %,
                   13,074,432,000 / 1,680,000 = 7782.4 / 9728 = 80.0 %;
          rocprof's OccupancyPercent 24.6 and 79.5
  stencil dispatch 3 100.0 %; dispatch 4 40,960 B LDS: 65,536 // 40,960 = 1 workgroup =
          4 / 32 = 12.5 %
  scale   OccupancyPercent 40.0, no SQ_ACCUM_PREV_HIRES: its achieved figure
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rooflab.ingest.rocprof import load_rocprof

FILE = Path(__file__).parent / "data" / "rocprof_dispatch_occupancy" / "run_counter_collection.csv"


def _kernel(imp, name):
    return next(k for k in imp.kernels if k.name == name)


def _differs(k) -> str:
    (note,) = [n for n in k.meta.get("notes", []) if "differs between" in n]
    return note


def test_dispatches_of_other_shapes_say_their_theoretical_spread():
    """stencil: 100.0 % then 12.5 % (LDS). Old: no note (theoretical read from dispatch 3
    alone, and no SQ counters for an achieved spread)."""
    imp = load_rocprof(str(FILE), device="mi300x")
    stencil = _kernel(imp, "stencil")
    assert stencil.meta["occupancy_theoretical"] == pytest.approx(100.0)   # the first's
    assert _differs(stencil).startswith(
        "occupancy differs between its 2 launches (theoretical 12.5-100.0 %): its occupancy "
        "and limiter are launch 3's")
    (note,) = [n for n in imp.notes if n.startswith("theoretical occupancy")]
    assert "stencil 12.5-100.0 % by dispatch (the first: 100.0 %, wave slots" in note
    assert "gemm 25.0-100.0 % by dispatch (the first: 25.0 %, VGPRs)" in note
    assert "scale 100.0 % (wave slots" in note          # one shape: one figure, as before


def test_both_spreads_are_said_together():
    """gemm: achieved 25.0 and 80.0 %, theoretical 25.0 and 100.0 %."""
    imp = load_rocprof(str(FILE), device="mi300x")
    assert _differs(_kernel(imp, "gemm")).startswith(
        "occupancy differs between its 2 launches (achieved 25.0-80.0 %, theoretical "
        "25.0-100.0 %)")


def test_rocprofs_own_occupancy_stands_beside_rooflabs():
    """gemm's achieved is rooflab's 25.0 % (measured: SQ_ACCUM_PREV_HIRES); rocprof's 24.6
    is kept as occupancy_rocprof and said beside it. scale has rocprof's 40.0 alone: it is
    the achieved figure, said to be rocprof's. Old: no occupancy_rocprof, and scale had no
    achieved occupancy at all."""
    imp = load_rocprof(str(FILE), device="mi300x")
    gemm, scale = _kernel(imp, "gemm"), _kernel(imp, "scale")
    assert gemm.meta["occupancy_achieved"] == pytest.approx(25.0)
    assert gemm.meta["occupancy_rocprof"] == pytest.approx(24.6)
    assert "rocprofv3's own OccupancyPercent 24.6 %" in gemm.meta["occupancy_from"]
    assert scale.meta["occupancy_achieved"] == pytest.approx(40.0)
    assert ("achieved measured: rocprofv3's OccupancyPercent counter (400 x SQ_WAVE_CYCLES"
            in scale.meta["occupancy_from"])
    (note,) = [n for n in imp.notes if n.startswith("achieved occupancy")]
    assert ("gemm 25.0 % (rocprofv3's OccupancyPercent 24.6 %), scale 40.0 % (rocprofv3's "
            "OccupancyPercent)") in note


def test_without_the_gpu_rocprofs_figure_is_the_achieved_one():
    """No --on: rooflab cannot divide SQ_ACCUM_PREV_HIRES by the GPU's slots, but
    OccupancyPercent needs no GPU: gemm 24.6 and 79.5 % (54.9 points apart: noted)."""
    imp = load_rocprof(str(FILE))
    gemm = _kernel(imp, "gemm")
    assert gemm.meta["occupancy_achieved"] == pytest.approx(24.6)
    assert _differs(gemm).startswith(
        "occupancy differs between its 2 launches (achieved 24.6-79.5 %)")
    (note,) = [n for n in imp.notes if n.startswith("achieved occupancy")]
    assert note.startswith("achieved occupancy as rocprofv3 measured it (its OccupancyPercent")
    assert "gemm 24.6 %, scale 40.0 %" in note
