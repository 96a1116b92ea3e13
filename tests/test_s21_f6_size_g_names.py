"""A memory size written with a bare 'G' (LLM-Viewer's `nvidia_A100_40G`, 'A100 40G PCIe') is
that size (review s21 r6 F1): the '40g' word was dropped, and the bare 'A100' gave the 80 GB
card (2039 GB/s where the 40 GB SXM has 1555 GB/s, every floor 24 % low), with no note.
"""

from __future__ import annotations

import pytest

from rooflab.errors import HardwareNotFound
from rooflab.hardware.catalog import all_devices, lookup, match_device_name
from rooflab.hardware.names import tokens


@pytest.mark.parametrize("typed, name", [
    ("nvidia_A100_40G", "NVIDIA A100 40GB SXM"), ("nvidia_A100_80G", "NVIDIA A100 80GB SXM"),
    ("A100 40G PCIe", "NVIDIA A100 40GB PCIe"), ("A100-40G", "NVIDIA A100 40GB SXM"),
    ("GH200 144G HBM3e", "NVIDIA GH200 Grace Hopper 144GB"),
])
def test_a_bare_g_size_picks_that_size(typed, name):
    assert lookup(typed).name == name


def test_lv_a100_40g_has_the_40gb_bandwidth():
    dram = next(c for c in lookup("nvidia_A100_40G").roof.memory if c.level == "DRAM")
    assert dram.value == pytest.approx(1.555e12)


def test_a_size_the_card_does_not_come_in_is_an_error():
    with pytest.raises(HardwareNotFound, match=r"no 96GB 'H100' in the catalog.*80GB or 94GB"):
        lookup("H100 96G")


@pytest.mark.parametrize("name, words", [
    ("A10G", ("a10g",)), ("c7g", ("c7g",)),           # names, not sizes
    ("NVIDIA A100-SXM4-40GB MIG 1g.10gb", ("a100", "sxm", "40gb", "mig", "1g", "10gb")),
])
def test_names_ending_in_g_are_kept(name, words):
    assert tokens(name) == words


# LLM-Viewer's hardware_params keys (hardwares/hardware_params.py) and what they are
LV_KEYS = {"nvidia_V100": "NVIDIA V100 SXM2 32GB", "nvidia_A6000": "NVIDIA RTX A6000",
           "nvidia_A100": "NVIDIA A100 80GB SXM", "nvidia_A100_40G": "NVIDIA A100 40GB SXM",
           "nvidia_A100_80G": "NVIDIA A100 80GB SXM", "nvidia_H100": "NVIDIA H100 SXM",
           "nvidia_H100_SXM": "NVIDIA H100 SXM", "nvidia_H100_PCIe": "NVIDIA H100 PCIe",
           "nvidia_L40": "NVIDIA L40", "nvidia_A800_80G_SXM": "NVIDIA A800 80GB SXM",
           "intel_13900k": "Intel Core i9-13900K"}


@pytest.mark.parametrize("key, name", sorted(LV_KEYS.items()))
def test_llm_viewer_keys(key, name):
    assert lookup(key).name == name


def test_every_catalog_name_and_alias_finds_its_own_entry():
    wrong = []
    for dev in all_devices():
        for label in (dev.name, *dev.aliases):
            found = lookup(label).name
            matched = match_device_name(label)
            if found != dev.name or matched is None or matched.name != dev.name:
                wrong.append((label, dev.name, found, matched and matched.name))
    assert wrong == []
