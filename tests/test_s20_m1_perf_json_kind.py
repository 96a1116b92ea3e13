"""`perf stat -j` output (one JSON object a line, {"counter-value" : ...}) is a perf file to
every verb that sniffs a file's kind (files_kind.file_kind): `rooflab report run.json` reads it as
`rooflab perf run.json` does, where it said 'run.json:2: invalid JSON: Extra data' (read as
one rooflab JSON document). The sample is tests/test_s20_f2_perf_events.py's."""

from __future__ import annotations

import json

from test_s20_f2_perf_events import JSON_LINES

from rooflab.cli.main import main
from rooflab.files_kind import file_kind


def test_perf_json_lines_are_a_perf_file(tmp_path):
    p = tmp_path / "run.json"
    p.write_text(JSON_LINES)
    assert file_kind(str(p)) == "perf"
    # a rooflab kernel file and a torch trace keep their kinds
    ours = tmp_path / "k.json"
    ours.write_text(json.dumps({"schema_version": 1, "kernels": [
        {"name": "counter-value", "flop": {"fp64": 1e9}, "bytes": {"DRAM": 1e9},
         "seconds": 1.0}]}))
    assert file_kind(str(ours)) == "rooflab"
    trace = tmp_path / "t.json"
    trace.write_text('{"traceEvents": [{"name": "counter-value"}]}')
    assert file_kind(str(trace)) == "torch"


def _doc(capsys, argv: list[str]) -> dict:
    assert main(argv + ["--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_report_reads_perf_json_as_perf_does(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "run.json").write_text(JSON_LINES)
    report = _doc(capsys, ["report", "run.json"])
    perf = _doc(capsys, ["perf", "run.json"])
    assert report["kernels"] == perf["kernels"]
    assert report["analysis"] == perf["analysis"]
    # f2's hand numbers: FLOP 12345678 + 8 x 2.5e8; bytes (1234.56 + 567.89) MiB
    (k,) = report["kernels"]
    assert k["flop"] == {"fp64": 2.012345678e9}
    assert abs(k["bytes"]["DRAM"] - 1802.45 * 2**20) < 1.0
    assert k["seconds"] == 2.001234567
