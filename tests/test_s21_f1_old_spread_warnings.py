"""An older profile's "samples vary" warnings are said again from its samples by today's
rule (inclusive quartiles, model/sample_spread.py), not passed through with the old
figures beside today's iqr_rel (review s21 r1 F1).

The samples are a quick probe's of e6d1b50 (a profile written on 2026-12-01, its L2 and L3
ceilings copied here) and of 2b0a244 (its DRAM triad). Hand numbers, inclusive quartiles
of 5 samples at ranks 1 and 3 (0-based) of the sorted samples:
  L2 sorted 5.374 7.153 7.415 7.453 7.634 GB/s: IQR (7.453 - 7.153) / 7.415 = 4.05 %, median
     1 - 7.415 / 7.634 = 2.9 % below the best: steady (both <= 5 %). The old exclusive
     quartiles (ranks 1.5 and 4.5, 1-based) gave 17.3 %, the stored warning's figure.
  L3 sorted 2.194 2.532 3.284 4.041 11.403 GB/s: IQR (4.041 - 2.532) / 3.284 = 45.9 %,
     median 71.2 % below the best (stored: 163.2 %).
  DRAM (2b0a244) sorted 2.425 2.745 3.119 3.356 3.359 GB/s: IQR 19.6 % (stored 24.8 %),
     median 7.1 % below the best.
"""

from __future__ import annotations

import json

from rooflab.cli.main import main
from rooflab.hardware.profile import profile_from_dict, roof_at_threads
from rooflab.probe.stats import rates_warning

L2 = [7152792328.962112, 7414554800.839745, 5373827877.170793, 7634405138.235892,
      7453141982.040067]
L3 = [4041317518.350908, 2194011835.9757447, 2532452306.369617, 3284396432.117374,
      11402965154.144463]
DRAM = [2744851061.9736166, 2424651275.336846, 3355612892.90479, 3119458313.040314,
        3359031123.91218]
TAIL = ("other load on the machine or clock changes; rerun on a quiet machine or use "
        "--full")


def _old(label: str, iqr: str, gap: str) -> str:
    return f"{label}: samples vary (interquartile range {iqr} of the median, median {gap} " \
           f"below the best); {TAIL}"


def _memory(level: str, samples: list[float], *warnings: str) -> dict:
    return {"level": level, "bytes_per_s": max(samples), "kind": "measured",
            "samples": samples, "warnings": list(warnings)}


BELOW = ("fp64 vector: measured 2.59 GFLOP/s is only 3% of the nominal 103 GFLOP/s at the "
         "clock measured in this run: other load held the kernel up throughout; rerun on a "
         "quiet machine")
# the DRAM (real traffic) ceiling inherits DRAM's warning (probe/cpu/dram_ceiling.py): its
# own samples here are steady, so the inherited one must be said from DRAM's samples
REAL = [4.40e9, 4.41e9, 4.42e9, 4.43e9, 4.44e9]


def _profile() -> dict:
    return {
        "schema_version": 1, "created": "2026-12-01T10:00:00+00:00",
        "host": {"name": "old box"},
        "measured": {
            "name": "old box measured", "kind": "measured", "overhead_s": 1e-6,
            "compute": [{"precision": "fp64", "unit": "vector", "flop_per_s": 2.59e9,
                         "kind": "measured", "samples": [2.59e9, 2.58e9, 2.57e9, 2.59e9],
                         "warnings": [BELOW]}],
            "memory": [
                _memory("L2", L2, _old("L2 bandwidth", "17.3%", "2.9%")),
                _memory("L3", L3, _old("L3 bandwidth", "163.2%", "71.2%")),
                _memory("DRAM", DRAM, _old("DRAM bandwidth", "24.8%", "7.1%")),
                _memory("DRAM (real traffic)", REAL, _old("DRAM bandwidth", "24.8%", "7.1%"),
                        "DRAM (real traffic): the probe was disturbed between kernels"),
            ]},
        "extras": {},
    }


def _by_level(roof) -> dict:
    return {c.level: c for c in roof.memory}


def test_old_spread_warnings_restated_by_todays_rule():
    got = _by_level(profile_from_dict(_profile()).measured)
    # steady by today's rule: no warning, so no chart `*` and no record-table flag
    assert round(got["L2"].iqr_rel, 4) == 0.0405
    assert got["L2"].warnings == ()
    # one spread per ceiling, today's: the warning's figure is iqr_rel's
    assert round(got["L3"].iqr_rel, 3) == 0.459
    assert got["L3"].warnings == (_old("L3 bandwidth", "45.9 %", "71.2 %"),)
    assert got["DRAM"].warnings == (_old("DRAM bandwidth", "19.6 %", "7.1 %"),)
    # the inherited DRAM warning speaks of DRAM's samples; the other note stays as stored
    assert got["DRAM (real traffic)"].warnings == (
        _old("DRAM bandwidth", "19.6 %", "7.1 %"),
        "DRAM (real traffic): the probe was disturbed between kernels")


def test_other_warnings_and_todays_warnings_kept_as_written():
    prof = _profile()
    # a warning today's probe wrote (probe.stats.rates_warning) reads back the same
    today = rates_warning("L3 bandwidth", L3)
    assert "45.9 %" in today
    prof["measured"]["memory"][1]["warnings"] = [today]
    roof = profile_from_dict(prof).measured
    assert _by_level(roof)["L3"].warnings == (today,)
    assert roof.compute[0].warnings == (BELOW,)


def test_thread_row_keeps_no_stored_spread_beside_its_own():
    """A thread row's ceilings get their warning from their samples (_row_warnings); a
    stored old one is not kept beside it."""
    prof = _profile()
    prof["extras"] = {"threads": 2, "scaling": {"reference_threads": 2, "by_threads": {
        "1": {"threads": 1,
              "L2": {"bytes_per_s": max(L2), "samples": L2,
                     "warnings": [_old("L2 bandwidth", "17.3%", "2.9%")]},
              "L3": {"bytes_per_s": max(L3), "samples": L3,
                     "warnings": [_old("L3 bandwidth", "163.2%", "71.2%")]}},
        "2": {"threads": 2}}}}
    row = _by_level(roof_at_threads(prof, 1))
    # (L2 7.63 GB/s under L3's 11.4 also gets the level-order warning: not a spread one)
    assert [w for w in row["L2"].warnings if "samples vary" in w] == []
    (only,) = [w for w in row["L3"].warnings if "samples vary" in w]
    assert only.startswith("L3 bandwidth (1 thread row): samples vary (interquartile "
                           "range 45.9 % of the median, median 71.2 % below the best)")


def test_report_json_of_an_old_profile(tmp_path, capsys):
    prof, kernels = tmp_path / "profile.json", tmp_path / "k.json"
    prof.write_text(json.dumps(_profile()))
    kernels.write_text(json.dumps([{"name": "triad", "flop": {"fp64": 2e6},
                                    "bytes": {"DRAM": 2.4e7}, "seconds": 0.01}]))
    assert main(["report", str(kernels), "--on", str(prof), "--json"]) == 0
    memory = {c["level"]: c for c in json.loads(capsys.readouterr().out)["roof"]["memory"]}
    assert "warnings" not in memory["L2"]
    assert memory["L3"]["warnings"] == [_old("L3 bandwidth", "45.9 %", "71.2 %")]
    assert round(memory["L3"]["iqr_rel"], 3) == 0.459
