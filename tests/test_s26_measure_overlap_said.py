"""s26 fA items 1-2: a decorated function whose calls ran at once in several threads.

1. `rooflab bench --run script.py` said the overlap as Python's warning from rooflab's own
   measure_collect.py ("/.../measure_collect.py:84: TimingWarning: ..." and the source
   line): now one `warning:` line per kernel on stderr, naming it, however often the
   script read `fn.kernel`; `collect().kernels` in Python points its warning at the line
   that read it.
2. `rooflab report` of such a saved kernel (meta seconds_stat "busy span of calls that ran
   at once") said nothing of it, and blamed its spread samples on clock changes: it now
   says the time is a busy span of N calls that ran at once and names contention first.
"""

from __future__ import annotations

import json
import textwrap
import threading
import time
import warnings

import pytest

import rooflab
from rooflab.cli.main import main
from rooflab.measure_checks import OverlapWarning, TimingWarning
from rooflab.measure_runs import Measurement
from rooflab.measuring import collect
from rooflab.model.kernel import Kernel
from rooflab.model.provenance import GIVEN, MEASURED
from rooflab.model.sanity_timing import check_timing

SCRIPT = """
import threading, time
import rooflab

@rooflab.measure(name="nap", flop=1e6, bytes=1e6)
def nap():
    time.sleep(0.1)

gate = threading.Barrier(2)

def go():
    gate.wait()
    nap()

ts = [threading.Thread(target=go) for _ in range(2)]
for t in ts:
    t.start()
for t in ts:
    t.join()
print(nap.kernel.calls, file=__import__("sys").stderr)   # a read of .kernel in the script
"""


def test_bench_run_says_the_overlap_once_in_its_own_voice(tmp_path, capsys):
    script = tmp_path / "naps.py"
    script.write_text(textwrap.dedent(SCRIPT))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert main(["bench", "--run", str(script), "--on", "EPYC 9654", "--json"]) == 0
    err = capsys.readouterr().err
    # no Python warning: neither from measure_collect.py nor at the script's .kernel read
    assert not [w for w in caught if issubclass(w.category, TimingWarning)]
    assert "TimingWarning" not in err and "measure_collect.py" not in err
    said = [line for line in err.splitlines() if "ran at once" in line]
    assert len(said) == 1
    assert said[0].startswith("warning: 'nap': 2 of 2 calls ran at once in 2 threads; ")
    assert "the time given is the span they were busy" in said[0]


def test_collect_points_its_overlap_warning_at_the_line_that_read_it():
    @Measurement(name="nap", flop=1e6, bytes=1e6)
    def nap():
        time.sleep(0.1)

    gate = threading.Barrier(2)

    def go():
        gate.wait()
        nap()

    with collect() as found:
        ts = [threading.Thread(target=go) for _ in range(2)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
    with pytest.warns(OverlapWarning, match="'nap': 2 of 2 calls ran at once") as got:
        (k,) = found.kernels
    assert got[0].filename == __file__   # was rooflab/measure_collect.py
    assert k.meta["seconds_stat"] == "busy span of calls that ran at once"
    with pytest.warns(OverlapWarning) as got:
        nap.kernel   # noqa: B018 (the read warns)
    assert got[0].filename == __file__


PROV = {"flop": GIVEN, "bytes": GIVEN, "seconds": MEASURED}


def busy_kernel() -> Kernel:
    """What aggregate gives for 4 calls of 20, 60, 100 and 20 ms, 3 of which ran at once
    in 2 threads, busy 150 ms in all (the summed 200 ms less 50 ms of overlap)."""
    return Kernel(name="spin", flop={"fp32": 4e6}, bytes={"DRAM": 4e6}, seconds=0.15,
                  calls=4, provenance=PROV, samples=(0.02, 0.06, 0.1, 0.02),
                  meta={"seconds_stat": "busy span of calls that ran at once",
                        "overlapped_calls": 3, "calling_threads": 2,
                        "summed_call_s": 0.2, "wall_span_s": 0.15, "device": "cpu"})


def test_the_timing_findings_say_busy_span_and_blame_contention():
    found = {f.check: f for f in check_timing(busy_kernel())}
    span = found["busy_span"]
    assert span.severity == "info"
    assert span.message.startswith(
        "the time (150 ms) is the busy span of its 4 calls, 3 of which ran at once in 2 "
        "threads (the time at least one was running, not their sum); their own times sum "
        "to 200 ms: it is the calls' throughput together")
    # samples 20-100 ms, median 40 ms: spread (100 - 20) / 40 = 200 %
    noisy = found["noisy"]
    assert "spread 200 %" in noisy.message
    assert noisy.causes[0].startswith("contention: 3 calls ran at once in 2 threads")
    assert "clock" not in noisy.causes[0]
    assert noisy.fix.startswith("time one call alone (rooflab.measure(fn, *args))")


def test_a_plain_summed_kernel_still_names_clock_changes_first():
    k = busy_kernel()
    plain = k.with_(meta={"seconds_stat": "sum of single runs", "device": "cpu"})
    found = {f.check: f for f in check_timing(plain)}
    assert "busy_span" not in found
    assert found["noisy"].causes[0].startswith("clock changes")


def test_two_groups_of_busy_calls_name_contention_first():
    # 3 calls alone at 10 ms, 3 beside another at 20 ms: two groups, gap 10 ms
    k = busy_kernel().with_(samples=(0.010, 0.0101, 0.0102, 0.020, 0.0201, 0.0202))
    found = {f.check: f for f in check_timing(k)}
    assert found["bimodal"].causes[0].startswith("contention: 3 calls ran at once")


def test_rooflab_report_of_a_saved_busy_kernel_says_so(tmp_path, capsys):
    path = tmp_path / "spin.json"
    rooflab.save_kernels(str(path), [busy_kernel()])
    assert main(["report", str(path), "--on", "EPYC 9654"]) == 0
    out = " ".join(capsys.readouterr().out.split())   # the terminal's wrapping undone
    assert "busy_span: the time (150 ms) is the busy span of its 4 calls, 3 of which" in out
    assert "likely: contention: 3 calls ran at once in 2 threads" in out
    assert "likely: clock changes" not in out


def test_the_advice_for_a_busy_kernel_is_to_time_one_call_alone(tmp_path, capsys):
    # the 'noisy' advice used to say "re-time on a quiet machine": the spread is the
    # kernel's own calls crowding each other, which a quiet machine would not remove
    path = tmp_path / "spin.json"
    rooflab.save_kernels(str(path), [busy_kernel()])
    assert main(["report", str(path), "--on", "EPYC 9654", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    said = json.dumps(doc)
    assert "time one call alone (rooflab.measure(fn, *args)) for its own latency" in said
    assert "re-time on a quiet machine" not in said
    assert "contention: 3 calls ran at once in 2 threads" in said
    # a plain summed kernel with the same spread keeps the quiet-machine advice
    plain = busy_kernel().with_(meta={"seconds_stat": "sum of single runs", "device": "cpu"})
    rooflab.save_kernels(str(path), [plain])
    assert main(["report", str(path), "--on", "EPYC 9654", "--json"]) == 0
    assert "re-time on a quiet machine" in capsys.readouterr().out
