"""s34 H2: `rooflab llm MODEL --compare a100,h100` says which device each family name
chose, once per name, before the tables, as --on's name is said (cli/options.py
say_name_note_now); stdout under --json holds the document alone. Before, --compare's
names got no note at all: 'h100' could be the SXM, the PCIe or the NVL board, and the
table said 'NVIDIA H100 SXM' without saying it was a choice."""

from __future__ import annotations

import contextlib
import json
import sys

from rooflab.cli.main import main

H100 = "note: 'h100' is NVIDIA H100 SXM (also: H100 PCIe, H100 NVL; name one to choose)"
A100 = ("note: 'a100' is NVIDIA A100 80GB SXM (also: A100 40GB PCIe, A100 40GB SXM, "
        "A100 80GB PCIe; name one to choose)")
ARGS = ["llm", "llama-2-7b", "--phase", "decode"]


def _interleaved(capsys, args) -> list[str]:
    """stdout and stderr as a terminal shows them: one stream, in the order written."""
    with contextlib.redirect_stderr(sys.stdout):
        assert main(list(args)) == 0
    return capsys.readouterr().out.splitlines()


def test_each_compared_name_is_said_once_before_the_tables(capsys):
    # no --on: a100 is the roof (its note, as before), h100 the compared device (new)
    lines = _interleaved(capsys, [*ARGS, "--compare", "a100,h100"])
    notes = [s for s in lines if s.startswith("note: '")]
    assert notes == [A100, H100]                       # old: [A100], no word on h100
    first_table = next(i for i, s in enumerate(lines) if s.startswith("┏"))
    assert lines.index(H100) < first_table


def test_a_name_given_twice_is_said_once(capsys):
    lines = _interleaved(capsys, [*ARGS, "--on", "h100", "--compare", "a100,h100"])
    assert lines.count(H100) == 1 and lines.count(A100) == 1     # old: A100 0 times


def test_json_keeps_the_notes_on_stderr(capsys):
    assert main([*ARGS, "--on", "a100", "--compare", "h100", "--json"]) == 0
    got = capsys.readouterr()
    doc = json.loads(got.out)
    assert doc["llm"]["model"]["name"] == "llama-2-7b"
    assert got.err.splitlines().count(H100) == 1       # old: 0
    assert H100 not in got.out
