"""docs/specs.md's `rooflab specs show t4` example is the command's output at 80 columns,
the whole block (s20 x2 F11: it lacked the memory_gb note and the memory table's ridge
column, `memory ceilings, ridge vs fp16 tensor`, 320 GB/s against 65 TFLOP/s: 203)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

DOC = Path(__file__).resolve().parents[1] / "docs" / "specs.md"
COMMAND = "$ rooflab specs show t4"


def _doc_block() -> list[str]:
    lines = DOC.read_text(encoding="utf-8").splitlines()
    start = lines.index(COMMAND) + 1
    return lines[start:lines.index("```", start)]


def test_the_specs_show_t4_example_is_the_output():
    env = dict(os.environ, COLUMNS="80", NO_COLOR="1")
    out = subprocess.run([sys.executable, "-m", "rooflab", "specs", "show", "t4"],
                         capture_output=True, text=True, env=env, check=True).stdout
    shown = [line.rstrip() for line in out.splitlines()]
    assert _doc_block() == shown
    # the parts the old block lacked, by hand: 65e12 / 320e9 = 203 FLOP/B
    assert "memory ceilings, ridge vs fp16 tensor" in shown
    assert any("DRAM" in line and "320 GB/s" in line and " 203 " in line for line in shown)
    assert any("memory_gb 16 is the marketing figure" in line for line in shown)
