"""cli/main.py after review s22: an ESC in a path is shown escaped on the error line (r1 F7),
and an input too large for memory is one error line, exit 2, not "internal error" (r1 F4)."""

from __future__ import annotations

from rooflab.cli.main import main


def test_error_line_shows_escape_sequences_escaped(tmp_path, capsys):
    bad = tmp_path / "x\x1b[2Jy.json"
    assert main(["report", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "\x1b" not in err
    assert "x\\x1b[2Jy.json" in err


def test_memory_error_is_one_input_error_line(monkeypatch, capsys):
    def too_big(*_a, **_kw):
        raise MemoryError

    monkeypatch.setattr("rooflab.cli.inputs.load_inputs", too_big)
    assert main(["report", "x.json"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: out of memory")
    assert "this is a bug" not in err and "Traceback" not in err
