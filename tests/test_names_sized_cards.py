"""A memory size typed after a card whose catalog names give none is checked against the
card's memory: 'rtx 4060 16gb' (the 4060 Ti 16GB's size) silently became the 8 GB RTX 4060,
'mi250x 64gb' (one die) the 128 GB package, while 'v100 16gb' was already an error.
"""

from __future__ import annotations

import pytest

from rooflab.errors import HardwareNotFound
from rooflab.hardware.catalog import lookup, match_device_name


@pytest.mark.parametrize("typed, sizes", [("rtx 4060 16gb", "8GB"), ("rtx 4090 48gb", "24GB"),
                                          ("mi250x 64gb", "128GB"), ("t4 8gb", "16GB")])
def test_a_size_the_card_does_not_come_in_is_an_error(typed, sizes):
    with pytest.raises(HardwareNotFound, match=f"comes as {sizes}"):
        lookup(typed)


@pytest.mark.parametrize("typed, name", [
    ("rtx 4090 24gb", "NVIDIA GeForce RTX 4090"), ("t4 16gb", "NVIDIA T4"),
    ("mi300x 192gb", "AMD Instinct MI300X"),
    # within 10 %: GiB vs GB (TPU v4's 32 GiB is 34.4 GB), physical vs usable (B200)
    ("tpu v4 32gb", "Google TPU v4"), ("b200 192gb", "NVIDIA B200"),
    # CPUs and unified memory: the catalog's size is one configuration of many
    ("m3 max 64gb", "Apple M3 Max (40-core GPU)"), ("epyc 9654 64gb", "AMD EPYC 9654"),
    ("a100 80gb pcie", "NVIDIA A100 80GB PCIe"), ("h100 nvl 94gb", "NVIDIA H100 NVL"),
])
def test_a_size_the_card_comes_in_still_finds_it(typed, name):
    assert lookup(typed).name == name


def test_driver_strings_are_not_size_checked():
    # match() (device and profiler strings) keeps its own rules
    assert match_device_name("NVIDIA GeForce RTX 4090").name == "NVIDIA GeForce RTX 4090"
