"""Second fresh-user audit: a CSV kernel given one row per memory level is one kernel."""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main
from rooflab.errors import InputWarning
from rooflab.ingest.kernelfile import kernels_from_csv

CSV = """name,flop,bytes,seconds,precision,level,calls
gemm,2e9,2.5e7,0.02,fp64,DRAM,1
gemm,2e9,1e8,0.02,fp64,L2,1
triad,1.6e7,2e8,0.01,fp64,DRAM,1
"""


def test_rows_per_level_are_one_kernel():
    ks = kernels_from_csv(CSV, "k.csv")
    assert [k.name for k in ks] == ["gemm", "triad"]
    gemm = ks[0]
    assert gemm.bytes == {"DRAM": 2.5e7, "L2": 1e8}
    assert gemm.flop == {"fp64": 2e9} and gemm.seconds == 0.02


def test_same_level_twice_stays_two_kernels():
    text = "name,flop,bytes,seconds\nk,1,8,1e-3\nk,1,8,1e-3\n"
    with pytest.warns(InputWarning, match=r"k.csv:3: kernel 'k': named 'k #2'"):
        kernels = kernels_from_csv(text, "k.csv")
    assert [k.name for k in kernels] == ["k", "k #2"]


def test_time_counted_once_in_the_report(tmp_path, capsys):
    f = tmp_path / "k.csv"
    f.write_text(CSV)
    roof = tmp_path / "roof.json"
    roof.write_text(json.dumps({"name": "r", "compute": [
        {"precision": "fp64", "unit": "vector", "flop_per_s": 1e11}],
        "memory": [{"level": "DRAM", "bytes_per_s": 5e10},
                   {"level": "L2", "bytes_per_s": 2e11}]}))
    assert main(["report", str(f), "--on", str(roof), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["analysis"]
    gemm = {r["level"]: r for r in rows if r["kernel"] == "gemm"}
    # total time 0.02 + 0.01 = 0.03 s (gemm once, not twice): share 2/3
    assert gemm["DRAM"]["time_share"] == pytest.approx(2 / 3)
    # AI DRAM 2e9 / 2.5e7 = 80, L2 2e9 / 1e8 = 20; both above their ridges (2 and 0.5):
    # 1e11 FLOP/s at 100 GFLOP/s peak -> 100 % of roof
    assert gemm["DRAM"]["ai"] == pytest.approx(80.0) and gemm["L2"]["ai"] == pytest.approx(20.0)
    assert gemm["L2"]["percent_of_roof"] == pytest.approx(100.0)
