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
from rooflab.hardware.cpu_nominal import catalog_clock
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
    # the clock the catalog derives at: all-core boost where the entry has one, else base
    cores, (ghz, _) = d.inputs["cores"], catalog_clock(d.inputs, d.vendor)
    for prec, bits in (("fp64", 64), ("fp32", 32)):
        expected = cpu_peak_flop_per_s(cores, ghz, arch.simd_bits, bits, arch.fma_pipes)
        ceiling = d.roof.find_compute(prec, "vector")
        assert ceiling.value == pytest.approx(expected)
        assert ceiling.provenance == "derived"
    dram = d.inputs["memory_channels"] * d.inputs["memory_mts"] * 1e6 * 8
    assert d.memory_bytes_per_s == pytest.approx(dram)


def test_cpu_hand_calculations():
    # EPYC 9654: 96 cores x 3.55 GHz (AMD's all-core boost) x 4 fp64 lanes (Zen 4: 256-bit
    # pipes) x 2 pipes x 2; at the 2.4 GHz base clock it was 3.6864e12.
    assert lookup("EPYC 9654").roof.find_compute("fp64").value == pytest.approx(5.4528e12)
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
    ("tpu-v5e", "Google TPU v5e"), ("m3 max", "Apple M3 Max (40-core GPU)"),
    ("9654", "AMD EPYC 9654"),
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
    (("interconnect_gbps = 32", "interconnect_gbps = 32\nhost_link = \"PCIe 5.0 x16\""),
     "host_link must read like 'PCIe Gen5 x16'"),
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


# --- the exact product for torch / NVML names -------------------------------------------
# torch.cuda.get_device_properties(i).name and nvmlDeviceGetName report these strings.
@pytest.mark.parametrize(("text", "expected"), [
    ("NVIDIA H100 80GB HBM3", "NVIDIA H100 SXM"),
    ("NVIDIA H200", "NVIDIA H200 SXM"),
    ("NVIDIA A100-SXM4-80GB", "NVIDIA A100 80GB SXM"),
    ("NVIDIA A100-PCIE-40GB", "NVIDIA A100 40GB PCIe"),
    ("Tesla T4", "NVIDIA T4"),
    ("NVIDIA GeForce RTX 4090", "NVIDIA GeForce RTX 4090"),
    ("NVIDIA GeForce RTX 4060", "NVIDIA GeForce RTX 4060"),
    ("NVIDIA GeForce RTX 4060 Laptop GPU", "NVIDIA GeForce RTX 4060 Laptop GPU"),
    ("NVIDIA L4", "NVIDIA L4"),
    ("AMD Instinct MI300X", "AMD Instinct MI300X"),
    ("Tesla V100-SXM2-16GB", "NVIDIA V100 SXM2 32GB"),      # capacity differs, roof does not
    ("NVIDIA H100 80GB HBM3 MIG 1g.10gb", "NVIDIA H100 SXM"),
])
def test_torch_and_nvml_names_find_the_exact_product(text, expected):
    assert match_device_name(text).name == expected


def test_desktop_and_laptop_rtx_4060_are_different_roofs():
    desktop = match_device_name("NVIDIA GeForce RTX 4060")
    laptop = match_device_name("NVIDIA GeForce RTX 4060 Laptop GPU")
    assert desktop.memory_bytes_per_s == 272e9 and laptop.memory_bytes_per_s == 256e9
    assert "Laptop" not in desktop.name and "Laptop" in laptop.name


@pytest.mark.parametrize("text", [
    "NVIDIA GeForce RTX 4060 Ti",        # 34 SMs, not the RTX 4060's 24
    "NVIDIA GeForce RTX 4060 Max-Q",     # a laptop part, not the desktop card
    "Tesla V100-PCIE-16GB",              # 14 TFLOP/s fp32, not the SXM2's 15.7
    "NVIDIA H800 NVL",                   # a PCIe card the catalog lacks, not the H800 SXM
                                         # (the H200 NVL is an entry since s36 V)
    "NVIDIA GeForce RTX 4090 D",         # 114 SMs, not 128
    "NVIDIA GeForce RTX 3090 Ti",
    "Apple M4 Ultra",                    # no such chip: not the M4, nor the M3 Ultra
])
def test_a_variant_word_never_matches_another_product(text):
    assert match_device_name(text) is None


def test_lookup_prefers_the_plain_product_and_refuses_other_variants():
    assert lookup("4060").name == "NVIDIA GeForce RTX 4060"
    assert lookup("rtx 4060 laptop").name == "NVIDIA GeForce RTX 4060 Laptop GPU"
    assert lookup("RTX 4060 Mobile").name == "NVIDIA GeForce RTX 4060 Laptop GPU"
    with pytest.raises(HardwareNotFound, match="unknown hardware 'RTX 4060 Ti'"):
        lookup("RTX 4060 Ti")


def test_desktop_rtx_4060_peaks_from_sms_and_boost_clock():
    # AD107, 24 SMs (3072 CUDA cores) at the 2.46 GHz boost; GeForce Ada tensor rate with
    # fp32 accumulate: 512 fp16 FLOP per SM per clock (RTX 4090: 128 x 2.52 GHz x 512 = 165.2).
    d = lookup("NVIDIA GeForce RTX 4060")
    sm_hz = 24 * 2.46e9
    assert d.roof.find_compute("fp32", "vector").value == pytest.approx(3072 * 2 * 2.46e9,
                                                                        rel=1e-3)
    assert d.roof.find_compute("fp16", "tensor").value == pytest.approx(sm_hz * 512, rel=1e-3)
    assert d.roof.find_compute("int4", "tensor").value == pytest.approx(242e12, rel=2e-3)
    assert d.memory_bytes_per_s == pytest.approx(128 / 8 * 17e9)     # 128-bit at 17 Gbps
    assert d.ridge("fp16", "tensor") == pytest.approx(30.23e12 / 272e9)
    rtx4090 = lookup("RTX 4090").roof.find_compute("fp16", "tensor").value
    assert rtx4090 == pytest.approx(128 * 2.52e9 * 512, rel=1e-3)


# --- dense, never sparse ----------------------------------------------------------------
def test_sparse_figures_are_twice_the_dense_roof():
    """2:4 sparsity doubles the tensor rate; a ratio near 1 means a sparse number was
    stored as the dense roof (and a GPU probe would then hide real shortfalls)."""
    checked = 0
    for d in all_devices():
        for prec, sparse in d.sparse.items():
            dense = d.roof.find_compute(prec, "tensor")
            if dense is not None:
                # rel 2 %: vendors round (L40S bf16: 362.05 dense | 733 sparse).
                assert sparse / dense.value == pytest.approx(2.0, rel=0.02), (d.name, prec)
                checked += 1
    assert checked > 60


# Vendor datasheets, dense figures (TFLOP/s or TOPS) and HBM/GDDR bandwidth (GB/s):
# V100 volta-v100-datasheet; T4 t4-tensor-core-datasheet; A10/A30/A100 datasheets;
# L4/L40S product pages (sparse only: dense = half); H100 SXM/PCIe/NVL
# nvidia-tensor-core-gpu-datasheet; H200 h200 page; GH200 grace-hopper-superchip page;
# B200 NVIDIA's per-GPU HGX B200 table. None = the datasheet gives no such figure.
DATASHEET = {
    #                        fp64_t  tf32    bf16    fp16    fp8     int8    GB/s
    "NVIDIA V100 SXM2 32GB": (None, None, None, 125, None, None, 900),
    "NVIDIA T4": (None, None, None, 65, None, 130, 320),
    "NVIDIA A10": (None, 62.5, 125, 125, None, 250, 600),
    "NVIDIA A30": (10.3, 82, 165, 165, None, 330, 933),
    "NVIDIA A100 40GB PCIe": (19.5, 156, 312, 312, None, 624, 1555),
    "NVIDIA A100 40GB SXM": (19.5, 156, 312, 312, None, 624, 1555),
    "NVIDIA A100 80GB PCIe": (19.5, 156, 312, 312, None, 624, 1935),
    "NVIDIA A100 80GB SXM": (19.5, 156, 312, 312, None, 624, 2039),
    "NVIDIA L4": (None, 60, 121, 121, 242.5, 242.5, 300),
    "NVIDIA L40S": (None, 183, 362.05, 362.05, 733, 733, 864),
    "NVIDIA H100 PCIe": (51, 378, 756.5, 756.5, 1513, 1513, 2000),
    "NVIDIA H100 SXM": (67, 494.5, 989.5, 989.5, 1979, 1979, 3350),
    "NVIDIA H100 NVL": (60, 417.5, 835.5, 835.5, 1670.5, 1670.5, 3900),
    "NVIDIA H200 SXM": (67, 494.5, 989.5, 989.5, 1979, 1979, 4800),
    "NVIDIA GH200 Grace Hopper": (67, 494.5, 989.5, 989.5, 1979, 1979, 4000),
    "NVIDIA B200": (37, 1100, 2250, 2250, 4500, 4500, 7700),
}


@pytest.mark.parametrize("name", sorted(DATASHEET))
def test_data_center_dense_peaks_match_the_datasheets(name):
    d = lookup(name)
    *peaks, gbps = DATASHEET[name]
    for prec, tflops in zip(("fp64", "tf32", "bf16", "fp16", "fp8", "int8"), peaks, strict=True):
        ceiling = d.roof.find_compute(prec, "tensor")
        if tflops is None:
            assert ceiling is None, (name, prec)
        else:
            assert ceiling.value == pytest.approx(tflops * 1e12), (name, prec)
    assert d.memory_bytes_per_s == gbps * 1e9


def test_b200_is_the_hgx_part_not_the_gb200_one():
    b200 = lookup("B200")
    assert b200.roof.find_compute("fp32", "vector").value == 75e12   # GB200: 80
    assert b200.memory_bytes == 180e9 and b200.tdp_w == 1000


def test_third_party_figures_say_so_in_their_notes():
    for name in ("A10G", "Apple M2", "Apple M3 Max", "Apple M4 Pro", "B200",
                 "NVIDIA GeForce RTX 4060"):
        notes = " ".join(lookup(name).notes)
        assert "third-party" in notes or "reproduced" in notes, name
    assert "measured maximum power" in " ".join(lookup("TPU v4").notes)


def test_every_nvidia_gpu_has_its_compute_capability():
    from rooflab.hardware.catalog import all_devices, devices_with_cc, lookup

    nvidia = [d for d in all_devices() if d.vendor == "NVIDIA" and d.kind == "gpu"]
    assert nvidia and all(d.compute_capability for d in nvidia)
    # CUDA C++ Programming Guide, "Compute Capabilities".
    assert {n: lookup(n).compute_capability for n in ("H200", "T4", "A100", "L4", "B200")} == {
        "H200": "9.0", "T4": "7.5", "A100": "8.0", "L4": "8.9", "B200": "10.0"}
    ada = {d.name for d in devices_with_cc("8.9")}
    assert {"NVIDIA L4", "NVIDIA GeForce RTX 4090", "NVIDIA RTX 6000 Ada"} <= ada
    assert "NVIDIA H100 SXM" not in ada


def test_gpu_probe_refuses_a_catalog_match_of_another_compute_capability():
    from rooflab.probe.gpu.catalog_match import catalog_roof

    roof, name = catalog_roof("NVIDIA H200", "9.0")
    assert roof is not None and name == "NVIDIA H200 SXM"
    roof, why = catalog_roof("NVIDIA H200", "8.0")
    assert roof is None and "compute capability 9.0" in why and "this device is 8.0" in why


@pytest.mark.parametrize(("link", "gb_per_s"), [
    # lanes x GT/s x line code / 8 bits, one direction (PCI-SIG): the figures vendors halve
    # from their "bidirectional" ones (T4 32 GB/s, H100 128 GB/s).
    ("PCIe Gen3 x16", 16 * 8 * 128 / 130 / 8),      # 15.75
    ("PCIe Gen4 x8", 8 * 16 * 128 / 130 / 8),       # 15.75
    ("PCIe Gen4 x16", 31.508),
    ("PCIe Gen5 x16", 63.015),
    ("PCIe Gen6 x16", 16 * 64 * 242 / 256 / 8),     # 121.0, FLIT mode
])
def test_host_link_bandwidth_per_direction(link, gb_per_s):
    from rooflab.hardware.catalog import pcie_ceiling

    c = pcie_ceiling(link, "https://pcisig.com")
    assert c.value / 1e9 == pytest.approx(gb_per_s, rel=1e-4)
    assert (c.level, c.provenance) == ("PCIe", "derived") and link in c.method


def test_catalog_gpus_carry_their_host_link():
    assert lookup("T4").host_link_ceiling.value == pytest.approx(15.754e9, rel=1e-4)
    assert lookup("H200").host_link == "PCIe Gen5 x16"
    assert lookup("RTX 4060").host_link == "PCIe Gen4 x8"
    # Grace Hopper reaches its host through NVLink-C2C, not PCIe: no figure rather than a
    # wrong one; and the datasheet roofs themselves stay cache/DRAM only.
    assert lookup("GH200").host_link_ceiling is None
    assert "PCIe" not in lookup("H200").roof.levels
