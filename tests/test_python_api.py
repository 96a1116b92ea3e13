"""Audit 9: rooflab as a notebook user sees it (Python API only, no CLI habits).

Each test failed on the code before this audit; the numbers are hand calculations on the
NVIDIA T4 catalog roof (fp16 tensor 65 TFLOP/s, DRAM 320 GB/s: T4 datasheet) and the
README's "From Python" kernel (2.2 GFLOP, 2.2 GB, 15 ms: 146.7 GFLOP/s of 320 = 45.8 %).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

import rooflab
from rooflab import Ceiling, Kernel, Roof
from rooflab.errors import InputError
from rooflab.model.schema import kernel_from_dict
from rooflab.probe.stats import summarize
from rooflab.probe.timer import TimingPlan

TINY = TimingPlan(warmup_s=0.0, sample_s=0.001, budget_s=0.005, min_samples=3, max_samples=5)


@pytest.fixture(scope="module")
def t4() -> Roof:
    from rooflab.hardware.resolve import load_roof

    return load_roof("T4")


def readme_kernel(**changes) -> Kernel:
    k = Kernel("decode b=1", flop={"fp16": 2.2e9}, bytes={"DRAM": 2.2e9}, seconds=0.015)
    return k.with_(**changes) if changes else k


# --- names a user reaches for -----------------------------------------------------------

def test_top_level_exports_the_functions_a_notebook_needs():
    from rooflab.hardware.resolve import load_roof
    from rooflab.ingest.kernelfile import load_kernels, save_kernels
    from rooflab.report.chart import plot_roofline, save_figure

    assert rooflab.load_roof is load_roof
    assert rooflab.load_kernels is load_kernels and rooflab.save_kernels is save_kernels
    assert rooflab.plot_roofline is plot_roofline and rooflab.save_figure is save_figure
    # tab completion (dir) lists the lazily loaded names too
    names = dir(rooflab)
    for name in ("measure", "load_roof", "plot_roofline", "save_kernels", "load_profile"):
        assert name in names and name in rooflab.__all__
    with pytest.raises(AttributeError):
        rooflab.no_such_name  # noqa: B018


# --- Kernel built in Python is judged like the same kernel read from JSON ---------------

def test_kernel_dtype_and_level_names_are_canonical(t4):
    # 1e12 FLOP in 0.1 s = 10 TFLOP/s at AI 1000 (right of the fp16 tensor ridge 203):
    # 10 / 65 = 15.4 % of roof. Before: 'dram' found no ceiling (no point at all), and
    # 'float16' fell back to the fp32 ceiling (8.1 TFLOP/s: 123 %, above the roof).
    k = Kernel("mm", flop={"float16": 1e12}, bytes={"dram": 1e9}, seconds=0.1)
    assert dict(k.flop) == {"fp16": 1e12} and dict(k.bytes) == {"DRAM": 1e9}
    (p,) = rooflab.analyze(t4, [k]).points
    assert p.peak_flop_per_s == 65e12
    assert p.percent_of_roof == pytest.approx(100 * 1e13 / 65e12)   # 15.38
    same = kernel_from_dict({"name": "mm", "flop": {"float16": 1e12}, "bytes": {"dram": 1e9},
                             "seconds": 0.1})
    assert same == k


def test_kernel_bare_numbers_mean_fp32_and_dram_as_in_files():
    k = Kernel("triad", flop=2e7, bytes=2.4e8, seconds=0.01)
    assert dict(k.flop) == {"fp32": 2e7} and dict(k.bytes) == {"DRAM": 2.4e8}
    read = kernel_from_dict({"name": "triad", "flop": 2e7, "bytes": 2.4e8, "seconds": 0.01})
    # ... and its fp32 is marked assumed, as the file reader marks it (review s18 r8 F6)
    assert k == read.with_(provenance={**read.provenance, "precision": "assumed"})
    # equal names add up, as in a file ('FP16' and 'fp16')
    assert dict(Kernel("x", flop={"FP16": 1.0, "fp16": 2.0}).flop) == {"fp16": 3.0}


@pytest.mark.parametrize("kwargs, words", [
    ({"seconds": "1 ms"}, "seconds must be a plain number"),
    ({"flop": {"fp32": "2 GFLOP"}}, "flop[fp32] must be a plain number"),
    ({"flop": [1e9]}, "flop must be a dict"),
    ({"bytes": "1e8"}, "bytes must be a dict"),
    ({"calls": 2.5}, "calls must be a whole number"),
    ({"calls": math.nan}, "calls must be a whole number"),
])
def test_kernel_bad_values_say_which_field(kwargs, words):
    with pytest.raises(InputError) as info:
        Kernel("k", **kwargs)
    assert words in str(info.value) and "kernel 'k'" in str(info.value)


def test_kernel_whole_float_calls_become_int():
    k = Kernel("k", flop={"fp32": 1.0}, bytes={"DRAM": 1.0}, seconds=1.0, calls=4.0)
    assert k.calls == 4 and isinstance(k.calls, int) and k.seconds_per_call == 0.25


# --- analyze / plot with the shapes a user passes ---------------------------------------

def test_analyze_takes_one_kernel_and_refuses_a_name(t4):
    (p,) = rooflab.analyze(t4, readme_kernel()).points
    assert p.ai == 1.0 and p.percent_of_roof == pytest.approx(100 * (2.2e9 / 0.015) / 320e9)
    with pytest.raises(InputError, match=r"load_roof\('T4'\)"):
        rooflab.analyze("T4", [readme_kernel()])
    profile = rooflab.MachineProfile(host={"name": "box"}, nominal=t4)
    with pytest.raises(InputError, match=r"profile.roofs\[0\]"):
        rooflab.analyze(profile, [readme_kernel()])


def test_plot_roofline_takes_one_roof_and_one_kernel(t4):
    pytest.importorskip("matplotlib")
    display = rooflab.plot_roofline(t4, readme_kernel())
    (pt,) = display.points
    assert pt.ai == 1.0 and pt.percent_of_roof == pytest.approx(45.833, abs=1e-3)
    assert display.figure_ is not None   # a Figure the notebook can show or savefig
    with pytest.raises(InputError, match="roofs must be Roofs"):
        rooflab.plot_roofline("T4", readme_kernel())


# --- files from Python -------------------------------------------------------------------

def test_save_kernels_round_trips_every_field(tmp_path, capsys):
    k = Kernel("mm", flop={"fp16": 1.37e11}, bytes={"DRAM": 1e8, "L2": 3e8}, seconds=3e-3,
               calls=3, provenance={"flop": "derived", "seconds": "measured"}, unit="tensor",
               samples=(1e-3, 1.1e-3, 0.9e-3), meta={"shape": [4096, 4096], "op": "matmul"})
    path = rooflab.save_kernels(tmp_path / "k.json", [k])
    assert json.loads(path.read_text())["kernels"][0]["calls"] == 3
    (back,) = rooflab.load_kernels(str(path))
    for field in ("name", "flop", "bytes", "seconds", "calls", "provenance", "unit",
                  "samples", "meta"):
        assert getattr(back, field) == getattr(k, field), field
    # the CLI reads the same file and reports the same % of roof as the API
    from rooflab.cli.main import main

    t4 = rooflab.load_roof("T4")
    api = rooflab.analyze(t4, readme_kernel()).points[0].percent_of_roof
    rooflab.save_kernels(tmp_path / "r.json", readme_kernel())
    assert main(["report", str(tmp_path / "r.json"), "--on", "T4", "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)["analysis"][0]["percent_of_roof"]
    assert cli == pytest.approx(api) == pytest.approx(45.833, abs=1e-3)


def test_save_kernels_refuses_what_it_cannot_write(tmp_path):
    with pytest.raises(InputError, match="must end in .json"):
        rooflab.save_kernels(tmp_path / "k.csv", [readme_kernel()])
    with pytest.raises(InputError, match="meta"):
        rooflab.save_kernels(tmp_path / "k.json", [readme_kernel(meta={"x": math.nan})])
    assert not (tmp_path / "k.json").exists()


def test_load_roof_takes_a_pathlib_path(tmp_path, t4):
    from rooflab.hardware.profile import MachineProfile, save_profile
    from rooflab.hardware.resolve import load_roof

    save_profile(tmp_path / "me.json", MachineProfile(host={"name": "t4"}, nominal=t4))
    assert load_roof(tmp_path / "me.json") == t4
    with pytest.raises(InputError, match="catalog name or a profile file"):
        load_roof(320e9)


# --- roofs built by hand ----------------------------------------------------------------

def test_hand_built_roof_names_match_kernels():
    roof = Roof("box", compute=(Ceiling(2e12, "float64"),), memory=(Ceiling(1e11, level="dram"),))
    a = rooflab.analyze(roof, [Kernel("k", flop={"fp64": 1e9}, bytes={"DRAM": 1e9}, seconds=1.0)])
    (p,) = a.points
    # 1 GFLOP/s achieved of min(2 TFLOP/s, 100 GB/s x AI 1) = 100 GFLOP/s: 1 %
    assert p.attainable_flop_per_s == 1e11 and p.percent_of_roof == pytest.approx(1.0)
    assert a.notes == ()


def test_misplaced_ceilings_are_refused():
    # Ceiling(1e11, "DRAM"): the second positional argument is the precision
    with pytest.raises(InputError, match=r"level='DRAM'"):
        Roof("box", compute=(Ceiling(2e12, "fp64"),), memory=(Ceiling(1e11, "DRAM"),))
    with pytest.raises(InputError, match="put it in memory"):
        Roof("box", compute=(Ceiling(1e11, level="DRAM"),))
    with pytest.raises(InputError, match="plain number"):
        Ceiling("2e12", "fp64")


# --- measure pitfalls --------------------------------------------------------------------

def test_measure_refuses_async_and_lazy_results():
    async def step():
        return 1

    with pytest.raises(InputError, match="coroutine"):
        rooflab.measure(step, flop=1, bytes=1, plan=TINY)
    with pytest.raises(InputError, match=r"list\(f\(\.\.\.\)\)"):
        rooflab.measure(lambda: map(abs, range(10)), flop=1, bytes=1, plan=TINY)


def test_measure_waits_for_asynchronously_dispatched_results():
    calls = {"fn": 0, "wait": 0}

    class Lazy:                      # what jax.numpy returns: work still in flight
        def block_until_ready(self):
            calls["wait"] += 1
            return self

    def fn():
        calls["fn"] += 1
        return Lazy()

    k = rooflab.measure(fn, flop=1, bytes=1, plan=TINY)
    assert calls["fn"] > 1 and calls["wait"] == calls["fn"] - 1   # every timed call waited
    assert k.seconds > 0


def test_measure_raises_a_warning_for_noisy_samples(monkeypatch):
    import rooflab.measuring as measuring
    from rooflab.probe.timer import Timing

    samples = (1e-3, 1e-3, 2e-3, 3e-3, 1e-3)   # IQR 100 % of the 1 ms median
    monkeypatch.setattr(measuring, "_bench", lambda call, plan, clock, sync, inner: Timing(
        samples=samples, inner=1, stats=summarize(samples)))
    with pytest.warns(measuring.TimingWarning, match="timing samples vary"):
        k = rooflab.measure(lambda: None, flop=1, bytes=1)
    assert k.seconds == 1e-3 and k.samples == samples and "warning" in k.meta


def test_a_single_run_under_100us_says_to_benchmark():
    import rooflab.measuring as measuring

    # an empty block reads 0.4-1.4 µs: all clock and Python overhead, no work
    with pytest.warns(measuring.TimingWarning, match="single timed run under 100 us"):
        with rooflab.measure(name="blk", flop=1, bytes=1) as m:
            pass
    assert "blk: one run of" in m.kernel.meta["warning"]
    assert "rooflab.measure(fn" in m.kernel.meta["warning"]


def test_measure_docstring_says_units_and_what_it_returns():
    doc = rooflab.measure.__doc__
    for words in ("median seconds per call", "a number counts as fp32", "counts as DRAM",
                  "TimingWarning"):
        assert words in doc


# --- LLM from Python ---------------------------------------------------------------------

def test_llm_request_takes_one_batch_and_refuses_a_name(t4):
    from rooflab.workloads.llm import Request, analyze_llm, load_config

    assert Request(batches=4).batches == (4,)
    with pytest.raises(InputError, match=r"load_roof\('T4'\)"):
        analyze_llm(load_config("tinyllama-1.1b"), "T4")


# --- notebook display ---------------------------------------------------------------------

def pretty(obj) -> str:
    """What IPython's display shows: the object's _repr_pretty_ text (IPython's own
    printer takes the same `text` calls; IPython is not a dependency of rooflab)."""
    class Printer:
        def __init__(self):
            self.parts = []

        def text(self, s):
            self.parts.append(s)

    printer = Printer()
    obj._repr_pretty_(printer, False)
    return "".join(printer.parts)


def test_notebook_display_is_short_and_shows_the_numbers(t4):
    roof_text = pretty(t4)
    assert "fp16 tensor    65 TFLOP/s" in roof_text and "DRAM           320 GB/s" in roof_text
    assert "https" not in roof_text
    text = pretty(rooflab.analyze(t4, [readme_kernel(), Kernel("x", flop={"fp32": 1.0})]))
    assert "AI 1  147 GFLOP/s of 320 GFLOP/s  46 % of roof  memory-bound (DRAM)" in text
    assert "x: no bytes" in text and len(text) < 750   # the notes grew: the ridge band (s18)
    assert len(repr(rooflab.analyze(t4, [readme_kernel()]))) > 2000   # what it replaced


def test_readme_python_block_numbers(t4):
    readme = Path(__file__).resolve().parents[1] / "README.md"
    text = readme.read_text(encoding="utf-8")
    assert "1.0, 1.47e11, 45.8, 'memory'" in text
    (p,) = rooflab.analyze(t4, [readme_kernel()]).points
    assert (p.ai, f"{p.achieved_flop_per_s:.3g}", round(p.percent_of_roof, 1), p.bound) == (
        1.0, "1.47e+11", 45.8, "memory")
