"""`rooflab compare before after -o moves.png`: the two points of a kernel say which is which.

Before, both labels read "sigma_gpp_gpu_34"; only the arrowhead told before from after, and
the 2.48x the table printed was nowhere on the chart.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rooflab.cli.compare import _labelled
from rooflab.cli.main import main
from rooflab.model import Kernel
from rooflab.model.compare import Match

GPP = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "ncu" / "nersc-gpp"


def test_chart_names_carry_before_after_and_the_speed_up():
    # 30.5 s -> 12.3 s: 2.48x
    before = Kernel("k", {"fp64": 2.6e12}, {"DRAM": 5.16e11}, seconds=30.5)
    after = Kernel("k", {"fp64": 1.09e12}, {"DRAM": 1.65e11}, seconds=12.3)
    b, a = _labelled(Match("k", before, after))
    assert (b.name, a.name) == ("k (before)", "k (after, 2.48x)")
    assert a.flop == after.flop and b.seconds == 30.5          # only the names change


def test_compare_chart_of_two_real_steps_is_written(tmp_path, capsys):
    if not (GPP / "output1.csv").is_file():
        pytest.skip(f"NERSC GPP recordings absent at {GPP} (CI lays ../shared beside the clone)")
    png = tmp_path / "moves.png"
    assert main(["compare", str(GPP / "output1.csv"), str(GPP / "output5.csv"),
                 "--on", "RTX 4060 Laptop GPU", "-o", str(png)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "30.5 s │ 12.3 s │ 2.48x" in out and png.stat().st_size > 10_000
