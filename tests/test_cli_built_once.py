"""main() builds typer's click tree once per process (review s18 r1 F1): each in-process
call used to walk every verb's signature again (~50 ms), ~2300 times in the suite."""

from __future__ import annotations

import json

import typer.main

from rooflab.cli.main import main


def _counting(monkeypatch) -> list[int]:
    calls: list[int] = []
    real = typer.main.get_command

    def counted(app):
        calls.append(1)
        return real(app)

    monkeypatch.setattr(typer.main, "get_command", counted)
    return calls


def test_repeated_main_calls_do_not_rebuild_the_command_tree(monkeypatch, capsys):
    assert main(["ai", "matmul", "8", "8", "8"]) == 0      # built here, if not before
    capsys.readouterr()
    calls = _counting(monkeypatch)
    for n in (64, 128):
        assert main(["ai", "matmul", str(n), str(n), str(n), "--json"]) == 0
        doc = json.loads(capsys.readouterr().out)
        assert doc["flop"] == 2 * n**3                      # 2 FLOP per multiply-add
        assert doc["bytes"] == 3 * n * n * 2                # A, B read, C written, fp16
    assert calls == []


def test_the_cached_tree_still_answers_usage_errors(monkeypatch, capsys):
    calls = _counting(monkeypatch)
    assert main(["ai", "matmul", "64", "64"]) == 2          # a missing size: usage error
    assert capsys.readouterr().err.startswith("error: ")
    # `-` after --on is the option's value, read from the cached tree's options
    assert main(["whatif", "--on", "-"]) == 2
    assert "error: " in capsys.readouterr().err
    assert calls == []
