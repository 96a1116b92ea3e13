"""The hardware catalog: every entry valid and sourced, seed numbers, forgiving names."""

from __future__ import annotations

import math

import pytest

from rooflab.errors import HardwareNotFound, ParseError
from rooflab.hardware.catalog import (
    all_devices,
    lookup,
    lookup_roof,
    match_device_name,
    parse_catalog_text,
    ridges,
)
from rooflab.hardware.cpu_arch import get_arch
from rooflab.model.roofline import cpu_peak_flop_per_s
from rooflab.units import LEVELS, PRECISIONS, UNITS


def test_at_least_thirty_devices_with_unique_names():
    devices = all_devices()
    assert len(devices) >= 30
    assert len({d.name for d in devices}) == len(devices)
    assert {d.kind for d in devices} == {"gpu", "accelerator", "cpu"}


def _positive(x) -> bool:
    return isinstance(x, (int, float)) and math.isfinite(x) and x > 0


def test_every_entry_has_a_source_and_positive_numbers():
    for d in all_devices():
        assert d.source.startswith("https://"), d.name
        assert d.roof.compute and d.roof.memory, d.name
        for c in d.roof.compute:
            assert c.precision in PRECISIONS and c.unit in UNITS, (d.name, c.label)
            assert _positive(c.value) and c.provenance in ("nominal", "derived"), (d.name, c)
            assert c.source.startswith("https://"), (d.name, c.label)
        for c in d.roof.memory:
            assert c.level in LEVELS and _positive(c.value), (d.name, c)
        for value in (d.memory_bytes, d.memory_bytes_per_s, d.interconnect_bytes_per_s):
            assert _positive(value), d.name
        for value in (d.l2_bytes, d.llc_bytes, d.tdp_w, d.roof.overhead_s):
            assert value is None or _positive(value), d.name
        assert d.interconnect, d.name
        # Sparse figures stay out of the roof and are never below the dense ones.
        for prec, value in d.sparse.items():
            dense = d.roof.find_compute(prec, "tensor")
            assert dense is None or value >= dense.value, (d.name, prec)
        assert d.memory_bytes_per_s == d.roof.bandwidth("DRAM").value


def test_gpus_carry_a_nominal_launch_overhead():
    for d in all_devices():
        if d.kind == "gpu":
            assert d.roof.overhead_s == 5e-6 and "nominal" in d.roof.overhead_source
        if d.kind == "cpu":
            assert d.roof.overhead_s is None


def test_seed_t4_ridge():
    t4 = lookup("T4")
    assert t4.roof.find_compute("fp16", "tensor").value == 65e12
    assert t4.memory_bytes_per_s == 320e9
    assert t4.ridge("fp16", "tensor") == pytest.approx(203.125)
    assert t4.roof.find_compute("fp32", "vector").value == pytest.approx(8.1e12)


def test_seed_a100_numbers_and_ridge():
    a100 = lookup("A100 80GB SXM")
    assert a100.memory_bytes_per_s == 2039e9
    assert a100.ridge("fp16", "tensor") == pytest.approx(312e12 / 2039e9)
    assert a100.ridge("fp16", "tensor") == pytest.approx(153.0, abs=0.1)
    assert a100.roof.find_compute("fp16", "vector").value == 78e12
    assert a100.roof.find_compute("fp32", "vector").value == 19.5e12
    assert a100.roof.find_compute("int8", "tensor").value == 624e12
    assert lookup("A100 40GB").memory_bytes_per_s == 1555e9
    # Sparse is kept apart: the dense tensor roof is 312, the sparse figure 624.
    assert a100.sparse["fp16"] == 624e12


def test_h200_roof():
    roof = lookup_roof("H200")
    assert roof.bandwidth("DRAM").value == 4.8e12
    assert roof.find_compute("bf16", "tensor").value == pytest.approx(989.5e12)
    assert lookup("h200").memory_bytes == 141e9


@pytest.mark.parametrize("name", ["EPYC 9654", "EPYC 9755", "Xeon 8480+", "Xeon 6980P",
                                  "Graviton 3", "Graviton 4", "Ryzen 9 7950X", "Altra"])
def test_cpu_peaks_equal_the_formula(name):
    d = lookup(name)
    arch = get_arch(d.inputs["microarch"])
    cores, ghz = d.inputs["cores"], d.inputs["base_ghz"]
    for prec, bits in (("fp64", 64), ("fp32", 32)):
        expected = cpu_peak_flop_per_s(cores, ghz, arch.simd_bits, bits, arch.fma_pipes)
        ceiling = d.roof.find_compute(prec, "vector")
        assert ceiling.value == pytest.approx(expected)
        assert ceiling.provenance == "derived"
    dram = d.inputs["memory_channels"] * d.inputs["memory_mts"] * 1e6 * 8
    assert d.memory_bytes_per_s == pytest.approx(dram)


def test_cpu_hand_calculations():
    # EPYC 9654: 96 cores x 2.4 GHz x 4 fp64 lanes (Zen 4: 256-bit pipes) x 2 pipes x 2.
    assert lookup("EPYC 9654").roof.find_compute("fp64").value == pytest.approx(3.6864e12)
    assert lookup("EPYC 9654").memory_bytes_per_s == pytest.approx(460.8e9)
    # EPYC 9755: 128 x 2.7 x 8 lanes (Zen 5: 512-bit) x 2 x 2 = 11.06 TFLOP/s fp64.
    assert lookup("EPYC 9755").roof.find_compute("fp64").value == pytest.approx(11.0592e12)
    # Xeon 8480+ AMX bf16: 56 cores x 2.0 GHz x 1024 FLOP/cycle.
    assert lookup("8480+").roof.find_compute("bf16", "tensor").value == pytest.approx(114.688e12)
    # i9-13900K: 8 P-cores x 3.0 x 16 + 16 E-cores x 2.2 x 8 fp64 FLOP/cycle.
    hybrid = lookup("i9-13900K").roof.find_compute("fp64").value
    assert hybrid == pytest.approx(8 * 3.0e9 * 16 + 16 * 2.2e9 * 8)


def test_ridges_list_every_ceiling_against_dram():
    h100 = lookup("H100 SXM")
    rows = {(r["precision"], r["unit"]): r["ridge"] for r in ridges(h100)}
    assert rows[("bf16", "tensor")] == pytest.approx(989.5e12 / 3.35e12)
    assert len(rows) == len(h100.roof.compute)


@pytest.mark.parametrize(("query", "expected"), [
    ("h200", "NVIDIA H200 SXM"), ("H200-SXM", "NVIDIA H200 SXM"),
    ("NVIDIA H200", "NVIDIA H200 SXM"), ("nvidia_h200", "NVIDIA H200 SXM"),
    ("  H200 sxm5 ", "NVIDIA H200 SXM"), ("h100", "NVIDIA H100 SXM"),
    ("H100 PCIe", "NVIDIA H100 PCIe"), ("h100-nvl", "NVIDIA H100 NVL"),
    ("a100", "NVIDIA A100 80GB SXM"), ("A100 40GB", "NVIDIA A100 40GB SXM"),
    ("a100-pcie-40gb", "NVIDIA A100 40GB PCIe"), ("rtx4090", "NVIDIA GeForce RTX 4090"),
    ("mi300x", "AMD Instinct MI300X"), ("gaudi3", "Intel Gaudi 3"),
    ("tpu-v5e", "Google TPU v5e"), ("m3 max", "Apple M3 Max"), ("9654", "AMD EPYC 9654"),
    ("Graviton4", "AWS Graviton4"),
])
def test_forgiving_lookup(query, expected):
    assert lookup(query).name == expected


def test_unknown_name_lists_the_closest():
    with pytest.raises(HardwareNotFound) as err:
        lookup("H300")
    message = str(err.value)
    assert "unknown hardware 'H300'" in message and "NVIDIA H200 SXM" in message
    assert "\n" not in message


def test_ambiguous_name_lists_the_candidates():
    with pytest.raises(HardwareNotFound, match="ambiguous.*EPYC 9654.*EPYC 9755"):
        lookup("epyc")


@pytest.mark.parametrize(("text", "expected"), [
    ("NVIDIA GeForce RTX 4090", "NVIDIA GeForce RTX 4090"),
    ("NVIDIA H100 80GB HBM3", "NVIDIA H100 SXM"),
    ("NVIDIA H100 PCIe", "NVIDIA H100 PCIe"),
    ("NVIDIA H200", "NVIDIA H200 SXM"),
    ("Tesla T4", "NVIDIA T4"),
    ("Tesla V100-SXM2-32GB", "NVIDIA V100 SXM2 32GB"),
    ("NVIDIA A100-SXM4-80GB", "NVIDIA A100 80GB SXM"),
    ("NVIDIA A100-SXM4-40GB", "NVIDIA A100 40GB SXM"),
    ("NVIDIA A100-PCIE-40GB", "NVIDIA A100 40GB PCIe"),
    ("NVIDIA A10G", "NVIDIA A10G"), ("NVIDIA A10", "NVIDIA A10"),
    ("NVIDIA GH200 480GB", "NVIDIA GH200 Grace Hopper"),
    ("AMD Instinct MI300X", "AMD Instinct MI300X"),
    ("Intel(R) Xeon(R) Platinum 8480+ CPU @ 2.00GHz", "Intel Xeon Platinum 8480+"),
    ("AMD EPYC 9654 96-Core Processor", "AMD EPYC 9654"),
    ("13th Gen Intel(R) Core(TM) i9-13900K", "Intel Core i9-13900K"),
])
def test_match_driver_names(text, expected):
    assert match_device_name(text).name == expected


@pytest.mark.parametrize("text", ["AMD EPYC", "NVIDIA Quadro P400", "", "llvmpipe"])
def test_match_returns_none_when_nothing_fits(text):
    assert match_device_name(text) is None


GOOD = """
[[device]]
name = "Test GPU"
vendor = "X"
kind = "gpu"
source = "https://example.org/datasheet"
memory_gb = 16
memory_gbps = 320
interconnect = "PCIe"
interconnect_gbps = 32
[device.tflops]
fp16_tensor = 65
"""


def test_parse_converts_to_si():
    (d,) = parse_catalog_text(GOOD, "test.toml")
    assert d.roof.find_compute("fp16", "tensor").value == 65e12
    assert d.memory_bytes == 16e9 and d.interconnect_bytes_per_s == 32e9
    assert d.l2_bytes is None and d.tdp_w is None


@pytest.mark.parametrize(("change", "message"), [
    (("memory_gbps = 320", "memory_gbps = -1"), "field 'memory_gbps' must be positive"),
    (("fp16_tensor = 65", "fp16_tensr = 65"), "key 'fp16_tensr' must be <precision>_<unit>"),
    (("kind = \"gpu\"", "kind = \"npu\""), "kind must be one of"),
    (("source = \"https://example.org/datasheet\"", "source = \"\""), "https:// URL"),
    (("memory_gb = 16", "memory_gbs = 16"), "unknown field 'memory_gbs'"),
    (("memory_gb = 16", "memory_gb = \"16\""), "field 'memory_gb' must be float"),
    (("interconnect = \"PCIe\"\n", ""), "missing field 'interconnect'"),
    (("vendor = \"X\"", "vendor = \"X\"\naliases = [1]"), "must be a list of strings"),
    (("fp16_tensor = 65", "fp16_tensor = 65\n[device.sparse_tflops]\nfp16_tensor = 60"),
     "below the dense figure"),
    (("[device.tflops]", "[device.tflops\n"), "invalid TOML"),
])
def test_bad_entries_name_file_entry_and_field(change, message):
    with pytest.raises(ParseError) as err:
        parse_catalog_text(GOOD.replace(*change), "bad.toml")
    text = str(err.value)
    assert message in text and "bad.toml" in text
    if "TOML" not in message:
        assert "entry 1 ('Test GPU')" in text


def test_cpu_entry_needs_its_inputs():
    cpu = GOOD.replace('kind = "gpu"', 'kind = "cpu"\nmicroarch = "Zen 9"\ncores = 4')
    with pytest.raises(ParseError, match="derives its peaks; remove"):
        parse_catalog_text(cpu, "bad.toml")
    cpu = cpu.split("[device.tflops]")[0]
    with pytest.raises(ParseError, match="needs 'base_ghz'"):
        parse_catalog_text(cpu, "bad.toml")
    cpu = cpu.replace("cores = 4", "cores = 4\nbase_ghz = 3.0\nmemory_channels = 2\n"
                      "memory_mts = 4800")
    with pytest.raises(ParseError, match="unknown microarch 'Zen 9'"):
        parse_catalog_text(cpu, "bad.toml")
