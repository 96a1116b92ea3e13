"""Session 34 F: every probe-table row whose samples vary carries the '!' and a warning,
measured or derived (the torch-cpu dry run printed DRAM (triad) at 25.1 % and L3 at 25.5 %
with no mark while rows over 5 % carry one), and a spread over 100 % of the median says
the samples are two populations, not noise."""

from __future__ import annotations

import types

from rooflab.hardware.profile import MachineProfile
from rooflab.model.ceiling import Ceiling, Roof
from rooflab.model.spread_warnings import restated, samples_vary
from rooflab.probe.gpu import context as C
from rooflab.probe.gpu import memory
from rooflab.probe.gpu.sweep import SweepPoint
from rooflab.probe.gpu.timing import clock_timer
from rooflab.report.tables import profile_rows

# The triad samples of a `rooflab probe --device torch-cpu --quick` run on a loaded 2-CPU
# host (B/s, in the order taken): range (1.04746e9 - 7.85306e8) / median 1.04500e9
# = 2.62152e8 / 1.04500e9 = 0.25086 -> "25.1 %"; median 1.04500e9 is 0.2 % below the best.
TRIAD = (785306165.5436798, 1045003133.6821353, 1047458274.3921154)
# The same run's fp32 matmul (96^3 = 1.769e6 FLOP a call): one call at 143 us, two at
# 11-12 ms (its second thread waited a scheduler slice for a CPU): range (12.354e9 -
# 0.147e9) / median 0.15941e9 = 76.576 -> "7657.6 %", median 1 - 0.15941 / 12.354 = 98.7 %
# below the best.
FP32 = (12353800912.374008, 147104273.69203967, 159405774.2125058)


def test_the_derived_triad_ceiling_carries_the_spread_warning():
    c = memory.triad_ceiling([("triad_torch", TRIAD)], None, "test", 4 << 20)
    assert c.provenance == "derived" and c.value == TRIAD[1]
    assert c.warnings == ("DRAM (triad): samples vary (full range of the 3 samples 25.1 % of "
                          "the median, median 0.2 % below the best); other load on the "
                          "machine or clock changes; rerun on a quiet machine or use --full",)


def test_a_gpu_probe_sweep_plateau_carries_the_spread_warning(monkeypatch):
    # Four sets inside a 32 MiB L3 at ~26.8 GB/s, two in DRAM at ~1 GB/s. The L3 plateau's
    # pooled samples: 4 x (21e9, 26.8e9, 33e9), sorted 21e9 x 4, 26.8e9 x 4, 33e9 x 4:
    # inclusive quartiles at positions 11 x 0.25 = 2.75 (between two 21e9) and 8.25
    # (between two 33e9): IQR 12e9 / median 26.8e9 = 44.8 %; median 1 - 26.8 / 33 = 18.8 %
    # below the best.
    mib = 1 << 20
    points = tuple(SweepPoint(float(s * mib), 1e9, (21e9, 26.8e9, 33e9)) for s in (1, 2, 4, 8)
                   ) + tuple(SweepPoint(float(s * mib), 1e9, (1.0e9, 1.01e9, 1.02e9))
                             for s in (64, 128, 256))
    monkeypatch.setattr(memory, "run_sweep", lambda *a, **k: points)
    ctx = C.Context(torch=None, dev=types.SimpleNamespace(type="cpu"), timer=clock_timer(),
                    sizes=C.sizes_for("cpu", "quick"), host={"caches": {"L3": 32 * mib}},
                    source="test")
    ceilings, _extras = memory.cache_sweep(ctx)
    (l3,) = ceilings
    assert l3.level == "L3" and l3.value == 26.8e9 and len(l3.samples) == 12
    assert l3.warnings == ("L3: samples vary (interquartile range 44.8 % of the median, median "
                           "18.8 % below the best); other load on the machine or clock "
                           "changes; rerun on a quiet machine or use --full",)


def _profile(memory_ceilings) -> MachineProfile:
    roof = Roof(name="box measured", kind="measured", memory=tuple(memory_ceilings))
    return MachineProfile(host={"name": "box"}, measured=roof)


def test_a_noisy_row_without_a_stored_warning_still_carries_the_mark():
    # a profile written before this session: the triad and the L3 plateau had no warning
    triad = Ceiling(value=TRIAD[1], level="DRAM (triad)", provenance="derived",
                    source="old", samples=TRIAD)
    steady = Ceiling(value=1.047e9, level="DRAM", provenance="measured", source="old",
                     samples=(1.0456e9, 1.0444e9, 1.0471e9))   # range 0.26 %: no mark
    rows = {r.quantity: r for r in profile_rows(_profile([steady, triad]))}
    assert rows["DRAM (triad) bandwidth"].warning
    assert rows["DRAM (triad) bandwidth"].cells()[4] == "25.1 % !"
    assert not rows["DRAM bandwidth"].warning
    assert rows["DRAM bandwidth"].cells()[4] == "0.3 %"


def test_a_spread_over_the_median_says_the_samples_are_two_populations():
    w = samples_vary("fp32 vector", FP32)
    assert w.startswith("fp32 vector: samples vary (full range of the 3 samples 7657.6 % of "
                        "the median, median 98.7 % below the best); over 100 % of the "
                        "median, so the samples are not one population: ")
    assert w.endswith("rerun on a quiet machine or use --full")
    # 25 % is noise around one value: no population words
    assert "population" not in samples_vary("DRAM (triad)", TRIAD)
    # a stored profile's warning said again by the reader keeps one copy of the words
    c = Ceiling(value=max(FP32), precision="fp32", unit="vector", provenance="measured",
                source="old", samples=FP32, warnings=(w,))
    assert restated(c).warnings == (w,)
    assert w.count("not one population") == 1
