"""`rooflab ncu` on the envelope roof (no --on, no recorded peaks) in --json says what the
terminal and HTML say (s19 f4 item 3): a kernel that sets its own ceiling has "no roof"
(it read the model's "compute"), any other keeps its class with "relative": true
(docs/json.md, an analysis point). Seed 000's timed ncu export: sgemm 2.15 GFLOP in
1.1 ms is the envelope's compute ceiling (100 %), copyKernel (no FLOP) its DRAM one."""

from __future__ import annotations

import json
from pathlib import Path

from cli_inproc import run_cli

CSV = Path(__file__).resolve().parents[1] / "examples" / "seeds" / "seed000_ncu_timed.csv"


def _points(*args):
    r = run_cli("ncu", str(CSV), "--json", *args)
    assert r.returncode == 0, r.stderr
    return {p["kernel"]: p for p in json.loads(r.stdout)["analysis"]}


def test_envelope_json_says_no_roof_as_the_table_does():
    pts = _points()
    assert pts["sgemm"]["percent_of_roof"] == 100.0
    assert pts["sgemm"]["bound"] == "no roof"
    assert "relative" not in pts["sgemm"]
    # copyKernel (no FLOP) is 100 % of the envelope's DRAM ceiling: it set that one
    assert pts["copyKernel"]["bound"] == "no roof"
    assert "relative" not in pts["copyKernel"]
    table = run_cli("ncu", str(CSV)).stdout
    assert "no roof (give --on)" in table and "memory (relative)" not in table


def test_a_real_roof_keeps_the_class():
    pts = _points("--on", "A100 40GB SXM")
    assert pts["sgemm"]["bound"] == "compute"
    assert all("relative" not in p for p in pts.values())


def test_level_view_on_the_envelope_too():
    pts = _points("--level", "DRAM")
    assert pts["sgemm"]["bound"] == "no roof"
