"""Review r1_legible F9: seed 004's healthy bands (compute 70-90 %, bandwidth 75-90 % of a
datasheet) and seed 000 §3.1's copy band (85-92 %) live in one module, model/datasheet_note.
The datasheet note, the probe's low/below-nominal notes and the record table's "(low)" mark
all read them there: moving a band in that one place moves every user."""

from __future__ import annotations

import pytest
from seed004_files import t4_profile

from rooflab.hardware.profile import load_profile
from rooflab.hardware.resolve import load_roof
from rooflab.model import datasheet_note as sheet
from rooflab.model.analysis import analyze
from rooflab.model.kernel import Kernel
from rooflab.probe import nominal as nom
from rooflab.report.record_table import LOW_MARK, record_table


def _t4(tmp_path, fp16: float, dram: float):
    """Seed 004's T4 profile: nominal 65 TFLOP/s fp16 tensor and 320 GB/s, measured as
    given. A profile without a host kind is a GPU's."""
    return load_profile(t4_profile(tmp_path, fp16_measured=fp16, dram_measured=dram))


def _marks(tmp_path, fp16: float, dram: float) -> dict[str, str]:
    prof = _t4(tmp_path, fp16, dram)
    return {r.quantity: r.cells[3] for r in record_table(None, prof, ())}


def _datasheet_note() -> str:
    k = Kernel("gemm", {"fp32": 2.1e9}, {"DRAM": 1.2e7}, seconds=5e-4)
    notes = analyze(load_roof("A100"), [k]).notes
    return next(n for n in notes if n.startswith("judged on datasheet"))


def test_the_bands_and_their_words():
    assert sheet.HEALTHY_COMPUTE == (0.70, 0.90)
    assert sheet.HEALTHY_BANDWIDTH == (0.75, 0.90)
    assert sheet.COPY_BANDWIDTH == (0.85, 0.92)          # seed 000 §3.1: its own fact
    assert sheet.band_words(sheet.HEALTHY_COMPUTE) == "70-90 %"
    assert sheet.band_words(sheet.HEALTHY_BANDWIDTH) == "75-90 %"
    assert sheet.band_words(sheet.COPY_BANDWIDTH) == "85-92 %"
    assert nom.healthy_range("gpu") == "70-90 %"
    assert nom.healthy_range("gpu", compute=False) == "75-90 %"
    assert nom.healthy_range("cpu", compute=False) == "75-90 %"
    assert nom.healthy_range("cpu").startswith("85-100 %")    # at the measured clock
    # the JSON the probe stores keeps its keys and values
    assert nom.below_nominal_extras([]) == {
        "notes": [], "bandwidth_floor": 0.60, "compute_floor": 0.50,
        "quiet_compute_floor": 0.70, "quiet_bandwidth_floor": 0.75}


def test_today_seed004s_t4_at_62_percent_is_low_everywhere(tmp_path):
    # 40.3 / 65 TFLOP/s = 62 %, 200 / 320 GB/s = 62.5 %: both under their band's low edge
    prof = _t4(tmp_path, 40.3e12, 200e9)
    notes = nom.low_compute_notes(prof.measured, prof.nominal, "gpu")
    assert len(notes) == 2
    assert "a quiet probe reaches 70-90 % (noted at 50-70 %)" in notes[0]
    assert ("a copy reaches 85-92 % of the datasheet (seed 000 §3.1) and a healthy run "
            "75-90 % (seed 004; noted at 60-75 %)") in notes[1]
    marks = _marks(tmp_path, 40.3e12, 200e9)
    assert marks["fp16 tensor peak"] == f"62 % {LOW_MARK}"
    assert marks["DRAM bandwidth"] == f"62 % {LOW_MARK}"
    note = _datasheet_note()
    assert "reaches 70-90 % of them" in note and "up to 1.43x low" in note    # 1 / 0.7


def test_one_change_of_the_bands_moves_every_user(tmp_path, monkeypatch):
    monkeypatch.setattr(sheet, "HEALTHY_COMPUTE", (0.60, 0.95))
    monkeypatch.setattr(sheet, "HEALTHY_BANDWIDTH", (0.65, 0.95))
    monkeypatch.setattr(sheet, "COPY_BANDWIDTH", (0.80, 0.97))
    # the datasheet note: 1 / 0.6 = 1.67
    note = _datasheet_note()
    assert "reaches 60-95 % of them" in note and "up to 1.67x low" in note
    # the probe: 62 % compute is healthy now (>= 60 %), 62.5 % DRAM still low (< 65 %)
    prof = _t4(tmp_path, 40.3e12, 200e9)
    notes = nom.low_compute_notes(prof.measured, prof.nominal, "gpu")
    assert len(notes) == 1 and "DRAM 200 GB/s = 62 % of 320 GB/s" in notes[0]
    assert ("a copy reaches 80-97 % of the datasheet (seed 000 §3.1) and a healthy run "
            "65-95 % (seed 004; noted at 60-65 %)") in notes[0]
    # 35.75 / 65 = 55 %: low, with the moved words
    low = nom.low_compute_notes(_t4(tmp_path, 35.75e12, 300e9).measured, prof.nominal, "gpu")
    assert len(low) == 1 and "a quiet probe reaches 60-95 % (noted at 50-60 %)" in low[0]
    assert nom.healthy_range("gpu") == "60-95 %"
    assert nom.healthy_range("gpu", compute=False) == "65-95 %"
    far = nom.below_nominal_notes(_t4(tmp_path, 20e12, 100e9).measured, prof.nominal, "gpu")
    assert "a healthy run reaches 65-95 % (flagged under 60 %)" in far[0]      # DRAM
    assert "a healthy run reaches 60-95 % (flagged under 50 %)" in far[1]      # compute
    extras = nom.below_nominal_extras([])
    assert extras["quiet_compute_floor"] == 0.60 and extras["quiet_bandwidth_floor"] == 0.65
    # the record table: 62 % compute unmarked, 62 % DRAM still marked
    marks = _marks(tmp_path, 40.3e12, 200e9)
    assert marks["fp16 tensor peak"] == "62 %"
    assert marks["DRAM bandwidth"] == f"62 % {LOW_MARK}"
    # raise the bandwidth band's edge under 62 %: the mark goes too
    monkeypatch.setattr(sheet, "HEALTHY_BANDWIDTH", (0.61, 0.95))
    assert _marks(tmp_path, 40.3e12, 200e9)["DRAM bandwidth"] == "62 %"
    assert nom.low_compute_notes(prof.measured, prof.nominal, "gpu") == []


@pytest.mark.parametrize("module", ["probe/nominal.py", "report/record_table.py"])
def test_no_copy_of_the_bands_is_left(module):
    from pathlib import Path

    import rooflab

    text = (Path(rooflab.__file__).parent / module).read_text()
    code = "\n".join(line.split("#")[0] for line in text.splitlines()
                     if not line.lstrip().startswith("#"))
    for literal in ("0.70", "0.75", "0.85", "0.92", '"70-90 %"', '"75-90 %"', "85-92 % of "
                    "the datasheet"):
        assert literal not in code, (module, literal)
