"""Session 32 H: the percent follow-ups of the SI style ("54 %").

1. `rooflab report`'s table printed a gain's share of the total as '6.85 ms / 35.6 %' and the
   gain line under it '6.85 ms saved (36 % of the total)': one number, two roundings (and the
   notebook's Diagnosis a third helper, '0.0 %' for a gain under 0.05 %). All print
   units.fmt_share now.
2. Percent ranges read '18 %-37 %'; now '18-37 %' (units.fmt_pct_range), as the datasheet
   bands ('70-90 %').
3. benchmarks/ printed '15.7%', 'PASS (>= 95%)'; now rooflab.units' SI style.
"""

from __future__ import annotations

import pytest
from benchmark_script import load_benchmark

from rooflab.cli.main import main
from rooflab.hardware.catalog import lookup_roof
from rooflab.model.analysis import analyze
from rooflab.model.diagnose import diagnose
from rooflab.model.display_results import diagnosis_text
from rooflab.model.kernel import Kernel
from rooflab.report.markdown import priority_rows
from rooflab.units import fmt_pct_range, fmt_share

SEEDS = "examples/seeds"


def test_report_gain_cell_and_gain_line_agree(capsys, monkeypatch):
    """Seed 004 on the measured T4 (examples/seeds/t4p.json, DRAM 270 GB/s): decode b=1
    moves 2.2e9 B, floor 2.2e9 / 270e9 = 8.148 ms, measured 15 ms: gain 6.852 ms of the
    15 + 2.7488 + 1.48 = 19.229 ms of the three kernels = 35.63 % -> '35.6 %' in both
    (old: the table '35.6 %', the gain line '36 %')."""
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.chdir(_repo())
    assert main(["report", f"{SEEDS}/pts.json", "--on", f"{SEEDS}/t4p.json"]) == 0
    out = capsys.readouterr().out
    assert "6.85 ms / 35.6 %" in out
    assert "gain: 6.85 ms saved (35.6 % of the total) if it reached its roof (1.84x faster)" \
        in out


def test_a_small_gain_reads_alike_in_table_line_and_notebook():
    """Seed 004's decode b=1 (15 ms, floor 6.875 ms on the T4 datasheet, 320 GB/s) beside
    an rmsnorm of 6 us whose launch floor is 5 us: its gain 1 us of 15.006 ms = 0.00666 %.
    The notebook's Diagnosis printed '0.0 %' (f'{x:.1f}'), the table and the line '0.0067 %'."""
    decode = Kernel("decode b=1", {"fp16": 2.2e9}, {"DRAM": 2.2e9}, seconds=0.015,
                    meta={"op": "decode"})
    rms = Kernel("rmsnorm", {"fp16": 8192.0}, {"DRAM": 12288.0}, seconds=6e-6,
                 meta={"op": "rmsnorm"})
    ds = {d.kernel: d for d in diagnose(analyze(lookup_roof("T4"), [decode, rms]))}
    d = ds["rmsnorm"]
    assert d.gain_s == pytest.approx(1e-6)
    assert d.priority == pytest.approx(1e-6 / 0.015006)
    assert fmt_share(d.priority) == "0.0067 %"
    assert "1 us saved (0.0067 % of the total)" in d.gain_words
    assert "gain at roof 1 us (0.0067 % of the total)" in diagnosis_text(d)   # old: 0.0 %
    (row,) = [r for r in priority_rows(list(ds.values())) if r[1] == "rmsnorm"]
    assert "1 us / 0.0067 %" in row
    # decode: 8.125 ms of 15.006 ms = 54.15 % -> '54.1 %' everywhere (old line: '54 %')
    dd = ds["decode b=1"]
    assert "8.12 ms saved (54.1 % of the total)" in dd.gain_words
    assert "gain at roof 8.12 ms (54.1 % of the total)" in diagnosis_text(dd)


def test_percent_ranges_write_the_sign_once():
    # each end rounded as fmt_pct rounds it: 18.3 -> 18, 36.6 -> 37
    assert fmt_pct_range(18.3, 36.6) == "18-37 %"
    assert fmt_pct_range(0.15, 0.3) == "0.15-0.3 %"      # two figures under 1 %
    assert fmt_pct_range(99.6, 100.0) == "100 %"          # both ends print alike
    # a sign or an exponent would read as part of the dash
    assert fmt_pct_range(-5.0, 10.0) == "-5 % to 10 %"
    assert fmt_pct_range(0.0004, 0.3) == "<0.001 % to 0.3 %"


def test_llm_gap_line_range(capsys):
    """Seed 004: 15 ms TPOT, floor 6.51 ms, gap 8.49 ms; 311 launches x 5-10 us =
    1.555-3.11 ms = 18.3-36.6 % of it; eager 905 x 5 us = 4.525 ms = 53.3 %, 905 x 10 us
    capped at the gap, 100 %. Old: '(18 %-37 %; ...' and '(53 %-100 %)'."""
    assert main(["llm", "tinyllama-1.1b", "--on", "T4", "--context", "500", "--phase",
                 "decode", "--tpot-ms", "15"]) == 0
    out = capsys.readouterr().out
    assert "explain 1.56 ms-3.11 ms of it (18-37 %; CUDA graphs, fusion)" in out
    assert "which would explain 4.53 ms-8.49 ms (53-100 %)" in out


def test_cpu_fidelity_rows_in_si_style():
    # DRAM triad 54.6 / 55.7 GB/s = 98.0 % of the C reference, target 95 %: PASS
    rows = {r[0]: r for r in load_benchmark("cpu_fidelity").ratio_rows([
        {"probe DRAM": 54.6e9, "C triad DRAM": 55.7e9}])}
    assert rows["DRAM triad"][4:] == ("98.0 %", "98.0 %", "PASS (>= 95 %)")


def test_gpu_check_table_spread_in_si_style():
    pytest.importorskip("torch")
    from rooflab.hardware.profile import MachineProfile
    from rooflab.model.ceiling import Ceiling, Roof

    gc = load_benchmark("gpu_check_report")
    # samples 1, 1, 1.25: (1.25 - 1) / median 1 = 25.0 % (old: '25.0%')
    fp32 = Ceiling(value=1.25, precision="fp32", unit="vector", provenance="measured",
                   samples=(1.0, 1.0, 1.25), method="test")
    measured = Roof("host", kind="measured", compute=(fp32,), overhead_s=4e-6)
    p = MachineProfile(host={"name": "host"}, nominal=None, measured=measured,
                       extras={"gpu": {"overheads": {}}})
    lines = gc.table(p, [], [], 1.0).splitlines()
    row = next(x for x in lines if x.startswith("fp32 vector"))
    assert row.split()[4:8] == ["-", "-", "25.0", "%"]


def _repo():
    from pathlib import Path

    return Path(__file__).resolve().parents[1]
