"""The sweep and plateau algorithm both probes share (probe/plateaus.py), on hand-made
curves whose answers are worked out in the comments. The probes' own uses of it are
tested in test_probe_cpu.py and test_probe_gpu.py."""

from __future__ import annotations

import math

import pytest

from rooflab.hardware.host import Caches
from rooflab.probe.cpu import bandwidth as bw
from rooflab.probe.plateaus import Plateau, find_plateaus, geometric_sizes, label_plateaus

KiB, MiB = 2**10, 2**20
SIZES = tuple(2**i * KiB for i in range(12))      # 1 KiB .. 2 MiB, doubling


# --- the grid ---------------------------------------------------------------------------
def test_geometric_sizes_stop_at_hi_or_cover_it():
    assert geometric_sizes(1, 8, 2) == (1, 2, 4, 8)
    assert geometric_sizes(1, 9, 2) == (1, 2, 4, 8)                  # at most hi
    assert geometric_sizes(1, 9, 2, cover=True) == (1, 2, 4, 8, 16)  # reaches hi
    assert geometric_sizes(3, 3, 1.5, cover=True) == (3, 4.5)        # always two points
    assert geometric_sizes(3, 3, 1.5) == (3,)
    for bad in ((0, 8, 2), (1, 8, 1.0), (8, 1, 2)):
        with pytest.raises(ValueError):
            geometric_sizes(*bad)


# --- finding plateaus -------------------------------------------------------------------
def test_tolerance_is_symmetric_on_a_log_scale():
    # 100 -> 111: ratio 1.11 <= 1.12, one plateau.
    assert find_plateaus([100, 100, 111, 111]) == (Plateau(0, 3, 105.5),)
    # 100 -> 89 is a fall by 1.124x, as far as 89 -> 100 is a rise: both split.
    assert find_plateaus([100, 100, 89, 89]) == (Plateau(0, 1, 100), Plateau(2, 3, 89))
    assert find_plateaus([89, 89, 100, 100]) == (Plateau(0, 1, 89), Plateau(2, 3, 100))


def test_short_runs_are_transitions_and_a_split_plateau_is_merged():
    # 20 stands alone (a transition); 10 is a run of one.
    assert find_plateaus([10, 20, 40, 40]) == (Plateau(2, 3, 40),)
    # one disturbed point (5) splits 10,10,10 | 10,10; the two runs agree: one plateau,
    # the median of all six points (the 5 included) is still 10
    assert find_plateaus([10, 10, 10, 5, 10, 10]) == (Plateau(0, 5, 10),)
    assert find_plateaus([10, 10, 10, 5, 10, 10], min_points=3) == (Plateau(0, 2, 10),)


# --- naming them ------------------------------------------------------------------------
def test_levels_by_central_working_set():
    # centres: sqrt(1*2) = 1.4 KiB <= 4 KiB: L1; sqrt(8*16) = 11 KiB <= 16 KiB: L2;
    # sqrt(64*128) = 91 KiB: past every cache
    found, notes = label_plateaus([Plateau(0, 1, 100), Plateau(3, 4, 50), Plateau(6, 7, 10)],
                                  SIZES, {"L1": 4 * KiB, "L2": 16 * KiB})
    assert found == {"L1": Plateau(0, 1, 100), "L2": Plateau(3, 4, 50),
                     "DRAM": Plateau(6, 7, 10)}
    assert notes == ()     # drops at 2..8 KiB (cap 4) and 16..64 KiB (cap 16): consistent


def test_drop_far_from_the_reported_size_is_said():
    # L1 reported 4 KiB but the curve stays flat to 8 KiB and drops by 32 KiB: 8 > 1.5 x 4
    _found, notes = label_plateaus([Plateau(0, 3, 100), Plateau(5, 7, 10)], SIZES,
                                   {"L1": 4 * KiB, "L2": 16 * KiB}, per=" per thread")
    assert notes == ("L1: the OS reports 4 KiB per thread but bandwidth falls between 8 KiB "
                     "and 32 KiB per thread; a virtual machine may report another CPU's "
                     "cache sizes (the measured plateau is used)",)


def test_last_plateau_past_the_caches_is_the_outer_level():
    caps = {"L2": 50 * KiB}
    wide = Plateau(2, 9, 100)      # 4..512 KiB: centre 45 KiB <= 50, reaches 10x past
    assert label_plateaus([wide], SIZES, caps)[0] == {"DRAM": wide}
    # the same span followed by a slower plateau is the cache
    found, _ = label_plateaus([wide, Plateau(10, 11, 20)], SIZES, caps)
    assert found == {"L2": wide, "DRAM": Plateau(10, 11, 20)}
    assert label_plateaus([wide], SIZES, caps, outer="L3")[0] == {"L3": wide}


def test_plateaus_past_the_caches_join_into_one():
    found, _ = label_plateaus([Plateau(0, 1, 100), Plateau(4, 5, 30), Plateau(7, 9, 10)],
                              SIZES, {"L1": 4 * KiB})
    assert found == {"L1": Plateau(0, 1, 100), "DRAM": Plateau(4, 9, 10)}


def test_two_plateaus_in_one_cache_keep_longest_or_fastest():
    # centres 1.4 KiB and sqrt(8*64) = 23 KiB, both <= 100 KiB
    plats = [Plateau(0, 1, 50), Plateau(3, 6, 40), Plateau(9, 10, 10)]
    caps = {"L2": 100 * KiB}
    found, notes = label_plateaus(plats, SIZES, caps)
    assert found["L2"] == Plateau(3, 6, 40)
    assert notes == ("two plateaus fall in L2 (8 KiB..64 KiB); kept the longer one",)
    found, notes = label_plateaus(plats, SIZES, caps, keep="fastest")
    assert found["L2"] == Plateau(0, 1, 50)
    assert notes[0].endswith("kept the faster one")


def test_min_gain_drops_a_cache_plateau_no_faster_than_outside():
    caps = {"L2": 4 * KiB}
    for l2, kept in ((5.0, False), (11.4, False), (11.6, True), (50.0, True)):
        found, _ = label_plateaus([Plateau(0, 1, l2), Plateau(3, 6, 10)], SIZES, caps,
                                  min_gain=1.15)
        assert ("L2" in found) is kept, l2
        assert found["DRAM"] == Plateau(3, 6, 10)
    # without min_gain the slow cache plateau stays
    assert "L2" in label_plateaus([Plateau(0, 1, 5.0), Plateau(3, 6, 10)], SIZES, caps)[0]


def test_without_capacities_levels_go_by_order_even_with_many_plateaus():
    plats = [Plateau(2 * k, 2 * k + 1, 600 / 2**k) for k in range(6)]
    found, notes = label_plateaus(plats, SIZES, {})
    # L1, L2, L3, then everything else is DRAM (six plateaus used to raise IndexError)
    assert list(found) == ["L1", "L2", "L3", "DRAM"]
    assert found["DRAM"] == Plateau(6, 11, 600 / 32)
    assert notes == ("the OS reports no cache sizes; levels named by plateau order",)


def test_cpu_sweep_ending_in_one_long_plateau_still_has_dram():
    # L1 600 GB/s to 32 KiB, L2 230 GB/s to 1 MiB, then 40 GB/s flat to 12 x the 64 MiB
    # L3 (no L3 step, as on a VM): the last plateau's centre (~30 MiB) lies inside the L3,
    # but it reaches 768 MiB, past every cache: DRAM. (This used to raise KeyError 'DRAM'.)
    sizes = bw.sweep_sizes(4 * KiB, 768 * MiB, 1.25)
    values = [600e9 if s <= 32 * KiB else 230e9 if s <= 1 * MiB else 40e9 for s in sizes]
    levels, chosen, notes = bw.label_levels(values, sizes,
                                            Caches(32 * KiB, 1 * MiB, 64 * MiB), threads=1)
    assert list(levels) == ["L1", "L2", "L3", "DRAM"]
    assert levels["DRAM"].last == len(sizes) - 1
    assert sizes[chosen["DRAM"]] >= 0.99 * 12 * 64 * MiB
    # the L3 is read inside its reported size, and the note says the curve had no step
    assert 1.5 * MiB <= sizes[chosen["L3"]] <= 64 * MiB / 1.5
    assert any(n.startswith("L3: no clear plateau") for n in notes)
    assert math.isclose(values[chosen["L3"]], 40e9)


def test_a_sweep_that_ends_inside_the_llc_still_has_a_dram_stand_in():
    # The sweep stops at the 64 MiB LLC (a test's shrunken quick mode; or noise running the
    # L3 plateau on into the largest sizes): the L3 plateau takes every point up to the last,
    # no DRAM plateau is found and no point lies past 2x the LLC, so the last point stands
    # for DRAM. Before: KeyError 'DRAM' (an internal error of `rooflab probe`, CI s32).
    sizes = bw.sweep_sizes(4 * KiB, 64 * MiB, 1.25)
    values = [600e9 if s <= 32 * KiB else 230e9 if s <= 1 * MiB else 40e9 for s in sizes]
    levels, chosen, notes = bw.label_levels(values, sizes,
                                            Caches(32 * KiB, 1 * MiB, 64 * MiB), threads=1)
    last = len(sizes) - 1
    assert list(levels) == ["L1", "L2", "L3", "DRAM"]
    assert (levels["DRAM"].first, levels["DRAM"].last) == (last, last)
    assert levels["L3"].last == last - 1          # cut before DRAM's stand-in point
    assert chosen["DRAM"] == last and values[chosen["L3"]] == 40e9
    assert "no flat DRAM plateau (noisy); the largest working sets stand for DRAM" in notes
