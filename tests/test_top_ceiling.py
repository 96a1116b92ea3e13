"""The top float compute ceiling: one method, Roof.top_float_compute(), behind
rooflab.ridge(roof) / attainable(roof, ai), the chart's default ceilings and the catalog's
top_float_compute. Roof.top_compute (any precision, integer included) is the axis limit.

Before: rooflab.ridge(roof) took Roof.top_compute, the int4 tensor peak (A100 SXM: 1248
TOP/s / 2.039 TB/s = 612 OP/B), where every chart and table draws bf16 tensor (153)."""

from __future__ import annotations

import pytest

import rooflab
from rooflab.hardware.catalog import all_devices, lookup, lookup_roof, top_float_compute
from rooflab.model.ceiling import Ceiling, Roof
from rooflab.model.kernel import Kernel
from rooflab.report.chart_ceilings import select_ceilings
from rooflab.units import is_float


def test_ridge_of_an_a100_sxm_roof_is_the_16_bit_tensor_ridge():
    roof = lookup_roof("A100 SXM")
    # NVIDIA A100 datasheet: bf16 tensor 312 TFLOP/s dense, HBM2e 2.039 TB/s (80 GB SXM)
    assert rooflab.ridge(roof) == 312e12 / 2.039e12
    assert rooflab.ridge(roof) == pytest.approx(153.0, abs=0.1)         # was 612 (int4)
    assert rooflab.attainable(roof, 1e6) == 312e12                      # flat roof: fp16 = bf16
    assert rooflab.attainable(roof, 10.0) == 10.0 * 2.039e12            # slope: DRAM
    assert roof.top_float_compute().label == "fp16 tensor"   # a tie with bf16: fp16 named
    assert roof.top_compute.label == "int4 tensor"                      # the axis limit


def test_t4_ridge_is_fp16_tensor_over_dram():
    # T4: fp16 tensor 65 TFLOP/s, GDDR6 320 GB/s -> 203.125 FLOP/B (int4 260 TOP/s: 812.5)
    assert rooflab.ridge(lookup_roof("T4")) == 203.125
    assert lookup("T4").ridge() == 203.125


def test_a_roof_without_float_ceilings_falls_back_to_its_fastest():
    ints = Roof("npu", compute=(Ceiling(4e12, precision="int8", unit="tensor"),
                                Ceiling(8e12, precision="int4", unit="tensor")),
                memory=(Ceiling(1e11, level="DRAM"),))
    assert ints.top_float_compute().value == 8e12
    assert rooflab.ridge(ints) == 80.0


@pytest.mark.parametrize("device", all_devices(), ids=lambda d: d.name)
def test_every_call_site_picks_the_same_top_float_ceiling(device):
    roof = device.roof
    top = roof.top_float_compute()
    assert is_float(top.precision)
    assert top.value == max(c.value for c in roof.compute if is_float(c.precision))
    dram = roof.bandwidth("DRAM").value
    # the catalog, the public formulas, Device.ridge() and the kernel-family lookup
    assert top_float_compute(device) is top
    assert rooflab.ridge(roof) == top.value / dram
    assert rooflab.attainable(roof, 1e9) == top.value
    assert device.ridge() == top.value / dram
    assert roof.top_compute_for("fp16") is top
    # the chart: with an fp32 kernel, the drawn ceilings reach up to the top float one
    kernel = Kernel("k", flop={"fp32": 1e9}, bytes={"DRAM": 1e8}, unit="vector")
    (kept,), _, _ = select_ceilings([roof], [kernel])
    assert max(c.value for c in kept if is_float(c.precision)) == top.value
    assert top in kept
