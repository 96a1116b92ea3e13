"""`--on p.json@Nt` (or the row a kernel file's 'threads' picks): every figure the report
shows is the row's, the record table's measured and nominal columns too (s20 d1 item 1:
its L1 said the whole run's 410 GB/s under a one-thread row of 206 GB/s).

Hand numbers: a profile probed at 2 threads on 2 cores (L1 410, L2 200, L3 100, DRAM 20
GB/s; fp64 100 GFLOP/s) with a 1-thread row (L1 206, L2 100, L3 60, DRAM 12 GB/s; fp64
50 GFLOP/s). The nominal roof is the 2 cores' (fp64 120 GFLOP/s, DRAM 40 GB/s); its
partner for the 1-thread row is 1 of 2 cores' compute, 60 GFLOP/s, and the chip's 40 GB/s.
"""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main


def _level(v: float, ws: float | None = None) -> dict:
    got = {"bytes_per_s": v, "samples": [v, 0.99 * v]}
    return got | ({"ws_bytes_per_thread": ws} if ws else {})


def _row(n: int, l1: float, l2: float, l3: float, dram: float) -> dict:
    return {"threads": n, "L1": _level(l1, 16384), "L2": _level(l2, 262144),
            "L3": _level(l3, 2 * 2**20), "DRAM": _level(dram),
            "fp64": {"flop_per_s": 5e10 * n, "samples": [5e10 * n]},
            "fp32": {"flop_per_s": 1e11 * n, "samples": [1e11 * n]}}


def _compute(fp64: float, provenance: str) -> list[dict]:
    return [{"precision": "fp64", "unit": "vector", "flop_per_s": fp64,
             "provenance": provenance},
            {"precision": "fp32", "unit": "vector", "flop_per_s": 2 * fp64,
             "provenance": provenance}]


PROFILE = {
    "schema_version": 1, "host": {"name": "box", "kind": "cpu", "cores": 2},
    "nominal": {"name": "box nominal", "kind": "nominal", "compute": _compute(1.2e11, "nominal"),
                "memory": [{"level": "DRAM", "bytes_per_s": 4e10, "provenance": "nominal"}]},
    "measured": {"name": "box measured (2 threads)", "kind": "measured",
                 "compute": _compute(1e11, "measured"),
                 "memory": [{"level": lv, "bytes_per_s": v, "provenance": "measured"}
                            for lv, v in (("L1", 4.1e11), ("L2", 2e11), ("L3", 1e11),
                                          ("DRAM", 2e10))]},
    "extras": {"threads": 2, "scaling": {
        "counts": [1, 2], "reference_threads": 2, "method": "m",
        "by_threads": {"1": _row(1, 2.06e11, 1e11, 6e10, 1.2e10),
                       "2": _row(2, 4.1e11, 2e11, 1e11, 2e10)}}}}


@pytest.fixture
def files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.json").write_text(json.dumps(PROFILE))

    def kernels(threads: int) -> str:
        # a one-pass triad: 2 GFLOP fp64, 24 GB, 4 s
        name = f"k{threads}.json"
        (tmp_path / name).write_text(json.dumps({"schema_version": 1, "threads": threads,
            "kernels": [{"name": "triad", "flop": {"fp64": 2e9}, "bytes": {"DRAM": 24e9},
                         "seconds": 4.0}]}))
        return name
    return kernels


def _table(capsys, argv: list[str]) -> dict[str, dict]:
    assert main(argv + ["--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    return {r["quantity"]: r for r in doc["record_table"]}


def _figures(rows: dict[str, dict]) -> dict[str, tuple]:
    return {q: (rows[q]["nominal"], rows[q]["measured"])
            for q in ("L1 bandwidth", "L2 bandwidth", "L3 bandwidth", "DRAM bandwidth",
                      "fp64 vector peak", "ridge fp64 / DRAM")}


ONE_THREAD = {"L1 bandwidth": (None, 2.06e11), "L2 bandwidth": (None, 1e11),
              "L3 bandwidth": (None, 6e10), "DRAM bandwidth": (4e10, 1.2e10),
              # 1 of 2 cores' nominal compute: 120 / 2 = 60 GFLOP/s
              "fp64 vector peak": (6e10, 5e10),
              # 60 / 40 = 1.5 FLOP/B nominal, 50 / 12 = 4.17 measured
              "ridge fp64 / DRAM": (1.5, pytest.approx(5e10 / 1.2e10))}


def test_at_1t_the_record_table_is_the_rows(files, capsys):
    rows = _table(capsys, ["report", files(1), "--on", "p.json@1t"])
    assert _figures(rows) == ONE_THREAD
    assert rows["DRAM bandwidth"]["ratio"] == pytest.approx(0.3)   # 12 / 40, not 20 / 40


def test_the_row_the_kernels_threads_pick_fills_the_table_too(files, capsys):
    # no @1t: the kernel file's 'threads': 1 picks the 1-thread row to judge by
    rows = _table(capsys, ["report", files(1), "--on", "p.json"])
    assert _figures(rows) == ONE_THREAD


def test_at_the_probed_count_the_table_stays_the_profiles(files, capsys):
    rows = _table(capsys, ["report", files(2), "--on", "p.json"])
    assert _figures(rows) == {
        "L1 bandwidth": (None, 4.1e11), "L2 bandwidth": (None, 2e11),
        "L3 bandwidth": (None, 1e11), "DRAM bandwidth": (4e10, 2e10),
        "fp64 vector peak": (1.2e11, 1e11), "ridge fp64 / DRAM": (3.0, 5.0)}


def test_the_terminal_table_prints_the_rows_l1(files, capsys):
    assert main(["report", files(1), "--on", "p.json@1t"]) == 0
    out = capsys.readouterr().out
    l1 = next(line for line in out.splitlines() if "L1 bandwidth" in line)
    assert "206 GB/s" in l1 and "410" not in l1
