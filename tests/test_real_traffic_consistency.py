"""The DRAM (real traffic) ceiling agrees with the DRAM ceiling it is derived beside, and a
thread row keeps its profile's caveats (review 19c N1, N2).

Hand numbers:
- N1, the demo profile of review 19c (a loaded 2-core VM): DRAM = STREAM triad 12.8 GB/s
  (counted: 24 B per element); the other STREAM kernels at DRAM, counted: copy 23.8, scale
  25.6, add 25.6, sum 22.3 GB/s. Real traffic (write-allocate read included): copy and
  scale x 3/2 (24 of 16 B), add and triad x 4/3 (32 of 24 B), sum x 1: copy 35.7, scale
  38.4, add 34.13, triad 17.07, sum 22.3 GB/s. The conventions allow at most 3/2 x DRAM
  (+10 % noise: 1.65 x 12.8 = 21.12 GB/s); every kernel but triad is above it, so the
  ceiling is triad's 12.8 x 4/3 = 17.07 GB/s, not scale's 38.4 (3.0x DRAM). A read-only
  gemv (AI 0.25 FLOP/B, 2.1 GFLOP/s) is then 2.1 / (0.25 x 17.07) = 49 % of its roof,
  not 2.1 / (0.25 x 38.4) = 22 %.
- Review 17a's quiet run: triad 19.6, copy 18.3, scale 20.0, add 18.6, sum 16.8 GB/s
  counted; scale's real 20.0 x 3/2 = 30.0 GB/s = 1.53 x DRAM, inside 1.65: kept (a
  copy-shaped loop at the probe's own scale rate reads 100 %, not 115 %).
- N2, a 2-thread profile probed while other processes used 82 % of the CPUs, with a
  1-thread row: L1 50 GB/s below L2 100 GB/s (0.5 < 0.9: out of order), DRAM 8 GB/s,
  samples 8.0, 6.4, 6.3, 6.35, 6.2 (median 6.35, 20.6 % below the best: flagged).
"""

from __future__ import annotations

import json

import pytest

from rooflab.hardware.profile import profile_from_dict, roof_at_threads
from rooflab.hardware.resolve import load_roofs
from rooflab.model.ceiling import Ceiling
from rooflab.model.kernel import Kernel
from rooflab.model.real_traffic import REAL_TRAFFIC, real_traffic_ceiling
from rooflab.probe.cpu.dram_ceiling import real_traffic
from rooflab.report.chart import plot_roofline
from rooflab.report.chart_words import caveats

GB = 1e9
TRIAD = ("STREAM triad a[i] = b[i] + s*c[i] (numba), explicit loads + stores, no "
         "write-allocate; value = best sample")
LOAD = ("other processes used 82% of the CPUs while the probe ran (and the load average "
        "was 7.5 on 2 CPUs before it started): measured ceilings read low; rerun on a "
        "quiet machine")
DRIFT = ("the fp64 FMA reference moved +64.0% between the start and the end of the probe "
         "(clock drift or other load); rerun or use --full")
PLATEAU = ("L1: no clear plateau in the sweep (noise); read between 4 KiB and 16 KiB per "
           "thread, inside the reported size")


def _stream(**counted: float) -> dict:
    """extras.stream.DRAM: each kernel's counted best rate (B/s), one tight sample set."""
    return {k: {"bytes_per_s": v, "samples": [v, 0.99 * v]} for k, v in counted.items()}


DEMO = _stream(copy=23.8 * GB, scale=25.6 * GB, add=25.6 * GB, sum=22.3 * GB,
               triad=12.8 * GB)


def _dram(value: float) -> Ceiling:
    return Ceiling(value, level="DRAM", provenance="measured", method=TRIAD,
                   samples=(value, 0.99 * value))


# --- N1: the probe derives a ceiling consistent with DRAM --------------------------------

def test_a_disturbed_run_gives_triad_x_4_3_not_the_best_kernel():
    real = real_traffic(_dram(12.8 * GB), DEMO)
    assert real.value == pytest.approx(12.8 * GB * 4 / 3)          # 17.07 GB/s
    assert real.value == pytest.approx(17.07 * GB, rel=1e-3)
    assert real.value / (12.8 * GB) <= 1.5
    # the uncapped best is kept in the method; a warning names both figures and the kernels
    assert "left out as disturbed: scale 38.4 GB/s, copy 35.7 GB/s, add 34.1 GB/s, " \
           "sum 22.3 GB/s (the uncapped best 38.4 GB/s)" in real.method
    said = [w for w in real.warnings if w.startswith(f"{REAL_TRAFFIC}: STREAM")]
    assert len(said) == 1
    assert "scale 38.4 GB/s" in said[0] and "12.8 GB/s (triad, counted)" in said[0]
    assert "3.00x the DRAM ceiling" in said[0] and "disturbed between kernels" in said[0]
    assert "triad's 17.1 GB/s" in said[0]


def test_a_read_only_kernel_is_judged_on_the_consistent_ceiling():
    # gemv: AI 0.25 FLOP/B, 2.1 GFLOP/s, counter-measured bytes (real traffic)
    real = real_traffic(_dram(12.8 * GB), DEMO)
    assert 2.1 * GB / (0.25 * real.value) == pytest.approx(0.492, abs=1e-3)   # 49 %


def test_a_quiet_run_keeps_the_copy_shaped_figure():
    stream = _stream(copy=18.3 * GB, scale=20.0 * GB, add=18.6 * GB, sum=16.8 * GB)
    real = real_traffic(_dram(19.6 * GB), stream)
    assert real.value == pytest.approx(30.0 * GB)                  # scale 20.0 x 3/2
    assert not any("disturbed" in w for w in real.warnings)
    assert "left out" not in real.method


def test_only_the_kernels_beyond_the_bound_are_left_out():
    # copy 13.5 counted (real 20.25 = 1.58 x 12.8: consistent), scale 25.6 (38.4: not)
    stream = _stream(copy=13.5 * GB, scale=25.6 * GB)
    ceiling, name = real_traffic_ceiling(_dram(12.8 * GB), stream)
    assert (name, ceiling.value) == ("copy", pytest.approx(20.25 * GB))
    assert "left out as disturbed: scale 38.4 GB/s" in ceiling.method


# --- N1: a profile written before the fix is re-derived when loaded ----------------------

def _old_profile(stream: dict | None = DEMO) -> dict:
    """What rooflab wrote before: DRAM (real traffic) = scale's 38.4 GB/s beside DRAM 12.8."""
    memory = [{"level": "DRAM", "bytes_per_s": 12.8 * GB, "provenance": "measured",
               "method": TRIAD},
              {"level": REAL_TRAFFIC, "bytes_per_s": 38.4 * GB, "provenance": "derived",
               "method": "derived from this run's measured DRAM rates: the largest"}]
    return {"schema_version": 1, "host": {"name": "box"},
            "measured": {"name": "box measured (2 threads)", "kind": "measured",
                         "compute": [{"precision": "fp64", "unit": "vector",
                                      "flop_per_s": 1.14e11, "provenance": "measured"}],
                         "memory": memory},
            "extras": {"threads": 2} | ({"stream": {"DRAM": stream}} if stream else {})}


@pytest.mark.parametrize("stream", [DEMO, None])
def test_an_old_profile_is_made_consistent_when_loaded(stream):
    roof = profile_from_dict(_old_profile(stream)).measured
    real = roof.find_memory(REAL_TRAFFIC)
    assert real.value == pytest.approx(12.8 * GB * 4 / 3)
    assert any("this profile stores 38.4 GB/s, 3.00x its DRAM ceiling 12.8 GB/s" in w
               and "judged at 17.1 GB/s" in w for w in real.warnings)
    assert roof.find_memory("DRAM").value == 12.8 * GB              # DRAM itself stays
    # the reference count of --on me.json@2t reads the same
    at2 = roof_at_threads(_old_profile(stream), 2)
    assert at2.find_memory(REAL_TRAFFIC).value == pytest.approx(12.8 * GB * 4 / 3)


def test_an_old_profile_file_is_charted_with_the_flag(tmp_path):
    path = tmp_path / "old.json"
    path.write_text(json.dumps(_old_profile()))
    roof = load_roofs(str(path))[0]
    assert roof.find_memory(REAL_TRAFFIC).value == pytest.approx(17.07 * GB, rel=1e-3)
    # a read-only kernel is judged (and drawn) on the real-traffic ceiling: flagged `*`
    k = Kernel("k", {"fp64": 1e9}, {"DRAM": 1e8}, seconds=0.1,
               meta={"byte_count": "real traffic"})
    d = plot_roofline([roof], [k])
    assert REAL_TRAFFIC in caveats(d).split("flagged by the probe", 1)[-1]


def test_a_consistent_profile_is_left_as_written():
    d = _old_profile()
    d["measured"]["memory"][1]["bytes_per_s"] = 19.2 * GB           # 1.5 x 12.8
    real = profile_from_dict(d).measured.find_memory(REAL_TRAFFIC)
    assert real.value == 19.2 * GB and real.warnings == ()


# --- N2: a thread row keeps the run's caveats and its own flags --------------------------

def _level(value: float, samples=None) -> dict:
    return {"bytes_per_s": value, "samples": samples or [value, 0.99 * value]}


def _scaling_profile() -> dict:
    row1 = {"threads": 1, "L1": _level(50 * GB), "L2": _level(100 * GB),
            "DRAM": _level(8 * GB, [8.0 * GB, 6.4 * GB, 6.3 * GB, 6.35 * GB, 6.2 * GB]),
            "fp64": {"flop_per_s": 5e10, "samples": [5e10, 4.99e10], "calibrated": False}}
    row2 = {"threads": 2, "DRAM": _level(12.8 * GB)}
    memory = [{"level": "L1", "bytes_per_s": 6e11, "provenance": "measured"},
              {"level": "DRAM", "bytes_per_s": 12.8 * GB, "provenance": "measured",
               "method": TRIAD}]
    return {"schema_version": 1, "host": {"name": "box"},
            "measured": {"name": "box measured (2 threads)", "kind": "measured",
                         "compute": [{"precision": "fp64", "unit": "vector",
                                      "flop_per_s": 1e11, "provenance": "measured"}],
                         "memory": memory, "notes": [LOAD, PLATEAU, DRIFT]},
            "extras": {"threads": 2, "machine_load": {"other_cpu_share": 0.82,
                                                      "notes": [LOAD]},
                       "scaling": {"counts": [1, 2], "reference_threads": 2, "method": "m",
                                   "by_threads": {"1": row1, "2": row2}}}}


def test_a_thread_row_keeps_the_runs_load_and_drift_notes():
    notes = roof_at_threads(_scaling_profile(), 1).notes
    assert notes[0] == LOAD and DRIFT in notes
    assert PLATEAU not in notes            # the full roof's own sweep, not the row's
    assert any(n.startswith("measured (1 thread): the ceilings measured at 1 thread")
               for n in notes)


def test_a_thread_row_flags_levels_out_of_order_and_noisy_samples():
    roof = roof_at_threads(_scaling_profile(), 1)
    assert roof.find_memory("L1").warnings == (
        "L1 bandwidth: measured 50 GB/s, slower than L2 (100 GB/s), which is farther from "
        "the core: the probe was disturbed (other load on these cores); rerun on a quiet "
        "machine",)
    assert roof.find_memory("L2").warnings == ()
    # DRAM median 6.35 is 20.6 % below the best 8.0: flagged, and its real traffic with it
    dram = roof.find_memory("DRAM").warnings
    assert len(dram) == 1 and dram[0].startswith("DRAM bandwidth (1 thread row): samples "
                                                   "vary") and "20.6 % below the best" in dram[0]
    real = roof.find_memory(REAL_TRAFFIC)
    assert real.value == pytest.approx(8 * GB * 4 / 3) and real.warnings == dram
    fp64 = roof.find_compute("fp64").warnings
    assert fp64 == ("fp64 vector (1 thread row): calibration gave up (other load held "
                    "every call up), so the figure can read far low; rerun on a quiet "
                    "machine",)


def test_a_one_thread_chart_carries_the_footnote_and_marks():
    one = roof_at_threads(_scaling_profile(), 1)
    d = plot_roofline([one], [Kernel("k", {"fp64": 1e9}, {"DRAM": 1e8}, seconds=0.1)])
    words = caveats(d)
    assert ("measured under load: other processes used 82% of the CPUs while the probe "
            "ran") in words
    flagged = words.split("flagged by the probe", 1)[1]
    assert "L1" in flagged and "DRAM" in flagged and "fp64 vector" in flagged
    assert "L2" not in flagged


def test_a_quiet_row_says_nothing_more():
    d = _scaling_profile()
    d["measured"]["notes"] = [PLATEAU]
    del d["extras"]["machine_load"]
    row = d["extras"]["scaling"]["by_threads"]["1"]
    row["L1"], row["DRAM"] = _level(200 * GB), _level(8 * GB)
    row["fp64"]["calibrated"] = True
    roof = roof_at_threads(d, 1)
    assert all(c.warnings == () for c in (*roof.memory, *roof.compute))
    assert len(roof.notes) == 1
    assert roof.find_memory(REAL_TRAFFIC).value == pytest.approx(8 * GB * 4 / 3)

