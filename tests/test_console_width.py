"""Review 18c F12: every verb's stdout console is PIPE_WIDTH wide in a pipe or log, so a
probe/specs/llm table never cuts a number to an ellipsis (`181…`)."""
from rich.table import Table

from rooflab.cli.common import PIPE_WIDTH, console


def test_console_in_a_pipe_is_pipe_width(monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)
    out = console()   # pytest captures stdout: not a terminal
    assert not out.is_terminal
    assert out.width == PIPE_WIDTH


def test_columns_env_still_wins(monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    assert console().width == 100


def test_a_wide_probe_row_keeps_its_numbers(monkeypatch, capsys):
    monkeypatch.delenv("COLUMNS", raising=False)
    t = Table()
    for h in ("threads", "fp64 GFLOP/s", "per thread", "fp32", "per thread", "scaling",
              "L1 TB/s", "L2 TB/s", "DRAM GB/s", "quantity of a long header"):
        t.add_column(h, justify="right")
    t.add_row("2", "6.33 !", "3.16", "0.42 !", "0.21", "0%", "0.0205", "0.476 !", "181",
              "not measured (derived)")
    console().print(t)
    text = capsys.readouterr().out
    assert "…" not in text
    assert "0.0205" in text and "not measured (derived)" in text
