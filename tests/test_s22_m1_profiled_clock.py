"""s22 m1 (f1's note): an Nsight Compute profiler-peaks roof carries the SM clock its
compute peaks were taken at, and the chart's legend reads it from the roof, not from a
re-derivation (fp32 peak / (SMs x lanes x 2)) that needs the kernels' SM count."""

from __future__ import annotations

import pytest
from conftest import gpp_recording

from rooflab.ingest.profile_import import (
    RecordedPeaks,
    choose_roof,
    peaks_roof,
    profiled_clock_hz,
    roof_for_on,
)
from rooflab.model.kernel import Kernel
from rooflab.report.chart_clock import roof_clock


def test_the_gpp_reports_roof_records_the_clock_ncu_profiled_at():
    from rooflab.ingest.ncu_files import load_ncu

    imp = load_ncu([str(gpp_recording("output5.ncu-rep"))])
    # output5's first launch: sm__cycles_elapsed.avg.per_second = 1.62e9 Hz, the clock its
    # fp32 peak holds at: 9.95328 TFLOP/s / (24 SMs x 128 lanes x 2) = 1.62 GHz
    assert imp.peaks.clock_hz == pytest.approx(1.62e9, rel=1e-6)
    assert imp.peaks.compute["fp32"] / (24 * 128 * 2) == pytest.approx(1.62e9, rel=1e-6)
    roof = choose_roof(None, imp).roof
    assert profiled_clock_hz(roof) == pytest.approx(1.62e9)
    assert roof.notes[0].startswith("ncu profiled at SM 1.62 GHz")
    # the chart names it with no kernel to derive it from (old: '' without the SM count)
    assert roof_clock(roof, []) == "peaks at SM 1.62 GHz (the clock ncu profiled at)"
    # compute peaks are per SM cycle x the SM clock; memory ones are not (DRAM's own clock)
    assert all(c.source.endswith("at SM 1.62 GHz") for c in roof.compute)
    assert not any("GHz" in c.source for c in roof.memory)


def test_an_ncu_rep_given_to_on_records_its_clock_too():
    roof = roof_for_on(str(gpp_recording("output1.ncu-rep")))
    assert roof_clock(roof) == "peaks at SM 1.62 GHz (the clock ncu profiled at)"


def test_the_recorded_clock_comes_before_the_derivation():
    # 155.52 GFLOP/s fp64 = 2 x 48 x 1.62 GHz; the file says the kernels ran at 1.41 GHz
    peaks = RecordedPeaks({"fp32": 9.95328e12}, {"DRAM": 255.8e9}, "r.ncu-rep",
                          device="NVIDIA GeForce RTX 4060 Laptop GPU")
    k = Kernel("s", {"fp32": 1e9}, {"DRAM": 1e8}, seconds=1.0,
               meta={"device": "NVIDIA GeForce RTX 4060 Laptop GPU", "sms": "24", "cc": "8.9"})
    # no clock recorded: the derivation, 9.95328e12 / (24 x 128 x 2) = 1.62 GHz
    assert roof_clock(peaks_roof(peaks), [k]) == \
        "peaks at SM 1.62 GHz (the clock ncu profiled at)"
    assert profiled_clock_hz(peaks_roof(peaks)) is None
    # the import's clock, where the peaks hold none of their own
    assert roof_clock(peaks_roof(peaks, 1.41e9), [k]) == \
        "peaks at SM 1.41 GHz (the clock ncu profiled at)"
    # the peaks' own clock before the import's time-weighted one
    own = RecordedPeaks(peaks.compute, peaks.memory, peaks.path, peaks.device,
                        clock_hz=1.53e9)
    assert profiled_clock_hz(peaks_roof(own, 1.41e9)) == pytest.approx(1.53e9)
