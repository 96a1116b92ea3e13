"""`rooflab specs show me.json --sweep` (review s33 I): with an L2 share of 2 MiB per
thread the '<- L2 size' marker row came after the 2 MiB point, a second '2 MiB' row that
read as if the 2 MiB point were below the L2. A point at a cache's size is inside it
(bench's level_of: ws <= capacity) and now carries the marker on its own row."""

from __future__ import annotations

import json

from rooflab.cli.main import main
from rooflab.report.sweep_chart import sweep_table, table_rows

KiB, MiB = 2**10, 2**20


def _point(ws: float, best: float, median: float) -> dict:
    return {"ws_bytes_per_thread": ws, "ws_bytes_total": 2 * ws, "bytes_per_s": best,
            "median_bytes_per_s": median, "spread": None, "calibrated": True,
            "samples": [median, best]}


def _profile() -> dict:
    # two SMT threads share each core's 32 KiB L1d and 4 MiB L2: per thread 16 KiB and
    # 2 MiB; one 32 MiB L3 over 2 threads: 16 MiB. Points at 16 KiB and 2 MiB hit L1d's
    # and L2's sizes exactly; 16 MiB has no point (its marker keeps a row of its own).
    sweep = {"kernel": "triad", "threads": 2, "byte_model": "b",
             "points": [_point(16 * KiB, 600e9, 580e9), _point(MiB, 235e9, 225e9),
                        _point(2 * MiB, 200e9, 150e9), _point(4 * MiB, 90e9, 80e9),
                        _point(128 * MiB, 41e9, 39e9)],
             "plateaus": [{"level": "L2", "first_bytes_per_thread": MiB,
                           "last_bytes_per_thread": 2 * MiB, "bytes_per_s": 235e9,
                           "chosen_bytes_per_thread": MiB}],
             "notes": []}
    host = {"name": "box", "caches": {"l1d": 32 * KiB, "l2": 4 * MiB, "l3": 32 * MiB,
                                      "l3_instances": 1, "l1d_sharing": 2, "l2_sharing": 2}}
    return {"schema_version": 2, "host": host,
            "measured": {"name": "box measured (2 threads)", "kind": "measured",
                         "compute": [{"precision": "fp64", "unit": "vector",
                                      "flop_per_s": 1e11}],
                         "memory": [{"level": "DRAM", "bytes_per_s": 41e9}]},
            "extras": {"threads": 2, "bandwidth_sweep": sweep}}


def test_a_point_at_a_cache_size_carries_the_marker():
    rows = table_rows(sweep_table(_profile()))
    # one row per point, plus the L3 marker (16 MiB, no point there) between 4 and 128 MiB
    assert [r[0] for r in rows] == ["16 KiB", "1 MiB", "2 MiB", "4 MiB", "16 MiB", "128 MiB"]
    assert rows[0][-1] == "<- L1d size"            # no plateau named there: the marker alone
    assert rows[2] == ["2 MiB", "4 MiB", "200", "150", "33 %", "L2 <- L2 size"]
    assert rows[4][-1] == "<- L3 size" and rows[4][2:5] == ["", "", ""]


def test_the_verb_prints_one_2_mib_row(tmp_path, capsys, monkeypatch):
    path = tmp_path / "me.json"
    path.write_text(json.dumps(_profile()))
    monkeypatch.setenv("COLUMNS", "120")
    assert main(["specs", "show", str(path), "--sweep"]) == 0
    lines = [x for x in capsys.readouterr().out.splitlines() if x.startswith("│")]
    two = [x for x in lines if x.split("│")[1].strip() == "2 MiB"]
    assert len(two) == 1 and "L2 <- L2 size" in two[0]
