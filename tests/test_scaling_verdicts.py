"""The thread-scaling verdicts: no "DRAM saturates" read from disturbed rows (review 16a
I), and L3 measured at every count where the host has one (L6)."""

from __future__ import annotations

import pytest

from rooflab.probe.cpu import scaling
from rooflab.probe.cpu.runner import Rate


def dram(value: float, spread: float = 0.0) -> dict:
    """A DRAM figure whose two samples are `spread` apart (above 5 %: flagged '!')."""
    return {"bytes_per_s": value, "samples": [value, value * (1 - spread)]}


def table(**rows: dict) -> dict:
    """extras.scaling with DRAM rows: table(t1=dram(..), t2=dram(..))."""
    return {"by_threads": {k[1:]: {"threads": int(k[1:]), "DRAM": v}
                           for k, v in rows.items()}}


def test_disturbed_rows_give_no_verdict():
    # review 16a I: 16.1 and 16.3 GB/s at 1 and 2 threads, both '!' (other processes used
    # 80 % of the CPUs): 16.1 / 16.3 = 98.8 % >= 90 % said "saturates at 1 thread"
    busy = table(t1=dram(16.1e9, 0.30), t2=dram(16.3e9, 0.25))
    n, text = scaling.dram_saturation(busy)
    assert n is None
    assert text == ("DRAM saturation: cannot tell (the DRAM rows at 1, 2 threads are "
                    "disturbed (!): rerun on a quiet machine)")
    quiet = table(t1=dram(16.1e9), t2=dram(16.3e9))
    assert scaling.dram_saturation(quiet)[0] == 1


def test_any_disturbed_dram_row_leaves_it_open():
    clean = table(t1=dram(20e9), t2=dram(38e9), t4=dram(30e9), t8=dram(40e9))
    n, text = scaling.dram_saturation(clean)
    assert n == 2 and text.startswith("DRAM saturates at 2 threads (>= 90 % of its best, "
                                      "40 GB/s)")   # 38 >= 0.9 x 40; 20 is not
    # a disturbed 4-thread row may truly be above 40 GB/s (the 90 % mark moves up)
    n, text = scaling.dram_saturation({**clean, "by_threads": {
        **clean["by_threads"], "4": {"threads": 4, "DRAM": dram(30e9, 0.4)}}})
    assert n is None and "row at 4 threads is disturbed" in text
    # a disturbed best row: the 90 % mark itself is unsure
    n, text = scaling.dram_saturation(table(t1=dram(20e9), t2=dram(40e9, 0.2)))
    assert n is None and "row at 2 threads is disturbed" in text
    # a disturbed row below the saturating count may have been higher still
    n, text = scaling.dram_saturation(table(t1=dram(20e9, 0.2), t2=dram(40e9)))
    assert n is None and "row at 1 thread is disturbed" in text


def test_l3_is_measured_at_every_count(monkeypatch):
    pytest.importorskip("numba")
    seen = []

    def stream(kernel, ws, team, plan, clock=None, pool=None):
        seen.append((kernel.name, ws, team.threads))
        return Rate(samples=(5e10, 5e10), reps=1, seconds=(1.0, 1.0)), 64

    class FakeMeasured:
        rate = Rate(samples=(3e9,), reps=1, seconds=(1.0,))

    monkeypatch.setattr(scaling.bw, "measure_stream", stream)
    monkeypatch.setattr(scaling, "fma_peak", lambda p, team, plan: FakeMeasured())
    ws = {"L1": 16384.0, "L2": 2.0**19, "L3": 4.0 * 2**20, "DRAM": 2.0**28}
    out = scaling.measure_scaling((1, 2), {"threads": 2}, ws)
    # the full run's per-thread L3 set (4 MiB), on one thread too
    assert ("triad", 4.0 * 2**20, 1) in seen
    one = out["by_threads"]["1"]
    assert one["L3"]["bytes_per_s"] == 5e10 and one["L3"]["ws_bytes_per_thread"] == 2**22
    assert out["ws_bytes_per_thread"]["L3"] == 2**22 and "L1, L2 and L3" in out["method"]
    assert scaling.scaling_rows(out)[0].l3 == 5e10
    # a host without an L3 (or no L3 plateau): nothing measured for it
    seen.clear()
    out = scaling.measure_scaling((1, 2), {"threads": 2},
                                  {k: v for k, v in ws.items() if k != "L3"})
    assert all(s[1] != 2**22 for s in seen) and "L3" not in out["by_threads"]["1"]
    assert scaling.scaling_rows(out)[0].l3 is None
