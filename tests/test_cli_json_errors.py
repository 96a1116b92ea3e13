"""Errors under `--json`: one error document on stdout (kind, path, line, exit code) beside
the unchanged `error:` line on stderr, so a CI script parsing stdout can branch on it;
never a second document after one a verb already printed; without --json stdout stays
empty (docs/json.md, "Errors under --json").
"""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest

import rooflab.cli.common as common
from rooflab.cli.main import main
from rooflab.errors import InputError

KERNELS = {"schema_version": 1, "kernels": [
    {"name": "k1", "flop": {"fp32": 1e9}, "bytes": {"DRAM": 1e8}, "seconds": 1e-3}]}
# a trailing comma on line 3: json reports "Expecting property name ... (column 29)";
# Python 3.13's json names the trailing comma itself, at the comma (column 28)
BROKEN = '{"schema_version": 1,\n "kernels": [\n  {"name": "k", "flop": 1e9,}\n ]\n}\n'
BROKEN_TAIL = (":3: invalid JSON: Illegal trailing comma before end of object (column 28)"
               if sys.version_info >= (3, 13) else
               ":3: invalid JSON: Expecting property name enclosed in double quotes (column 29)")


@pytest.fixture
def files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "k.json").write_text(json.dumps(KERNELS))
    (tmp_path / "broken.json").write_text(BROKEN)
    return tmp_path


# (argv without --json, kind, path, line, the message's start)
CASES = [
    (["ai", "matmul", "-5", "256", "256", "--on", "T4"], "input", None, None,
     "m must be a positive whole number; got -5"),
    (["report", "missing.json"], "missing_file", "missing.json", None,
     "missing.json: file not found"),
    (["report", "broken.json"], "parse", "broken.json", 3, "broken.json" + BROKEN_TAIL),
    (["llm", "nosuchmodel", "--on", "A100"], "input", None, None,
     "'nosuchmodel' is not a file or a bundled config"),
    (["report", "k.json", "--bogus"], "usage", None, None, "No such option: --bogus"),
    (["whatif", "k.json", "--on", "T4", "--bytes-scale", "-1"], "input", None, None,
     "bytes scale must be > 0 and finite"),
    # nan is refused as typed since s34 F (cli/finite_options.py); -5 is compare's own check
    (["compare", "k.json", "k.json", "--fail-if-slower", "-5"], "input", None, None,
     "--fail-if-slower takes a finite percentage >= 0 (e.g. 5); got -5"),
    (["report", "k.json", "--on", "NoSuchGPU"], "unknown_hardware", None, None,
     "unknown hardware 'NoSuchGPU'"),
]


IDS = ["ai-bad-size", "report-missing", "report-broken", "llm-unknown-model",
       "unknown-option", "whatif-bad-scale", "compare-bad-gate", "unknown-hardware"]


def _error_line(err: str) -> str:
    (line,) = [x for x in err.splitlines() if x.startswith("error: ")]
    return line.removeprefix("error: ")


@pytest.mark.parametrize("argv, kind, path, line, start", CASES,
                         ids=IDS)
def test_an_error_under_json_is_one_document_on_stdout(files, capsys, argv, kind, path,
                                                       line, start):
    assert main([*argv, "--json"]) == 2
    cap = capsys.readouterr()
    doc = json.loads(cap.out)                      # one document, nothing else
    assert doc["schema_version"] == 2
    assert doc["generator"]["command"] == ["rooflab", *argv, "--json"]
    error = doc["error"]
    assert set(error) == {"message", "kind", "path", "line", "exit_code", "detail"}
    assert (error["kind"], error["path"], error["line"], error["exit_code"]) == (
        kind, path, line, 2)
    assert error["message"].startswith(start)
    # the stderr line is as before, and says the same text
    assert error["message"].splitlines()[0] == _error_line(cap.err).rstrip()


@pytest.mark.parametrize("argv", [c[0] for c in CASES], ids=IDS)
def test_without_json_stdout_stays_empty(files, capsys, argv):
    assert main(argv) == 2
    cap = capsys.readouterr()
    assert cap.out == "" and cap.err.startswith("error: ")


def test_standard_input_is_called_stdin_in_the_document(files, capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(BROKEN.encode())))
    assert main(["report", "-", "--json"]) == 2
    cap = capsys.readouterr()
    error = json.loads(cap.out)["error"]
    assert (error["path"], error["line"], error["kind"]) == ("<stdin>", 3, "parse")
    assert error["message"] == "<stdin>" + BROKEN_TAIL
    assert cap.err == f"error: <stdin>{BROKEN_TAIL}\n"


def test_a_verb_that_printed_its_document_gets_no_second_one(files, capsys, monkeypatch):
    # the verb's document went out, then something failed: stdout keeps that one document
    # (a reader of `--json > run.json` gets valid JSON, the exit code says it failed)
    printed = common.emit_json

    def then_fail(obj):
        printed(obj)
        raise InputError("failed after printing")

    monkeypatch.setattr(common, "emit_json", then_fail)
    assert main(["report", "k.json", "--on", "T4", "--json"]) == 2
    cap = capsys.readouterr()
    doc = json.loads(cap.out)
    assert "error" not in doc and doc["kernels"][0]["name"] == "k1"
    assert cap.err == "error: failed after printing\n"


def test_a_bug_under_json_is_kind_internal_exit_70(files, capsys, monkeypatch):
    def broken(obj):
        raise RuntimeError("boom")

    monkeypatch.setattr(common, "emit_json", broken)
    assert main(["report", "k.json", "--on", "T4", "--json"]) == 70
    cap = capsys.readouterr()
    error = json.loads(cap.out)["error"]
    assert (error["kind"], error["exit_code"], error["path"]) == ("internal", 70, None)
    assert error["message"].startswith("internal error in rooflab (RuntimeError)")
    assert "Traceback" in cap.err and "RuntimeError: boom" in cap.err
    assert cap.err.rstrip().splitlines()[-1] == "error: " + error["message"]


def test_ctrl_c_under_json_is_kind_interrupted_exit_130(files, capsys, monkeypatch):
    def interrupted(obj):
        raise KeyboardInterrupt

    monkeypatch.setattr(common, "emit_json", interrupted)
    assert main(["report", "k.json", "--on", "T4", "--json"]) == 130
    cap = capsys.readouterr()
    error = json.loads(cap.out)["error"]
    assert (error["kind"], error["exit_code"]) == ("interrupted", 130)
    assert cap.err.rstrip().splitlines()[-1] == "error: " + error["message"]


def test_an_empty_output_name_under_json(files, capsys):
    # refused before the verb runs (main._refuse_empty_outputs): the same document
    assert main(["report", "k.json", "-o", "", "--json"]) == 2
    cap = capsys.readouterr()
    error = json.loads(cap.out)["error"]
    assert error["kind"] == "input" and error["message"].startswith("-o '': the output file")
    assert cap.err == f"error: {error['message']}\n"


def test_json_after_double_dash_is_an_argument():
    from rooflab.cli.json_errors import wants_json

    assert wants_json(["report", "k.json", "--json"])
    assert not wants_json(["report", "--", "--json"])
    assert not wants_json(["report", "k.json", "--jsonx"])


def test_the_real_stdout_of_a_process(files):
    # sys.stdout is the process's own (main's _GuardedStdout), not a test's capture
    run = subprocess.run([sys.executable, "-m", "rooflab", "report", "missing.json", "--json"],
                         capture_output=True, text=True, timeout=120, cwd=files)
    assert run.returncode == 2
    assert run.stderr == "error: missing.json: file not found\n"
    assert json.loads(run.stdout)["error"] == {
        "message": "missing.json: file not found", "kind": "missing_file",
        "path": "missing.json", "line": None, "exit_code": 2, "detail": None}


def test_docs_list_every_kind():
    # docs/json.md's kind table is the words errors.py gives its classes, and main's own
    from pathlib import Path

    import rooflab.errors as errors
    from rooflab.cli import json_errors

    classes = [c for c in vars(errors).values()
               if isinstance(c, type) and issubclass(c, errors.RooflabError)]
    kinds = {c.kind for c in classes} - {"error"}   # the base's, for a bare RooflabError
    kinds |= {json_errors.USAGE, json_errors.INTERRUPTED, json_errors.INTERNAL}
    page = (Path(__file__).resolve().parents[1] / "docs" / "json.md").read_text("utf-8")
    section = page.split("## Errors under --json", 1)[1]
    listed = {row.split("`")[1] for row in section.splitlines() if row.startswith("| `")}
    assert listed == kinds
    assert len(kinds) == 11


def test_a_closed_stdout_still_gets_the_error_line_and_exit_2(files):
    # started with fd 1 closed, Python's sys.stdout is None: nothing to wrap or print to
    # (was an AttributeError from the watcher: exit 70 and a traceback)
    import os

    run = subprocess.run([sys.executable, "-m", "rooflab", "report", "missing.json", "--json"],
                         stderr=subprocess.PIPE, text=True, timeout=120, cwd=files,
                         preexec_fn=lambda: os.close(1))
    assert (run.returncode, run.stderr) == (2, "error: missing.json: file not found\n")
