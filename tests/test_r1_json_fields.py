"""Review r1_json F8, F4, F1, T1: a JSON field means one thing, under one name, in every verb.

F8: a copy kernel's % of its bandwidth ceiling is in every verb's `analysis` rows (it was in
    `report --json` only: `bench --json`, the verb that times copies, had none), and the
    bench CSV has the profiler verbs' analysis-CSV columns in their order.
F4: with ROOFLAB_ON choosing the roof, the `generator` block says so, so an archived
    document re-runs with the same roof.
F1: the work floor, the launch floor and the floor with launches carry one name each in
    every document (the older names stay, equal to them).
T1: docs/json.md says why `flop` is an object in kernels[] and a number in analysis[].
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from rooflab.cli.main import main
from rooflab.files import write_json
from rooflab.model import Kernel, analyze
from rooflab.model.ceiling import Ceiling, Roof
from rooflab.model.roof_schema import roof_to_dict
from rooflab.model.schema import analysis_to_dict

DOCS = Path(__file__).resolve().parents[1] / "docs"

# A roof with one DRAM ceiling of 2e12 B/s and a 5 us launch; a copy moving 1e9 B in 1 ms
# moves 1e9 / 1e-3 = 1e12 B/s = 100 x 1e12 / 2e12 = 50 % of the bandwidth.
ROOF = Roof(name="hand roof", kind="measured",
            compute=(Ceiling(1e13, precision="fp32", unit="vector", provenance="measured"),),
            memory=(Ceiling(2e12, level="DRAM", provenance="measured"),), overhead_s=5e-6)
COPY = Kernel(name="copy", flop={}, bytes={"DRAM": 1e9}, seconds=1e-3)
# with FLOP: 2e9 FLOP / 1e13 = 2e-4 s, 4e8 B / 2e12 = 2e-4 s: work floor 2e-4 s, 3 calls
# x 5 us = 1.5e-5 s launch floor, with launches max(2e-4, 1.5e-5) = 2e-4 s
SAXPY = Kernel(name="saxpy", flop={"fp32": 2e9}, bytes={"DRAM": 4e8}, seconds=5e-4, calls=3)
# launch-bound: 2e6 FLOP / 1e13 = 2e-7 s, 4e6 B / 2e12 = 2e-6 s: work floor 2e-6 s under a
# 5 us launch: with launches 5e-6 s
TINY = Kernel(name="tiny", flop={"fp32": 2e6}, bytes={"DRAM": 4e6}, seconds=1e-5)


def _rows(doc) -> dict[str, dict]:
    return {r["kernel"]: r for r in doc["analysis"]}


# --- F8: percent_of_bandwidth in every verb's analysis rows -------------------------------

def test_analysis_rows_carry_the_copy_percent_of_bandwidth():
    rows = _rows(analysis_to_dict(analyze(ROOF, [COPY, SAXPY])))
    assert rows["copy"]["achieved_bytes_per_s"] == pytest.approx(1e12)
    assert rows["copy"]["percent_of_bandwidth"] == pytest.approx(50.0)   # old: no such key
    assert rows["copy"]["percent_of_roof"] is None
    assert rows["saxpy"]["percent_of_bandwidth"] is None                  # it has FLOP/s


@pytest.fixture
def roof_file(tmp_path):
    path = tmp_path / "roof.json"
    write_json(path, {"roof": roof_to_dict(ROOF)})
    return str(path)


def test_bench_json_and_report_json_give_the_copy_the_same_percent(roof_file, tmp_path, capsys):
    """The reviewer's command: `bench --json` had null where `report --json` on the same
    kernels and roof gave 138.1 %."""
    out = tmp_path / "bench.json"
    assert main(["bench", "--quick", "--only", "copy", "--on", roof_file, "-o", str(out)]) == 0
    bench = _rows(json.loads(out.read_text()))["copy_fp64"]
    capsys.readouterr()
    assert main(["report", str(out), "--on", roof_file, "--json"]) == 0
    report = _rows(json.loads(capsys.readouterr().out))["copy_fp64"]
    # measured, so no fixed figure: the % is bytes/s over the 2e12 B/s DRAM ceiling
    assert bench["percent_of_bandwidth"] == pytest.approx(
        100 * bench["achieved_bytes_per_s"] / 2e12)
    assert bench["percent_of_bandwidth"] == pytest.approx(report["percent_of_bandwidth"])


def test_bench_csv_has_the_analysis_csv_columns_in_their_order(roof_file, tmp_path, capsys):
    from rooflab.cli.profiled import BANDWIDTH_COLUMNS, COLUMNS

    out = tmp_path / "zoo.csv"
    assert main(["bench", "--quick", "--only", "copy", "--on", roof_file, "-o", str(out)]) == 0
    with out.open() as f:
        reader = csv.DictReader(f)
        header, rows = reader.fieldnames, list(reader)
    shared = COLUMNS + BANDWIDTH_COLUMNS
    # old: kernel,precision,level,flop,bytes,ai,seconds,calls,... without percent_of_bandwidth
    assert tuple(header[:len(shared)]) == shared
    assert header[len(shared):] == ["floor_s", "floor_ratio", "best_floor_ratio", "flags"]
    copy = rows[0]
    assert float(copy["percent_of_bandwidth"]) == pytest.approx(
        100 * float(copy["achieved_bytes_per_s"]) / 2e12)
    assert float(copy["time_share"]) == 1.0          # the only kernel


def test_bench_table_prints_the_copy_percent_of_bandwidth():
    """The terminal table's % of roof for a copy is its bandwidth share (50 %, above), as
    `ncu` and `report` print it, with their note; it printed '-'."""
    from rich.console import Console

    from rooflab.bench.table import zoo_table

    console = Console(width=200, record=True)
    console.print(zoo_table(analyze(ROOF, [COPY])))
    text = console.export_text()
    row = next(line for line in text.splitlines() if line.startswith("│ copy "))
    assert "50 %" in row and "1 TB/s" in row
    assert ("copy: no FLOP, so achieved is the bytes/s it moved and % of roof is of the DRAM "
            "bandwidth ceiling") in text


# --- F4: ROOFLAB_ON in the generator block ------------------------------------------------

def _generator(capsys, *args) -> dict:
    capsys.readouterr()
    assert main(list(args)) == 0
    return json.loads(capsys.readouterr().out)["generator"]


@pytest.mark.parametrize("verb", [["report", "@K"], ["ai", "matmul", "256", "256", "256"]],
                         ids=["report", "ai"])
def test_generator_names_rooflab_on(verb, tmp_path, monkeypatch, capsys):
    kernels = tmp_path / "k.json"
    write_json(kernels, {"kernels": [{"name": "copy", "bytes": {"DRAM": 1e9},
                                      "seconds": 1e-3}]})
    args = [str(kernels) if a == "@K" else a for a in verb]
    monkeypatch.setenv("ROOFLAB_ON", "T4")
    gen = _generator(capsys, *args, "--json")
    assert gen["command"] == ["rooflab", *args, "--json"]
    assert gen["env"] == {"ROOFLAB_ON": "T4"}                 # old: no env key
    # an explicit --on wins over the variable: the command line alone says it
    assert "env" not in _generator(capsys, *args, "--on", "A100", "--json")
    monkeypatch.delenv("ROOFLAB_ON")
    assert "env" not in _generator(capsys, *args, "--on", "A100", "--json")


# --- F1: one name per floor in every document ---------------------------------------------

def test_analysis_rows_name_the_three_floors():
    rows = _rows(analysis_to_dict(analyze(ROOF, [SAXPY, TINY])))
    s, t = rows["saxpy"], rows["tiny"]
    assert (s["work_floor_s"], s["launch_floor_s"], s["with_launches_s"]) == pytest.approx(
        (2e-4, 1.5e-5, 2e-4))
    assert (t["work_floor_s"], t["launch_floor_s"], t["with_launches_s"]) == pytest.approx(
        (2e-6, 5e-6, 5e-6))
    # the older keys stay, equal
    assert (t["floor_s"], t["overhead_floor_s"]) == (t["work_floor_s"], t["launch_floor_s"])


def test_a_roof_without_a_launch_cost_has_the_work_floor_with_launches():
    roof = Roof(name="no launch", kind="measured", compute=ROOF.compute, memory=ROOF.memory)
    t = _rows(analysis_to_dict(analyze(roof, [TINY])))["tiny"]
    assert t["launch_floor_s"] is None and t["with_launches_s"] == pytest.approx(2e-6)


def test_one_floor_one_name_across_ai_whatif_and_their_analysis_rows(tmp_path, capsys):
    """The reviewer's matmul 256^3 on a T4: work 393216 B / 320 GB/s = 1.2288e-06 s, launch
    5e-06 s, with launches 5e-06 s; `ai`, its analysis row and whatif's move say each
    under the same key."""
    doc = tmp_path / "m256.json"
    capsys.readouterr()
    assert main(["ai", "matmul", "256", "256", "256", "--on", "t4", "--json"]) == 0
    ai = json.loads(capsys.readouterr().out)
    doc.write_text(json.dumps(ai))     # as `> m256.json` does
    row = ai["analysis"][0]
    assert row["work_floor_s"] == ai["work_floor_s"] == pytest.approx(1.2288e-06)
    assert row["launch_floor_s"] == ai["launch_floor_s"] == pytest.approx(5e-06)
    assert row["with_launches_s"] == ai["time_floor_s"] == pytest.approx(5e-06)
    capsys.readouterr()
    assert main(["whatif", str(doc), "--on", "T4", "--precision", "fp32", "--json"]) == 0
    w = json.loads(capsys.readouterr().out)
    move, after = w["moves"][0], w["after"]["analysis"][0]
    assert move["before_work_floor_s"] == row["work_floor_s"]
    assert move["before_with_launches_s"] == row["with_launches_s"]
    assert move["after_work_floor_s"] == after["work_floor_s"]
    assert move["after_with_launches_s"] == after["with_launches_s"]


def test_llm_and_ai_use_the_names_too(capsys):
    assert main(["ai", "matmul", "256", "256", "256", "--on", "t4", "--json"]) == 0
    ai = json.loads(capsys.readouterr().out)
    assert ai["with_launches_s"] == ai["time_floor_s"]
    assert main(["llm", "tinyllama", "--on", "A100", "--json"]) == 0
    decode = json.loads(capsys.readouterr().out)["llm"]["decode"]
    assert decode["work_floor_s"] == decode["floor_s"]


def test_docs_json_has_the_floor_glossary_and_the_flop_shapes():
    text = (DOCS / "json.md").read_text(encoding="utf-8")
    glossary = text.split("### Floor keys", 1)[1].split("\n## ", 1)[0]
    for key in ("work_floor_s", "launch_floor_s", "with_launches_s", "overhead_floor_s",
                "time_floor_s", "before_floor_s", "tpot_with_launches_s", "fused_floor_s"):
        assert f"{key}`" in glossary, key      # `analysis[].overhead_floor_s` too
    assert "### Why `flop` is an object in `kernels[]` and a number elsewhere" in text
    assert "`percent_of_bandwidth`" in text and '"env": {"ROOFLAB_ON"' in text
