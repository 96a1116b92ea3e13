"""Session 37 H: rocprofv3's own OccupancyPercent (meta occupancy_rocprof, measured) is a
column of `rooflab rocprof ... -o k.csv`, beside occupancy_achieved, and read back by
`rooflab report k.csv` into the meta it came from.

Hand numbers (tests/data/rocprof_dispatch_occupancy/README.md): the file's OccupancyPercent
is 24.6 and 79.5 for gemm's two dispatches (the first's is kept: 24.6, as occupancy_achieved
25.0 is from 4,085,760,000 / 1,680,000 = 2432 waves / 9728 = 25.0 %), none for stencil,
40.0 for scale. Old: no occupancy_rocprof column; read back, no such meta.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

from cli_inproc import run_cli

FILE = Path(__file__).parent / "data" / "rocprof_dispatch_occupancy" / "run_counter_collection.csv"


def test_occupancy_rocprof_is_a_csv_column_and_reads_back(tmp_path):
    out = tmp_path / "k.csv"
    done = run_cli("rocprof", str(FILE), "--on", "mi300x", "-o", str(out))
    assert done.returncode == 0, done.stderr
    rows = {r["kernel"]: r for r in csv.DictReader(out.open())}
    header = list(next(csv.reader(out.open())))
    # beside rooflab's own achieved figure, as PLAIN lists them
    assert header.index("occupancy_rocprof") == header.index("occupancy_achieved") + 1
    assert float(rows["gemm"]["occupancy_rocprof"]) == 24.6
    assert float(rows["gemm"]["occupancy_achieved"]) == 25.0
    assert rows["stencil"]["occupancy_rocprof"] == ""
    assert float(rows["scale"]["occupancy_rocprof"]) == 40.0
    back = run_cli("report", str(out), "--on", "mi300x", "--json")
    assert back.returncode == 0, back.stderr
    meta = {k["name"]: k["meta"] for k in json.loads(back.stdout)["kernels"]}
    assert meta["gemm"]["occupancy_rocprof"] == 24.6
    assert "occupancy_rocprof" not in meta["stencil"]
    assert meta["scale"]["occupancy_rocprof"] == 40.0
