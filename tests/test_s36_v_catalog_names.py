"""Session 36 V: names users type that the catalog lacked. 'NVIDIA H200 NVL' (the PCIe
card of NVIDIA's H200 datasheet) is an entry; 'Neoverse-V2', what lscpu prints as the
model name on Grace and on Graviton4 alike, is refused with the entries built on that core
rather than the generic 'unknown hardware' (hardware/name_words.core_not_product)."""

from __future__ import annotations

import pytest
from cli_inproc import one_line_error, run_cli

from rooflab.hardware.catalog import lookup, match_device_name

T = 1e12


def test_h200_nvl_dense_peaks_are_the_datasheet_halved():
    """NVIDIA's H200 datasheet, NVL column: fp64 30, fp64 tensor 60, fp32 60 TFLOP/s; the
    tensor rows carry the '* with sparsity' asterisk: tf32 835 / 2 = 417.5, bf16 and fp16
    1671 / 2 = 835.5, fp8 and int8 3341 / 2 = 1670.5 dense. fp16/bf16 vector = 2 x fp32
    (half2 FMA) = 120. All nominal: datasheet figures, none measured."""
    dev = lookup("NVIDIA H200 NVL")
    peaks = {c.label: c.value for c in dev.roof.compute}
    assert peaks == {"fp64 vector": 30 * T, "fp64 tensor": 60 * T, "fp32 vector": 60 * T,
                     "fp16 vector": 120 * T, "bf16 vector": 120 * T,
                     "tf32 tensor": 835 / 2 * T, "bf16 tensor": 1671 / 2 * T,
                     "fp16 tensor": 1671 / 2 * T, "fp8 tensor": 3341 / 2 * T,
                     "int8 tensor": 3341 / 2 * T}
    assert {c.provenance for c in dev.roof.compute} == {"nominal"}
    assert dict(dev.sparse) == {"tf32": 835 * T, "bf16": 1671 * T, "fp16": 1671 * T,
                                "fp8": 3341 * T, "int8": 3341 * T}


def test_h200_nvl_memory_power_and_links():
    """Datasheet: 141 GB HBM3e (141e9 B, decimal as the H200 SXM) at 4.8 TB/s, max TDP
    600 W (the SXM's is 700), NVLink bridge 900 GB/s per GPU, PCIe Gen5 host link."""
    dev = lookup("NVIDIA H200 NVL")
    assert (dev.memory_bytes, dev.memory_bytes_per_s, dev.tdp_w) == (141e9, 4.8e12, 600.0)
    assert dev.interconnect_bytes_per_s == 900e9
    assert dev.host_link == "PCIe Gen5 x16"
    assert dev.memory_bytes_per_s == lookup("H200 SXM").memory_bytes_per_s
    assert dev.roof.memory[0].provenance == "nominal"


@pytest.mark.parametrize("name", ["NVIDIA H200 NVL", "H200 NVL", "h200-nvl", "H200 NVL 141GB"])
def test_h200_nvl_names_resolve(name):
    """Typed and driver forms (nvidia-smi prints 'NVIDIA H200 NVL'): before this entry
    the lookup said 'unknown hardware' and match() found nothing (NVL is a variant word,
    never crossed to the SXM)."""
    assert lookup(name).name == "NVIDIA H200 NVL"
    assert match_device_name("NVIDIA H200 NVL").name == "NVIDIA H200 NVL"


def test_bare_h200_is_still_the_sxm_with_the_nvl_named():
    """A bare 'H200' is the SXM's alias, as before; the name note now names the NVL, the
    other H200 a user may mean (before: no note, there was no other)."""
    assert lookup("H200").name == "NVIDIA H200 SXM"
    res = run_cli("specs", "show", "H200")
    assert res.returncode == 0
    assert "note: 'H200' is NVIDIA H200 SXM (also: H200 NVL; name one to choose)" in res.stderr


def test_neoverse_v2_names_the_entries_on_that_core(capsys):
    """lscpu's 'Neoverse-V2' is a core, shared by the NVIDIA Grace CPU, the Grace CPU
    Superchip (both microarch 'Neoverse V2' in arm.toml) and AWS Graviton4 (also
    'Neoverse V2'): 72 cores at 3.1 GHz vs 96 at 2.8 GHz, so no one of them is picked;
    the error names all three and how to go on, exit 2, one line."""
    err = one_line_error(capsys, ["specs", "show", "Neoverse-V2"])
    assert err == ("error: 'Neoverse-V2' is a CPU core (lscpu prints it as the model name "
                   "on Arm), not a product; the catalog has it in AWS Graviton4, NVIDIA "
                   "Grace CPU, NVIDIA Grace CPU Superchip 144-core: give the product's "
                   "name (e.g. 'Grace' on NVIDIA Grace), or `rooflab probe` to measure "
                   "this machine")


def test_neoverse_v1_names_graviton3_and_an_unknown_core_stays_unknown(capsys):
    """'neoverse v1' (any spelling) is only Graviton3's core; 'Neoverse N2' is no entry's
    microarch, so it keeps the plain unknown-hardware error."""
    err = one_line_error(capsys, ["specs", "show", "neoverse v1"])
    assert "the catalog has it in AWS Graviton3:" in err
    err = one_line_error(capsys, ["specs", "show", "Neoverse N2"])
    assert err.startswith("error: unknown hardware 'Neoverse N2'")
