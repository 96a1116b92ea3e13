"""The one progress bar (cli/common.progress_bar) behind probe, bench, demo and ncu: silent
when stderr is not a terminal (CI logs) or with --quiet; stdout never touched."""

from __future__ import annotations

from rooflab.cli.common import progress_bar


def test_silent_in_a_pipe_and_nothing_on_stdout(capsys):
    with progress_bar("probe") as update:
        update("dram", 0.5)
        update("done", 2.0)          # out-of-range fractions are clamped, not refused
    out, err = capsys.readouterr()
    assert out == "" and err == ""


def test_quiet_is_silent_even_on_a_terminal(monkeypatch, capsys):
    import rich.console

    monkeypatch.setattr(rich.console.Console, "is_terminal", property(lambda self: True))
    with progress_bar("probe", quiet=True) as update:
        update("l1", 0.1)
    assert capsys.readouterr() == ("", "")


def test_ncu_json_stdout_is_pure_json(fixtures_dir, capsys):
    import json

    from rooflab.cli.main import main

    path = fixtures_dir / "ncu" / "nersc-gpp" / "output4.csv"
    assert main(["ncu", str(path), "--json"]) == 0
    json.loads(capsys.readouterr().out)
