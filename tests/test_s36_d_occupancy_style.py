"""One style for a kernel's occupancy (s36 D): the advice's occupancy words, the latency
detail, the summed launches' note and `rooflab ai occupancy` printed it four ways
('41.7 %', '17 %', '8.33 %', '50-100 %'); each now prints model.occupancy_words.occupancy_pct's
one decimal."""

from __future__ import annotations

from rooflab.ingest.aggregate import Launch, _Group
from rooflab.model.advice_compute import latency_detail
from rooflab.model.kernel import Kernel
from rooflab.model.occupancy_words import occupancy_words


def _kernel(**meta) -> Kernel:
    return Kernel("k", flop={"fp32": 1e9}, bytes={"DRAM": 1e8}, seconds=1e-3, meta=meta)


def test_latency_detail_says_occupancy_as_the_advice_does():
    """ncu's achieved 16.53 % of a theoretical 100 %: one decimal, 16.53 -> '16.5 %' and
    100 -> '100.0 %', as occupancy_words says the same meta (was '17 % of ... 100 %')."""
    k = _kernel(occupancy_achieved=16.53, occupancy_theoretical=100.0,
                occupancy_limiter="registers")
    assert latency_detail(k) == ("achieved occupancy 16.5 % of a theoretical 100.0 % "
                                 "(limit: registers)")
    assert occupancy_words(k.meta) == "theoretical 100.0 %, limited by registers; achieved 16.5 %"


def test_a_derived_theoretical_occupancy_has_the_same_decimals():
    """rocprof's derived occupancy, 1 of 12 waves = 8.333 %: '8.3 %' (was '8.33 %' by .3g
    here while occupancy_words said '8.3 %')."""
    k = _kernel(occupancy_theoretical=100 / 12, occupancy_from="derived")
    assert latency_detail(k) == "theoretical occupancy 8.3 %"
    assert occupancy_words(k.meta).startswith("theoretical 8.3 %")


def test_achieved_near_full_is_not_printed_full():
    """An achieved 99.96 % is not a full SM: share_text keeps it under 100 ('99.96 %', not
    '100.0 %' by .1f nor '100 %' by .0f)."""
    k = _kernel(occupancy_achieved=99.96, occupancy_theoretical=100.0)
    assert latency_detail(k) == "achieved occupancy 99.96 % of a theoretical 100.0 %"


def test_summed_launches_note_prints_each_end_in_the_one_style():
    """Two launches: achieved 16.53 and 41.66 %, theoretical 50 and 100 %:
    'achieved 16.5-41.7 %, theoretical 50.0-100.0 %' (was 16.5-41.7 / 50-100 by .3g)."""
    first = Launch("f.csv", 1, "0", "axpy", {})
    g = _Group(first=first)
    g.occupancy = {"achieved": [16.53, 41.66], "theoretical": [50.0, 100.0]}
    g.launches = 2
    assert g.occupancy_note().startswith("occupancy differs between its 2 launches (achieved "
                                         "16.5-41.7 %, theoretical 50.0-100.0 %)")

