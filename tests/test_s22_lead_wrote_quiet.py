"""`wrote FILE` is the answer, not a note: said under -q too, in report/whatif/compare
under --json as in the other verbs (review s22 m3: say_line honoured -q there)."""

from __future__ import annotations

import json

from rooflab.cli.main import main


def test_report_json_quiet_still_says_wrote(tmp_path, capsys):
    k = tmp_path / "k.json"
    k.write_text(json.dumps({"kernels": [{"name": "triad", "flop": 2e6, "bytes": 2.4e7,
                                          "seconds": 2.4e-3}]}))
    out = tmp_path / "r.json"
    assert main(["-q", "report", str(k), "--on", "H200", "--json", "-o", str(out)]) == 0
    cap = capsys.readouterr()
    assert cap.err.strip() == f"wrote {out}"
    json.loads(cap.out)
