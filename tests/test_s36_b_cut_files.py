"""Session 36 B: files cut short or empty, said as such where they are read (one reader each),
not as a generic "missing column(s) name, flop, bytes" or "no ncu CSV header".

Leads carried from earlier sessions: an Intel Advisor survey CSV cut at a line break (before
its header, after it, inside its last row), and the ncu "metric twice" warning's look-up of
the first value's line, which split a row with a quoted line break and found nothing."""

from __future__ import annotations

import warnings

from cli_inproc import one_line_error, run_cli
from conftest import gpp_recording
from test_s26_advisor_loops import SURVEY

from rooflab.ingest.kernelfile import load_kernels

LINES = SURVEY.splitlines(keepends=True)   # 7: the header; 8-10: three loops


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_advisor_cut_inside_its_preamble_is_said_cut(tmp_path, capsys):
    """Lines 1-4 of Advisor's export (sep=,, a blank line, the two-line banner): no header.
    Before: "missing column(s) name, flop, bytes" (a kernel CSV's words) at line 1."""
    path = _write(tmp_path, "loops.csv", "".join(LINES[:4]))
    err = one_line_error(capsys, ["report", path, "--on", "h100"])
    assert f"{path}:4: an Intel Advisor survey CSV that ends before its header row" in err
    assert "only Advisor's preamble, 4 line(s) (file cut short?)" in err
    assert "missing column" not in err
    # told by how the file starts: a kernel CSV's kernel named after Advisor is a kernel
    named = _write(tmp_path, "k.csv",
                   "name,flop,bytes,precision\nIntel(R) Advisor k,1e9,1e9,fp32\n")
    assert [k.name for k in load_kernels(named)] == ["Intel(R) Advisor k"]


def test_advisor_header_without_rows_is_said_cut(tmp_path, capsys):
    """The header (line 7) and nothing after it. Before: "no loop with Self GFLOP, bytes
    and a time above zero: the FLOP come from Advisor's Characterization", a collection
    problem, for a file that ends at its header."""
    path = _write(tmp_path, "loops.csv", "".join(LINES[:7]))
    err = one_line_error(capsys, ["report", path, "--on", "h100"])
    assert f"{path}:7: no loop row after the header (line 7): the file ends there" in err
    assert "Characterization" not in err


def test_advisor_last_row_cut_is_skipped_not_read(tmp_path):
    """Cut after the second loop's Self AI cell (no line break): its Data Types and Source
    Location are missing. Before: read as a second loop, its precision defaulted to fp32
    ('precision not given'); now skipped with a cut-short warning, one loop read (line 8:
    12.8 GFLOP in 2.15 s)."""
    row = LINES[8]
    cut = row[:row.index('"0.167"') + len('"0.167"')]
    path = _write(tmp_path, "loops.csv", "".join(LINES[:8]) + cut)
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        kernels = load_kernels(path)
    assert [k.name for k in kernels] == ["[loop in multiply at solution.cpp:32]"]
    assert kernels[0].total_flop == 12.8e9 and kernels[0].seconds == 2.15
    said = " ".join(str(w.message) for w in got)
    assert "loops.csv:9:" in said and "the file ends inside this row" in said
    assert "precision not given" not in said


def test_advisor_cut_inside_a_quoted_name_is_not_an_empty_time(tmp_path):
    """Cut inside the second loop's quoted name. Before: skipped as "no Self Elapsed Time
    (empty or 0)", a wrong reason; now "the file ends inside this row"."""
    row = LINES[8]
    path = _write(tmp_path, "loops.csv", "".join(LINES[:8]) + row[:20])
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        kernels = load_kernels(path)
    assert len(kernels) == 1
    said = " ".join(str(w.message) for w in got)
    assert "the file ends inside this row" in said and "no Self Elapsed Time" not in said


def test_ncu_metric_twice_finds_the_first_line_across_quoted_line_breaks(tmp_path):
    """Every row's Process Name holds a line break ("gpp\\nx"), so each row spans two
    lines: launch 0's dram__bytes.sum row is lines 2-3 (numbered 3, its last line, as the
    reader numbers rows), its repeat at 1000 B is appended after launch 0's rows. Before:
    the look-up split single lines, matched nothing and said "(its rows start on line 3)"
    without the first value's line."""
    src = gpp_recording("output.csv").read_text().splitlines(keepends=True)
    rows = [src[0]] + [line.replace('"gpp.x"', '"gpp\nx"') for line in src[1:]]
    dram = next(r for r in rows if r.startswith('"0"') and "dram__bytes.sum" in r)
    last0 = max(i for i, r in enumerate(rows) if r.startswith('"0"'))
    rows.insert(last0 + 1, dram.replace("134,957,158,144", "1000"))
    repeat_line = sum(r.count("\n") for r in rows[:last0 + 2])   # its last line
    path = _write(tmp_path, "twice.csv", "".join(rows))
    done = run_cli("ncu", path)
    assert done.returncode == 0, done.stderr
    assert (f"'dram__bytes.sum' twice with different values: 1.34957e+11 on line 3, then "
            f"1000 on line {repeat_line}") in done.stderr


def test_ncu_empty_binary_and_kernel_files_are_named(tmp_path, capsys):
    """Before, all three: 'no ncu CSV header (a line starting with "ID",...) found; make
    it with `ncu --csv ...`', whatever the file was."""
    empty = _write(tmp_path, "out.csv", "")
    assert "the file is empty" in one_line_error(capsys, ["ncu", empty])
    binary = tmp_path / "out2.csv"
    binary.write_bytes(b"abc\n" + bytes(range(256)))
    assert "not a UTF-8 text file (binary data)" in one_line_error(capsys, ["ncu", str(binary)])
    kernels = _write(tmp_path, "k.csv", "name,flop,bytes,seconds\nk,1e9,1e9,1e-3\n")
    err = one_line_error(capsys, ["ncu", kernels])
    assert "it is a kernel file (name,flop,bytes,...)" in err and "rooflab report" in err


def test_ncu_header_alone_is_said_to_end_there(tmp_path, capsys):
    """The header line and nothing after it. Before: "no usable kernel launch", no why."""
    head = gpp_recording("output.csv").read_text().splitlines()[0] + "\n"
    err = one_line_error(capsys, ["ncu", _write(tmp_path, "out.csv", head)])
    assert "no usable kernel launch: no row after the header (the file ends there" in err


def test_torch_empty_trace_is_said_empty(tmp_path, capsys):
    """An empty trace (a profiler killed before export_chrome_trace wrote) said "not a
    chrome trace (not JSON)", as if it were another kind of file."""
    err = one_line_error(capsys, ["torch", _write(tmp_path, "trace.json", "")])
    assert "trace.json: the file is empty (was it written completely?)" in err
    assert "not JSON" not in err
