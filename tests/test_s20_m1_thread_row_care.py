"""The report's "Measured ceilings far below nominal ... probe most likely disturbed" line
leaves out a bandwidth that a thread row (`--on p.json@1t`) sets beside the whole chip's
nominal (nominal_at_threads: "whole chip (shared by its 2 cores)"): one thread's 12 GB/s of
DRAM is 30 % of the chip's 40 GB/s because it is one thread, not because the probe was
disturbed. The profile is tests/test_s20_d1_thread_row_record.py's."""

from __future__ import annotations

import json

import pytest
import test_s20_d1_thread_row_record as d1

from rooflab.cli.main import main

DISTURBED = "Measured ceilings far below nominal"
files = d1.files          # its fixture: p.json and a kernel file at a thread count


def _care(capsys, argv: list[str]) -> tuple[list[str], dict]:
    assert main(argv + ["--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    return doc.get("read_with_care") or [], {r["quantity"]: r for r in doc["record_table"]}


def test_one_threads_dram_against_the_chips_is_no_disturbed_probe(files, capsys):
    care, rows = _care(capsys, ["report", files(1), "--on", "p.json@1t"])
    # the table still shows the 12 / 40 = 30 % (d1), the warning no longer reads it
    assert rows["DRAM bandwidth"]["ratio"] == pytest.approx(0.3)
    assert not [w for w in care if w.startswith(DISTURBED)], care


def test_the_whole_run_at_half_its_nominal_dram_is_still_flagged(files, capsys):
    # at the probed 2 threads the nominal is the profile's own (no "whole chip" method):
    # 20 / 40 = 50 %, under the 60 % bandwidth floor, still a disturbed probe
    care, _ = _care(capsys, ["report", files(2), "--on", "p.json"])
    (line,) = [w for w in care if w.startswith(DISTURBED)]
    assert "DRAM bandwidth 50 %" in line


def test_the_writer_and_the_reader_share_one_text(files, capsys, monkeypatch):
    # s20 x2 F8: read_with_care matched its own copy of resolve's words; reworded in the
    # one place they live, the method and the check move together
    from rooflab.hardware import thread_rows
    from rooflab.model.ceiling import Ceiling, Roof

    # the words live in hardware/thread_rows.py (split from resolve.py, s36 D)
    monkeypatch.setattr(thread_rows, "WHOLE_CHIP", "all of the chip, its cores sharing it (")
    chip = Roof("chip", compute=(Ceiling(8e10, "fp64", unit="vector"),),
                memory=(Ceiling(4e10, level="DRAM", method="STREAM"),))
    (dram,) = thread_rows.nominal_at_threads(chip, 1, 2).memory
    assert dram.method == "all of the chip, its cores sharing it (2 cores): STREAM"
    assert thread_rows.is_whole_chip(dram)
    care, rows = _care(capsys, ["report", files(1), "--on", "p.json@1t"])
    assert rows["DRAM bandwidth"]["ratio"] == pytest.approx(0.3)
    assert not [w for w in care if w.startswith(DISTURBED)], care
