"""rooflab.measuring.collect() and `rooflab bench --run script.py` (the user's own kernels)."""

from __future__ import annotations

import csv
import json
import textwrap

import pytest

import rooflab
from rooflab.bench.user_script import kernels_device, run_script, unique_names
from rooflab.cli.main import main
from rooflab.errors import InputError, ProbeError
from rooflab.measuring import Measurement, collect


def ticks(*times):
    """A clock for the single-run forms: each call returns the next time."""
    return iter(times).__next__


def given(name, seconds, flop=2e6, nbytes=2.4e7):
    """A single run of a `with` block, timed by a fake clock (no real timing)."""
    with Measurement(name=name, flop={"fp64": flop}, bytes={"DRAM": nbytes},
                     clock=ticks(0.0, seconds)) as m:
        pass
    return m.kernel


# --- the collector --------------------------------------------------------------------------

def test_collect_records_the_benchmark_form():
    with collect() as found:
        k = rooflab.measure(lambda: None, name="noop", flop=10.0, bytes=8.0, plan="quick")
    assert found.kernels == (k,)
    assert found.kernels[0].provenance == {"flop": "given", "bytes": "given",
                                           "seconds": "measured"}


def test_collect_records_the_context_manager_once():
    with collect() as found:
        k = given("block", 2e-4)
    assert len(found) == 1
    assert found.kernels[0] is k
    assert k.seconds == pytest.approx(2e-4)


def test_collect_keeps_one_aggregate_per_decorated_function():
    spec = Measurement(name="step", flop={"fp32": 100.0}, bytes={"DRAM": 40.0},
                       clock=ticks(0.0, 1e-3, 1.0, 1.002, 2.0, 2.003))
    step = spec(lambda x: x + 1)
    with collect() as found:
        assert step(1) == 2
        step(2)
        step(3)
    (k,) = found.kernels
    assert k.name == "step" and k.calls == 3
    assert k.flop == {"fp32": 300.0} and k.bytes == {"DRAM": 120.0}
    assert k.seconds == pytest.approx(1e-3 + 2e-3 + 3e-3)
    assert k == step.kernel   # every call inside: the same aggregate the function keeps


def test_collect_aggregates_only_the_calls_inside_its_block():
    step = Measurement(name="step", flop=1.0, bytes=1.0,
                       clock=ticks(0.0, 1e-3, 1.0, 1.002))(lambda: None)
    step()                    # before the block: in step.kernel, not in the collection
    with collect() as found:
        step()
    assert step.kernel.calls == 2
    (k,) = found.kernels
    assert k.calls == 1 and k.seconds == pytest.approx(2e-3)


def test_collect_keeps_order_of_first_appearance():
    step = Measurement(name="step", flop=1.0, bytes=1.0,
                       clock=ticks(0.0, 1e-3, 1.0, 1.001))(lambda: None)
    with collect() as found:
        step()
        given("middle", 2e-4)
        step()
    assert [k.name for k in found.kernels] == ["step", "middle"]
    assert found.kernels[0].calls == 2


def test_collectors_nest_and_nothing_leaks_after_the_block():
    with collect() as outer:
        given("a", 2e-4)
        with collect() as inner:
            given("b", 2e-4)
        given("c", 2e-4)
    given("after", 2e-4)      # outside every block: recorded nowhere
    assert [k.name for k in inner.kernels] == ["b"]
    assert [k.name for k in outer.kernels] == ["a", "b", "c"]
    with collect() as fresh:
        pass
    assert fresh.kernels == ()


def test_a_failed_block_records_nothing():
    with collect() as found:
        with pytest.raises(ZeroDivisionError):
            with Measurement(name="bad", flop=1.0, bytes=1.0, clock=ticks(0.0, 1.0)):
                raise ZeroDivisionError
    assert found.kernels == ()


def test_unique_names_and_device():
    a, b, c = given("add", 2e-4), given("add", 2e-4), given("mul", 2e-4)
    assert [k.name for k in unique_names([a, b, c])] == ["add", "add#2", "mul"]
    assert kernels_device([a, c]) == ("cpu", "")
    gpu = a.with_(meta={**a.meta, "device": "cuda:1"})
    assert kernels_device([gpu]) == ("cuda:1", "")
    target, warning = kernels_device([a, gpu])
    assert target == "cpu" and "cpu, cuda:1" in warning


# --- running a script -----------------------------------------------------------------------

SCRIPT = """
import sys
from rooflab.measuring import Measurement

# flop 2e6, bytes 2.4e7 (a triad of 1e6 fp64 elements); the clock says 0.2 ms
with Measurement(name="triad", flop={"fp64": 2e6}, bytes={"DRAM": 2.4e7},
                 clock=iter([0.0, 2e-4]).__next__):
    pass
print("script args:", sys.argv[1:])
"""


def write(tmp_path, text, name="kern.py"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return str(path)


def test_run_script_collects_and_restores_argv(tmp_path):
    import sys

    argv = list(sys.argv)
    (k,) = run_script(write(tmp_path, SCRIPT), ["--n", "5"])
    assert k.name == "triad" and k.flop == {"fp64": 2e6}
    assert sys.argv == argv


def test_cli_places_the_scripts_kernel_on_a_catalog_roof(tmp_path, capsys):
    script = write(tmp_path, SCRIPT)
    assert main(["bench", "--run", script, "--on", "EPYC 9654", "--json",
                 "--", "--steps", "3"]) == 0
    out = capsys.readouterr()
    assert "script args: ['--steps', '3']" in out.err   # --json: the script's prints moved
    doc = json.loads(out.out)
    (p,) = doc["analysis"]
    # EPYC 9654 nominal: DRAM 460.8 GB/s. AI = 2e6 / 2.4e7 = 1/12; attainable = 460.8e9 / 12
    # = 38.4 GFLOP/s; achieved = 2e6 / 2e-4 = 10 GFLOP/s = 26.04 %; floor = 2.4e7 / 460.8e9
    # = 52.08 us, so measured/floor = 2e-4 / 52.08e-6 = 3.84.
    assert p["ai"] == pytest.approx(0.08333, rel=1e-4)
    assert p["achieved_flop_per_s"] == pytest.approx(1e10)
    assert p["attainable_flop_per_s"] == pytest.approx(38.4e9)
    assert p["percent_of_roof"] == pytest.approx(26.042, rel=1e-4)
    (k,) = doc["kernels"]
    assert k["meta"]["floor_ratio"] == pytest.approx(3.84)
    assert k["provenance"] == {"flop": "given", "bytes": "given", "seconds": "measured"}


def test_cli_table_and_csv(tmp_path, capsys):
    script = write(tmp_path, SCRIPT)
    csv_path = tmp_path / "t.csv"
    assert main(["bench", "--run", script, "--on", "EPYC 9654", "-o", str(csv_path)]) == 0
    out = capsys.readouterr().out
    assert "kernels of kern.py on AMD EPYC 9654" in out
    assert "0.0833" in out and "26 %" in out and "3.84x" in out
    (rec,) = csv.DictReader(csv_path.read_text().splitlines())
    assert rec["kernel"] == "triad" and float(rec["ai"]) == pytest.approx(1 / 12)


def test_counted_kernels_keep_their_provenance(tmp_path, capsys):
    pytest.importorskip("torch")
    script = write(tmp_path, """
        import torch, rooflab
        a, b = torch.ones(16, 16), torch.ones(16, 16)
        rooflab.measure(torch.mm, a, b, plan="quick")
    """)
    assert main(["bench", "--run", script, "--on", "EPYC 9654", "--json"]) == 0
    (k,) = json.loads(capsys.readouterr().out)["kernels"]
    # the dispatch counter's shape formulas: derived (model/provenance.py)
    assert k["provenance"] == {"flop": "derived", "bytes": "derived", "seconds": "measured"}
    assert k["flop"] == {"fp32": 2 * 16**3}
    assert k["bytes"] == {"DRAM": 3 * 16 * 16 * 4}   # read a and b, write the product


def test_a_script_without_kernels_is_told_how_to_mark_one(tmp_path, capsys):
    script = write(tmp_path, "x = 1\n")
    with pytest.raises(InputError, match=r"measured no kernel.*rooflab\.measure\(fn"):
        run_script(script)
    assert main(["bench", "--run", script, "--on", "EPYC 9654"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --run ") and "Traceback" not in err


def test_an_exception_in_the_script_is_reported_as_the_scripts(tmp_path, capsys):
    script = write(tmp_path, """
        import rooflab

        def kernel():
            return 1 / 0

        rooflab.measure(kernel, flop=1.0, bytes=1.0)
    """)
    with pytest.raises(ProbeError) as info:
        run_script(script)
    text = str(info.value)
    assert text.startswith(f"{script}:5: the script raised ZeroDivisionError: division by zero")
    # the script's frames only: not rooflab's measure(), not runpy's
    assert "line 7, in <module>" in text and "line 5, in kernel" in text
    assert "measuring.py" not in text and "runpy" not in text
    assert main(["bench", "--run", script, "--on", "EPYC 9654"]) == 2
    assert capsys.readouterr().err.startswith(f"error: {script}:5: the script raised")


def test_a_script_exiting_non_zero_is_an_error(tmp_path, capsys):
    script = write(tmp_path, "import sys\nsys.exit(3)\n")
    assert main(["bench", "--run", script, "--on", "EPYC 9654"]) == 2
    assert "exited with status 3" in capsys.readouterr().err


@pytest.mark.parametrize("extra, named", [(["--only", "triad"], "--only"),
                                          (["--list"], "--list"),
                                          (["--quick", "--device", "cpu"],
                                           "--quick and --device")])
def test_run_refuses_the_zoo_options(tmp_path, capsys, extra, named):
    script = write(tmp_path, SCRIPT)
    assert main(["bench", "--run", script, *extra]) == 2
    err = capsys.readouterr().err
    assert f"{named} " in err and "do not mix with --run" in err
    assert "script args" not in err   # refused before the script ran


def test_stray_arguments_without_run_are_refused(capsys):
    assert main(["bench", "--onn", "T4"]) == 2
    assert "unexpected arguments --onn T4" in capsys.readouterr().err
