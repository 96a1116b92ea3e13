"""Review s26 r1 F2: with typer 0.29 (what a fresh install resolves) every help page printed
Python type names after the options: `--help -h <bool>`, `--json <bool>` (a flag that reads
as if it took a value), `--on <list[str]>`, `--output -o <str>`. Now flags show no word and
value options a command-line one (cli/metavars.py): the verb's own (PCT, REGEX), the shared
option's (HW|FILE, FILE, DTYPE), else click's TEXT / INTEGER / FLOAT. Checked on every help
page the CLI has, root, verbs and their subcommands. typer 0.27/0.28 (the floor) print an
argument's `<str>` beside its name, as they always did; 0.29's `<list[str]>` there is gone.
"""

from __future__ import annotations

import re

import pytest
from cli_inproc import run_cli
from typer.core import TyperArgument

from rooflab.cli.app import lazy_command
from rooflab.cli.verbs import VERBS

PYTHON_TYPE = re.compile(r"<(bool|str|int|float|list\[[^\]]*\]|tuple\[[^\]]*\])>")
# typer >= 0.29 draws the arguments' type column from display_type_rich
ARGUMENT_TYPES_OURS = hasattr(TyperArgument, "display_type_rich")


def _pages() -> list[tuple[str, ...]]:
    root = lazy_command()
    pages: list[tuple[str, ...]] = [()]
    for verb in VERBS:
        pages.append((verb,))
        pages += [(verb, sub) for sub in getattr(root.get_command(None, verb), "commands", {})]
    return pages


def _help(monkeypatch, *words: str) -> str:
    monkeypatch.setenv("COLUMNS", "120")
    run = run_cli(*words, "--help")
    assert run.returncode == 0, run.stderr
    return run.stdout


def _row(page: str, option: str) -> str:
    """The help row of option (its first line): '│ --dpi   FLOAT   pixels per inch'."""
    rows = [ln for ln in page.splitlines() if re.match(rf"│\s+{re.escape(option)}\s", ln)]
    assert rows, f"no row for {option}"
    return re.sub(r"\s+", " ", rows[0].strip("│ "))


@pytest.mark.parametrize("words", _pages(), ids=lambda w: " ".join(w) or "rooflab")
def test_no_help_page_shows_a_python_type(monkeypatch, words):
    page = _help(monkeypatch, *words)
    assert "--help" in page
    if not ARGUMENT_TYPES_OURS:
        page = re.sub(r"╭─ Arguments .*?╰[─]+╯", "", page, flags=re.S)
    assert PYTHON_TYPE.findall(page) == [], f"`rooflab {' '.join(words)} --help`"


def test_root_flags_have_no_value_word(monkeypatch):
    page = _help(monkeypatch)
    assert _row(page, "--version") == "--version -V Print the version and exit."
    assert _row(page, "--help") == "--help -h Show this message and exit."
    assert _row(page, "--install-completion").startswith("--install-completion Install")


def test_plot_value_options_say_what_they_take(monkeypatch):
    page = _help(monkeypatch, "plot")
    assert _row(page, "--on").startswith("--on HW|FILE hardware name")
    assert _row(page, "--output").startswith("--output -o FILE chart file")
    assert _row(page, "--dpi").startswith("--dpi FLOAT pixels per inch")
    assert _row(page, "--title").startswith("--title TEXT chart title")
    # the verb's own words stay
    assert _row(page, "--min-share").startswith("--min-share PCT ")
    assert _row(page, "--kernel").startswith("--kernel REGEX ")
    # flags: the help follows the name
    assert _row(page, "--json").startswith("--json print")
    assert _row(page, "--trajectory").startswith("--trajectory --no-trajectory join")


def test_int_and_dtype_options(monkeypatch):
    page = _help(monkeypatch, "ai", "matmul")
    assert _row(page, "--dtype").startswith("--dtype -d DTYPE ")
    page = _help(monkeypatch, "llm")
    assert _row(page, "--tp").startswith("--tp INTEGER ")
    assert _row(page, "--weights").startswith("--weights DTYPE ")
