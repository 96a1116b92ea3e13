"""A point on its ridge is on the compute side at every level, not wherever rounding puts it.

`rooflab ncu output4.csv` (no --on: the lower-bound roof the kernel itself sets, so it sits
exactly on every ridge) printed DRAM "memory" and L2/L1 "compute" for the one kernel: at
DRAM, FLOP/bytes = 15.516956059537678 but (FLOP/t)/(bytes/t) = 15.51695605953768.
"""

from rooflab.ingest.profile_import import envelope_roof
from rooflab.model import Kernel, analyze

# the GPP kernel of output4.csv: dadd + dmul + 2 dfma, dram/lts/l1tex bytes, cycles / clock
FLOP = 111_274_472_492 + 687_938_432_432 + 2 * 760_774_694_320
SECONDS = 42_579_316_766.67 / 1_619_878_324.05
GPP = Kernel("sigma_gpp_gpu_34", {"fp64": float(FLOP)},
             {"DRAM": 149_562_986_752.0, "L2": 263_624_724_512.0, "L1": 1_264_016_572_160.0},
             seconds=SECONDS)


def test_a_kernel_that_sets_its_own_roof_is_compute_side_at_every_level():
    roof = envelope_roof([GPP])
    points = analyze(roof, [GPP]).points
    assert [p.level for p in points] == ["DRAM", "L2", "L1"]
    assert [p.bound for p in points] == ["compute"] * 3
    assert all(not p.memory_bound_side and p.along_slope == 1.0 for p in points)
    assert all(abs(p.percent_of_roof - 100.0) < 1e-9 for p in points)
    assert round(points[0].ai, 2) == 15.52          # 2,320,762,293,564 / 149,562,986,752


def test_a_point_clearly_left_of_the_ridge_stays_memory_side():
    # half the FLOP rate at the same bytes: AI halves, the ridge does not move
    slow = Kernel("half", {"fp64": FLOP / 2}, {"DRAM": 149_562_986_752.0}, seconds=SECONDS)
    (p,) = analyze(envelope_roof([GPP]), [slow]).points
    assert p.memory_bound_side and p.bound == "memory" and round(p.along_slope, 6) == 2.0
