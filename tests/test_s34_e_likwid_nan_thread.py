"""Review s34 E: a likwid-perfctr CSV where one thread's core FLOP counter reads `nan` or
`-` (a hand edit, a counter likwid could not read on that core).

Before: the thread's count was left out without a word: triad read 2.02e8 FLOP instead of
4.02e8, exit 0, no warning. A core counter counts on every thread (unlike an uncore count,
read by one thread per socket), so a thread without a value makes the FLOP read low: now
said, with the line and the event.
"""

from __future__ import annotations

from test_likwid import MEM_DP

from rooflab.cli.main import main
from rooflab.ingest.likwid import load_likwid

EVENT = "FP_ARITH_INST_RETIRED_256B_PACKED_DOUBLE"
CELL = f"{EVENT},PMC2,50000000,"          # triad, thread 0 (thread 1 also 50000000)


def test_a_thread_without_a_flop_count_is_said(tmp_path, capsys):
    assert MEM_DP.count(CELL) == 1
    for cell in ("nan", "-"):
        p = tmp_path / "run.csv"
        p.write_text(MEM_DP.replace(CELL, f"{EVENT},PMC2,{cell},"))
        triad = {k.name: k for k in load_likwid(str(p)).kernels}["triad"]
        # thread 1 only: 4 x 5e7 (256-bit, 4 doubles) + 2 x 1e6 scalar = 2.02e8 FLOP
        assert triad.flop == {"fp64": 4 * 50_000_000 + 2 * 1_000_000}, cell
        assert main(["likwid", str(p)]) == 0
        said = capsys.readouterr()
        text = said.out + said.err
        line = MEM_DP[:MEM_DP.index(CELL)].count("\n") + 1
        assert (f"{p}:{line}: {EVENT}: 1 of 2 threads have no value ('-' or 'nan'): their "
                f"FLOP are not counted, so the FLOP may read low") in text, (cell, text)
        assert "Traceback" not in text
