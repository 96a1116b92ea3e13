"""docs/python.md §9 shows a WhatIf as a notebook cell shows it (model/display_whatif.py);
the section used to say a WhatIf had no short display."""

from __future__ import annotations

from pathlib import Path

import pytest
from notebook_display import pretty  # IPython's where installed; it is no dependency

import rooflab
from rooflab.model.whatif import move_hardware

ROOT = Path(__file__).resolve().parents[1]


def _doc_block(first_line: str) -> str:
    """The output block of docs/python.md that starts with first_line."""
    text = (ROOT / "docs" / "python.md").read_text(encoding="utf-8")
    start = text.index(f"```\n{first_line}") + 4
    return text[start:text.index("```", start)].rstrip("\n")


def test_python_md_shows_the_whatif_display():
    # §9's w: decode b=1 (2.2e9 FLOP and bytes in 15 ms) moved from the catalog T4 (320
    # GB/s) to the A100 (2.039 TB/s): floor 2.2e9 / 2.039e12 = 1.079 ms. Fast end: that
    # floor at the T4's fraction of roof 6.875 / (15 - 0.005) + a 5 us launch = 2.358 ms;
    # slow end (the whole step's gap held): 0.005 + 1.079 + (15 - 6.875 - 0.005) = 9.204 ms
    t4, a100 = rooflab.load_roof("T4"), rooflab.load_roof("A100")
    k = rooflab.Kernel("decode b=1", flop={"fp16": 2.2e9}, bytes={"DRAM": 2.2e9},
                       seconds=0.015)
    w = move_hardware(t4, [k], a100)
    floor = 2.2e9 / 2.039e12
    assert w.total_after_s == pytest.approx(0.005e-3 + floor * (15 - 0.005) / 6.875,
                                            rel=1e-9)
    assert w.total_after_gap_held_s == pytest.approx(0.005e-3 + floor + 8.12e-3, rel=1e-9)
    block = _doc_block("WhatIf: on NVIDIA A100 80GB SXM")
    assert block == pretty(w)
    assert "total 15 ms -> 2.36 ms-9.2 ms (1.63x-6.36x)" in block
    text = (ROOT / "docs" / "python.md").read_text(encoding="utf-8")
    assert "has no short display" not in text
