"""Derived catalog numbers carry no binary float noise in the JSON a dashboard archives:
96 cores x 2.4 GHz x 16 FLOP/cycle is 3.6864e12 (was 3686399999999.9995, ridge
7.999999999999999), a 10 us launch floor is 1e-05 s (was 9.999999999999999e-06)."""

from __future__ import annotations

import json

from rooflab.cli.main import main
from rooflab.model.roofline import cpu_peak_flop_per_s


def test_cpu_peak_is_exact_for_decimal_clocks():
    assert cpu_peak_flop_per_s(96, 2.4, 512, 64, 1) == 96 * 2_400_000_000 * 8 * 2
    assert cpu_peak_flop_per_s(2, 3.69, 256, 64, 2) == 2 * 3_690_000_000 * 4 * 2 * 2


def test_epyc_9654_peaks_and_ridges_are_clean(capsys):
    assert main(["specs", "show", "EPYC 9654", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    text = json.dumps(doc)
    assert "99999999" not in text and "00000001" not in text
    # fp64 96 x 3.55 GHz x 16 = 5.4528e12 over 460.8 GB/s: ridge 11.8333 (fp32 23.6667)
    ridges = {r["ridge"] for r in doc["device"]["ridges"]}
    assert {round(r, 4) for r in ridges} >= {11.8333, 23.6667}
    peaks = {r["flop_per_s"] for r in doc["device"]["ridges"]}
    assert 5452800000000.0 in peaks and 10905600000000.0 in peaks


def test_catalog_launch_floors_are_clean(capsys):
    assert main(["specs", "list", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    floors = {d["roof"].get("overhead_s") for d in doc["devices"] if "roof" in d}
    assert 1e-05 in floors and 9.999999999999999e-06 not in floors
