"""A VM that masks a Xeon's model: AMX in the flags overrules a client model number.

Seen on the development VM on 2026-12-03: "Intel(R) Xeon(R) Processor", family 6 model
0xa7 (Rocket Lake, a client part) with amx_tile, amx_bf16, amx_int8, avx512_bf16 and
avx512_fp16. Taken as the client design (one 512-bit FMA pipe), the probe measured 191 % of
its nominal fp64 peak and skipped bf16 ("its flags show no instructions for it")."""

from __future__ import annotations

from rooflab.hardware.cpu_detect import detect_microarch
from rooflab.hardware.cpu_nominal import cpu_nominal_roof

BASE = frozenset({"sse2", "avx", "avx2", "fma", "avx512f", "avx512_vnni"})
VM_FLAGS = BASE | {"avx512_bf16", "avx512_fp16", "amx_tile", "amx_bf16", "amx_int8"}
XEON = "Intel(R) Xeon(R) Processor"


def test_amx_flags_make_a_client_model_a_sapphire_rapids_core():
    arch = detect_microarch("GenuineIntel", 6, 0xA7, VM_FLAGS, XEON)
    assert arch.name == "Sapphire/Emerald Rapids"
    assert arch.fp64_flop_per_cycle == 32.0          # 8 lanes x 2 FMA pipes x 2
    assert any("overruling Intel family 6 model 0xa7" in n and "Ice Lake/Tiger Lake"
               in n for n in arch.notes)
    # the fast paths the flags show are now measured and given a nominal
    assert arch.fast_path("bf16", "tensor").via == "AMX"
    assert arch.fast_path("bf16", "tensor").flop_per_cycle == 1024.0
    assert arch.fast_path("fp16", "vector").via == "AVX512-FP16"
    # 2 cores x 2.2 GHz x 32 = 140.8 GFLOP/s, not the client design's 70.4
    roof = cpu_nominal_roof(XEON, 2, 2.2, arch, None, "https://example.org")
    assert roof.find_compute("fp64", "vector").value == 2 * 2.2e9 * 32


def test_amx_fp16_names_granite_rapids():
    arch = detect_microarch("GenuineIntel", 6, 0xA7, VM_FLAGS | {"amx_fp16"}, XEON)
    assert arch.name == "Granite Rapids"
    assert arch.fast_path("fp16", "tensor").via == "AMX"


def test_a_client_part_without_amx_keeps_its_table_entry():
    arch = detect_microarch("GenuineIntel", 6, 0xA7, BASE, "11th Gen Intel(R) Core(TM) i9-11900K")
    assert arch.name == "Ice Lake/Tiger Lake (client)" and arch.fma_pipes == 1
    assert not any("overruling" in n for n in arch.notes)


def test_a_server_model_with_amx_is_left_alone():
    arch = detect_microarch("GenuineIntel", 6, 0x8F, VM_FLAGS, "Intel(R) Xeon(R) Platinum 8480+")
    assert arch.name == "Sapphire/Emerald Rapids"
    assert any("from Intel family 6 model 0x8f" in n for n in arch.notes)
    assert not any("overruling" in n for n in arch.notes)
