"""Review s20 x1 F6: three leftovers of one idea each. measure_checks.bimodal_warning only
forwarded to sample_groups.bimodal_words; "IQR" or "range" by sample count was written
inline in display and bench's kernel runner beside sample_spread.spread_name; and three
constants held the same 5 % noise limit."""

from __future__ import annotations

from rooflab import measure_checks
from rooflab.model import sample_groups, sanity_timing
from rooflab.model.display import kernel_text
from rooflab.model.kernel import Kernel
from rooflab.model.sample_spread import NOISY_IQR, spread_short
from rooflab.probe import stats


def test_the_bimodal_warning_is_the_sample_groups_words():
    # one function: measure_aggregate imports model.sample_groups' own, no forwarding wrapper
    import rooflab.measure_aggregate as measure_aggregate

    assert measure_aggregate.bimodal_words is sample_groups.bimodal_words
    assert not hasattr(measure_checks, "bimodal_warning")


def test_one_five_percent_noise_limit():
    assert NOISY_IQR == 0.05
    from rooflab.bench import check
    from rooflab.model import advice_compute

    assert (stats.NOISY_SPREAD, sample_groups.MIN_GAP_REL, check.NOISY_IQR,
            advice_compute.NOISY_IQR) == (NOISY_IQR,) * 4
    # different on purpose: the range test's 20 % and the order test's 5 % drop
    assert sanity_timing.NOISY_SPREAD == 0.20 and stats.SLOWDOWN == 0.05


def test_spread_short_names_the_range_under_4_samples():
    assert [spread_short(n) for n in (0, 2, 3, 4, 9)] == ["IQR", "range", "range", "IQR",
                                                          "IQR"]
    k3 = Kernel("k", {"fp32": 1e6}, {"DRAM": 1e6}, seconds=1e-3,
                samples=(1e-3, 1.1e-3, 0.9e-3), meta={"iqr_rel": 0.2, "samples_n": 3})
    assert "range 20 %" in kernel_text(k3) and "IQR" not in kernel_text(k3)
