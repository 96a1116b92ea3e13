"""Session 38 R (review of G's open-quote hint in a kernel CSV, ingest/kernelfile_csv.py).

G's hint keyed on a cell spanning lines: a name quoted properly over two lines (a short
row for another reason, its bytes missing) was told to close a quote it had closed, and a
quote left open on the last row (its cell runs to the end of the file, one line) got no
hint at all. An open quote swallows the separators with the line ends: a cell that holds
both a ',' and a line end.
"""

from __future__ import annotations

from cli_inproc import one_line_error

HEADER = "name,flop,bytes\n"
SHORT = "1 cells, the header has 3 (name,flop,bytes); give each column one cell (an empty " \
        "one for no value)"


def test_a_quote_left_open_on_the_last_row_is_named(tmp_path, capsys):
    """Lines: 1 header, 2 'gemm,...', 3 '"copy,1e6,4e6': the open quote makes one cell of
    line 3 to the file's end (1 cell of 3), reported at line 3 with the quote (G: none)."""
    p = tmp_path / "k.csv"
    p.write_text(HEADER + 'gemm,1e9,1e6\n"copy,1e6,4e6\n')
    assert one_line_error(capsys, ["report", str(p), "--on", "T4"]) == (
        f"error: {p}:3: {SHORT}; a '\"' opens a quoted cell that runs on to the end of the "
        f"file: close it or remove it")


def test_a_closed_quote_over_two_lines_is_not_blamed(tmp_path, capsys):
    """'"gemm\\nx",1e9' is two cells (a name over lines 2-3, closed; the bytes missing): the
    row's count is the error, at its first line 2, with no word of a quote (G: "close
    it")."""
    p = tmp_path / "k.csv"
    p.write_text(HEADER + '"gemm\nx",1e9\ncopy,1e6,4e6\n')
    assert one_line_error(capsys, ["report", str(p), "--on", "T4"]) == (
        f"error: {p}:2: 2 cells, the header has 3 (name,flop,bytes); give each column one "
        f"cell (an empty one for no value)")
