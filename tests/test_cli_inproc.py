"""tests/cli_inproc.run_cli stands in for `python -m rooflab` in the occupancy and
coalescing tests (review s18 r1 F3): what it returns is what the process prints and exits
with, byte for byte, for a table, a JSON document and a usage error."""

from __future__ import annotations

import subprocess
import sys

import pytest
from cli_inproc import run_cli

CASES = [
    ("ai", "occupancy", "--block", "256", "--regs", "64", "--on", "a100-80gb-sxm"),
    ("ai", "elementwise", "1000000", "--stride", "4", "--json"),
    ("ai", "occupancy", "--block", "256", "--regs", "32", "--cc", "eight"),
]


@pytest.mark.parametrize("args", CASES, ids=["table", "json", "usage-error"])
def test_run_cli_answers_as_the_process_does(args):
    proc = subprocess.run([sys.executable, "-m", "rooflab", *args], capture_output=True,
                          text=True)
    here = run_cli(*args)
    assert (here.returncode, here.stdout, here.stderr) == (
        proc.returncode, proc.stdout, proc.stderr)
    assert proc.returncode == (2 if "eight" in args else 0)
    if "--on" in args:   # 256 threads = 8 warps, 64 regs -> 4 blocks on an A100 SM
        assert "4 blocks = 32 of 64 warps: theoretical occupancy 50.0 %" in here.stdout
