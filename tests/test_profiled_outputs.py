"""`rooflab ncu/torch/rocprof -o FILE`: the file holds every kernel; --top trims the screen."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from rooflab.cli.main import main

FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "ncu" / "nersc-gpp"
pytestmark = pytest.mark.skipif(
    not FIXTURES.is_dir(), reason="../shared/fixtures (the ncu recordings) is not beside the clone")


def test_csv_output_holds_every_kernel_not_only_the_top_shown(tmp_path, capsys):
    files = [str(FIXTURES / f"output{i}.csv") for i in (1, 2, 3)]
    out = tmp_path / "all.csv"
    assert main(["ncu", *files, "--top", "1", "-o", str(out)]) == 0
    screen = capsys.readouterr().out
    assert "(top 1)" in screen and "[output3]" not in screen   # output1/2 are longer (30.5 s)
    rows = list(csv.DictReader(out.open()))
    # three launches (one per file), each at DRAM, L2 and L1
    assert len(rows) == 9
    assert {r["kernel"] for r in rows} == {f"sigma_gpp_gpu_34 [output{i}]" for i in (1, 2, 3)}
    # three files are three profiling runs: each kernel's share is of its own file's time
    assert [float(r["time_share"]) for r in rows if r["level"] == "DRAM"] == [1.0, 1.0, 1.0]
