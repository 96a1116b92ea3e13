"""--level as a kernel writer types it: 'dram' works, a level the files lack is an error.

Before: `rooflab ncu out.csv --level L3` (a GPU has no L3 counters) printed an empty table
and exited 0; `--level dram` was refused although every other place reads 'dram'.
"""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main


def test_level_the_files_lack_is_an_error(output4, capsys):
    assert main(["ncu", output4, "--level", "L3"]) == 2
    err = capsys.readouterr().err
    assert "error: --level L3: no kernel in these files has L3 bytes; they have L1, L2, DRAM" in err


def test_lower_case_level_is_read(output4, capsys):
    assert main(["ncu", output4, "--level", "dram", "--json"]) == 0
    points = json.loads(capsys.readouterr().out)["analysis"]
    assert {p["level"] for p in points} == {"DRAM"}
    # 149,562,986,752 B and 2,320,762,293,564 FLOP: AI 15.52
    assert points[0]["ai"] == pytest.approx(15.517, abs=1e-3)


def test_plot_reads_lower_case_level_too(output4, tmp_path, capsys):
    png = tmp_path / "d.png"
    assert main(["plot", output4, "--on", "L4", "--level", "dram", "-o", str(png),
                 "--json"]) == 0
    drawn = json.loads(capsys.readouterr().out)
    assert {p["level"] for p in drawn["drawn"]["points"]} == {"DRAM"}
