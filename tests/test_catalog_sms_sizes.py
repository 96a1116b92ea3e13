"""Catalog entries' SM counts (`sms`), and memory sizes in names people type.

The SM count is what torch's multi_processor_count reports; the GPU probe's catalog match
rejects an entry whose count differs (tests/test_probe_gpu_jetson.py). A size the name
carries must not be dropped: 'v100 16gb' is not the V100 SXM2 32GB.
"""

from __future__ import annotations

import json

import pytest
from test_catalog import GOOD  # noqa: E402  (one minimal valid entry for both files)

from rooflab.cli.main import main
from rooflab.errors import HardwareNotFound, ParseError
from rooflab.hardware.catalog import (
    all_devices,
    device_to_dict,
    lookup,
    match_device_name,
    parse_catalog_text,
)


@pytest.mark.parametrize("name, sms", [
    ("NVIDIA Jetson AGX Orin 64GB", 16), ("NVIDIA Jetson AGX Orin 32GB", 14),
    ("NVIDIA Jetson Orin NX 16GB", 8), ("NVIDIA Jetson Orin NX 8GB", 8),
    ("NVIDIA Jetson Orin Nano 8GB", 8), ("NVIDIA Jetson Orin Nano 4GB", 4),
])
def test_every_jetson_entry_gives_its_sm_count(name, sms):
    d = lookup(name)
    assert d.sms == sms and device_to_dict(d)["sms"] == sms
    # the notes derive the peaks from the same count
    assert any(f"{sms} SMs" in note for note in d.notes)


def test_the_sm_count_is_optional_and_parsed():
    (d,) = parse_catalog_text(GOOD, "test.toml")
    assert d.sms is None and device_to_dict(d)["sms"] is None
    (d,) = parse_catalog_text(GOOD.replace("kind = \"gpu\"", "kind = \"gpu\"\nsms = 132"),
                              "test.toml")
    assert d.sms == 132
    # Every NVIDIA entry but the GB200, B300 and GB300 (no public count) has one, from its
    # whitepaper or datasheet (a MIG slice's compute is its SMs over the card's:
    # test_probe_gpu_mig.py)
    counts = {d.name: d.sms for d in all_devices() if d.vendor == "NVIDIA" and d.kind == "gpu"}
    assert [n for n, s in counts.items() if s is None] == [
        "NVIDIA B300", "NVIDIA GB300 Grace Blackwell Ultra", "NVIDIA GB200 Grace Blackwell"]
    whitepaper = {"NVIDIA A100 80GB SXM": 108, "NVIDIA H100 SXM": 132, "NVIDIA H100 PCIe": 114,
                  "NVIDIA T4": 40, "NVIDIA V100 SXM2 32GB": 80}
    assert {n: counts[n] for n in whitepaper} == whitepaper


@pytest.mark.parametrize("value, message", [
    ("0", "field 'sms' must be positive"), ("16.5", "field 'sms' must be int"),
    ("\"16\"", "field 'sms' must be int"), ("true", "field 'sms' must be int"),
])
def test_a_bad_sm_count_is_refused(value, message):
    with pytest.raises(ParseError, match=message):
        parse_catalog_text(GOOD.replace("kind = \"gpu\"", f"kind = \"gpu\"\nsms = {value}"),
                           "bad.toml")


def test_specs_show_json_has_the_sm_count(capsys):
    assert main(["specs", "show", "jetson-agx-orin-32gb", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["device"]["sms"] == 14


# --- a memory size in a typed name ----------------------------------------------------------

@pytest.mark.parametrize("query, name", [
    ("v100 32gb", "NVIDIA V100 SXM2 32GB"), ("v100", "NVIDIA V100 SXM2 32GB"),
    ("a100 40gb", "NVIDIA A100 40GB SXM"), ("a100 80gb", "NVIDIA A100 80GB SXM"),
    ("h100 80gb", "NVIDIA H100 SXM"), ("h100 pcie 80gb", "NVIDIA H100 PCIe"),
    ("jetson orin nano 4gb", "NVIDIA Jetson Orin Nano 4GB"),
    ("rtx 4090 24gb", "NVIDIA GeForce RTX 4090"),     # no size in any of its names: kept
])
def test_sizes_the_catalog_has_still_resolve(query, name):
    assert lookup(query).name == name


@pytest.mark.parametrize("query, family, sizes, among", [
    ("v100 16gb", "v100", "32GB", "NVIDIA V100 SXM2 32GB"),
    ("A100 96GB", "A100", "40GB or 80GB", "NVIDIA A100 80GB SXM"),
    ("h100 96gb", "h100", "80GB or 94GB", "NVIDIA H100 NVL"),
    ("jetson orin nx 32gb", "jetson orin nx", "8GB or 16GB", "NVIDIA Jetson Orin NX 16GB"),
])
def test_a_size_no_entry_has_is_an_error_listing_the_sizes(query, family, sizes, among):
    with pytest.raises(HardwareNotFound) as err:
        lookup(query)
    text = str(err.value)
    assert f"{family} comes as {sizes} in the catalog" in text and among in text


def test_specs_show_refuses_a_size_the_catalog_lacks(capsys):
    assert main(["specs", "show", "v100 16gb"]) != 0
    captured = capsys.readouterr()
    assert "v100 comes as 32GB in the catalog" in captured.err + captured.out
    assert "NVIDIA V100 SXM2 32GB\n" not in captured.out


def test_driver_strings_are_matched_as_before():
    # The same roof in 16 and 32 GB (SXM2): a driver string still finds the entry; only
    # a name typed by a person is held to its size.
    assert match_device_name("Tesla V100-SXM2-16GB").name == "NVIDIA V100 SXM2 32GB"
    assert match_device_name("NVIDIA H100 80GB HBM3").name == "NVIDIA H100 SXM"
