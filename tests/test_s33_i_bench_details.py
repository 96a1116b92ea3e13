"""`rooflab bench --list --details` (review s33 I): each kernel was one line of
'streams 2  loads 1  stores 1  FLOP 4096  bytes 16   likwid ...', so a wider figure
(peakflops' 4096 FLOP) pushed the rest of its row right and no column lined up; notes
sat between the rows. It is now a table: one column per figure, right-aligned under its
header, notes below it."""

from __future__ import annotations

import pytest

from rooflab.bench.kernel_runner import details_rows
from rooflab.cli.main import main

# the figures per update (likwid-bench -l's): kernel -> (streams, loads, stores, FLOP, bytes)
FIGURES = {"copy": (2, 1, 1, 0, 16), "triad": (4, 3, 1, 2, 32), "sum": (1, 1, 0, 1, 8),
           "peakflops": (2, 1, 1, 4096, 16)}   # 2048 FMAs x 2 FLOP = 4096


@pytest.fixture
def details(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "160")
    assert main(["bench", "--list", "--details"]) == 0
    return capsys.readouterr().out.splitlines()


def test_the_figures_line_up_under_their_headers(details):
    header = next(x for x in details if x.startswith("kernel"))
    heads = ["streams", "loads", "stores", "FLOP", "bytes"]
    ends = [header.index(h) + len(h) for h in heads]   # right-aligned: same last column
    names = [r["kernel"] for r in details_rows()]
    rows = {x.split()[0]: x for x in details if x.split() and x.split()[0] in names}
    assert set(rows) == set(names)
    for name, figures in FIGURES.items():
        line = rows[name]
        for end, figure in zip(ends, figures, strict=True):
            assert line[end - len(str(figure)):end] == str(figure), (name, figure)
            assert line[end] == " "


def test_the_notes_come_after_the_table(details):
    last_row = max(i for i, x in enumerate(details) if x.startswith("peakflops "))
    notes = details.index("notes:")
    assert notes > last_row
    assert details[notes + 1].startswith("  triad: likwid's triad (4 streams)")
    # likwid's figures without repeating the kernel's name: 'copy: 2 streams, ...'
    copy = next(x for x in details if x.startswith("copy "))
    assert "2 streams, 0 FLOP, 16 B" in copy and "copy:" not in copy
