"""`report a.json b.json` on two traces of one rank labels each row by its file; compare
and plot --trajectory, which join one op across files by name, keep the names as read
(s21 d1 item 3; cli/inputs.py label_traces, plot.py passes `not trajectory`)."""

from __future__ import annotations

import json

from test_s21_d1_trace_file_labels import MM, _trace

from rooflab.cli.main import main


def test_report_labels_rows_by_file_and_the_joins_keep_names(tmp_path, capsys):
    a = _trace(tmp_path, "run_a.pt.trace.json", 100.0, 0)
    b = _trace(tmp_path, "run_b.pt.trace.json", 150.0, 0)
    assert main(["report", a, b, "--json"]) == 0
    got = sorted((k["name"], round(k["seconds"] * 1e6, 3))
                 for k in json.loads(capsys.readouterr().out)["kernels"])
    assert got == [(f"{MM} [run_a.pt.trace]", 100.0), (f"{MM} [run_b.pt.trace]", 150.0)]
    assert main(["compare", a, b, "--json"]) == 0
    assert [m["kernel"] for m in json.loads(capsys.readouterr().out)["matches"]] == \
        [f"{MM} [rank0]"]
    assert main(["plot", a, b, "--trajectory", "-o", str(tmp_path / "t.png"), "--json"]) == 0
    drawn = json.loads(capsys.readouterr().out)
    assert [k["name"] for k in drawn["kernels"]] == [f"{MM} [rank0]"] * 2
    assert [x["kind"] for x in drawn["drawn"]["arrows"]] == ["trajectory"]
