"""`threads` is a kernel field (docs/json.md), so the unknown-field warning lists it among
the known ones and a misspelt "thread" or "thraeds" is pointed at it (review r3 F8: the
list ended at `samples`, and a misspelling got no hint)."""

from __future__ import annotations

import json

from rooflab.cli.main import main
from rooflab.model.field_hints import unknown_field_words, unknown_fields

KERNEL = {"name": "a", "flop": {"fp32": 1e9}, "bytes": {"DRAM": 1e8}, "seconds": 2e-3}


def test_threads_is_known_and_its_misspellings_are_named():
    assert unknown_fields({**KERNEL, "threads": 4}) == []
    assert unknown_field_words({**KERNEL, "thread": 4}) == (
        "unknown field(s) 'thread' ignored: 'thread': did you mean \"threads\"?")
    assert unknown_field_words({**KERNEL, "thraeds": 4}).endswith(
        "'thraeds': did you mean \"threads\"?")


def test_the_warning_lists_threads(tmp_path, capsys):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"kernels": [{**KERNEL, "thread": 4}]}))
    assert main(["report", str(path), "--on", "A100"]) == 0
    err = " ".join(capsys.readouterr().err.split())
    assert ("'thread': did you mean \"threads\"? (known kernel fields: name, flop, bytes, "
            "seconds, calls, unit, op, provenance, meta, samples, threads)") in err
    # the field itself, spelt right, is read with no warning (meta.threads = 4)
    path.write_text(json.dumps({"kernels": [{**KERNEL, "threads": 4}]}))
    assert main(["report", str(path), "--on", "A100", "--json"]) == 0
    out = capsys.readouterr()
    assert "unknown field" not in out.err
    (k,) = json.loads(out.out)["kernels"]
    assert k["meta"]["threads"] == 4
