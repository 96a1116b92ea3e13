"""Review s26 r2 F4, the other side: --level L1 as CARM must leave the hierarchical view
Nsight Compute users know (one point per level per kernel, each on its own slope) as it
was, on the chart and in `report --level all`.

Hand numbers, the reviewer's, from output1.ncu-rep's own metrics (section
SpeedOfLight_HierarchicalDoubleRooflineChart): achieved (3.2022 + 16.2563 + 2 x 16.5550)
FLOP/cycle x 1.62 GHz = 85.16 GFLOP/s; AI DRAM 85.16 / 17.696 = 4.81, L2 3.89, L1 1.74;
fp64 peak 96 x 1.62 GHz = 155.5 GFLOP/s, so 55 % of peak, compute side, at every level.
"""

from __future__ import annotations

import json

import pytest
from conftest import gpp_recording

from rooflab.cli.main import main

AI = {"DRAM": 4.81, "L2": 3.89, "L1": 1.74}
PCT = 100 * 85.16 / 155.5   # 54.8


def test_plot_draws_one_point_per_level_per_kernel(tmp_path, capsys):
    rep = gpp_recording("output1.ncu-rep")
    capsys.readouterr()
    assert main(["plot", str(rep), "-o", str(tmp_path / "h.png"), "--json"]) == 0
    pts = json.loads(capsys.readouterr().out)["drawn"]["points"]
    main_k = {p["level"]: p for p in pts if p["kernel"] == "sigma_gpp_gpu_34"}
    assert set(main_k) == {"DRAM", "L2", "L1"}
    assert len(pts) == 6   # two kernels, three levels each
    for level, ai in AI.items():
        assert main_k[level]["ai"] == pytest.approx(ai, abs=0.006)
        assert main_k[level]["percent_of_roof"] == pytest.approx(PCT, abs=0.3)


def test_report_level_all_keeps_each_level_on_its_own_slope(capsys):
    rep = gpp_recording("output1.ncu-rep")
    capsys.readouterr()
    assert main(["report", str(rep), "--level", "all", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["reading"]["model"] == "hierarchical"
    rows = {a["level"]: a for a in doc["analysis"] if a["kernel"] == "sigma_gpp_gpu_34"}
    assert {lv: a["memory_ceiling"] for lv, a in rows.items()} == {
        "DRAM": "DRAM", "L2": "L2", "L1": "L1"}
    for level, ai in AI.items():
        assert rows[level]["ai"] == pytest.approx(ai, abs=0.006)
        assert rows[level]["percent_of_roof"] == pytest.approx(PCT, abs=0.3)
        assert rows[level]["bound"] == "compute"
