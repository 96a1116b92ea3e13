"""A perf stat -x, file given to another profiler verb is named `rooflab perf` (the one
content rule, files_kind.text_kind), not told how to collect that verb's output."""

from __future__ import annotations

from cli_inproc import one_line_error

PERF = ("0.50,seconds,duration_time\n"
        "1000000,,fp_arith_inst_retired.scalar_double,500000000,100.00,,\n")


def test_likwid_on_perf_csv_says_read_it_with_rooflab_perf(tmp_path, capsys):
    """perf's CSV has no 'TABLE,Group' line; likwid used to say "collect with
    `likwid-perfctr ...`"; file_kind calls this file 'perf' (duration_time)."""
    p = tmp_path / "run.csv"
    p.write_text(PERF)
    err = one_line_error(capsys, ["likwid", str(p)])
    assert "it is perf output; read it with `rooflab perf FILE`" in err
    assert "likwid-perfctr -C" not in err


def test_ncu_on_perf_csv_says_read_it_with_rooflab_perf(tmp_path, capsys):
    """ncu's reader asks the same rule with the text it holds."""
    p = tmp_path / "run.csv"
    p.write_text(PERF)
    err = one_line_error(capsys, ["ncu", str(p)])
    assert "read it with `rooflab perf FILE`" in err


def test_a_cut_likwid_file_is_not_sent_to_likwid(tmp_path, capsys):
    """A likwid file with no table (STRUCT,Info only) is file_kind 'likwid': the likwid
    verb must not tell the user to run `rooflab likwid` on it (own kind skipped)."""
    p = tmp_path / "cut.csv"
    p.write_text("STRUCT,Info,3\n")
    err = one_line_error(capsys, ["likwid", str(p)])
    assert "rooflab likwid FILE" not in err and "likwid-perfctr -C" in err
