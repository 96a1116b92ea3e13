"""A MIG slice is judged against its share of the card, not the whole card.

CUDA names a MIG device "<card> MIG <g>g.<GB>gb" and reports the slice's SMs and memory.
The nominal roof is the card's scaled to the slice (probe/gpu/mig.py mig_roof):
compute x slice SMs / card SMs (catalog `sms`; g / 7 where the catalog gives none), DRAM
and L2 x memory slices / 8 (NVIDIA MIG User Guide, "Supported MIG Profiles"). The probe
run fakes CUDA and NVML as tests/test_probe_gpu_fakecuda.py does.
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from rooflab.hardware.catalog import lookup
from rooflab.model.ceiling import Ceiling
from rooflab.probe.gpu.catalog_match import match_catalog
from rooflab.probe.gpu.mig import (
    MigProfile,
    mig_memory_slices,
    mig_profile,
    mig_roof,
)

A100_1G = "NVIDIA A100-SXM4-80GB MIG 1g.10gb"
H100_3G = "NVIDIA H100 80GB HBM3 MIG 3g.40gb"


# --- the profile in the device name -------------------------------------------------------

@pytest.mark.parametrize("name, want", [
    (A100_1G, MigProfile("1g.10gb", 1, 10, "NVIDIA A100-SXM4-80GB")),
    (H100_3G, MigProfile("3g.40gb", 3, 40, "NVIDIA H100 80GB HBM3")),
    ("NVIDIA A100-SXM4-80GB MIG 7g.80gb", MigProfile("7g.80gb", 7, 80, "NVIDIA A100-SXM4-80GB")),
    # a compute instance of part of a GPU instance: the GPU instance's profile
    ("NVIDIA A100-SXM4-40GB MIG 1c.3g.20gb", MigProfile("3g.20gb", 3, 20,
                                                        "NVIDIA A100-SXM4-40GB")),
    ("NVIDIA A100-SXM4-80GB MIG 1g.10gb+me", MigProfile("1g.10gb", 1, 10,
                                                        "NVIDIA A100-SXM4-80GB")),
    ("NVIDIA H200 MIG 1g.18gb", MigProfile("1g.18gb", 1, 18, "NVIDIA H200")),
])
def test_the_profile_is_read_from_the_name(name, want):
    assert mig_profile(name) == want


@pytest.mark.parametrize("name", ["NVIDIA A100-SXM4-80GB", "NVIDIA H100 80GB HBM3", "Orin",
                                  "NVIDIA A100-SXM4-80GB MIG 8g.80gb",  # 7 compute slices
                                  "NVIDIA A100-SXM4-80GB MIG 1g.0gb", ""])
def test_a_whole_card_or_a_bad_profile_is_no_mig_slice(name):
    assert mig_profile(name) is None


@pytest.mark.parametrize("gb, card_gb, slices", [
    (10, 80, 1), (20, 80, 2), (40, 80, 4), (80, 80, 8),     # A100 80GB: 10/80 x 8 = 1 ...
    (5, 40, 1), (20, 40, 4),                                 # A100 40GB: 3g.20gb is 4/8
    (18, 141, 1), (35, 141, 2), (71, 141, 4),                # H200: 18/141 x 8 = 1.02
    (25, 80, None),                                          # 2.5 eighths: not this card
    (10, None, None), (100, 80, None),
])
def test_memory_slices_are_eighths_of_the_card(gb, card_gb, slices):
    assert mig_memory_slices(gb, card_gb) == slices


# --- the slice's nominal roof ---------------------------------------------------------------

def _by_label(roof):
    return {c.label: c for c in (*roof.compute, *roof.memory)}


def test_an_a100_1g_slice_gets_14_of_108_sms_and_one_eighth_of_the_dram():
    m = match_catalog(A100_1G, "8.0", sms=14, memory_bytes=10.2e9)
    assert m.entry == m.roof.name == "NVIDIA A100 80GB SXM MIG 1g.10gb (derived)"
    assert m.mig_profile == "1g.10gb" and m.note is None
    assert m.how.startswith(f"matched as a MIG slice: the device name '{A100_1G}'")
    c = _by_label(m.roof)
    # 312e12 x 14 / 108 = 40.444e12; 2039e9 x 1 / 8 = 254.875e9
    assert c["fp16 tensor"].value == pytest.approx(40.444e12, rel=1e-4)
    assert c["fp16 tensor"].provenance == "derived"
    assert c["fp16 tensor"].method == "MIG 1g.10gb: 14 of 108 SMs x 312 TFLOP/s"
    assert c["fp64 vector"].value == pytest.approx(9.7e12 * 14 / 108)      # 1.2574e12
    assert c["DRAM"].value == pytest.approx(254.875e9)
    assert (c["DRAM"].provenance, c["DRAM"].method) == \
        ("derived", "MIG 1g.10gb: 1 of 8 memory slices x 2039 GB/s")
    # the host link is the card's: 16 x 16 GT/s x 128/130 / 8 = 31.51 GB/s, as before
    assert c["PCIe"].value == pytest.approx(31.5077e9, rel=1e-4)
    assert not c["PCIe"].method.startswith("MIG")


def test_an_h100_3g_slice():
    m = match_catalog(H100_3G, "9.0", sms=60)
    assert m.entry == "NVIDIA H100 SXM MIG 3g.40gb (derived)"
    c = _by_label(m.roof)
    # 989.5e12 x 60 / 132 = 449.77e12; 3350e9 x 4 / 8 = 1675e9
    assert c["fp16 tensor"].value == pytest.approx(449.77e12, rel=1e-5)
    assert c["fp16 tensor"].method == "MIG 3g.40gb: 60 of 132 SMs x 989.5 TFLOP/s"
    assert c["DRAM"].value == pytest.approx(1675e9)
    assert c["DRAM"].method == "MIG 3g.40gb: 4 of 8 memory slices x 3350 GB/s"


def test_without_the_slices_sm_count_the_share_is_g_of_7():
    m = match_catalog(H100_3G, "9.0", sms=None)
    c = _by_label(m.roof)
    # 989.5e12 x 3 / 7 = 424.07e12
    assert c["fp16 tensor"].value == pytest.approx(424.071e12, rel=1e-5)
    assert "3 of 7 compute slices (the slice's SM count not read)" in c["fp16 tensor"].method


def test_a_card_without_an_sm_count_in_the_catalog_uses_g_of_7():
    # a card with no `sms` (every NVIDIA entry but the GB200 has one now): the H200's roof
    # with the count withheld: 989.5e12 / 7 = 141.36e12; 4800e9 / 8 = 600e9
    card = lookup("NVIDIA H200 SXM").roof
    roof, _ = mig_roof(card, mig_profile("X MIG 1g.18gb"), card_sms=None, slice_sms=16,
                       card_gb=141)
    c = _by_label(roof)
    assert c["fp16 tensor"].value == pytest.approx(141.357e12, rel=1e-5)
    assert "the catalog gives no SM count for the card" in c["fp16 tensor"].method
    assert c["DRAM"].value == pytest.approx(600e9)


def test_an_h200_slice_gets_its_share_by_sms():
    # H200 132 SMs (catalog); a 1g slice reports 16: 989.5e12 * 16 / 132 = 119.94e12
    m = match_catalog("NVIDIA H200 MIG 1g.18gb", "9.0", sms=16)
    assert _by_label(m.roof)["fp16 tensor"].value == pytest.approx(119.94e12, rel=1e-4)


def test_memory_is_left_at_the_cards_when_the_profile_is_no_whole_eighth():
    card = lookup("NVIDIA A100 80GB SXM").roof
    roof, name = mig_roof(card, mig_profile("X MIG 2g.25gb"), card_sms=108, slice_sms=28,
                          card_gb=80)
    assert name == "NVIDIA A100 80GB SXM MIG 2g.25gb (derived)"
    c = _by_label(roof)
    assert c["DRAM"].value == 2039e9 and c["DRAM"].provenance == "nominal"
    assert c["fp16 tensor"].value == pytest.approx(312e12 * 28 / 108)      # 80.89e12
    assert "MIG 2g.25gb: 25 GB is no whole eighth of the card's 80 GB" in roof.notes[-1]


def test_the_sm_check_does_not_reject_a_slice_but_does_more_sms_than_the_card():
    assert lookup("NVIDIA A100 80GB SXM").sms == 108
    assert match_catalog(A100_1G, "8.0", sms=14).roof is not None
    m = match_catalog(A100_1G, "8.0", sms=120)
    assert m.roof is None and m.entry is None and m.mig_profile == "1g.10gb"
    assert "the device has 120 SMs, more than the card's 108" in m.note


def test_a_whole_card_is_unchanged():
    m = match_catalog("NVIDIA A100-SXM4-80GB", "8.0", sms=108)
    assert m.entry == "NVIDIA A100 80GB SXM" and m.mig_profile is None
    c = _by_label(m.roof)
    assert c["fp16 tensor"].value == 312e12 and c["fp16 tensor"].provenance == "nominal"
    assert c["DRAM"].value == 2039e9 and c["DRAM"].provenance == "nominal"
    # a whole card with another SM count is not the entry (the catalog's count is the card's)
    assert match_catalog("NVIDIA A100-SXM4-80GB", "8.0", sms=98).roof is None


# --- a probe run on a fake MIG device ----------------------------------------------------
# What a healthy 1g.10gb slice measures: 80 % of its fp16 tensor share (0.8 x 40.444e12 =
# 32.36e12, 10.4 % of the card's 312e12) and 85 % of its DRAM share (0.85 x 254.875e9 =
# 216.6e9, 10.6 % of the card's 2039e9). Against the card both are far below.
SLICE_FP16 = 0.8 * 312e12 * 14 / 108
SLICE_DRAM = 0.85 * 2039e9 / 8


def _fc():
    """tests/test_probe_gpu_fakecuda.py's stand-ins (skips without torch)."""
    pytest.importorskip("torch")
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import test_probe_gpu_fakecuda as fc
    return fc


def _fake_torch(fc, name: str, sms: int, memory: float):
    class Cuda(fc.FakeCuda):
        def get_device_properties(self, dev):
            return SimpleNamespace(name=name, major=8 if "A100" in name else 9, minor=0,
                                   multi_processor_count=sms, total_memory=memory,
                                   L2_cache_size=5 << 20,
                                   uuid="0a1b2c3d-0000-0000-0000-000000000000")
    fake = fc.FakeTorch([])
    fake.cuda = Cuda([])
    return fake


def _slice_results(torch, dev, ctx, say):
    """The stages' results as a healthy slice would give them (the CPU cannot)."""
    m = "fake: a healthy 1g.10gb slice"
    return ({"compute: matmul": [Ceiling(SLICE_FP16, "fp16", "tensor", provenance="measured",
                                         method=m)],
             "compute: vector": [],
             "memory: stream": [Ceiling(SLICE_DRAM, level="DRAM", provenance="measured",
                                        method=m)],
             "memory: sweep": ([], {}), "memory: host": [], "overhead": (5e-6, {})}, {})


def _probe(monkeypatch, name: str, sms: int, memory: float):
    fc = _fc()
    import rooflab.probe.gpu as gpu

    monkeypatch.setattr(gpu, "_run_stages", _slice_results)
    with fc.dressed_as_gpu(monkeypatch, _fake_torch(fc, name, sms, memory), fc._fake_nvml()):
        return gpu.probe_gpu("cuda:0", "quick", triton=False)


def test_a_probe_of_a_slice_at_its_share_says_nothing_is_far_below(monkeypatch):
    p = _probe(monkeypatch, A100_1G, 14, 10.2e9)
    h = p.host
    assert h["mig_profile"] == "1g.10gb"
    assert h["catalog"] == p.nominal.name == "NVIDIA A100 80GB SXM MIG 1g.10gb (derived)"
    assert p.extras["below_nominal"]["notes"] == []
    assert not any(n.startswith("far below nominal") for n in p.measured.notes)
    ratios = {r["ceiling"]: r["ratio"] for r in p.extras["gpu"]["nominal_checks"]}
    assert ratios["fp16 tensor"] == pytest.approx(0.80)
    assert ratios["DRAM"] == pytest.approx(0.85)
    # the notes say the roof is the slice's share, derived
    assert any(n.startswith("nominal roof 'NVIDIA A100 80GB SXM MIG 1g.10gb (derived)': "
                            "matched as a MIG slice") and "14 of 108 SMs" in n
               for n in p.measured.notes)


def test_the_same_values_on_the_whole_card_are_far_below(monkeypatch):
    # the slice's healthy figures against the whole card: 10.4 % and 10.6 %, flagged
    p = _probe(monkeypatch, "NVIDIA A100-SXM4-80GB", 108, 85.2e9)
    assert p.host["mig_profile"] is None and p.host["catalog"] == "NVIDIA A100 80GB SXM"
    notes = p.extras["below_nominal"]["notes"]
    assert len(notes) == 2 and all(n.startswith("far below nominal ('NVIDIA A100 80GB SXM')")
                                   for n in notes)
    ratios = {r["ceiling"]: r["ratio"] for r in p.extras["gpu"]["nominal_checks"]}
    assert ratios["fp16 tensor"] == pytest.approx(0.8 * 14 / 108)      # 0.1037
    assert ratios["DRAM"] == pytest.approx(0.85 / 8)                    # 0.1063
