"""`rooflab docs [TOPIC]`: the manual (docs/*.md) from wherever rooflab was installed.

The help pages and errors said "see docs/json.md", a file a `pip install rooflab` user never
had (the wheel held no docs); they now say `rooflab docs json`, and the wheel ships the
pages (setup.py; tests/test_packaging.py checks the built wheel). Here: the verb on the
checkout's docs/, and every pointer left in the code names a page that exists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import typer.main
from cli_inproc import one_line_error, run_cli

from rooflab.cli import docs_cmd
from rooflab.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
SRC = ROOT / "src" / "rooflab"
PAGES = sorted(DOCS.glob("*.md"))


def test_the_list_has_every_page_with_its_title():
    run = run_cli("docs")
    assert run.returncode == 0, run.stderr
    rows = run.stdout.splitlines()
    for page in (p for p in PAGES if p.stem not in docs_cmd.INTERNAL):   # s27 v3-F10
        first = page.read_text(encoding="utf-8").splitlines()[0]
        want = first.removeprefix("# ")
        assert any(re.fullmatch(rf"{re.escape(page.stem)} +{re.escape(want)}", r)
                   for r in rows), (page.stem, want)
    assert "json      Scripting against rooflab's files" in rows
    assert rows[-1] == "`rooflab docs TOPIC` prints one; --path, where it is."
    # the topics in order, case aside (CONTRACTS, an internal page, not listed: s27 v3-F10)
    names = [r.split()[0] for r in rows if r and not r.startswith("`")]
    assert names == sorted((p.stem for p in PAGES if p.stem not in docs_cmd.INTERNAL),
                           key=str.lower) and len(names) >= 17


def test_a_topic_into_a_pipe_is_the_page_as_written():
    run = run_cli("docs", "report")
    assert run.returncode == 0, run.stderr
    assert run.stdout == (DOCS / "report.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", ["JSON", "json.md", "docs/json.md",
                                  "docs/json.md#errors-under---json", " json "])
def test_the_old_pointers_name_the_page_too(name):
    run = run_cli("docs", name, "--path")
    assert run.returncode == 0, run.stderr
    assert Path(run.stdout.strip()) == DOCS / "json.md"


def test_path_without_a_topic_is_the_folder():
    run = run_cli("docs", "--path")
    assert run.returncode == 0 and Path(run.stdout.strip()) == DOCS


def test_an_unknown_topic_is_one_error_line_listing_the_topics(capsys):
    err = one_line_error(capsys, ["docs", "jsn"])
    assert err.startswith("error: no docs topic 'jsn' (did you mean 'json'?); the topics "
                          "are ai, bench, comm, demo,")   # CONTRACTS: internal (v3-F10)
    assert all(p.stem in err for p in PAGES if p.stem not in docs_cmd.INTERNAL)
    assert err.endswith("`rooflab docs` lists them with their titles")
    err = one_line_error(capsys, ["docs", "zzzzzz"])
    assert "did you mean" not in err


def test_on_a_terminal_the_page_is_rendered(monkeypatch, capsys):
    monkeypatch.setattr("rooflab.cli.common.isatty", lambda stream: True)
    monkeypatch.setattr(docs_cmd, "_pager", lambda text: False)   # no pager: printed whole
    monkeypatch.setenv("COLUMNS", "100")
    assert main(["docs", "install"]) == 0
    out = capsys.readouterr().out
    # rich's Markdown: the heading without its '#', a code block without its fence
    assert "Installing rooflab: the core, the extras, other platforms" in out
    assert "# Installing" not in out and "```" not in out
    assert "pip install -e ." in out


def test_no_docs_folder_is_a_clear_error(monkeypatch, tmp_path, capsys):
    empty = (tmp_path / "a", tmp_path / "b")
    monkeypatch.setattr(docs_cmd, "folders", lambda: empty)
    err = one_line_error(capsys, ["docs", "json"])
    assert "rooflab's docs are not installed with it" in err
    assert str(tmp_path / "a") in err and "reinstall rooflab" in err


# --- the pointers: `rooflab docs TOPIC`, never a docs/X.md a wheel user has not got -------

POINTER = re.compile(r"`rooflab docs ([A-Za-z_]+)`")


def _help_texts() -> list[tuple[str, str]]:
    from rooflab.cli.app import build_app

    out, todo = [], [("rooflab", typer.main.get_command(build_app()))]
    while todo:
        words, cmd = todo.pop()
        for name, sub in getattr(cmd, "commands", {}).items():
            todo.append((f"{words} {name}", sub))
        out.append((words, cmd.help or ""))
        out += [(f"{words} {getattr(p, 'name', '')}", getattr(p, "help", None) or "")
                for p in cmd.params]
    return out


def _api_docs() -> list[tuple[str, str]]:
    import pydoc

    import rooflab

    out = [("rooflab", rooflab.__doc__ or "")]
    for name in rooflab.__all__:
        obj = getattr(rooflab, name)
        if callable(obj):
            out.append((name, pydoc.render_doc(obj, renderer=pydoc.plaintext)))
    return out


def _messages() -> list[tuple[str, str]]:
    from rooflab.model.whatif_batch import SPLIT_FIX

    return [("whatif_batch.SPLIT_FIX", SPLIT_FIX)]


def test_no_help_page_message_or_docstring_points_to_a_docs_file():
    texts = _help_texts() + _api_docs() + _messages()
    old = [(where, m.group(0)) for where, text in texts
           for m in re.finditer(r"docs/[A-Za-z_]+\.md", text)
           if "(docs/python.md)" not in text[m.start() - 1:m.end() + 1]]
    assert not old, old
    said = {m.group(1) for _, text in texts for m in POINTER.finditer(text)}
    assert {"json", "llm", "plot", "seeds", "python"} <= said


def test_every_rooflab_docs_pointer_in_the_code_names_a_page():
    topics = {p.stem.lower() for p in PAGES}
    named = {(path.relative_to(SRC).as_posix(), m.group(1))
             for path in SRC.rglob("*.py")
             for m in POINTER.finditer(path.read_text(encoding="utf-8"))}
    assert len(named) >= 8
    wrong = sorted((where, t) for where, t in named
                   if t.lower() not in topics and t != "TOPIC")   # the verb's own usage
    assert not wrong, wrong


def test_the_provenance_warning_names_the_page_by_the_verb(tmp_path, capsys):
    doc = tmp_path / "k.json"
    doc.write_text('{"kernels": [{"name": "k", "flop": 1e9, "bytes": 1e8, "seconds": 0.01,'
                   ' "provenance": {"flop": "guessed"}}]}')
    assert main(["report", str(doc), "--on", "t4"]) == 0
    err = capsys.readouterr().err
    assert "not a provenance word rooflab knows" in err
    assert "`rooflab docs json`, \"Provenance\"" in err and "docs/json.md" not in err
