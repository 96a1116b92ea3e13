"""cpu_arch: the FMA table, detection from CPUID-like data, and derived CPU roofs."""

from __future__ import annotations

import pytest

from rooflab.hardware.cpu_arch import ARCHS, get_arch
from rooflab.hardware.cpu_detect import detect_microarch
from rooflab.hardware.cpu_nominal import cpu_nominal_roof
from rooflab.model.roofline import cpu_peak_flop_per_s

AVX512 = frozenset("fpu sse2 avx avx2 fma avx512f avx512_vnni avx512_bf16".split())
AVX2 = frozenset("fpu sse2 avx avx2 fma".split())


@pytest.mark.parametrize(("name", "fp64", "fp32"), [
    ("Zen 2", 16, 32), ("Zen 3", 16, 32),
    ("Zen 4", 16, 32),          # AVX-512 double-pumped on 2 x 256-bit pipes
    ("Zen 5", 32, 64),          # full 512-bit datapath, 2 FMA pipes
    ("Zen 5 (256-bit datapath)", 16, 32),
    ("Skylake-SP/Cascade Lake", 32, 64), ("Skylake-SP/Cascade Lake (1 FMA unit)", 16, 32),
    ("Ice Lake-SP", 32, 64), ("Sapphire/Emerald Rapids", 32, 64), ("Granite Rapids", 32, 64),
    ("Golden Cove/Raptor Cove (client)", 16, 32),
    ("Neoverse N1", 8, 16), ("Neoverse V1", 16, 32), ("Neoverse V2", 16, 32),
    ("Apple M1-M4 (P-core)", 16, 32),
])
def test_flop_per_cycle_per_core(name, fp64, fp32):
    arch = get_arch(name)
    assert arch.fp64_flop_per_cycle == fp64
    assert arch.fp32_flop_per_cycle == fp32


def test_every_arch_cites_a_source():
    for arch in ARCHS.values():
        assert arch.source.startswith("https://"), arch.name


def test_amx_rates_per_core_per_cycle():
    spr = get_arch("Sapphire/Emerald Rapids")
    assert spr.fast_path("bf16", "tensor").flop_per_cycle == 1024
    assert spr.fast_path("int8", "tensor").flop_per_cycle == 2048
    assert get_arch("Golden Cove/Raptor Cove (client)").fast_path("bf16", "tensor") is None


def test_this_vm_reports_zen4_from_cpuid():
    # The developer VM: family 25 model 17 with avx512f (FACTS.md: really Zen 5 Turin, masked).
    arch = detect_microarch("AuthenticAMD", 25, 17, AVX512, "AMD EPYC 9B45")
    assert arch.name == "Zen 4"
    assert (arch.simd_bits, arch.fma_pipes, arch.vector_isa_bits) == (256, 2, 512)
    assert arch.fp64_flop_per_cycle == 16
    assert any("family 0x19 model 0x11" in n for n in arch.notes)


@pytest.mark.parametrize(("vendor", "family", "model", "name", "expected"), [
    ("AuthenticAMD", 0x17, 0x31, "AMD EPYC 7742 64-Core Processor", "Zen 2"),
    ("AuthenticAMD", 0x19, 0x01, "AMD EPYC 7763 64-Core Processor", "Zen 3"),
    ("AuthenticAMD", 0x19, 0x21, "AMD Ryzen 9 5950X", "Zen 3"),
    ("AuthenticAMD", 0x19, 0x61, "AMD Ryzen 9 7950X", "Zen 4"),
    ("AuthenticAMD", 0x1A, 0x02, "AMD EPYC 9755", "Zen 5"),
    ("AuthenticAMD", 0x1A, 0x44, "AMD Ryzen 9 9950X", "Zen 5"),
    ("AuthenticAMD", 0x1A, 0x24, "AMD Ryzen AI 9 HX 370", "Zen 5 (256-bit datapath)"),
    ("GenuineIntel", 6, 0x8F, "Intel(R) Xeon(R) Platinum 8480+", "Sapphire/Emerald Rapids"),
    ("GenuineIntel", 6, 0xAD, "Intel(R) Xeon(R) 6980P", "Granite Rapids"),
    ("GenuineIntel", 6, 0x6A, "Intel(R) Xeon(R) Platinum 8380 CPU", "Ice Lake-SP"),
    ("GenuineIntel", 6, 0x55, "Intel(R) Xeon(R) Gold 6248 CPU", "Skylake-SP/Cascade Lake"),
    ("GenuineIntel", 6, 0x55, "Intel(R) Xeon(R) Silver 4214 CPU",
     "Skylake-SP/Cascade Lake (1 FMA unit)"),
    ("GenuineIntel", 6, 0xB7, "13th Gen Intel(R) Core(TM) i9-13900K",
     "Golden Cove/Raptor Cove (client)"),
    ("ARM", None, 0xD0C, "", "Neoverse N1"),
    ("ARM", None, 0xD40, "", "Neoverse V1"),
    ("ARM", None, 0xD4F, "", "Neoverse V2"),
    ("", None, None, "Apple M3 Max", "Apple M1-M4 (P-core)"),
    ("", None, None, "AWS Graviton3", "Neoverse V1"),
])
def test_detection_table(vendor, family, model, name, expected):
    assert detect_microarch(vendor, family, model, frozenset(), name).name == expected


def test_flags_narrow_the_width_and_say_so():
    # Zen 5 by family, but the VM hides AVX-512: the flags win for the SIMD width.
    arch = detect_microarch("AuthenticAMD", 0x1A, 0x02, AVX2, "AMD EPYC 9755")
    assert arch.name == "Zen 5"
    assert (arch.simd_bits, arch.vector_isa_bits) == (256, 256)
    assert arch.fp64_flop_per_cycle == 16
    assert any("lack avx512f" in n for n in arch.notes)
    assert arch.fast_path("bf16") is None  # avx512_bf16 absent too


def test_flags_widen_the_width_and_say_so():
    # Early Alder Lake with AVX-512 enabled in the BIOS: the flags show avx512f. Client Golden
    # Cove runs AVX-512 on its fused port-0/1 FMA (no port-5 FMA), so the peak stays 16 fp64
    # FLOP/cycle: the ISA widens, the listed FMA width does not (s21 r2 F10: no guessed doubling).
    arch = detect_microarch("GenuineIntel", 6, 0x97, AVX2 | {"avx512f"}, "i9-12900K")
    assert arch.simd_bits == 256 and arch.vector_isa_bits == 512 and arch.fp64_flop_per_cycle == 16
    assert any("flags show avx512f" in n for n in arch.notes)


def test_unknown_model_falls_back_to_the_flags():
    # The flags give the width; the FMA pipe count is unknown, so no nominal peak (audit 7:
    # a guessed 2 pipes put Sierra Forest and Hygon 2x too high).
    arch = detect_microarch("GenuineIntel", 6, 0x01, AVX2, "Some Future CPU")
    assert arch.name == "unknown AVX2 design" and arch.simd_bits == 256
    assert not arch.nominal_known and arch.fp64_flop_per_cycle == 0
    assert any("not in rooflab's table" in n for n in arch.notes)
    assert detect_microarch("Mystery", None, None, frozenset(), "") is None


def test_cpu_nominal_roof_is_the_formula():
    zen4 = get_arch("Zen 4")
    roof = cpu_nominal_roof("2 vCPU", 2, 4.1, zen4, 41e9, "https://example.org/x")
    fp64 = roof.find_compute("fp64", "vector")
    # 2 cores x 4.1 GHz x 4 lanes x 2 pipes x 2 = 131.2 GFLOP/s
    assert fp64.value == pytest.approx(131.2e9)
    assert fp64.value == cpu_peak_flop_per_s(2, 4.1, 256, 64, 2)
    assert fp64.provenance == "derived" and "4 lanes x 2 FMA pipes" in fp64.method
    assert roof.find_compute("fp32", "vector").value == pytest.approx(262.4e9)
    assert roof.find_compute("bf16", "vector").value == pytest.approx(2 * 4.1e9 * 64)
    assert roof.bandwidth("DRAM").value == 41e9
    # Zen 5 with the full datapath: FACTS.md's theoretical 262 / 525 GFLOP/s at 4.1 GHz.
    zen5 = cpu_nominal_roof("turin", 2, 4.1, get_arch("Zen 5"), None, "")
    assert zen5.find_compute("fp64").value == pytest.approx(262.4e9)
    assert zen5.find_compute("fp32", "vector").value == pytest.approx(524.8e9)
    assert zen5.memory == ()
