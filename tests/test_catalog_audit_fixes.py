"""Catalog audit of 2026-12-01 (reviews r2/r3): figures checked against the vendors' pages.

- Google quotes TPU ICI per chip in both directions (v5e 400 GB/s, v5p 1200 GB/s; v4 half of
  v5p by the v5p launch's 2400 vs 4800 Gbps); the catalog held one direction (200/600/300),
  so every TPU collective in `scale`/`llm --tp` was 2x too slow.
- RTX A6000 had no tf32 ceiling (held to fp32 vector, 38.7): GA10x tf32 = fp16 tensor / 2 =
  77.4 TFLOP/s. RTX 4060 Laptop had no tensor ceilings (held to fp16 vector, 14.56): AD107
  24 SMs x 512 FLOP/clk x 2.37 GHz = 29.12 TFLOP/s fp16/bf16.
"""

import pytest

from rooflab.hardware.catalog import lookup


@pytest.mark.parametrize(("name", "both_ways"), [("TPU v5e", 400e9), ("TPU v5p", 1200e9),
                                                 ("TPU v4", 600e9)])
def test_tpu_ici_is_both_directions(name, both_ways):
    assert lookup(name).interconnect_bytes_per_s == both_ways


def test_tpu_v5e_int8_as_google_prints_it():
    assert lookup("TPU v5e").roof.find_compute("int8", "tensor").value == 393e12


def test_a6000_tf32_tensor_is_half_its_fp16_tensor():
    roof = lookup("RTX A6000").roof
    assert roof.find_compute("tf32", "tensor").value == pytest.approx(
        roof.find_compute("fp16", "tensor").value / 2, rel=1e-3)
    assert roof.find_compute("tf32", "tensor").value == 77.4e12


def test_4060_laptop_has_tensor_ceilings_at_its_clock():
    roof = lookup("RTX 4060 Laptop").roof
    fp16 = 24 * 512 * 2.37e9
    assert roof.find_compute("fp16", "tensor").value == pytest.approx(fp16, rel=1e-3)
    assert roof.find_compute("bf16", "tensor").value == pytest.approx(fp16, rel=1e-3)
    assert roof.find_compute("tf32", "tensor").value == pytest.approx(fp16 / 2, rel=1e-3)
    assert roof.find_compute("int8", "tensor").value == pytest.approx(4 * fp16, rel=1e-3)


def test_gh200_power_is_the_whole_superchip():
    assert "whole superchip module" in " ".join(lookup("GH200").notes)


def test_gaudi_host_links_and_v5p_fp8():
    assert lookup("Gaudi 2").host_link == "PCIe Gen4 x16"
    assert lookup("Gaudi 3").host_link == "PCIe Gen5 x16"
    assert lookup("TPU v5p").roof.find_compute("fp8", "tensor").value == 459e12


@pytest.mark.parametrize("name", ["MI210", "MI250X"])
def test_mi200_fp32_vector_says_packed_math_doubles_it(name):
    assert "packed FP32" in " ".join(lookup(name).notes)
