"""`rooflab report F -o r.md` writes the report and prints its summary, not the whole
report a second time (session 33, helper J item 3): the terminal printed every top
kernel's position, distances and advice above `wrote r.md`, as without -o. docs/report.md
promised no such thing; it now says what -o prints.

By hand (output1.ncu-rep): two kernels, the main one 30.5 s, the reduction 101.792 us,
flagged 6.19x below its roof: "2 kernel(s), 30.5 s measured; 1 more than 2x below their
roof"; the position line ("position: AI 4.81 FLOP/B >= ridge 0.608") stays in the file.
"""

from pathlib import Path

import pytest
from conftest import gpp_recording

from rooflab.cli.main import main

POSITION = "AI 4.81 FLOP/B >= ridge 0.608"


@pytest.fixture
def rep() -> Path:
    return gpp_recording("output1.ncu-rep")


def test_o_prints_the_summary_and_where_the_rest_is(rep, tmp_path, capsys):
    md = tmp_path / "r.md"
    assert main(["report", str(rep), "-o", str(md)]) == 0
    got = capsys.readouterr()
    out = " ".join(got.out.split())
    assert "2 kernel(s), 30.5 s measured; 1 more than 2x below their roof" in out
    assert "Top kernels to work on" in out
    assert f"each kernel's position, distances to its roof and advice: {md}" in out
    assert POSITION not in out and "-> use fp32 instead of fp64" not in out
    assert got.err.splitlines()[-1] == f"wrote {md}"
    assert POSITION in md.read_text()
    # without -o the terminal keeps the top kernels' diagnoses
    assert main(["report", str(rep)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert POSITION in out and "each kernel's position, distances" not in out
