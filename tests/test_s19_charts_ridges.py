"""The record table's ridge per memory level (s19 f4 item 1): seeds 000/004 draw one slope
per level, so `rooflab probe`, `report` (terminal, --json, Markdown) and `specs show` give
the top float ceiling's ridge (P / B) against L1, L2 and L3 too, not against DRAM only.

The profile is built by hand; every expected ridge is worked out in the comments.
"""

from __future__ import annotations

import json

import pytest
from cli_inproc import run_cli

from rooflab.hardware.profile import MachineProfile, save_profile
from rooflab.model import Ceiling, Kernel, Roof, analyze
from rooflab.model.diagnose import diagnose
from rooflab.report.record_table import record_table
from rooflab.report.tables import profile_rows


def _vec(p, v, prov):
    return Ceiling(v, precision=p, unit="vector", provenance=prov)


# measured: fp64 1 TFLOP/s, fp32 2 TFLOP/s (the top float), L1 8, L2 4, L3 1 TB/s, DRAM
# 100 GB/s; nominal: 1.2 / 2.4 TFLOP/s, L2 5 TB/s, DRAM 125 GB/s (no L1, no L3)
MEASURED = Roof("box measured", "measured",
                compute=(_vec("fp64", 1.0e12, "measured"), _vec("fp32", 2.0e12, "measured")),
                memory=tuple(Ceiling(v, level=lv, provenance="measured")
                             for lv, v in (("L1", 8e12), ("L2", 4e12), ("L3", 1e12),
                                           ("DRAM", 0.1e12))))
NOMINAL = Roof("box", "nominal",
               compute=(_vec("fp64", 1.2e12, "nominal"), _vec("fp32", 2.4e12, "nominal")),
               memory=(Ceiling(0.125e12, level="DRAM"), Ceiling(5e12, level="L2")))
PROFILE = MachineProfile(host={"name": "box", "kind": "cpu"}, nominal=NOMINAL,
                         measured=MEASURED)


def _ridges(rows):
    return {r.quantity: (r.nominal, r.measured) for r in rows
            if r.quantity.startswith("ridge")}


def test_profile_rows_give_the_top_float_ridge_per_level():
    got = _ridges(profile_rows(PROFILE))
    # DRAM keeps one ridge per precision: fp64 1.2e12 / 0.125e12 = 9.6, 1e12 / 1e11 = 10
    assert got["ridge fp64 / DRAM"] == pytest.approx((9.6, 10.0))
    assert got["ridge fp32 / DRAM"] == pytest.approx((19.2, 20.0))
    # fp32 is the top float ceiling: 2e12 / 8e12 = 0.25 (L1), 2e12 / 4e12 = 0.5 (L2),
    # 2.4e12 / 5e12 = 0.48 nominal (L2), 2e12 / 1e12 = 2 (L3); no nominal L1 or L3
    assert got["ridge fp32 / L1"] == (None, pytest.approx(0.25))
    assert got["ridge fp32 / L2"] == pytest.approx((0.48, 0.5))
    assert got["ridge fp32 / L3"] == (None, pytest.approx(2.0))
    assert "ridge fp64 / L2" not in got   # the top float only: the table stays short
    order = [r.quantity for r in profile_rows(PROFILE) if r.quantity.startswith("ridge")]
    assert order == ["ridge fp64 / DRAM", "ridge fp32 / DRAM", "ridge fp32 / L1",
                     "ridge fp32 / L2", "ridge fp32 / L3"]


def test_record_table_rows_and_json():
    k = Kernel("stream", flop={"fp32": 1e9}, bytes={"DRAM": 4e9}, seconds=0.05)
    analysis = analyze(MEASURED, [k])
    rows = {r.quantity: r for r in record_table(analysis, PROFILE, diagnose(analysis))}
    l2 = rows["ridge fp32 / L2"].to_dict()
    assert (l2["nominal"], l2["measured"]) == pytest.approx((0.48, 0.5))
    assert l2["ratio"] == pytest.approx(0.5 / 0.48)
    assert l2["cells"] == ["ridge fp32 / L2", "0.48", "0.5", "104 %"]
    assert rows["ridge fp32 / L1"].cells == ("ridge fp32 / L1", "no nominal L1", "0.25", "-")


def test_gpu_cache_ridge_has_no_dram_band():
    """Seed 004's healthy bands are of the DRAM bandwidth: a GPU's L2 ridge gets no
    expected_measured range (only its DRAM ridges do)."""
    gpu = MachineProfile(host={"name": "g", "kind": "gpu"}, nominal=NOMINAL, measured=MEASURED)
    k = Kernel("stream", flop={"fp32": 1e9}, bytes={"DRAM": 4e9}, seconds=0.05)
    analysis = analyze(MEASURED, [k])
    rows = {r.quantity: r for r in record_table(analysis, gpu, diagnose(analysis))}
    assert rows["ridge fp32 / DRAM"].expected is not None
    assert rows["ridge fp32 / L2"].expected is None


def _files(tmp_path):
    prof = tmp_path / "box.json"
    save_profile(prof, PROFILE)
    kernels = tmp_path / "k.json"
    kernels.write_text(json.dumps({"kernels": [
        {"name": "stream", "flop": {"fp32": 1e9}, "bytes": {"DRAM": 4e9}, "seconds": 0.05}]}))
    return prof, kernels


def test_report_terminal_json_markdown(tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    prof, kernels = _files(tmp_path)
    r = run_cli("report", str(kernels), "--on", str(prof))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert max(len(ln) for ln in lines) <= 80
    # each cache ridge one line of the table (no wrapped nominal cell)
    for level, measured in (("L1", "0.25"), ("L2", "0.5"), ("L3", "2")):
        row = next(ln for ln in lines if f"ridge fp32 / {level}" in ln)
        assert measured in row.split("│")[3]
    r = run_cli("report", str(kernels), "--on", str(prof), "--json")
    table = {d["quantity"]: d for d in json.loads(r.stdout)["record_table"]}
    assert table["ridge fp32 / L3"]["measured"] == pytest.approx(2.0)
    assert table["ridge fp32 / L3"]["nominal"] is None
    md = tmp_path / "r.md"
    assert run_cli("report", str(kernels), "--on", str(prof), "-o", str(md)).returncode == 0
    text = md.read_text()
    assert "ridge fp32 / L2" in text and "| 0.48 |" in text.replace("  ", " ")


def test_specs_show_gives_each_level_its_ridge(tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    prof, _ = _files(tmp_path)
    r = run_cli("specs", "show", str(prof))
    assert r.returncode == 0, r.stderr
    assert "ridge vs fp32 vector" in r.stdout
    cells = {ln.split("│")[1].strip(): ln.split("│")[3].strip()
             for ln in r.stdout.splitlines() if ln.count("│") >= 4
             and ln.split("│")[1].strip() in ("L1", "L2", "L3", "DRAM")}
    # the judging (measured) roof: fp32 2 TFLOP/s over 8, 4, 1 TB/s and 100 GB/s
    assert cells == {"L1": "0.25", "L2": "0.5", "L3": "2", "DRAM": "20"}
