"""Printed percents take the SI space, as README, the share columns and fmt_pct(space=True)
print them ('84 %'): the record table's measured / nominal column read '84%' above
'54 % of the measured roof' in the same column (session 31 hc). CSV/JSON keep numbers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PTS = str(ROOT / "examples" / "seeds" / "pts.json")
T4P = str(ROOT / "examples" / "seeds" / "t4p.json")


@pytest.mark.parametrize("fraction,decimals,want", [
    (0.84, 0, "84 %"), (0.125, 0, "12 %"), (0.0215, 1, "2.1 %"), (1.0, 0, "100 %"),
    (None, 0, "-"), (float("nan"), 1, "-"),
])
def test_fmt_fraction(fraction, decimals, want):
    from rooflab.units import fmt_fraction

    assert fmt_fraction(fraction, decimals) == want


def _row(text: str, name: str) -> list[str]:
    line = next(x for x in text.splitlines() if x.startswith(f"│ {name} "))
    return [c.strip() for c in line.split("│")[1:-1]]


def test_record_table_ratio_column_has_one_percent_form(monkeypatch):
    from cli_inproc import run_cli

    monkeypatch.setenv("COLUMNS", "250")
    r = run_cli("report", PTS, "--on", T4P)
    assert r.returncode == 0, r.stderr
    assert _row(r.stdout, "DRAM bandwidth")[3] == "84 %"
    assert _row(r.stdout, "fp16 tensor peak")[3] == "77 %"
    assert _row(r.stdout, "decode b=1: FLOP/s")[3] == "54 % of the measured roof"
    assert "84%" not in r.stdout


def test_profile_row_cells_and_the_json_keep_their_forms(capsys):
    """The table cell is text; the --json document keeps the fraction as a number (its
    'cells' are the table's text, and read as the table does)."""
    from rooflab.cli.main import main
    from rooflab.report.tables import ProfileRow

    row = ProfileRow("DRAM bandwidth", "B/s", 320e9, 270e9, spread=0.031, samples=5)
    assert row.cells()[3:5] == ("84 %", "3.1 %")
    assert main(["report", PTS, "--on", T4P, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    rows = [r for r in _record_rows(doc) if r["quantity"] == "DRAM bandwidth"]
    assert rows and rows[0]["ratio"] == pytest.approx(270 / 320)   # the number, unchanged
    assert rows[0]["cells"][3] == "84 %"   # the table's text, as the table prints it


def _record_rows(doc) -> list[dict]:
    """Every dict in the document that has a 'cells' list (the record table's rows)."""
    out, todo = [], [doc]
    while todo:
        x = todo.pop()
        if isinstance(x, dict):
            if "cells" in x and "quantity" in x:
                out.append(x)
            todo.extend(x.values())
        elif isinstance(x, list):
            todo.extend(x)
    return out
