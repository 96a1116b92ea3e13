"""Review r7 F3: seed 004 expects a measured T4 ridge of "170–200" (its "四个数" table and
名词解释 "实测预期 170 到 200"), but its own bands (bandwidth 75-90 %, compute 70-90 % of the
datasheet) put a healthy probe's ridge anywhere from 158 to 244 FLOP/B. The datasheet note,
which gives the bands, now says the ridge range they imply, so a probe at 52 TFLOP/s and
250 GB/s (ridge 208, inside both bands) is not mistaken for a bad one."""

from __future__ import annotations

from pathlib import Path

import pytest

from rooflab.cli.main import main
from rooflab.hardware.resolve import load_roof
from rooflab.model.analysis import analyze
from rooflab.model.ceiling import Ceiling, Roof
from rooflab.model.datasheet_note import datasheet_note, expected_measured_ridge
from rooflab.model.kernel import Kernel

ROOT = Path(__file__).resolve().parents[1]
DECODE = Kernel("decode b=1", {"fp16": 2.2e9}, {"DRAM": 2.2e9}, seconds=0.015)


def test_t4_ridge_range_by_hand():
    # T4 datasheet: fp16 tensor 65 TFLOP/s, DRAM 320 GB/s (ridge 203.1).
    # low: 65e12 x 0.70 / (320e9 x 0.90) = 45.5e12 / 288e9 = 157.99
    # high: 65e12 x 0.90 / (320e9 x 0.75) = 58.5e12 / 240e9 = 243.75
    low, high = expected_measured_ridge(load_roof("T4"))
    assert low == pytest.approx(45.5e12 / 288e9) == pytest.approx(157.986, abs=1e-3)
    assert high == pytest.approx(243.75)
    # the seed's 170-200 is narrower than its bands allow; its own example probe (50 TFLOP/s,
    # 270 GB/s: 185) and r7's (52 TFLOP/s, 250 GB/s: 208) are both inside the range
    assert low < 170 and high > 200
    assert 52e12 / 250e9 == pytest.approx(208)
    assert low < 50e12 / 270e9 < high and low < 52e12 / 250e9 < high


def test_the_datasheet_note_says_the_range():
    (note,) = [n for n in analyze(load_roof("T4"), [DECODE]).notes
               if n.startswith("judged on datasheet")]
    assert note.endswith("; a measured ridge (fp16 tensor / DRAM, 203 on the datasheet) is "
                         "expected at 158-244 FLOP/byte for these bands (bandwidth 75-90 %)")
    # the A100: 312e12 x 0.7 / (2.039e12 x 0.9) = 119.0; 312 x 0.9 / (2.039 x 0.75) = 183.6
    a100 = datasheet_note(load_roof("A100"), [DECODE])
    assert "(fp16 tensor / DRAM, 153 on the datasheet) is expected at 119-184 FLOP/byte" in a100


def test_a_roof_without_dram_gets_no_ridge_range():
    roof = Roof("hbm-less", compute=(Ceiling(1e12, precision="fp32"),),
                memory=(Ceiling(1e12, level="L2"),), source="a datasheet")
    assert expected_measured_ridge(roof) is None
    note = datasheet_note(roof, [Kernel("k", {"fp32": 1e9}, {"L2": 1e8}, seconds=1e-3)])
    assert note is not None and "measured ridge" not in note


def test_report_prints_it_and_the_seeds_page_flags_the_seed(capsys):
    pts = ROOT / "examples" / "seeds" / "pts.json"
    assert main(["report", str(pts), "--on", "T4"]) == 0
    out, err = capsys.readouterr()
    assert "expected at 158-244 FLOP/byte for these bands" in " ".join((out + err).split())
    page = " ".join((ROOT / "docs" / "seeds.md").read_text().split())
    assert '"170–200"' in page and "45.5 / 288 = 158 to 58.5 / 240 = 244" in page
