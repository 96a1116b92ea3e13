"""Every verb's and subcommand's --help on an 80-column terminal (s36 J, helper A's
test_s36_a_help_80_columns.py check made a sweep): rich cuts a word wider than its column
with an ellipsis. Found cut: `train --help`'s "FusedLinearCrossEntro…" (its help column is
22 wide beside --overlap/--no-overlap and --hop-latency-us's "US [x>=0.0]"), `llm --help`'s
option name "--decode-tokens,--parallel-d…" (typer joins an option's names with a comma:
33 characters in one cell), `ai occupancy --help`'s
"(cudaFuncAttributePreferredSharedMemoryCarv…"."""

from __future__ import annotations

import pytest
from cli_inproc import run_cli


def _paths() -> list[tuple[str, ...]]:
    """() for `rooflab --help`, then every verb and subcommand, as the CLI's tree has them."""
    import typer.main

    from rooflab.cli.app import build_app

    out: list[tuple[str, ...]] = []

    def walk(cmd, path: tuple[str, ...]) -> None:
        out.append(path)
        for name, sub in (getattr(cmd, "commands", None) or {}).items():
            walk(sub, (*path, name))

    walk(typer.main.get_command(build_app()), ())
    return out


@pytest.mark.parametrize("path", _paths(), ids=lambda p: " ".join(p) or "rooflab")
def test_help_fits_80_columns(monkeypatch, path):
    """No line wider than 80 and no word cut (rich's "…") on any help page."""
    monkeypatch.setenv("COLUMNS", "80")
    done = run_cli(*path, "--help")
    assert done.returncode == 0, done.stderr
    cut = [line for line in done.stdout.splitlines() if "…" in line or len(line) > 80]
    assert not cut, "\n".join(cut)


def _words(page: str) -> str:
    """The help column's words in one line: the boxes' bars dropped, wrapped lines joined."""
    return " ".join(page.replace("│", " ").split())


def test_the_words_that_were_cut_are_whole(monkeypatch):
    """The three cut cells, whole now: llm lists --decode-tokens alone (--parallel-decode,
    the same option, hidden and named in its help, still accepted)."""
    monkeypatch.setenv("COLUMNS", "80")
    llm = run_cli("llm", "--help").stdout
    assert "--decode-tokens" in llm and "--decode-tokens," not in llm
    assert "--parallel-decode" in _words(llm)     # its help names the other spelling
    train = _words(run_cli("train", "--help").stdout)
    assert "(Liger-Kernel's fused linear cross-entropy: chunked" in train
    occupancy = _words(run_cli("ai", "occupancy", "--help").stdout)
    assert "(cudaFuncSetAttribute's PreferredSharedMemoryCarveout, e.g. 50%)" in occupancy


def test_parallel_decode_still_works_and_two_counts_are_refused(capsys):
    """--parallel-decode 4 is --decode-tokens 4 (same JSON); both with different counts is
    one option given twice: exit 2, said."""
    import json

    from rooflab.cli.main import main

    base = ["llm", "tinyllama-1.1b", "--on", "h100", "--phase", "decode", "--json"]
    assert main([*base, "--decode-tokens", "4"]) == 0
    a = json.loads(capsys.readouterr().out)
    assert main([*base, "--parallel-decode", "4"]) == 0
    b = json.loads(capsys.readouterr().out)
    assert a["llm"] == b["llm"] and a["kernels"] == b["kernels"]
    assert main([*base, "--decode-tokens", "2", "--parallel-decode", "4"]) == 2
    err = capsys.readouterr().err
    assert "--decode-tokens 2 and --parallel-decode 4 are one option spelt two ways" in err
