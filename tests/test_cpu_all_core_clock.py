"""Catalog CPU peaks at the vendor's all-core clock where one is published (review
r3_catalog_other C): AMD's "All Core Boost Speed" for the EPYC 9654 is 3.55 GHz, so its
derived fp64 peak is 96 x 3.55e9 x 4 lanes x 2 FMA pipes x 2 = 5.4528 TFLOP/s, not the
3.6864 of the 2.4 GHz base clock. An entry without `all_core_ghz` keeps the base clock and
says so ("(base clock)"); Intel Xeons with no sourced AVX-512 frequency keep base and their
note says AVX-512 runs below it."""

from __future__ import annotations

import json
import textwrap

import pytest

from rooflab.cli.main import main
from rooflab.errors import ParseError
from rooflab.hardware.catalog import lookup, parse_catalog_text
from rooflab.hardware.cpu_arch import ARCHS
from rooflab.hardware.cpu_nominal import catalog_clock, cpu_nominal_roof

EPYC_9654_FP64 = 96 * 3_550_000_000 * 4 * 2 * 2          # 5.4528e12 FLOP/s
EPYC_9654_FP32 = 96 * 3_550_000_000 * 8 * 2 * 2          # 10.9056e12
EPYC_9654_DRAM = 12 * 4800e6 * 8                         # 460.8 GB/s, unchanged


def test_epyc_9654_peaks_at_amd_all_core_boost():
    roof = lookup("EPYC 9654").roof
    fp64, fp32 = roof.find_compute("fp64", "vector"), roof.find_compute("fp32", "vector")
    assert fp64.value == EPYC_9654_FP64 == 5.4528e12
    assert fp32.value == EPYC_9654_FP32
    assert fp64.method == ("96 cores x 3.55 GHz (all-core boost, AMD) x 4 lanes x 2 FMA "
                           "pipes x 2 (Zen 4)")
    # the fast paths run at the same clock: VNNI int8 128 and BF16 64 FLOP/cycle per core
    assert roof.find_compute("int8", "vector").value == 96 * 3_550_000_000 * 128
    assert roof.find_compute("bf16", "vector").value == 96 * 3_550_000_000 * 64
    assert "(all-core boost, AMD)" in roof.find_compute("bf16", "vector").method
    assert roof.bandwidth("DRAM").value == EPYC_9654_DRAM
    # ridge 5.4528e12 / 460.8e9 = 11.83 FLOP/byte (was 8 at base)
    assert lookup("EPYC 9654").ridge("fp64") == pytest.approx(11.8333, rel=1e-4)


def test_epyc_9654_entry_cites_where_the_clock_comes_from():
    device = lookup("EPYC 9654")
    assert device.inputs["all_core_ghz"] == 3.55 and device.inputs["base_ghz"] == 2.4
    assert any("All Core Boost Speed" in n and "3.55 GHz" in n for n in device.notes)


@pytest.mark.parametrize("name, cores, ghz", [
    ("EPYC 9755", 128, 2.7), ("EPYC 7763", 64, 2.45), ("EPYC 7742", 64, 2.25),
    ("Ryzen 9 7950X", 16, 4.5), ("Xeon Platinum 8280", 28, 2.7),
    ("Xeon Platinum 8380", 40, 2.3)])
def test_entries_without_a_published_all_core_clock_keep_base_and_say_so(name, cores, ghz):
    device = lookup(name)
    assert "all_core_ghz" not in device.inputs
    fp64 = device.roof.find_compute("fp64", "vector")
    assert fp64.method.startswith(f"{cores} cores x {ghz:g} GHz (base clock) x ")
    assert any("base clock" in n for n in device.notes)


def test_epyc_9755_stays_at_base_clock():
    # 128 x 2.7e9 x 8 lanes x 2 FMA pipes x 2 (Zen 5, 512-bit) = 11.0592 TFLOP/s fp64
    assert lookup("EPYC 9755").roof.find_compute("fp64").value == 128 * 2_700_000_000 * 32


@pytest.mark.parametrize("name", ["Xeon Platinum 8280", "Xeon Platinum 8380"])
def test_xeon_notes_say_avx512_runs_below_base(name):
    assert any("AVX-512" in n and "below base" in n for n in lookup(name).notes)


def test_catalog_clock_prefers_all_core_and_falls_back_to_base():
    assert catalog_clock({"base_ghz": 2.4, "all_core_ghz": 3.55}, "AMD") == (
        3.55, "all-core boost, AMD")
    assert catalog_clock({"base_ghz": 2.4, "boost_ghz": 3.7}, "AMD") == (2.4, "base clock")


def test_cpu_nominal_roof_labels_the_clock_it_was_given():
    zen4 = ARCHS["Zen 4"]
    roof = cpu_nominal_roof("x", 2, 3.55, zen4, None, "", clock="all-core boost, AMD")
    assert roof.find_compute("fp64").method.startswith("2 cores x 3.55 GHz (all-core boost, "
                                                       "AMD) x 4 lanes")
    # no clock words (the probe, at its measured clock): none added
    bare = cpu_nominal_roof("x", 2, 3.55, zen4, None, "")
    assert bare.find_compute("fp64").method.startswith("2 cores x 3.55 GHz x 4 lanes")


def test_specs_show_json_carries_the_clock(capsys):
    assert main(["specs", "show", "EPYC 9654", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["device"]["inputs"]["all_core_ghz"] == 3.55
    fp64 = next(c for c in data["roof"]["compute"] if c["precision"] == "fp64")
    assert fp64["flop_per_s"] == 5452800000000.0
    assert "3.55 GHz (all-core boost, AMD)" in fp64["method"]


def test_specs_show_prints_the_all_core_clock(capsys):
    assert main(["specs", "show", "EPYC 9654"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "5.45 TFLOP/s" in out and "3.55 GHz (all-core boost, AMD)" in out


def test_all_core_ghz_is_checked_like_other_clocks():
    """all_core_ghz is a known CPU key (not 'unknown field') and must be a positive number;
    an entry with it is derived at it."""
    entry = textwrap.dedent("""\
        [[device]]
        name = "Test EPYC"
        vendor = "AMD"
        kind = "cpu"
        source = "https://example.com/x"
        microarch = "Zen 4"
        cores = 4
        base_ghz = 2.0
        all_core_ghz = {value}
        memory_channels = 2
        memory_mts = 4800
        memory_gb = 64
        interconnect = "PCIe Gen5 (8 lanes)"
        interconnect_gbps = 64
        """)
    (device,) = parse_catalog_text(entry.format(value=3.0), "t.toml")
    fp64 = device.roof.find_compute("fp64")
    assert fp64.value == 4 * 3_000_000_000 * 16                      # 192 GFLOP/s
    assert "4 cores x 3 GHz (all-core boost, AMD)" in fp64.method
    with pytest.raises(ParseError, match="all_core_ghz"):
        parse_catalog_text(entry.format(value=0), "t.toml")
