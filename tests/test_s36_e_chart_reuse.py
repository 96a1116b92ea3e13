"""`rooflab report -o x.html` analyses the kernels once, and the chart words each
datasheet note once per ceiling (session 36, helper E): the page's chart analysed every
kernel a second time (report_chart_speed: ~10 % of a 20 000-kernel page) and worded the
same datasheet note per kernel (~1.3 s of 20 000). The page and the notes are the same."""

from __future__ import annotations

import json

import pytest
from cli_inproc import run_cli

import rooflab.model.analysis as model_analysis
import rooflab.report.chart_batch as chart_batch
from rooflab.hardware.catalog import lookup_roof
from rooflab.model.datasheet_note import datasheet_note
from rooflab.model.kernel import Kernel

KERNELS = [  # fp32 and fp16 work (two work ceilings on T4), one untimed count
    {"name": "triad", "flop": {"fp32": 2e9}, "bytes": {"DRAM": 2.4e10}, "seconds": 0.1,
     "unit": "vector"},
    {"name": "sgemm", "flop": {"fp32": 2e12}, "bytes": {"DRAM": 1.2e10}, "seconds": 0.5},
    {"name": "hgemm", "flop": {"fp16": 4e12}, "bytes": {"DRAM": 6e9}, "seconds": 0.2},
    {"name": "counted", "flop": {"fp32": 1e9}, "bytes": {"DRAM": 1e9}},
]


@pytest.fixture
def kernel_file(tmp_path):
    path = tmp_path / "k.json"
    # the timed three: the untimed one draws a note naming it, and a kernel a note names
    # is analysed alone for the chart (chart_batch._alone), a call this test does not count
    path.write_text(json.dumps({"schema_version": 1, "kernels": KERNELS[:3]}))
    return path


def _count_analyze(monkeypatch) -> list:
    """Each analyze() call, by whichever module calls it (level_reading through the
    module, chart_batch by the name it imported)."""
    calls: list = []
    real = model_analysis.analyze

    def counted(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)
    monkeypatch.setattr(model_analysis, "analyze", counted)
    monkeypatch.setattr(chart_batch, "analyze", counted)
    return calls


def test_report_html_analyses_the_kernels_once(kernel_file, tmp_path, monkeypatch):
    """The report's analyze(roof, kernels) is the chart's: one call, not two (the old
    code: level_reading.analyze_at, then chart_batch._batched). The page is the page the
    chart analysing alone writes (remember_analysis a no-op), the file name aside. Under
    --level the chart keeps its own analysis."""
    calls = _count_analyze(monkeypatch)
    page = tmp_path / "a.html"
    done = run_cli("report", str(kernel_file), "--on", "T4", "-o", str(page))
    assert done.returncode == 0, done.stderr
    assert len(calls) == 1
    monkeypatch.setattr(chart_batch, "remember_analysis", lambda *a: None)
    monkeypatch.setattr(chart_batch, "_LAST", [])
    alone = tmp_path / "b.html"
    assert run_cli("report", str(kernel_file), "--on", "T4", "-o", str(alone)).returncode == 0
    assert len(calls) == 3          # the report's, then the chart's own
    assert page.read_text().replace("a.html", "b.html") == alone.read_text()
    # --level DRAM: the report's analysis is of one level, not analyze(roof, kernels); the
    # chart analyses for itself, as before (two calls more)
    done = run_cli("report", str(kernel_file), "--on", "T4", "--level", "DRAM",
                   "-o", str(tmp_path / "c.html"))
    assert done.returncode == 0, done.stderr
    assert len(calls) == 5


def test_each_kernels_datasheet_note_is_its_own():
    """_sheet_notes words the note once per (ceiling label, value) and hands each kernel
    the text datasheet_note(roof, [k]) gives: T4 fp32 kernels the fp32 vector ridge, the
    fp16 one the fp16 tensor ridge (two texts), the untimed count none."""
    roof = lookup_roof("T4")
    kernels = [Kernel(name=k["name"], flop=k["flop"], bytes=k["bytes"],
                      seconds=k.get("seconds"), unit=k.get("unit")) for k in KERNELS]
    sheet = chart_batch._sheet_notes(roof)
    got = [sheet(k) for k in kernels]
    assert got == [datasheet_note(roof, [k]) for k in kernels]
    assert got[0] == got[1] and got[0] != got[2] and got[3] is None
    assert "fp32" in got[0] and "fp16" in got[2]
