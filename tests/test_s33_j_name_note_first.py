"""Which device a family name chose is said before the table it judges (session 33, helper
J item 2): `rooflab ncu F --on h100` printed "note: 'h100' is NVIDIA H100 SXM (also: H100
PCIe, H100 NVL; name one to choose)" under the table and every note after it, from the
--on callback's close. Now the verb says it as it resolves the roof (ncu, rocprof: its
roof choice; report, plot, whatif: cli/inputs.resolve_on); once per command, on stderr,
--json's stdout untouched, nothing under -q.
"""

import contextlib
import json
import sys
from pathlib import Path

import pytest
from conftest import gpp_recording

from rooflab.cli.main import main

NOTE = "note: 'h100' is NVIDIA H100 SXM (also: H100 PCIe, H100 NVL; name one to choose)"


@pytest.fixture
def csv() -> Path:
    return gpp_recording("output1.csv")


def _interleaved(capsys, *args) -> list[str]:
    """stdout and stderr as a terminal shows them: one stream, in the order written."""
    with contextlib.redirect_stderr(sys.stdout):
        assert main(list(args)) == 0
    return capsys.readouterr().out.splitlines()


@pytest.mark.parametrize("verb", ["ncu", "report"])
def test_note_stands_before_the_table(capsys, csv, verb):
    lines = _interleaved(capsys, verb, str(csv), "--on", "h100")
    assert lines.count(NOTE) == 1
    table = next(i for i, s in enumerate(lines) if s.startswith("┏"))
    assert lines.index(NOTE) < table
    # --json and -q as before: the document alone on stdout, the note once on stderr
    assert main([verb, str(csv), "--on", "h100", "--json"]) == 0
    got = capsys.readouterr()
    assert json.loads(got.out)["roof"]["name"] == "NVIDIA H100 SXM"
    assert got.err.splitlines().count(NOTE) == 1
    assert main(["-q", verb, str(csv), "--on", "h100", "--json"]) == 0
    assert capsys.readouterr().err == ""
