"""Review s35 D: a word where a verb group's subcommand goes.

Before: `rooflab specs H100` said click's "No such command 'H100'." and nothing of what was
meant; `rooflab ai 4096 4096 4096` the same of '4096'; an unknown word named no command.
Now a catalog device after `specs` points at `specs show`, a number after `ai` at naming
the op first, and any other word lists the group's commands (4 under specs: list, show,
compare, import); exit 2 (a usage error) in every case, the --json document's kind "usage".
The root's unknown verb keeps click's words (`rooflab lm`: "Did you mean 'llm'?").
"""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main


@pytest.mark.parametrize("argv,words", [
    (["specs", "H100"],
     "error: 'H100' is not a `specs` command; to see a device's roof: rooflab specs show H100"),
    (["specs", "mi250x"], "to see a device's roof: rooflab specs show mi250x"),
    (["specs", "H100 SXM"],
     "error: 'H100 SXM' is not a `specs` command; to see a device's roof: rooflab specs "
     "show 'H100 SXM'"),
    (["ai", "4096", "4096", "4096"],
     "error: '4096' is not an `ai` command; name the op first, then its sizes: rooflab ai "
     "matmul 4096"),
    (["specs", "foo"],
     "error: No such command 'foo'. The `specs` commands: list, show, compare, import"),
    (["specs", "shwo"], "Did you mean 'show'? The `specs` commands: list, show, compare"),
    (["ai", "foo"], "The `ai` commands: matmul, gemm, gemv,"),
])
def test_a_word_where_a_subcommand_goes(capsys, argv, words):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert words in err, err
    assert "see `rooflab" in err and "Traceback" not in err


def test_json_document_and_the_root_unchanged(capsys):
    assert main(["specs", "H100", "--json"]) == 2
    doc = json.loads(capsys.readouterr().out)["error"]
    assert doc["kind"] == "usage" and doc["message"].startswith("'H100' is not a `specs`")
    assert main(["lm"]) == 2
    err = capsys.readouterr().err
    assert "No such command 'lm'. Did you mean 'llm'?" in err and "commands:" not in err
