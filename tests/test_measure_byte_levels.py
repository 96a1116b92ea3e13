"""rooflab.measure as a kernel writer calls it: byte levels checked, numbers by hand."""

from __future__ import annotations

import pytest

import rooflab
from rooflab.errors import InputError


def test_unknown_byte_level_is_refused_with_its_name():
    # Before: bytes={"L4": ...} was kept; `bench --run` then printed an empty table row
    # and a note, and analyze() gave the kernel no point at all.
    with pytest.raises(InputError, match=r"bytes level 'L4' is not a memory level.*DRAM"):
        rooflab.measure(lambda: None, name="k", flop=10, bytes={"L4": 8})


def test_level_spellings_of_gpu_and_cpu_memories_are_read():
    k = rooflab.measure(lambda: None, name="k", flop=10,
                        bytes={"hbm3e": 12, "l2": 3, "L1": 1}, plan="quick")
    assert dict(k.bytes) == {"DRAM": 12.0, "L2": 3.0, "L1": 1.0}


def test_a_measured_kernel_on_a_catalog_roof_by_hand():
    # y += x over 1e6 fp32: 1e6 FLOP, 12e6 B (read x, y; write y): AI 1/12. Whatever the
    # time t, achieved = 1e6 / t and % of roof = achieved / min(peak, AI x B).
    k = rooflab.measure(lambda: None, name="vadd", flop=1e6, bytes=12e6, plan="quick")
    roof = rooflab.load_roof("T4")
    (p,) = [q for q in rooflab.analyze(roof, [k]).points if q.level == "DRAM"]
    dram = roof.find_memory("DRAM").value
    assert p.ai == pytest.approx(1 / 12)
    assert p.achieved_flop_per_s == pytest.approx(1e6 / k.seconds)
    attainable = min(roof.find_compute("fp32", "vector").value, dram / 12)
    assert p.attainable_flop_per_s == pytest.approx(attainable)
    assert p.percent_of_roof == pytest.approx(100 * 1e6 / k.seconds / attainable)


def test_a_users_cache_sized_kernel_is_flagged_cache_resident():
    # `rooflab bench --run` on two numpy lambdas over 1e6 fp64 (24 MB and 16 MB a call, in a
    # 32 MiB L3) flagged them only "below-floor: the count or the roof is wrong"; the zoo's
    # own kernels got "cache-resident" from their working set, a user's kernel never did.
    from rooflab.bench.check import check_floors
    from rooflab.model import Ceiling, Kernel, Roof

    roof = Roof("cpu", compute=(Ceiling(1e11, precision="fp64", unit="vector"),),
                memory=(Ceiling(2e10, level="DRAM"),))
    llc = 32 * 2**20
    # 1e6 FLOP over 24e6 B: floor 24e6 / 2e10 = 1.2 ms; measured 0.2 ms = 0.17x the floor
    small = Kernel("add", {"fp64": 1e6}, {"DRAM": 24e6}, seconds=2e-4)
    big = Kernel("triad", {"fp64": 2e7}, {"DRAM": 240e6}, seconds=2e-3, calls=1)
    (s, b) = check_floors(roof, (small, big), llc)
    assert s.meta["flags"] == ["below-floor", "cache-resident"]
    assert round(s.meta["floor_ratio"], 3) == round(2e-4 / 1.2e-3, 3)
    assert "cache-resident" not in b.meta["flags"]          # 240 MB > 32 MiB
