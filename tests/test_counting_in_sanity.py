"""A single run timed under rooflab's counter is said by the sanity checks every verb
runs (review 17b N6: a training step at 27 % of roof read 0.39 %, "latency-bound")."""

from rooflab.model import Kernel
from rooflab.model.sanity import check_timing
from rooflab.model.sanity_timing import counting_finding
from rooflab.model.whatif_warnings import DOUBTFUL_CHECKS


def _step(counted: bool) -> Kernel:
    return Kernel("train_step", flop={"fp32": 6.0e8}, bytes={"DRAM": 1.0e8}, seconds=0.08,
                  meta={"timing_includes_counting": counted,
                        "ops": {"aten.mm": {"calls": 30}, "aten.add": {"calls": 10}}})


def test_a_counted_single_run_gets_the_finding_with_its_op_count():
    found = [f for f in check_timing(_step(True)) if f.check == "timing_includes_counting"]
    assert len(found) == 1 and found[0].severity == "warning"
    # 0.08 s over 40 counted ops: 2 ms per op at most
    assert "counting of its 40 dispatched ops" in found[0].message
    assert "2 ms per counted op at most" in found[0].message


def test_an_uncounted_run_gets_none_and_whatif_doubts_counted_ones():
    assert counting_finding(_step(False)) is None
    assert not [f for f in check_timing(_step(False)) if f.check == "timing_includes_counting"]
    assert "timing_includes_counting" in DOUBTFUL_CHECKS


def test_too_short_over_calls_timed_in_one_reading_names_them():
    # 10 calls in 5 us, one interval (no samples): the reading is 5 us < 10 us; the words
    # name the 10 calls (a KeyError on calls_per_sample before)
    k = Kernel("tiny", flop={"fp64": 1000.0}, bytes={"DRAM": 6400.0}, seconds=5e-6, calls=10)
    (f,) = [f for f in check_timing(k) if f.check == "too_short"]
    assert "500 ns per call (5 us per timer reading of 10 calls)" in f.message
