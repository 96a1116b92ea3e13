"""Review s21 r3 F6: a kernel whose recorded grid leaves more than half the SMs without a
block is latency (parallelism) bound whatever its % of roof, and its position cites the
grid. Hand numbers: 4 blocks on 24 SMs = 16.7 % of the SMs get one; 2 blocks = 8.3 %; 12 of
24 is half, not under it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rooflab.model import Ceiling, Kernel, Roof, analyze
from rooflab.model.diagnose import diagnose

GPP = Path("/work/shared/fixtures/ncu/nersc-gpp")
# 1 GB of DRAM bytes in 1 ms on a 2 TB/s roof: 50 % of it, far above the 10 % line
ROOF = Roof("GPU", "nominal", compute=(Ceiling(10e12, precision="fp32"),),
            memory=(Ceiling(2e12, level="DRAM"),), overhead_s=5e-6)


def _red(grid: str, sms=24) -> Kernel:
    return Kernel("red", {"fp32": 1e8}, {"DRAM": 1e9}, seconds=1e-3,
                  meta={"source": "ncu", "grid": grid, "block": "(256, 1, 1)", "sms": sms})


def test_four_blocks_on_24_sms_is_latency_with_the_grid_as_its_reason():
    (p,) = analyze(ROOF, [_red("(4, 1, 1)")]).points
    assert p.percent_of_roof == pytest.approx(50.0)
    assert p.bound == "latency"
    assert p.grid == "grid of 4 blocks x 256 threads on 24 SMs: 16.7 % of SMs get a block"
    (d,) = diagnose(analyze(ROOF, [_red("(4, 1, 1)")]))
    assert d.bound == "latency"
    assert d.evidence.startswith("grid of 4 blocks x 256 threads on 24 SMs: 16.7 % of SMs get a "
                                 "block (fewer blocks than half the SMs)")
    assert "(< 10 %)" not in d.evidence


@pytest.mark.parametrize("grid,sms", [("(12, 1, 1)", 24), ("(2, 2, 4)", 24),
                                      ("(4, 1, 1)", None), ("grids (4, 1, 1), (8, 1, 1)", 24)])
def test_half_the_sms_or_no_record_keeps_the_roofline_class(grid, sms):
    (p,) = analyze(ROOF, [_red(grid, sms)]).points
    assert p.bound == "memory" and p.grid == ""


@pytest.mark.skipif(not (GPP / "output1.ncu-rep").exists(), reason="GPP fixtures absent")
@pytest.mark.parametrize("name,blocks,share", [("output1", 4, 16.7), ("output5", 2, 8.3)])
def test_gpp_reduction_kernel_reads_latency_in_both_recordings(name, blocks, share):
    from rooflab.ingest.profile_files import load_profiles

    imp = load_profiles([str(GPP / f"{name}.ncu-rep")])
    red = [k for k in imp.kernels if k.name.startswith("sigma_gpp_gpu_34_gpu__red")]
    ds = {d.kernel: d for d in diagnose(analyze(ROOF, red))}
    (d,) = ds.values()
    assert d.bound == "latency"
    assert f"grid of {blocks} blocks x 256 threads on 24 SMs: {share} % of SMs" in d.evidence
