"""Session 34 F: a likwid-perfctr CSV where one thread's RDTSC runtime reads `nan` or `-`.

The region's time is the longest thread's; with one thread's time unknown the reader took
the other thread's, without a word: triad read 0.4 s (thread 1) instead of 0.5 s (thread
0), so its rates read 25 % high. Now said, with the file, the line and the row (as a thread
without a FLOP count is, tests/test_s34_e_likwid_nan_thread.py).
"""

from __future__ import annotations

from test_likwid import MEM_DP

from rooflab.cli.main import main
from rooflab.ingest.likwid import load_likwid

ROW = "RDTSC Runtime [s],0.500000,0.400000"      # triad's Region Info: thread 0, thread 1


def test_a_thread_without_a_runtime_is_said(tmp_path, capsys):
    assert MEM_DP.count(ROW) == 1
    line = MEM_DP[:MEM_DP.index(ROW)].count("\n") + 1
    for cell in ("nan", "-"):
        p = tmp_path / "run.csv"
        p.write_text(MEM_DP.replace(ROW, f"RDTSC Runtime [s],{cell},0.400000"))
        triad = {k.name: k for k in load_likwid(str(p)).kernels}["triad"]
        assert triad.seconds == 0.4, cell        # the one time known: thread 1's
        assert main(["likwid", str(p)]) == 0
        said = capsys.readouterr()
        text = said.out + said.err
        assert (f"{p}:{line}: 'RDTSC Runtime [s]': 1 of 2 threads have no value ('-' or "
                f"'nan'): the time is the longest of the others' (0.4 s), which may be short "
                f"of the region's, so its rates may read high (check the export)") \
            in " ".join(text.split()), (cell, text)
        assert "Traceback" not in text
    # every thread timed: no such line
    p.write_text(MEM_DP)
    assert main(["likwid", str(p)]) == 0
    said = capsys.readouterr()
    assert "have no value" not in said.out + said.err

