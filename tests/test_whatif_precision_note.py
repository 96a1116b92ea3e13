"""`whatif --json` keeps the "precision not given" warning in its notes, as `report --json`
does (review r1 F3): a script reading the what-if of an fp64 code judged as fp32 must see
that its answer rests on an assumed precision."""

from __future__ import annotations

import json

from rooflab.cli.main import main

CSV = "name,flop,bytes,seconds\ndgemm_512,2.68435e8,6.291456e6,0.003\n"


def test_whatif_json_notes_the_assumed_precision(tmp_path, capsys):
    path = tmp_path / "noprec.csv"
    path.write_text(CSV)
    assert main(["-q", "whatif", str(path), "--on", "A100", "--precision", "fp16",
                 "--json"]) == 0
    captured = capsys.readouterr()
    notes = json.loads(captured.out)["notes"]
    said = [n for n in notes if n.startswith("precision not given for 1 kernel")]
    assert len(said) == 1 and "'dgemm_512'" in said[0] and "fp64 for dgemm_512" in said[0]
    assert captured.err == ""          # -q: the JSON carries it, stderr stays quiet


def test_a_file_that_gives_its_precision_has_no_such_note(tmp_path, capsys):
    path = tmp_path / "prec.csv"
    path.write_text("name,precision,flop,bytes,seconds\n"
                    "dgemm_512,fp64,2.68435e8,6.291456e6,0.003\n")
    assert main(["-q", "whatif", str(path), "--on", "A100", "--precision", "fp32",
                 "--json"]) == 0
    notes = json.loads(capsys.readouterr().out).get("notes", [])
    assert not any(n.startswith("precision not given") for n in notes)
