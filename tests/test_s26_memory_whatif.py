"""Session 26 fB: `rooflab whatif`'s terminal report built the whole JSON document
(model.whatif_floors.describe: a dict per move with both floors, ~2.8 KB a kernel) and
printed none of it: 1121 MB peak at 100,000 kernels, 848 MB without it. The document is
built where it is written (--json, -o), and is the same there."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.cli_inproc import run_cli

from rooflab.model import whatif_floors
from rooflab.units import fmt_seconds

N = 50
A100 = "NVIDIA A100 80GB SXM"


def _csv(path: Path, n: int = N) -> str:
    # k000: 1 GFLOP fp32 over 100 MB in 1 ms; k001: 2 GFLOP in 2 ms ...
    rows = ["name,flop,bytes,seconds,precision"]
    rows += [f"k{i:03d},{1e9 * (i + 1):g},{1e8:g},{1e-3 * (i + 1):g},fp32" for i in range(n)]
    path.write_text("\n".join(rows) + "\n")
    return str(path)


def _counted(monkeypatch) -> list[int]:
    calls = [0]
    real = whatif_floors.describe

    def counting(w, **kwargs):   # the CLI asks for streamed rows (s32)
        calls[0] += 1
        return real(w, **kwargs)

    monkeypatch.setattr(whatif_floors, "describe", counting)
    return calls


def test_terminal_report_builds_no_json_document(tmp_path, monkeypatch):
    calls = _counted(monkeypatch)
    done = run_cli("whatif", _csv(tmp_path / "k.csv"), "--on", A100, "--precision", "fp16")
    assert done.returncode == 0, done.stderr
    assert calls[0] == 0
    out = done.stdout
    # the table, cut at 40 rows, and the total of the measured times: 1 + 2 + ... + 50 ms
    assert out.startswith("What if: ")
    assert "... and 10 more kernels" in out
    # 1.275 s is a tie at three digits: the float sum of the file's times rounds it (1.28
    # on Python 3.11, 1.27 on 3.12+, whose sum() of floats is compensated)
    total = sum(float(f"{1e-3 * (i + 1):g}") for i in range(N))
    assert total == pytest.approx(N * (N + 1) / 2 * 1e-3, rel=1e-12)
    assert f"total: {fmt_seconds(total)} -> " in out


def test_json_and_o_json_build_the_same_document(tmp_path, monkeypatch):
    calls = _counted(monkeypatch)
    path = _csv(tmp_path / "k.csv")
    printed = run_cli("whatif", path, "--on", A100, "--precision", "fp16", "--json")
    assert printed.returncode == 0, printed.stderr
    written = tmp_path / "w.json"
    table = run_cli("whatif", path, "--on", A100, "--precision", "fp16", "-o", str(written))
    assert table.returncode == 0, table.stderr
    assert calls[0] == 2   # once for each document written
    doc, file_doc = json.loads(printed.stdout), json.loads(written.read_text())
    doc.pop("generator"), file_doc.pop("generator")   # each names its own command
    assert file_doc == doc
    assert len(doc["moves"]) == N and doc["notes"] == []
    # the total before: the file's times, 1275 ms
    assert doc["total_before_s"] == pytest.approx(1.275)
    # and -o's terminal table is the one without -o, then the file said
    plain = run_cli("whatif", path, "--on", A100, "--precision", "fp16")
    assert table.stdout == plain.stdout
