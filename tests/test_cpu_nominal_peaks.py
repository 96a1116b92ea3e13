"""Third audit of the nominal CPU/accelerator peaks: each test pins a corrected value by
hand arithmetic (cores x GHz x lanes x FMA pipes x 2) or by its cited source."""

from __future__ import annotations

import pytest

from rooflab.cli.main import main
from rooflab.hardware.catalog import lookup
from rooflab.hardware.cpu_detect import detect_microarch
from rooflab.hardware.cpu_nominal import cpu_nominal_roof

AVX2 = frozenset({"sse2", "avx", "avx2", "fma"})
AVX512 = AVX2 | {"avx512f", "avx512_vnni"}


def _fp64(arch, cores: int, ghz: float) -> float:
    roof = cpu_nominal_roof("x", cores, ghz, arch, None, "https://example.org")
    return roof.find_compute("fp64", "vector").value


def test_gold_5222_has_two_fma_units():
    # Intel ARK lists two AVX-512 FMA units for the Gold 5222 (as for the 5122): 4 cores x
    # 3.8 GHz x 8 lanes x 2 pipes x 2 = 486.4 GFLOP/s; the old rule gave half, 243.2.
    arch = detect_microarch("GenuineIntel", 6, 0x55, AVX512,
                            "Intel(R) Xeon(R) Gold 5222 CPU @ 3.80GHz")
    assert arch.fma_pipes == 2 and arch.fp64_flop_per_cycle == 32
    assert _fp64(arch, 4, 3.8) == pytest.approx(4 * 3.8e9 * 8 * 2 * 2)  # 486.4e9
    # ... while the other Gold 5 parts keep the one fused unit, and the 5122 keeps two.
    g5218 = detect_microarch("GenuineIntel", 6, 0x55, AVX512,
                             "Intel(R) Xeon(R) Gold 5218 CPU @ 2.30GHz")
    assert g5218.fma_pipes == 1 and g5218.fp64_flop_per_cycle == 16
    g5122 = detect_microarch("GenuineIntel", 6, 0x55, AVX512 - {"avx512_vnni"},
                             "Intel(R) Xeon(R) Gold 5122 CPU @ 3.60GHz")
    assert g5122.fma_pipes == 2


def test_alder_lake_n_is_gracemont_not_a_generic_avx2_guess():
    # Intel N100 (family 6 model 0xBE): 4 Gracemont E-cores, AVX2 split over two 128-bit
    # FMA pipes = 8 fp64 FLOP/cycle/core. At 3.4 GHz: 4 x 3.4 x 2 x 2 x 2 = 108.8 GFLOP/s;
    # the flags guess (2 x 256-bit) said 217.6.
    arch = detect_microarch("GenuineIntel", 6, 0xBE, AVX2 | {"avx_vnni"}, "Intel(R) N100")
    assert arch.name == "Gracemont (E-core)"
    assert arch.fp64_flop_per_cycle == 8
    assert _fp64(arch, 4, 3.4) == pytest.approx(108.8e9)
    assert arch.nominal_known and not any("not in" in n and "table" in n for n in arch.notes)


def test_this_vm_cpu_is_zen4_and_its_nominal_is_the_formula():
    # The developer VM: AuthenticAMD family 25 (0x19) model 17 (0x11) = Zen 4 Genoa, two
    # cores; the probe measured 3.68129 GHz and printed 118 / 236 GFLOP/s:
    # 2 x 3.68129 x 4 lanes x 2 pipes x 2 = 117.80, fp32 twice that.
    flags = AVX512 | {"avx512_bf16"}
    arch = detect_microarch("AuthenticAMD", 25, 17, flags, "AMD EPYC")
    assert arch.name == "Zen 4"
    roof = cpu_nominal_roof("vm", 2, 3.68129, arch, None, "https://example.org")
    assert roof.find_compute("fp64", "vector").value == pytest.approx(117.80e9, rel=1e-4)
    assert roof.find_compute("fp32", "vector").value == pytest.approx(235.60e9, rel=1e-4)
    # VNNI int8 = 4 x the fp32 rate, AVX512-BF16 = 2 x.
    assert roof.find_compute("int8", "vector").value == pytest.approx(942.4e9, rel=1e-4)
    assert roof.find_compute("bf16", "vector").value == pytest.approx(471.2e9, rel=1e-4)


def test_graviton3_last_level_cache_is_32_mib():
    # WikiChip: 64 x 1 MiB private L2 and one 32 MiB shared L3; the entry said 64 MiB.
    g3 = lookup("Graviton3")
    assert g3.llc_bytes == 32 * 2**20
    # Peaks unchanged: 64 x 2.6 GHz x 16 fp64 FLOP/cycle (Neoverse V1) = 2.6624 TFLOP/s;
    # DRAM 8 x 4800 MT/s x 8 B = 307.2 GB/s.
    assert g3.roof.find_compute("fp64", "vector").value == pytest.approx(64 * 2.6e9 * 16)
    assert g3.roof.find_memory("DRAM").value == pytest.approx(307.2e9)


def test_altra_q80_30_tdp_is_210_w(capsys):
    # Ampere's 2020 SKU table: Q80-33 250 W, Q80-30 210 W.
    assert lookup("Altra Q80-30").tdp_w == 210
    assert main(["specs", "show", "Altra Q80-30", "--json"]) == 0
    assert '"tdp_w": 210.0' in capsys.readouterr().out


def test_catalog_cpu_method_says_the_base_clock():
    # Which clock a derived peak uses decides a 2x question on turbo-heavy parts (8480+:
    # base 2.0, turbo 3.8 GHz): the method says it; the value is the base-clock formula.
    fp64 = lookup("8480+").roof.find_compute("fp64", "vector")
    assert "56 cores x 2 GHz (base clock) x 8 lanes x 2 FMA pipes x 2" in fp64.method
    assert fp64.value == pytest.approx(56 * 2.0e9 * 8 * 2 * 2)  # 3.584 TFLOP/s
    hybrid = lookup("13900K").roof.find_compute("fp64", "vector")
    assert hybrid.method.count("(base clock)") == 2  # P-cores and E-cores
    assert hybrid.value == pytest.approx(8 * 3.0e9 * 16 + 16 * 2.2e9 * 8)  # 665.6 GFLOP/s


def test_gaudi2_has_its_fp8_roof():
    # Habana's FP8 guide: Gaudi 2 computes FP8 twice as fast as BF16: 2 x 432 = 864 TFLOP/s.
    # Before, an fp8 kernel on Gaudi 2 had no fp8 ceiling (only bf16 432).
    roof = lookup("Gaudi 2").roof
    fp8 = roof.find_compute("fp8", "tensor")
    assert fp8 is not None and fp8.value == pytest.approx(2 * 432e12)
    assert fp8.value / roof.find_memory("DRAM").value == pytest.approx(351.2, abs=0.1)


def test_cooper_lake_is_not_ice_lake_and_keeps_its_bf16_path():
    # Xeon Platinum 8380H (family 6 model 0x55, 3rd gen): the name's generation digit said
    # "Ice Lake-SP", which has no AVX512-BF16, so the probe skipped bf16 on a CPU that has
    # it. Cooper Lake: 2 x 512-bit FMA = 64 fp32 FLOP/cycle, bf16 dot product 2x = 128.
    flags = AVX512 | {"avx512_bf16"}
    arch = detect_microarch("GenuineIntel", 6, 0x55, flags,
                            "Intel(R) Xeon(R) Platinum 8380H CPU @ 2.90GHz")
    assert arch.name == "Cooper Lake"
    assert arch.fast_path("bf16").flop_per_cycle == 128
    # 28 cores x 2.9 GHz x 128 = 10.39 TFLOP/s bf16.
    roof = cpu_nominal_roof("8380H", 28, 2.9, arch, None, "https://example.org")
    assert roof.find_compute("bf16", "vector").value == pytest.approx(28 * 2.9e9 * 128)
    # Ice Lake-SP (model 0x6A, no H suffix) is unchanged.
    assert detect_microarch("GenuineIntel", 6, 0x6A, flags,
                            "Intel(R) Xeon(R) Platinum 8380 CPU @ 2.30GHz").name == "Ice Lake-SP"
