"""A kernel that is many small calls (advice_calls.many_calls): its gain keeps the same
per-call floor its merge advice prices, said as calls x floor, and its work levers wait for
the calls to be merged, not for "the latency to be fixed" (review r5, `rooflab report
beforeB.json --on p2.json@1t`, section c6_add64_x1000).

Hand numbers (one-thread row of the r5 probe: fp64 59 GFLOP/s, DRAM 29.3 GB/s, roof floor
177 ns = the numba no-op; the profile's numpy 1-element ufunc 349 ns):
- c6: 1000 x np.add on 64-el fp64 rows, 633.2 us, 1,536,000 B: work floor 1.536e6 / 29.3e9
  = 52.423 us, under 1000 x 349 ns = 349 us.
- gain with the numpy floor: 633.2 - 349 = 284.2 us, 633.2 / 349 = 1.814x ("1.8x"); the
  old words took the roof's 177 ns: 633.2 - 177 = 456.2 us, 3.58x ("3.6x", "177 us").
- merge (unchanged): 633.2 / (633.2 - 999 x 0.349) = 2.225x.
- fp32 (unchanged): 633.2 / (633.2 - 52.423 / 2) = 1.043x.
"""

from __future__ import annotations

import pytest
from one_thread_roof import BARE, ONE_T, PROFILED

from rooflab.model import Kernel, analyze
from rooflab.model.diagnose import diagnose, diagnosis_to_dict


def _c6(**meta):
    return Kernel("c6_add64_x1000", {"fp64": 64_000.0}, {"DRAM": 1_536_000.0},
                  seconds=633.2e-6, calls=1000, meta={"op": "elementwise", **meta})


def _diag(kernel, machine):
    (d,) = diagnose(analyze(ONE_T, [kernel]), machine)
    return d


def test_gain_keeps_the_merge_advices_numpy_floor_as_calls_times_floor():
    d = _diag(_c6(), PROFILED)
    assert d.bound == "overhead"
    assert d.reachable == pytest.approx(349e-6, rel=1e-9)
    assert d.gain_s == pytest.approx(284.2e-6, rel=1e-6)            # was 456.2 us
    assert d.gain_speedup == pytest.approx(633.2 / 349, rel=1e-6)   # 1.814x, was 3.58x
    assert "284 us saved" in d.gain_words
    assert "(1.81x faster; the 1000 x 349 ns = 349 us per-call floor stays)" in d.gain_words
    assert "177 us" not in d.gain_words and "launch/dispatch floor" not in d.gain_words
    # the merge advice prices the same 349 ns floor: 2.225x
    merge = d.advice[0]
    assert merge.action.startswith("merge the 1000 calls")
    assert merge.speedup == pytest.approx(633.2 / (633.2 - 999 * 0.349), rel=1e-3)
    assert "1000 x 349 ns" in merge.detail
    # the JSON says the same floor
    out = diagnosis_to_dict(d)
    assert out["reachable_s"] == pytest.approx(349e-6, rel=1e-9)
    assert out["gain_s"] == pytest.approx(284.2e-6, rel=1e-6)


def test_a_numba_loop_keeps_the_numba_floor_and_a_bare_machine_the_roofs():
    numba = _diag(_c6(threads_from="numba function without parallel=True"), PROFILED)
    assert numba.gain_s == pytest.approx(456.2e-6, rel=1e-6)         # 633.2 - 177
    assert "(3.58x faster; the 1000 x 177 ns = 177 us per-call floor stays)" in numba.gain_words
    bare = _diag(_c6(), BARE)                                        # no profile floors
    assert "(3.58x faster; the 1000 x 177 ns = 177 us per-call floor stays)" in bare.gain_words


def test_work_levers_wait_for_the_calls_to_be_merged_not_the_latency():
    d = _diag(_c6(), PROFILED)
    levers = [a for a in d.advice if not a.action.startswith("merge")]
    assert levers
    for a in levers:
        assert "only after the latency is fixed" not in a.assumption
        assert "latency-bound kernel" not in a.assumption
        assert "only after the calls are merged" in a.assumption
    fp32 = next(a for a in levers if a.action.startswith("use fp32"))
    assert fp32.speedup == pytest.approx(633.2 / (633.2 - 52.423 / 2), rel=1e-3)  # 1.043x


def test_a_latency_bound_single_call_keeps_the_latency_words():
    # one call of the same work in 633.2 us: no per-call cost, so latency-bound as before
    k = Kernel("c6_one", {"fp64": 64_000.0}, {"DRAM": 1_536_000.0}, seconds=633.2e-6,
               meta={"op": "elementwise"})
    d = _diag(k, PROFILED)
    assert d.bound == "latency"
    assert "per-call floor" not in d.gain_words
    levers = [a for a in d.advice if a.shrinks != "below roof"]
    assert levers and all("only after the latency is fixed" in a.assumption for a in levers)
    assert not any("only after the calls are merged" in a.assumption for a in d.advice)
