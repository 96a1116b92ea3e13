"""Session 37 H: the GPU probe's triad note (and the triad ceiling's method) compared the
triad's median call with the copy's best call; `rooflab probe --device torch-cpu --quick`
on a loaded CPU said "13.2 GB/s (median call) = 0.54x the DRAM copy 24.6 GB/s (best call)"
where the best calls were 24.49 / 24.61 = 0.995x. Now best call to best call; the triad's
roof stays its median call, and the note says so.

Hand numbers: copy 25.6 GB/s (its best call); triad calls 2.4, 23.5 and 12.0 GB/s: median
12.0 GB/s (the roof), best 23.5 GB/s; 23.5 / 25.6 = 0.918 -> '0.92x', inside 0.90-0.95x.
Old: 12.0 / 25.6 = 0.469 -> '0.47x', outside.
"""

from __future__ import annotations

from types import SimpleNamespace

from rooflab.model import Ceiling, Roof
from rooflab.probe.gpu.memory import triad_ceiling
from rooflab.report.tables import triad_note

COPY = Ceiling(25.6e9, level="DRAM", samples=(25.6e9, 25.0e9, 24.0e9))
CALLS = (2.4e9, 23.5e9, 12.0e9)


def test_triad_ceiling_keeps_the_median_and_compares_bests():
    triad = triad_ceiling([("triad_torch", CALLS)], COPY, "test", 4 << 20)
    assert triad.value == 12.0e9                      # the roof: its median call
    assert "; its best call 0.92x the copy's best 25.6 GB/s (seed 000 §3.1 expects " \
           "0.90-0.95x)" in triad.method


def test_note_says_best_to_best_and_the_roof():
    triad = triad_ceiling([("triad_torch", CALLS)], COPY, "test", 4 << 20)
    roof = Roof("gpu measured", kind="measured",
                compute=(Ceiling(1e12, precision="fp32", unit="vector"),),
                memory=(COPY, triad))
    note = triad_note(SimpleNamespace(measured=roof))
    assert note.startswith(
        "DRAM (triad) 23.5 GB/s (best call) = 0.92x the DRAM copy 25.6 GB/s (best call), "
        "inside the 0.90-0.95x seed 000 §3.1 expects; its roof is its median call, 12 GB/s;")
