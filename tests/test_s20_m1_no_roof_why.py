"""`rooflab perf` without --on on a file that counts FLOP but no DRAM bytes (or bytes but no
FLOP) says why no roof can be drawn from its kernels: the 'no roof ... no kernel has both
FLOP and bytes' error ends with the reader's note naming the events to add
(ingest/profile_import.py, choose_roof)."""

from __future__ import annotations

from rooflab.cli.main import main

HEAD = "\n Performance counter stats for './a.out':\n\n"
TAIL = "\n       1.001234567 seconds time elapsed\n\n"
FLOP_ONLY = HEAD + "       400,000,000      fp_arith_inst_retired.512b_packed_double\n" + TAIL
BYTES_ONLY = (HEAD + "        10,000,000      uncore_imc/cas_count_read/\n"
              "         5,000,000      uncore_imc/cas_count_write/\n" + TAIL)


def _error(tmp_path, capsys, text: str) -> str:
    p = tmp_path / "run.txt"
    p.write_text(text)
    assert main(["perf", str(p)]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()   # one error line
    assert line.startswith("error: no roof: ")
    return line


def test_flop_without_dram_events_names_the_missing_events(tmp_path, capsys):
    line = _error(tmp_path, capsys, FLOP_ONLY)
    _, sep, why = line.partition("; a.out: no memory-controller event rooflab reads (")
    assert sep, line
    assert "uncore_imc/cas_count_read/" in why and why.endswith(
        "add them (they need -a, and root or kernel.perf_event_paranoid <= 0)")


def test_dram_without_fp_events_names_the_missing_events(tmp_path, capsys):
    line = _error(tmp_path, capsys, BYTES_ONLY)
    assert line.endswith("; a.out: no FP event (fp_arith_inst_retired.*): no FLOP counted, "
                         "a bytes-only point"), line
