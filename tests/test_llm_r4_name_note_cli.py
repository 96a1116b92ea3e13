"""Review r4 F2 on the command line: `--on nvidia_A100` (LLM-Viewer's key, the 40 GB card
there) or a bare `--on A100` resolves to the A100 80GB SXM of four catalog entries, and one
`note:` line on stderr says so, once per command, --json's document on stdout untouched.
Needs cli/options.py's say_name_notes (the --on callback); hardware.resolve.name_note words
it (tests/test_llm_r4_llmviewer.py)."""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main

NOTE = ("note: 'nvidia_A100' is NVIDIA A100 80GB SXM (also: A100 40GB PCIe, A100 40GB SXM, "
        "A100 80GB PCIe; name one to choose)")
ARGS = ["llama-2-7b", "--phase", "decode", "--context", "1024", "--json"]


def test_family_name_note_once_on_stderr_json_intact(capsys):
    assert main(["llm", *ARGS[:1], "--on", "nvidia_A100", *ARGS[1:]]) == 0
    got = capsys.readouterr()
    doc = json.loads(got.out)                 # one document, the note is not in it
    assert doc["llm"]["decode"]["floor_s"] == pytest.approx(6.750e-3, rel=1e-3)
    assert got.err.splitlines() == [NOTE]     # once, though the roof is resolved again


def test_no_note_for_a_full_name_or_under_quiet(capsys):
    assert main(["llm", *ARGS[:1], "--on", "A100 40GB SXM", *ARGS[1:]]) == 0
    got = capsys.readouterr()
    # LLM-Viewer's nvidia_A100 numbers (1555 GB/s): 13.76 GB / 1555 GB/s = 8.85 ms
    assert json.loads(got.out)["llm"]["decode"]["floor_s"] == \
        pytest.approx(8.85e-3, rel=2e-3)
    assert "note:" not in got.err
    assert main(["-q", "llm", *ARGS[:1], "--on", "A100", *ARGS[1:]]) == 0
    assert capsys.readouterr().err == ""
