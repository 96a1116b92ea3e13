"""`rooflab report --json` carries the gain's reachable time and speed-up, as the terminal
and Markdown report print them (diagnose.Diagnosis.reachable_s / gain_speedup).

Hand numbers (tests/test_gain_floor.py): an RMSNorm of 6 us on a T4, work floor 38.4 ns,
launch floor 1 x 5 us -> reachable max(38.4 ns, 5 us) = 5e-6 s, saved 1e-6 s,
speed-up 6 / 5 = 1.2 (the work floor alone: headroom 156.25, kept as it was).
"""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main

RMS = {"name": "rmsnorm", "flop": {"fp16": 8192}, "bytes": {"DRAM": 12288},
       "seconds": 6e-6, "meta": {"op": "rmsnorm"}}


def _report_json(tmp_path, capsys, kernel):
    path = tmp_path / "k.json"
    path.write_text(json.dumps({"kernels": [kernel]}))
    assert main(["report", str(path), "--on", "T4", "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_report_json_has_reachable_and_speedup(tmp_path, capsys):
    (d,) = _report_json(tmp_path, capsys, RMS)["diagnosis"]
    assert d["reachable_s"] == pytest.approx(5e-6, rel=1e-12)
    assert d["gain_speedup"] == pytest.approx(1.2, rel=1e-12)
    assert d["gain_s"] == pytest.approx(1e-6, rel=1e-9)
    assert d["headroom"] == pytest.approx(156.25, rel=1e-9)


def test_report_json_without_a_time(tmp_path, capsys):
    # no measured time: the floor is still known, the speed-up is not
    (d,) = _report_json(tmp_path, capsys, {k: v for k, v in RMS.items() if k != "seconds"})[
        "diagnosis"]
    assert d["reachable_s"] == pytest.approx(5e-6, rel=1e-12)
    assert d["gain_speedup"] is None
