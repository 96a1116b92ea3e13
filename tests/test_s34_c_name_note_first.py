"""Which device a family name chose is said before the output it judges, in every verb
(session 34, helper C item 3). Session 33 (J2) moved the note before the table for ncu,
rocprof, report, plot and whatif; `rooflab llm`, `train`, `scale`, `compare` and `specs
show/compare` still said "note: 'h100' is NVIDIA H100 SXM (also: H100 PCIe, H100 NVL; name
one to choose)" from the command's close, after a table of 30 to 60 lines. Now each says it
as it resolves the device; once per command, on stderr, --json's stdout untouched.
"""

import contextlib
import json
import sys

import pytest

from rooflab.cli.main import main

NOTE = "note: 'h100' is NVIDIA H100 SXM (also: H100 PCIe, H100 NVL; name one to choose)"
A100 = ("note: 'a100' is NVIDIA A100 80GB SXM (also: A100 40GB PCIe, A100 40GB SXM, "
        "A100 80GB PCIe; name one to choose)")


def _stdout_head(capsys, args) -> str:
    """The first line the verb writes on stdout."""
    assert main(list(args)) == 0
    return next(s for s in capsys.readouterr().out.splitlines() if s.strip())


def _interleaved(capsys, args) -> list[str]:
    """stdout and stderr as a terminal shows them: one stream, in the order written."""
    with contextlib.redirect_stderr(sys.stdout):
        assert main(list(args)) == 0
    return capsys.readouterr().out.splitlines()


@pytest.fixture
def kernels(tmp_path):
    p = tmp_path / "k.csv"
    p.write_text("name,flop,bytes,seconds,precision\nk,1e9,1e8,0.001,fp32\n")
    return str(p)


@pytest.mark.parametrize("args", [
    ["llm", "llama-3-8b", "--on", "h100"],
    ["train", "gpt2", "--on", "h100"],
    ["scale", "--on", "h100"],
    ["specs", "show", "h100"],
    ["specs", "compare", "h100", "a100"],
])
def test_note_before_the_output(capsys, args):
    head = _stdout_head(capsys, args)
    lines = _interleaved(capsys, args)
    assert lines.count(NOTE) == 1
    # old: the note came last, after the whole table (the stdout head's line)
    assert lines.index(NOTE) < lines.index(head)
    if args[:2] == ["specs", "compare"]:     # each name once, in the order given
        assert [s for s in lines if s.startswith("note: '")] == [NOTE, A100]
    if args[0] == "llm":
        return
    # --json: the document alone on stdout, the note once on stderr
    assert main([*args, "--json"]) == 0
    got = capsys.readouterr()
    json.loads(got.out)
    assert got.err.splitlines().count(NOTE) == 1


def test_compare_says_it_first(capsys, kernels):
    args = ["compare", kernels, kernels, "--on", "h100"]
    head = _stdout_head(capsys, args)
    lines = _interleaved(capsys, args)
    assert lines.count(NOTE) == 1 and lines.index(NOTE) < lines.index(head)
