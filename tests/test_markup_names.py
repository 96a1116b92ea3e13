"""Kernel names and methods are printed as written: rich took `loop[i]`'s `[i]` for italic
markup and dropped it, and a name with `[/]` would have been a markup error (session 9)."""

from __future__ import annotations

import pytest

from rooflab.cli.main import main

NAME = "loop[i] [/]"


@pytest.fixture
def kfile(tmp_path):
    path = tmp_path / "k.csv"
    path.write_text(f"name,flop,bytes,seconds\n{NAME},1e9,1e8,0.01\n")
    return str(path)


@pytest.mark.parametrize("args", [["report"], ["whatif", "--precision", "fp16"]])
def test_tables_print_the_name_whole(kfile, args, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    assert main([args[0], kfile, "--on", "h100", *args[1:]]) == 0
    out = capsys.readouterr().out
    table_rows = [line for line in out.splitlines() if line.startswith("│")]
    assert any(NAME in row for row in table_rows)


def test_compare_prints_the_name_whole(kfile, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    assert main(["compare", kfile, kfile]) == 0
    assert NAME in capsys.readouterr().out
