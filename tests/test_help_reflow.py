"""`rooflab VERB --help` at 80 columns: prose lines joined into paragraphs that rich wraps
(the source's ~92-column breaks left 'and a' / 'note says so' ragged lines), examples
under one 'Examples:' line, indented, each short enough not to wrap (it broke
`-o` / `moves.png` over two lines, so a pasted example failed)."""

from __future__ import annotations

import pytest

from rooflab.cli.app import build_app, reflow
from rooflab.cli.main import main


def _helps():
    app = build_app()
    out = [(i.name, i.help) for i in app.registered_commands]
    for g in app.registered_groups:
        out.append((g.name, g.typer_instance.info.help))
        out += [(f"{g.name} {c.name}", c.help) for c in g.typer_instance.registered_commands]
    return out


def test_reflow_joins_prose_and_keeps_examples():
    text = """Summary line.

    Prose broken at
    92 columns, and a
    list:
    - item one
    - item two

      rooflab x --a 1

      rooflab y --b 2 \\\\
          --c 3
    """
    assert reflow(text) == ("Summary line.\n\nProse broken at 92 columns, and a list:\n"
                            "- item one\n- item two\n\nExamples:\n  rooflab x --a 1\n"
                            "  rooflab y --b 2 \\\\\n      --c 3")


@pytest.mark.parametrize("name,text", _helps())
def test_no_example_line_wraps_at_80_columns(name, text):
    long = [ln for ln in (text or "").splitlines() if ln[:1].isspace() and len(ln) > 78]
    assert long == [], f"`rooflab {name} --help`: lines wider than 78 columns: {long}"


def test_compare_help_reads_at_80_columns(monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["compare", "--help"]) == 0
    text = capsys.readouterr().out
    lines = text[:text.index("╭─")].splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.strip() == "Examples:")
    examples = [ln for ln in lines[at + 1:] if ln.strip()]
    assert examples and all(ln.startswith("   rooflab compare ") for ln in examples)
    prose = [ln.strip() for ln in lines[:at] if ln.strip()]
    assert all(len(ln) > 40 for ln in prose[1:-1]), prose   # no ragged one-word lines


@pytest.mark.parametrize("name", [n for n, _ in _helps()])
def test_every_rendered_example_is_indented_under_examples(name, monkeypatch, capsys):
    # typer cleandocs the text under the summary: with only "Examples:" and its lines
    # there, it took their indent and `rooflab ai attention --help` showed them flush
    # left, the continuation line indented more than its command.
    monkeypatch.setenv("COLUMNS", "80")
    assert main([*name.split(), "--help"]) == 0
    text = capsys.readouterr().out
    lines = text[:text.find("╭─") if "╭─" in text else len(text)].splitlines()
    bare = [ln for ln in lines if ln.startswith(" rooflab ")]
    assert bare == [], f"`rooflab {name} --help`: examples flush left: {bare}"


def test_ai_command_list_shows_one_sentence_per_op(monkeypatch, capsys):
    # the ops' examples sat on their summary lines, so the list wrapped them in
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["ai", "--help"]) == 0
    commands = capsys.readouterr().out.split("Commands")[1]
    assert "rooflab ai" not in commands
    assert "│ matmul       C(m×n) = A(m×k) @ B(k×n): 2·batch·m·n·k FLOP." in commands


def test_reflow_keeps_lone_examples_apart_from_the_summary():
    # cleandoc takes the examples' indent when they are all there is under the summary
    text = "Sum of n elements.\n\n        rooflab ai reduction 1e6 \\\\\n            --rows 2\n"
    # (the empty paragraph keeps typer's own cleandoc off the indent)
    assert reflow(text) == ("Sum of n elements.\n\n\n\nExamples:\n    rooflab ai reduction 1e6 "
                            "\\\\\n        --rows 2")
