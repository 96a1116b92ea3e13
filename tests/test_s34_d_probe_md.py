"""docs/probe.md's record table (`rooflab probe -o profile.json`) names every kind of row a
probe prints today. Its block is a run of 2026-11-29, before the probe measured the scalar
(no SIMD) peaks and derived the real-traffic DRAM: a new user's probe printed `fp64 scalar
peak`, `DRAM (real traffic) bandwidth`, `ridge fp64 vector / DRAM` and `ridge fp32 vector /
L1` rows the page never named (session 34, helper D). The rows of the session's real quick
probe are compared by their form: the precision and the cache level stand for any."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _form(text: str) -> str:
    """Whitespace collapsed, precisions as P and cache levels as C."""
    text = re.sub(r"\s+", " ", text)
    text = re.sub(r"\b(fp64|fp32|fp16|bf16|fp8|int8|int4|tf32)\b", "P", text)
    return re.sub(r"\b(L1|L2|L3)\b", "C", text)


def test_probe_md_names_every_kind_of_row_of_a_real_probe(quick_cpu_probe):
    from rooflab.report.tables import profile_rows

    profile, _ = quick_cpu_probe
    rows = [r.quantity for r in profile_rows(profile)]
    # a quick probe on any x86 or Arm host: both units of fp64 and fp32, the derived row
    assert {"fp64 scalar peak", "fp64 vector peak", "DRAM (real traffic) bandwidth",
            "ridge fp64 scalar / DRAM", "ridge fp64 vector / DRAM"} <= set(rows)
    page = _form((ROOT / "docs" / "probe.md").read_text(encoding="utf-8"))
    assert [q for q in rows if _form(q) not in page] == []


def test_the_form_keeps_what_a_row_says():
    # a precision or a level stands for any; the unit and the row's kind do not
    assert _form("ridge fp32 vector / L1") == _form("ridge bf16 vector / L3")
    assert _form("ridge fp64 scalar / DRAM") != _form("ridge fp64 / DRAM")
    assert _form("DRAM (real traffic)\nbandwidth") == "DRAM (real traffic) bandwidth"
