"""Seed 004's record table in every report (review 18a F11), the precision column's honest
word for a stand-in ceiling, and the bounded no-JavaScript chart of the HTML report.

Values by hand from seed 004's T4 (examples/seeds/t4p.json: nominal 65 TFLOP/s fp16 tensor
and 320 GB/s, measured 50 TFLOP/s and 270 GB/s) and its decode point (pts.json: 2.2 GFLOP,
2.2 GB, 15 ms):
  bandwidth 270 / 320 = 0.84375 -> 84 %; peak 50 / 65 = 0.769 -> 77 %;
  ridge 65e12 / 320e9 = 203.125 nominal, 50e12 / 270e9 = 185.19 measured;
  decode floor on the nominal roof 2.2e9 B / 320e9 B/s = 6.875 ms, 15 / 6.875 = 2.18x;
  decode FLOP/s 2.2e9 / 0.015 = 147 GFLOP/s against 320 GFLOP/s attainable at AI 1.
"""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import pytest

from rooflab.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
SEEDS = ROOT / "examples" / "seeds"


def run(capsys, monkeypatch, *args):
    monkeypatch.setenv("COLUMNS", "200")   # one table row per line
    code = main([str(SEEDS / a) if (SEEDS / a).is_file() else str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def _cells(line: str) -> list[str]:
    return [c.strip() for c in re.split(r"[│|]", line)[1:-1]]


def _table(text: str, first: str) -> dict[str, list[str]]:
    """The rows of a terminal (│) or Markdown (|) table by their first cell."""
    rows = {}
    for line in text.splitlines():
        cells = _cells(line)
        if len(cells) == 4 and cells[0] not in ("", "quantity", "---"):
            rows[cells[0]] = cells
    assert first in rows, text
    return rows


# ------------------------------------------------------------------ 1. the terminal report

def test_terminal_report_prints_seed004s_record_table(capsys, monkeypatch):
    code, out, _ = run(capsys, monkeypatch, "report", "pts.json", "--on", "t4p.json")
    assert code == 0
    assert "Record table (nominal vs measured)" in out
    rows = _table(out, "DRAM bandwidth")
    assert rows["DRAM bandwidth"][1:] == ["320 GB/s", "270 GB/s", "84 %"]
    assert rows["fp16 tensor peak"][1:] == ["65 TFLOP/s", "50 TFLOP/s", "77 %"]
    assert rows["ridge fp16 / DRAM"][1:] == ["203", "185", "91 %"]
    assert rows["decode b=1: FLOP/s"][1:3] == ["320 GFLOP/s", "147 GFLOP/s"]
    assert rows["decode b=1: time"][1:3] == ["6.88 ms (floor)", "15 ms"]
    assert rows["decode b=1: time"][3].startswith("2.18x the floor")
    # above the priorities, as in the .md report
    assert out.index("Record table") < out.index("Top kernels to work on")


def test_terminal_record_table_needs_both_roofs(capsys, monkeypatch):
    # a catalog roof and a one-roof file have no nominal column to print
    for on in ("T4", "seed000roof.json"):
        code, out, _ = run(capsys, monkeypatch, "report", "pts.json", "--on", on)
        assert code == 0 and "Record table" not in out, on


# ------------------------------------------------------------------ 1. --json, one source

def test_report_json_has_the_record_table_with_numbers(capsys, monkeypatch):
    code, out, _ = run(capsys, monkeypatch, "report", "pts.json", "--on", "t4p.json", "--json")
    assert code == 0
    rows = {r["quantity"]: r for r in json.loads(out)["record_table"]}
    bw = rows["DRAM bandwidth"]
    assert (bw["unit"], bw["nominal"], bw["measured"]) == ("B/s", 320e9, 270e9)
    assert bw["ratio"] == pytest.approx(0.84375)
    assert rows["fp16 tensor peak"]["ratio"] == pytest.approx(50 / 65)
    ridge = rows["ridge fp16 / DRAM"]
    assert (ridge["nominal"], ridge["measured"]) == (pytest.approx(203.125),
                                                     pytest.approx(50e12 / 270e9))
    tpot = rows["decode b=1: time"]
    assert (tpot["unit"], tpot["nominal"], tpot["measured"]) == ("s", pytest.approx(6.875e-3),
                                                                 0.015)
    assert tpot["ratio"] == pytest.approx(0.015 / 6.875e-3)
    rate = rows["decode b=1: FLOP/s"]
    assert (rate["nominal"], rate["measured"]) == (pytest.approx(320e9),
                                                   pytest.approx(2.2e9 / 0.015))
    assert rate["cells"][3] == "54 % of the measured roof"


def test_terminal_md_and_json_say_the_same_rows(capsys, monkeypatch, tmp_path):
    md = tmp_path / "r.md"
    _, term, _ = run(capsys, monkeypatch, "report", "pts.json", "--on", "t4p.json", "-o", str(md))
    _, out, _ = run(capsys, monkeypatch, "report", "pts.json", "--on", "t4p.json", "--json")
    cells = [r["cells"] for r in json.loads(out)["record_table"]]
    assert len(cells) == 4 + 2 * 3   # B, P, ridge, launch floor; two rows per kernel
    text = md.read_text()
    section = text[text.index("## Record table"):text.index("## Top kernels")]
    assert list(_table(section, "DRAM bandwidth").values()) == cells
    assert list(_table(term, "DRAM bandwidth").values()) == cells


def test_report_json_has_no_record_table_without_a_profile(capsys, monkeypatch):
    _, out, _ = run(capsys, monkeypatch, "report", "pts.json", "--on", "T4", "--json")
    assert "record_table" not in json.loads(out)


def test_report_help_mentions_the_record_table(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    assert main(["report", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "record table" in text and '"record_table"' in text


# ------------------------------------------------------------------ 2. precision column

def test_precision_column_says_the_fallback(capsys, monkeypatch, tmp_path):
    md = tmp_path / "s0.md"
    code, _, _ = run(capsys, monkeypatch, "report", "seed000.csv", "--on", "seed000roof.json",
                     "-o", str(md))
    assert code == 0
    text = md.read_text()
    # seed 000's kernels are fp32; its roof has only the 280 TFLOP/s fp16 tensor ceiling
    assert "| conv2d_3x3 | fp32 -> fp16 tensor (fallback) | DRAM | 7.5 |" in text
    assert "fp32 tensor" not in text.replace("fp32 -> fp16 tensor", "")


def test_precision_column_unchanged_where_the_roof_has_the_ceiling(capsys, monkeypatch,
                                                                   tmp_path):
    md = tmp_path / "r.md"
    run(capsys, monkeypatch, "report", "pts.json", "--on", "t4p.json", "-o", str(md))
    text = md.read_text()
    assert "| decode b=1 | fp16 tensor | DRAM | 1 |" in text
    assert "fallback" not in text.split("## Kernels on the roof")[1].split("##")[0]


def test_precision_cell_of_a_vector_kernel_on_a_tensor_only_roof():
    from rooflab.model.analysis import analyze
    from rooflab.model.ceiling import Ceiling, Roof
    from rooflab.model.kernel import Kernel
    from rooflab.report.markdown import precision_cell

    roof = Roof(name="tensor only", kind="measured",
                compute=(Ceiling(280e12, precision="fp16", unit="tensor",
                                 provenance="measured"),),
                memory=(Ceiling(1.8e12, level="DRAM", provenance="measured"),))
    k = Kernel(name="relu", flop={"fp16": 1e6}, bytes={"DRAM": 4e6}, seconds=1e-5,
               unit="vector")
    a = analyze(roof, [k])
    assert precision_cell(a, a.points[0]) == "fp16 vector -> fp16 tensor (fallback)"


# ------------------------------------------------------------------ 3. the static chart's cost

def _display(n: int):
    from rooflab.hardware.catalog import lookup_roof
    from rooflab.model.kernel import Kernel
    from rooflab.report.chart import roofline_data

    roof = lookup_roof("T4")
    # kernel i: 1 GFLOP at AI 10 in (i + 1) ms: 1 TFLOP/s down to 1.7 GFLOP/s, under the
    # 3.2 TFLOP/s the T4's 320 GB/s allows at AI 10
    kernels = [Kernel(name=f"k{i:03d}", flop={"fp32": 1e9}, bytes={"DRAM": 1e8},
                      seconds=(i + 1) * 1e-3) for i in range(n)]
    return roofline_data([roof], kernels, place_labels=False)


def test_static_chart_draws_every_kernel_of_an_ordinary_report():
    from rooflab.report.html_static import STATIC_ALL, bounded_display

    d = _display(STATIC_ALL)
    assert bounded_display(d) == (d, "")


def test_static_chart_draws_the_longest_kernels_beyond_the_bound():
    from rooflab.report.html_static import STATIC_SHOWN, bounded_display

    d = _display(600)
    small, note = bounded_display(d)
    assert STATIC_SHOWN == 200
    kept = {d.kernels[p.kernel_index].name for p in small.points}
    # the 200 longest: k400 (401 ms) .. k599 (600 ms)
    assert kept == {f"k{i:03d}" for i in range(400, 600)}
    # their share: (401 + ... + 600) / (1 + ... + 600) = 100100 / 180300 = 55.5 %
    assert note == ("400 of 600 kernels not drawn (the 200 longest are, 55.5 % of the time; "
                    "the interactive chart and the tables below have every one)")
    assert small.dropped == note
    assert small.unlabelled == 200 - len({p.kernel_index for p in small.points if p.text})
    assert small.xlim == d.xlim and small.ylim == d.ylim
    assert len(d.points) == 600   # the interactive chart's display is left whole


def test_static_chart_caption_says_what_it_left_out():
    pytest.importorskip("matplotlib")
    from rooflab.report.html_static import static_chart

    block = static_chart(_display(600), "Roofline chart on T4.")
    assert block.startswith("<noscript><img class='static-chart'")
    assert ("<p class='muted'>Static chart: 400 of 600 kernels not drawn (the 200 longest "
            "are, 55.5 % of the time;") in block
    assert "alt='Roofline chart on T4. Static chart: 400 of 600 kernels" in block
    # the image says it under its axis too (the part before ';')
    svg = base64.b64decode(block.split("base64,")[1].split("'")[0]).decode()
    assert "400 of 600 kernels not drawn (the 200 longest are, 55.5 % of the time)" in svg
