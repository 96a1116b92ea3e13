"""compare's "not testable" reads a flag the profiler reader sets, not a note's wording
(review s19 x1 F3).

ncu's reader sums launches of one name; where their grids or AI differ (two.csv:
output5.csv's launch with a (10, 1, 1) twin at 10x the DRAM bytes) the sum's samples are
a mix of launches, not timing noise, and the gate must not U-test them. The reader now
sets meta["launch_mix"] beside its note; a kernels file from before the flag is still told
by the note's words (the fallback), a flagged one whatever the note says.
"""

from __future__ import annotations

from test_ncu_launches import two  # noqa: F401  (the fixture)

from rooflab.ingest.ncu_files import load_ncu
from rooflab.model.compare_merge import merge_by_name, untestable
from rooflab.model.kernel import Kernel

MIX = "its 2 launches differ in shape or AI (the profiler's note), so their spread is " \
      "the mix of launches, not timing noise"


def _k(meta: dict, samples=(1e-3, 1.1e-3, 1.2e-3)) -> Kernel:
    return Kernel(name="sigma", flop={"fp64": 1e9}, bytes={"DRAM": 1e8},
                  seconds=sum(samples), calls=len(samples), samples=samples, meta=meta)


def test_the_reader_flags_launches_of_two_grids(two):  # noqa: F811
    (k,) = load_ncu([str(two)]).kernels
    assert k.meta["launch_mix"] is True
    assert untestable(k) == MIX


def test_the_gate_reads_the_flag_not_the_words():
    reworded = {"launch_mix": True, "notes": ["2 launches of other grids added up"]}
    assert untestable(_k(reworded, (1e-3, 2e-3))) == MIX
    # a flag-era kernel without the flag is testable whatever a note says
    assert untestable(_k({"launch_mix": False,
                          "notes": ["... are summed into one point ..."]})) is None


def test_an_old_files_note_still_counts():
    old = {"notes": ["2 launches with grids (65535, 1, 1), (10, 1, 1) are summed into one "
                     "point none of them ran at; --per-launch shows each"]}
    assert untestable(_k(old, (1e-3, 2e-3))) == MIX


def test_a_summed_entrys_flag_survives_the_merge():
    plain = _k({}, (1e-3, 1.1e-3))
    mixed = _k({"launch_mix": True}, (1.05e-3, 1.15e-3))
    (k,) = merge_by_name([plain, mixed])
    assert k.meta["launch_mix"] is True
    assert untestable(k) == ("its 4 launches differ in shape or AI (the profiler's note), "
                             "so their spread is the mix of launches, not timing noise")
