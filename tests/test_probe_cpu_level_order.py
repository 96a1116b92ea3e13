"""Second fresh-user audit of `rooflab probe`: a disturbed probe whose levels come out in
the wrong order says so (its samples were tight, so no spread warning fired)."""

from __future__ import annotations

import pytest

from rooflab.model.ceiling import Ceiling
from rooflab.probe.cpu.bandwidth import flag_inversions


def _levels(**bw):
    return {lv: Ceiling(v, level=lv, provenance="measured") for lv, v in bw.items()}


def test_disturbed_probe_levels_are_flagged():
    # `rooflab probe --quick` while another process spun threads on the same 2 cores:
    # L1 246 MB/s (IQR 0.2 %), L2 16.3 GB/s, L3 88.1 GB/s, DRAM 22.8 GB/s.
    out = flag_inversions(_levels(L1=2.46e8, L2=1.63e10, L3=8.81e10, DRAM=2.28e10))
    assert out["L1"].warnings == (
        "L1 bandwidth: measured 246 MB/s, slower than L3 (88.1 GB/s), which is farther "
        "from the core: the probe was disturbed (other load on these cores); rerun on a "
        "quiet machine",)
    assert "slower than L3 (88.1 GB/s)" in out["L2"].warnings[0]
    assert out["L3"].warnings == () and out["DRAM"].warnings == ()
    assert out["L1"].value == 2.46e8          # the number itself is kept, only flagged


def test_a_quiet_probe_is_not_flagged():
    # the same machine undisturbed: 596 / 235 / 187 / 51.3 GB/s; L3 within 10 % of L2
    # (e.g. 240 vs 235) is noise, not an inversion
    for bw in (dict(L1=5.96e11, L2=2.35e11, L3=1.87e11, DRAM=5.13e10),
               dict(L1=5.96e11, L2=2.35e11, L3=2.40e11, DRAM=5.13e10)):
        assert all(c.warnings == () for c in flag_inversions(_levels(**bw)).values())


def test_json_carries_the_tables_iqr():
    # samples 1..8: quartiles (inclusive method, numpy's linear: positions 7/4 and 21/4 of
    # 0..7) -> 2.75 and 6.25, IQR 3.5, median 4.5 -> 7/9 (the exclusive method read 1.0,
    # review s20 r2 F1); with three samples the range: (3 - 1) / 2 = 1.0
    from rooflab.model.roof_schema import ceiling_to_dict, roof_from_dict
    from rooflab.report.tables import _iqr

    c = Ceiling(8.0, level="DRAM", provenance="measured", samples=tuple(map(float, range(1, 9))))
    d = ceiling_to_dict(c)
    assert d["iqr_rel"] == pytest.approx(7 / 9) and _iqr(c) == d["iqr_rel"]   # JSON == table
    assert Ceiling(3.0, level="L1", provenance="measured", samples=(1.0, 2.0, 3.0)).iqr_rel == 1.0
    back = roof_from_dict({"name": "r", "memory": [d], "compute": []})
    assert back.memory[0].iqr_rel == pytest.approx(7 / 9)
