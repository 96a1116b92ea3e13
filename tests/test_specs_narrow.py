"""`rooflab specs list` at 80 columns (a pipe, or a small terminal): one line per device,
no name split across lines, every fact still there; the wide table where it fits."""

from __future__ import annotations

import json
import re

import pytest

from rooflab.cli.main import main
from rooflab.hardware.catalog import all_devices, lookup, top_float_compute


def _list(capsys, monkeypatch, columns, *extra):
    monkeypatch.setenv("COLUMNS", str(columns))
    assert main(["specs", "list", *extra]) == 0
    return capsys.readouterr().out.splitlines()


def test_at_80_columns_every_name_is_whole_on_one_line(capsys, monkeypatch):
    lines = _list(capsys, monkeypatch, 80)
    assert max(len(line.rstrip()) for line in lines) <= 80
    for d in all_devices():
        # the name cell: what a row holds before its first run of 2+ spaces
        rows = [line for line in lines if re.split(r"\s{2,}", line)[0] == d.name]
        # exactly one row: the name is neither folded nor repeated on a continuation line
        assert len(rows) == 1, (d.name, rows)


def test_at_80_columns_a_row_keeps_every_fact(capsys, monkeypatch):
    lines = _list(capsys, monkeypatch, 80)
    (t4,) = [line.split() for line in lines if line.startswith("NVIDIA T4 ")]
    # name | TFLOP/s | precision | GB/s | ridge | GB | W: 65e12 / 320e9 = 203
    assert t4[2:] == ["65", "fp16", "tensor", "320", "203", "16", "70"]
    (h20,) = [line.split() for line in lines if line.startswith("NVIDIA H20 ")]
    assert h20[2:] == ["296", "fp8", "tensor", "4000", "74", "96", "400"]
    key = " ".join(" ".join(lines[:3]).split())
    assert f"{len(all_devices())} devices (nominal, dense)" in key
    assert "TFLOP/s" in key and "GB/s" in key and "TDP in W" in key


def test_at_80_columns_devices_are_grouped_by_kind(capsys, monkeypatch):
    lines = _list(capsys, monkeypatch, 80)
    titles = [line.strip() for line in lines if line.strip().endswith(")")
              and line.split(" (")[0] in ("gpu", "accelerator", "cpu")]
    counts = {k: sum(d.kind == k for d in all_devices()) for k in ("gpu", "accelerator", "cpu")}
    assert titles == [f"{k} ({n})" for k, n in counts.items()]


def test_a_name_is_never_folded_even_narrower(capsys, monkeypatch):
    lines = _list(capsys, monkeypatch, 60, "--kind", "gpu")
    longest = max((d.name for d in all_devices() if d.kind == "gpu"), key=len)
    assert any(line.startswith(longest) for line in lines)


def test_wide_terminals_keep_the_full_table(capsys, monkeypatch):
    out = "\n".join(_list(capsys, monkeypatch, 200, "--kind", "gpu"))
    assert "top dense peak" in out and "65 TFLOP/s fp16 tensor" in out
    assert "1.98 PFLOP/s fp8 tensor" in out and "kind" in out


@pytest.mark.parametrize("columns", [80, 200])
def test_json_does_not_depend_on_the_width(capsys, monkeypatch, columns):
    doc = json.loads("\n".join(_list(capsys, monkeypatch, columns, "--json")))
    assert len(doc["devices"]) == len(all_devices())
    h20 = next(d for d in doc["devices"] if d["name"] == "NVIDIA H20")
    assert h20["memory_bytes_per_s"] == 4e12
    assert top_float_compute(lookup("H20")).value == 296e12
