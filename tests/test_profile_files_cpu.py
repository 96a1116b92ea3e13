"""report, plot and compare read likwid-perfctr and perf stat files as the `likwid` and `perf`
verbs do: profile_files tells them apart from rooflab's own kernel CSV by content."""

from __future__ import annotations

import json

import pytest
from test_likwid import MEM_DP
from test_perf_stat import CSV, FLOP, TEXT

from rooflab.cli.main import main
from rooflab.ingest.profile_files import file_kind


@pytest.mark.parametrize("text, kind", [(MEM_DP, "likwid"), (CSV, "perf"), (TEXT, "perf"),
                                        ("name,flop,bytes,seconds\nduration_time,1e9,1e8,0.01\n",
                                         "rooflab")])
def test_file_kind_by_content(tmp_path, text, kind):
    path = tmp_path / "run.csv"
    path.write_text(text)
    assert file_kind(str(path)) == kind


def test_report_reads_a_perf_stat_file(tmp_path, capsys):
    path = tmp_path / "run.csv"
    path.write_text(CSV)
    assert main(["report", str(path), "--on", "EPYC 9654", "--json"]) == 0
    kernels = json.loads(capsys.readouterr().out)["kernels"]
    # 4.02e8 FLOP (ingest/perf_stat.py's weights) over 2304 MiB in 0.5 s
    assert sum(kernels[0]["flop"].values()) == pytest.approx(FLOP)
    assert kernels[0]["bytes"]["DRAM"] == pytest.approx(2304 * 2.0 ** 20)


def test_report_reads_a_likwid_file(tmp_path, capsys):
    path = tmp_path / "run.csv"
    path.write_text(MEM_DP)
    assert main(["report", str(path), "--on", "EPYC 9654", "--json"]) == 0
    names = {k["name"]: k for k in json.loads(capsys.readouterr().out)["kernels"]}
    # test_likwid's triad region: 4.02e8 FLOP, 2.4 GB, 0.5 s (the longer thread)
    assert sum(names["triad"]["flop"].values()) == pytest.approx(4.02e8)
    assert names["triad"]["bytes"]["DRAM"] == pytest.approx(2.4e9)
