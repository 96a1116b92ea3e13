"""Session 22 f4, review r4 F4-F6: what the profiler files' exports and reports carry.

The rocprof WIDE sample (tests/test_rocprof.py) has two triad launches of 10 us, a GEMM
of 100 us, a zero-time launch 'broken' (line 5) and a row cut short (line 6).

F4: `rooflab rocprof` warns about the two skipped rows; `report` and `plot` dropped them
without a word in any format. F5: the analysis CSV's achieved_bytes_per_s was empty for
every kernel with FLOP (filled by --json and the bench CSV). F6: the CSV had no
provenance, so read back the counters' counted FLOP and bytes became "given", and it did
not name the roof its percent_of_roof was judged on.
"""

from __future__ import annotations

import csv
import json

import pytest
from test_rocprof import WIDE

from rooflab.bench.table import COLUMNS as BENCH_COLUMNS
from rooflab.bench.table import zoo_rows
from rooflab.cli.main import main
from rooflab.ingest.kernelfile_csv import kernels_from_csv
from rooflab.model.analysis import analyze
from rooflab.model.ceiling import Ceiling, Roof
from rooflab.model.kernel import Kernel

SKIPS = ("results.csv:5: launch 3 of 'broken' skipped: zero time (EndNs 150000 = "
         "BeginNs 150000)", "results.csv:6: row has 4 of 17 columns (file cut short?)")


@pytest.fixture()
def wide(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)   # the warnings name the file as given
    (tmp_path / "results.csv").write_text(WIDE)
    return "results.csv"


def test_report_warns_and_notes_the_skipped_rows(wide, capsys):
    assert main(["report", wide, "--on", "mi300x", "-o", "r.md"]) == 0
    err = capsys.readouterr().err
    for s in SKIPS:   # old: only 'wrote r.md'
        assert f"warning: {s}\n" in err
    md = open("r.md").read()
    for s in SKIPS:
        assert f"skipped: {s}" in md
    assert main(["report", wide, "--on", "mi300x", "--json"]) == 0
    notes = json.loads(capsys.readouterr().out)["notes"]
    assert [n for n in notes if n.startswith("skipped: ")] == [f"skipped: {s}" for s in SKIPS]


def test_plot_inputs_warn_about_the_skipped_rows_once(wide, capsys):
    # plot's path (cli/plot.py: load_inputs, then print_notes), without drawing a chart
    from rooflab.cli.inputs import load_inputs

    inputs = load_inputs([wide], ["mi300x"])
    inputs.print_notes()
    err = capsys.readouterr().err
    for s in SKIPS:   # warned, not also repeated as a note (old: not at all)
        assert err.count(s) == 1, err
        assert f"warning: {s}\n" in err
        assert f"skipped: {s}" in inputs.notes


def _rows(path: str) -> list[dict]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_analysis_csv_fills_bytes_per_s_and_provenance_and_reads_it_back(wide, capsys):
    assert main(["rocprof", wide, "--on", "mi300x", "-o", "k.csv"]) == 0
    rows = {(r["kernel"], r["level"]): r for r in _rows("k.csv")}
    triad = rows[("triad<…>", "DRAM")]
    # 2 launches x (32768 reads + 16384 writes of 64 B) = 6291456 B over 2 x 10 us
    assert float(triad["bytes"]) == 6291456
    assert float(triad["achieved_bytes_per_s"]) == pytest.approx(6291456 / 20e-6)  # old: ''
    assert triad["percent_of_bandwidth"] == ""   # the copies' cell only
    gemm = rows[("Cijk_Alik_Bljk_HHS_BH_MT128x128", "DRAM")]
    assert float(gemm["achieved_bytes_per_s"]) == pytest.approx(float(gemm["bytes"]) / 1e-4)
    assert (triad["flop_provenance"], triad["bytes_provenance"],
            triad["seconds_provenance"]) == ("counted", "counted", "measured")
    assert (triad["roof"], triad["roof_kind"]) == ("AMD Instinct MI300X", "nominal")
    capsys.readouterr()
    assert main(["report", "k.csv", "--on", "mi300x", "--json"]) == 0
    back = json.loads(capsys.readouterr().out)
    # old: {'flop': 'given', 'bytes': 'given', 'seconds': 'measured'}
    assert {k["name"]: k["provenance"] for k in back["kernels"]} == {
        n: {"flop": "counted", "bytes": "counted", "seconds": "measured"}
        for n in ("Cijk_Alik_Bljk_HHS_BH_MT128x128", "triad<…>")}
    # the old roof's name is a verdict of that file, not the kernels' meta
    assert all("roof" not in k.get("meta", {}) for k in back["kernels"])


ROOF = Roof(name="m", kind="measured", compute=(Ceiling(1e12, precision="fp32"),),
            memory=(Ceiling(1e11, level="DRAM"),))


def test_bench_csv_names_its_provenance_and_roof_too():
    k = Kernel(name="triad", flop={"fp32": 2e6}, bytes={"DRAM": 1.2e7}, seconds=2e-4,
               provenance={"flop": "counted", "bytes": "derived", "seconds": "measured"})
    row = zoo_rows(analyze(ROOF, [k]))[0]
    assert list(row) == list(BENCH_COLUMNS)
    assert row["achieved_bytes_per_s"] == pytest.approx(6e10)
    assert (row["flop_provenance"], row["bytes_provenance"], row["seconds_provenance"],
            row["roof"], row["roof_kind"]) == ("counted", "derived", "measured", "m",
                                              "measured")


def test_kernel_csv_without_provenance_columns_stays_given():
    (k,) = kernels_from_csv("name,flop,bytes,seconds,precision\nk,1e9,1e8,0.01,fp32\n")
    assert k.provenance == {"flop": "given", "bytes": "given", "seconds": "measured"}
    (k,) = kernels_from_csv("name,flop,bytes,seconds,precision,flop_provenance,"
                            "bytes_provenance\nk,1e9,1e8,0.01,fp32,Counted,\n")
    assert k.provenance == {"flop": "counted", "bytes": "given", "seconds": "measured"}
