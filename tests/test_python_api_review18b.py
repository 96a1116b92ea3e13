"""Review 18b: rooflab from a notebook and a fresh install (the Python-API findings).

Each test failed on the code before the fix. Numbers are hand calculations: the README's
kernel (2.2 GFLOP fp16, 2.2 GB DRAM, 15 ms) runs at 2.2e9 / 0.015 = 146.7 GFLOP/s at AI
2.2e9 / 2.2e9 = 1 FLOP/B; T4: fp16 tensor 65 TFLOP/s, DRAM 320 GB/s (datasheet), so its
ridge is 65e12 / 320e9 = 203.125 FLOP/B.
"""

from __future__ import annotations

import ast
import copy
import dataclasses
import functools
import pickle
import sys
import warnings
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest
from notebook_display import pretty

try:
    import tomllib
except ImportError:  # Python 3.10: the tomli backport rooflab depends on there (s22 r5 F6)
    import tomli as tomllib

import rooflab
from rooflab import Kernel
from rooflab.errors import InputError, InputWarning, MissingDependency, ParseError
from rooflab.model.display import analysis_text, grouped_notes, kernel_text, llm_result_text
from rooflab.probe.timer import TimingPlan

ROOT = Path(__file__).resolve().parents[1]
TINY = TimingPlan(warmup_s=0.0, sample_s=0.001, budget_s=0.005, min_samples=3, max_samples=5)


@pytest.fixture(scope="module")
def t4():
    return rooflab.load_roof("T4")


def readme_kernel() -> Kernel:
    return Kernel("decode b=1", flop={"fp16": 2.2e9}, bytes={"DRAM": 2.2e9}, seconds=0.015)


def measured_kernel() -> Kernel:
    # what measure() makes: median 4.13 us of 12 samples of 100 calls each
    return Kernel("mm", flop={"fp32": 268435456}, bytes={"DRAM": 3145728}, seconds=4.13e-6,
                  provenance={"flop": "counted", "bytes": "counted"},
                  samples=(4.01e-6, 4.13e-6, 4.2e-6),
                  meta={"seconds_stat": "median", "samples_n": 12, "calls_per_sample": 100,
                        "iqr_rel": 0.031, "best_s": 4.01e-6, "device": "cpu", "threads": 2})


# --- A: the torch extra's install line is the CPU build first ----------------------------

def test_missing_torch_says_the_cpu_build_first_then_the_extra():
    text = str(MissingDependency("torch", "torch", "counting FLOP and bytes"))
    # the line a user copies: CPU torch pinned from the CPU index, then the extra
    assert ("install it with: pip install torch==2.13.0 --index-url "
            "https://download.pytorch.org/whl/cpu && pip install 'rooflab[torch]'") in text
    # the GPU machine's way is said without naming [gpu] (triton and nvidia-ml-py too)
    assert "on a GPU machine install the CUDA build" in text and "rooflab[gpu]" not in text
    # the gpu extra is meant to pull the CUDA build: unchanged
    assert str(MissingDependency("torch", "gpu")).endswith("install it with: pip install "
                                                           "'rooflab[gpu]'")
    assert str(MissingDependency("numba", "cpu")).endswith("pip install 'rooflab[cpu]'")


def test_measure_without_torch_and_the_cpu_probe_note_use_the_same_line(monkeypatch):
    from rooflab.errors import install_command
    from rooflab.probe.cpu.flops import torch_matmul_peak

    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(MissingDependency) as info:
        rooflab.measure(lambda: None, plan="quick")
    assert install_command("torch") in str(info.value)
    assert "--index-url https://download.pytorch.org/whl/cpu" in str(info.value)
    reason = torch_matmul_peak("bf16", 64, 1, TINY)
    # the command ends the line, so it pastes into a shell as is (s19 r3 F2)
    assert reason == f"PyTorch is not installed; install it with: {install_command('torch')}"


# --- B: Kernel, Analysis, LLMResult pickle, deep-copy, asdict ----------------------------

def test_kernel_pickles_deep_copies_and_asdicts():
    k = measured_kernel()
    back = pickle.loads(pickle.dumps(k))
    assert back == k and back.flop == {"fp32": 268435456.0} and back.meta["threads"] == 2
    assert copy.deepcopy(k) == k and copy.copy(k) == k
    d = dataclasses.asdict(k)
    assert d["flop"] == {"fp32": 268435456.0} and d["bytes"] == {"DRAM": 3145728.0}
    assert d["provenance"] == {"flop": "counted", "bytes": "counted", "seconds": "measured"}
    assert d["samples"] == (4.01e-6, 4.13e-6, 4.2e-6) and d["meta"]["samples_n"] == 12
    # still read-only, also after the round trip
    for mapping in (k.flop, back.bytes, back.meta, copy.deepcopy(k).provenance):
        with pytest.raises(TypeError, match="read-only"):
            mapping["x"] = 1.0
        with pytest.raises(TypeError):
            mapping.update(x=1.0)
    # a changed copy is still made with with_()
    assert k.with_(flop={"fp16": 1.0}).flop == {"fp16": 1.0} and k.flop["fp32"] == 268435456


def test_analysis_pickles_and_deep_copies(t4):
    a = rooflab.analyze(t4, [readme_kernel()])
    for other in (pickle.loads(pickle.dumps(a)), copy.deepcopy(a)):
        assert other == a
        (p,) = other.points
        assert p.percent_of_roof == pytest.approx(146.6667e9 / 320e9 * 100, rel=1e-4)  # 45.8


def _make_kernel(i: int) -> Kernel:   # top level: sent to a worker process by name
    return Kernel(f"k{i}", flop={"fp16": 1e9 * (i + 1)}, bytes=1e8, seconds=1e-3)


def test_kernels_come_back_from_a_process_pool():
    with ProcessPoolExecutor(1) as ex:
        ks = list(ex.map(_make_kernel, range(2)))
    assert ks == [_make_kernel(0), _make_kernel(1)] and ks[1].flop == {"fp16": 2e9}


def test_an_llm_estimate_pickles(t4):
    from rooflab.workloads.llm import Request, Settings, analyze_llm, load_config

    r = analyze_llm(load_config("tinyllama-1.1b"), t4, Settings(), Request())
    back = pickle.loads(pickle.dumps(r))
    assert back.tpot_s == r.tpot_s == pytest.approx(6.512e-3, rel=1e-3)   # docs/python.md §7


def test_kernels_make_dataframe_rows():
    # pandas.DataFrame(list_of_dataclasses) builds its rows with dataclasses.asdict, which
    # deep-copies every field: the read-only mappings made it raise (review 18b B). Checked
    # through asdict itself so the test runs without pandas (not a dependency).
    from dataclasses import asdict

    rows = [asdict(k) for k in (readme_kernel(), measured_kernel())]
    assert [r["name"] for r in rows] == ["decode b=1", "mm"]
    assert [r["seconds"] for r in rows] == [0.015, 4.13e-6]
    assert rows[1]["flop"] == {"fp32": 268435456}


# --- C: short notebook displays ---------------------------------------------------------



def test_kernel_displays_its_time_counts_and_provenance_in_a_few_lines():
    text = pretty(measured_kernel())
    assert text == kernel_text(measured_kernel())
    assert text.splitlines() == [
        "Kernel 'mm': 4.13 us per call: median of 12 samples x 100 calls, IQR 3.1 %, "
        "best 4.01 us (measured)",
        "  FLOP  268 MFLOP fp32 (counted)",
        "  bytes 3.15 MB DRAM (counted)",
        # 268435456 / 3145728 = 85.3 FLOP/B; 268435456 / 4.13e-6 = 65.0 TFLOP/s
        "  AI 85.3 FLOP/B (DRAM), 65 TFLOP/s, device cpu, threads 2",
        "  (more in .samples and .meta)"]
    # a Kernel given by hand: its time and counts, no sample statistics
    assert pretty(readme_kernel()).splitlines() == [
        "Kernel 'decode b=1': 15 ms per call (measured)",
        "  FLOP  2.2 GFLOP fp16 (given)",
        "  bytes 2.2 GB DRAM (given)",
        "  AI 1 FLOP/B (DRAM), 147 GFLOP/s"]
    assert pretty(Kernel("c", flop=1e9)).splitlines()[0] == "Kernel 'c': not timed"


def test_decorator_and_block_show_what_was_timed():
    @rooflab.measure(name="step", flop=1, bytes=1)
    def step(x):
        return x

    assert repr(step) == "<rooflab.measure'd function 'step': no calls timed yet>"
    step(1)
    step(2)
    assert repr(step).startswith("<rooflab.measure'd function 'step': 2 calls timed, ")
    with rooflab.measure(name="blk", flop=1, bytes=1) as m:
        pass
    assert repr(m).startswith("<rooflab measurement 'blk': ") and "(.kernel)" in repr(m)
    assert "object at 0x" not in repr(m) + repr(step)


def test_many_kernels_show_the_longest_twenty_and_each_note_once():
    # review 18b I: 500 kernels with L2 bytes on a roof without L2: 1 001 lines before
    ks = [Kernel(f"k{i}", flop=1e9 * (i + 1), bytes={"DRAM": 1e8, "L2": 1e9},
                 seconds=1e-3 * (1 + (i == 7))) for i in range(500)]
    a = rooflab.analyze(rooflab.load_roof("A100"), ks)
    lines = analysis_text(a).splitlines()
    # the head, 20 points, "... N more", then the notes (roof-level ones besides)
    assert len(lines) < 30
    assert lines[0] == "Analysis on 'NVIDIA A100 80GB SXM' (nominal): 500 kernel(s), 500 point(s)"
    assert lines[1].startswith("  k7  DRAM  2 ms  AI 80  ")   # the longest first: 8e9 / 1e8
    assert lines[21] == "  ... 480 more point(s) (a.points)"
    l2 = [line for line in lines if "no L2 ceiling" in line]
    assert l2 == [lines[22]] and lines[22].startswith(
        "  note: 500 kernels (k0, k1, k2, ...): roof 'NVIDIA A100 80GB SXM' has no L2 ceiling")
    assert grouped_notes(["a: x", "b: x", "roof note", "c: y"], ["a", "b", "c"]) == [
        "2 kernels (a, b): x", "roof note", "c: y"]


def test_an_llm_estimate_shows_tpot_ttft_and_tokens_per_s(t4):
    from rooflab.workloads.llm import Request, Settings, analyze_llm, load_config

    r = analyze_llm(load_config("tinyllama-1.1b"), t4, Settings(), Request(batches=(1, 4),
                                                                           context=500))
    text = llm_result_text(r)
    # docs/python.md §7: TPOT 6.512 ms, TTFT 19.1 ms, 153.6 tokens/s (1 / 6.512 ms)
    assert text.splitlines()[:3] == [
        "LLMResult: tinyllama-1.1b on 'NVIDIA T4' (nominal)",
        "  decode  TPOT 6.51 ms at batch 1, 153.6 tokens/s (floor); 97 % of it memory-bound",
        "  prefill TTFT 19.1 ms"]
    assert len(text) < 2000   # the dataclass repr was ~150 kB


# --- E: measure's own keywords never swallow the function's -----------------------------

SEEN: list = []


def f(x, device):   # module level: its name is 'f' (a local one's is '<locals>.f')
    SEEN.append(device)
    return x


def g(x, name=None):
    return x


def test_a_keyword_fn_also_takes_is_an_error_naming_the_fix():
    with pytest.raises(InputError, match=r"'f' has a parameter 'device' too.*"
                                         r"functools.partial\(f, device=...\)"):
        rooflab.measure(f, 1, device="cpu", flop=1, bytes=1, plan=TINY)
    with pytest.raises(InputError, match="'g' has a parameter 'name' too"):
        rooflab.measure(g, 1, name="abc", flop=1, bytes=1, plan=TINY)


def test_the_partial_form_and_documented_calls_still_work():
    SEEN.clear()
    k = rooflab.measure(functools.partial(f, device="meta"), 1, device="cpu", flop=1,
                        bytes=1, plan=TINY)
    assert set(SEEN) == {"meta"} and k.name == "f" and k.meta["device"] == "cpu"
    # a function without such a parameter takes them as before (python.md §4)
    k = rooflab.measure(lambda: None, name="noop", flop=2e3, bytes=8e3, plan=TINY)
    assert k.name == "noop" and k.flop == {"fp32": 2e3}


# --- F: typed for checkers and IDEs -------------------------------------------------------

def test_py_typed_is_packaged():
    assert (ROOT / "src/rooflab/py.typed").is_file()
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "py.typed" in data["tool"]["setuptools"]["package-data"]["rooflab"]


def test_every_lazy_name_is_imported_for_type_checkers():
    tree = ast.parse((ROOT / "src/rooflab/__init__.py").read_text())
    block = next(n for n in tree.body if isinstance(n, ast.If)
                 and getattr(n.test, "id", None) == "TYPE_CHECKING")
    names = {a.asname or a.name for n in block.body for a in n.names}
    assert names == set(rooflab._LAZY) | set(rooflab._SUBPACKAGES)
    for name in rooflab._LAZY:   # and each is the runtime object of that module
        module = next(n.module for n in block.body if name in {a.name for a in n.names})
        assert f"rooflab.{module}" == rooflab._LAZY[name]


# --- J: one vocabulary check for Kernel and measure --------------------------------------

def test_kernel_warns_on_a_precision_or_level_measure_refuses():
    from rooflab.model.kernel import unknown_name

    with pytest.warns(InputWarning, match=r"kernel 'x': flop precision 'fp61' is not one "
                                          r"rooflab knows"):
        Kernel("x", flop={"fp61": 1e9}, bytes=1e9, seconds=1e-2)
    with pytest.warns(InputWarning, match="kernel 'y': bytes level 'L4' is not a memory level"):
        Kernel("y", flop=1, bytes={"L4": 1}, seconds=1)
    with pytest.raises(InputError) as info:
        rooflab.measure(lambda: None, flop=1, bytes={"L4": 1})
    assert str(info.value) == f"measure(): {unknown_name('L4', 'bytes')}"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Kernel("ok", flop={"float16": 1, "int8": 1}, bytes={"hbm3e": 1, "l2": 1})


# --- L: smaller items ------------------------------------------------------------------

@pytest.mark.parametrize("load", ["load_roof", "load_kernels", "load_profile"])
def test_a_missing_file_is_a_file_not_found_error(tmp_path, load):
    path = tmp_path / "nope.json"
    with pytest.raises(FileNotFoundError) as info:
        getattr(rooflab, load)(str(path))
    assert isinstance(info.value, ParseError) and isinstance(info.value, rooflab.RooflabError)
    assert str(info.value) == f"{path}: file not found" and info.value.filename == str(path)
    # another ParseError stays only a ParseError
    assert not isinstance(ParseError("bad line", path="k.csv", line=3), OSError)


def test_ridge_and_attainable_refuse_impossible_numbers(t4):
    assert rooflab.ridge(65e12, 320e9) == 203.125
    assert rooflab.attainable(t4, 100) == 3.2e13   # 320e9 x 100 < 65e12
    with pytest.raises(InputError, match=r"ridge\(\): bytes_per_s must be > 0"):
        rooflab.ridge(1e12, 0)
    with pytest.raises(InputError, match=r"attainable\(\): the arithmetic intensity must be "
                                         r">= 0 FLOP/byte.*got -1.0"):
        rooflab.attainable(-1, 1e12, 1e11)
    with pytest.raises(InputError, match="peak_flop_per_s must be > 0"):
        rooflab.attainable(1.0, -1e12, 1e11)


def test_roof_display_aligns_long_labels_and_says_a_derived_row():
    from rooflab import Ceiling, Roof

    roof = Roof("box", kind="measured",
                compute=(Ceiling(118e9, "fp64", "vector", provenance="measured"),),
                memory=(Ceiling(37.5e9, level="DRAM", provenance="measured"),
                        Ceiling(43.7e9, level="DRAM (real traffic)", provenance="derived")))
    assert pretty(roof).splitlines()[1:] == [
        "  fp64 vector         118 GFLOP/s  (measured)",
        "  DRAM                37.5 GB/s    (measured)",
        "  DRAM (real traffic) 43.7 GB/s    (derived)"]
    # one provenance throughout (a catalog roof): two columns, as before
    assert "  fp16 tensor    65 TFLOP/s" in pretty(rooflab.load_roof("T4")).splitlines()
