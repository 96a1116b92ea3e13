"""Review 19b: the re-check of review 18b's Python-API findings (N1-N9).

Each test failed on the code before the fix. Numbers are hand calculations: T4's
datasheet DRAM 320 GB/s, fp32 8.1 TFLOP/s; tinyllama-1.1b's decode at batch 1 reads
its 2.07 GB of weights (+ KV) in 6.512 ms, so 1 / 6.512 ms = 153.6 tokens/s.
"""

from __future__ import annotations

import warnings

import pytest
from notebook_display import pretty

import rooflab
from rooflab import Kernel
from rooflab.model.display import analysis_text, kernel_text


@pytest.fixture(scope="module")
def t4():
    return rooflab.load_roof("T4")


# --- N1: an LLM estimate shows a few lines in a notebook, not ~146 kB --------------------

def test_an_llm_estimate_displays_tpot_ttft_through_ipython(t4):
    from rooflab.workloads.llm import LLMResult, Request, Settings, analyze_llm, load_config

    r = analyze_llm(load_config("tinyllama-1.1b"), t4, Settings(),
                    Request(batches=(1, 4), context=500))
    text = pretty(r)     # what IPython and Jupyter show (the dataclass repr was 146 011 chars)
    assert text.splitlines()[:3] == [
        "LLMResult: tinyllama-1.1b on 'NVIDIA T4' (nominal)",
        "  decode  TPOT 6.51 ms at batch 1, 153.6 tokens/s (floor); 97 % of it memory-bound",
        "  prefill TTFT 19.1 ms"]
    assert len(text) < 2000
    # a docstring, not the generated signature
    assert LLMResult.__doc__ and "analyze_llm" in LLMResult.__doc__


# --- N3: a typo in a kernel file warns once per fact, every kernel named, at the user's line

TYPO = ('{"kernels": [{"name": "a", "flop": {"fp61": 1e9}, "bytes": {"L4": 1e8}, '
        '"seconds": 0.01}, {"name": "b", "flop": {"fp61": 1e9}, "bytes": 1e8, "seconds": 0.01}]}')


def test_a_kernel_file_typo_warns_once_per_fact_at_the_users_line(tmp_path):
    path = tmp_path / "typo.json"
    path.write_text(TYPO)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        rooflab.load_kernels(path)   # this line is where each warning points
    texts = [str(w.message) for w in seen]
    # the reader's per-file wording only (the Kernel's "kernel 'a': flop precision ..." was
    # said too, for 'a' alone); 'b' is named beside 'a'
    assert len(texts) == 2, texts
    assert texts[0].startswith(f"{path}: kernels[0] 'a': precision 'fp61': not a precision")
    assert "(also kernels[1] 'b': precision 'fp61')" in texts[0]
    assert texts[1].startswith(f"{path}: kernels[0] 'a': bytes level 'L4': not a memory level")
    assert {w.filename for w in seen} == {__file__}   # was src/rooflab/model/schema.py


def test_every_hand_made_kernel_with_a_typo_is_named(tmp_path):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        Kernel("first", flop={"fp62": 1e9}, bytes=1e9)
        Kernel("second", flop={"fp62": 1e9}, bytes=1e9)   # the name was cached: no warning
    assert [str(w.message)[:32] for w in seen] == ["kernel 'first': flop precision '",
                                                   "kernel 'second': flop precision "]
    assert {w.filename for w in seen} == {__file__}


# --- N2: the documented plot_roofline(roof, k) type-checks (rooflab ships py.typed) -------

def test_plot_roofline_is_annotated_for_one_roof_and_one_kernel():
    import types
    import typing
    from collections.abc import Sequence

    from rooflab.model.ceiling import Roof
    from rooflab.report.chart import plot_roofline

    hints = typing.get_type_hints(plot_roofline)
    # was Sequence[Roof] / Sequence[Kernel]: mypy and Pylance flagged README's call; now a
    # union with the bare Roof / Kernel in it, beside the sequence
    for param, one in (("roofs", Roof), ("kernels", Kernel)):
        assert isinstance(hints[param], types.UnionType)
        assert one in typing.get_args(hints[param])
        assert Sequence[one] in typing.get_args(hints[param])


# --- N9: the torch install line can be pasted into a shell --------------------------------

def test_the_torch_install_command_ends_its_line():
    import shlex

    from rooflab.errors import MissingDependency

    text = str(MissingDependency("torch", "torch", "counting FLOP and bytes"))
    first, reason = text.split("\n")
    command = first.partition("install it with: ")[2]
    assert command == ("pip install torch==2.13.0 --index-url "
                       "https://download.pytorch.org/whl/cpu && pip install 'rooflab[torch]'")
    # what a shell sees when the line is pasted from "pip" on: two commands, nothing after
    assert shlex.split(command)[-3:] == ["pip", "install", "rooflab[torch]"]
    assert reason.startswith("(the CPU build of PyTorch first") and reason.endswith(")")
    # the other extras: one line, as before
    assert "\n" not in str(MissingDependency("numba", "cpu"))


# --- N4: an IQR of 100 % or more is written as a whole number, not 1e+02 ------------------

@pytest.mark.parametrize("iqr,shown", [(0.031, "IQR 3.1 %"), (0.92, "IQR 92 %"),
                                       (1.05, "IQR 105 %"), (2.41, "IQR 241 %")])
def test_a_noisy_kernel_shows_its_iqr_plainly(iqr, shown):
    k = Kernel("m", flop=1e6, bytes=1e6, seconds=1e-3, samples=(1e-3, 2e-3),
               meta={"samples_n": 12, "calls_per_sample": 10, "iqr_rel": iqr, "best_s": 9e-4})
    assert kernel_text(k).splitlines()[0] == (
        f"Kernel 'm': 1 ms per call: median of 12 samples x 10 calls, {shown}, "
        f"best 900 us (measured)")


# --- N8: an untimed Analysis shows each point's floor time and cuts the cheapest ---------

def test_an_untimed_analysis_shows_floor_times_longest_first(t4):
    # k_i moves (i + 1) x 3.2 MB: floor (i + 1) x 3.2e6 B / 320e9 B/s = (i + 1) x 10 us
    ks = [Kernel(f"k{i}", flop={"fp32": 1e6}, bytes=(i + 1) * 3.2e6) for i in range(25)]
    lines = analysis_text(rooflab.analyze(t4, ks)).splitlines()
    # k24: 8e7 B / 320 GB/s = 250 us; AI 1e6 / 8e7 = 0.0125; 320e9 x 0.0125 = 4 GFLOP/s
    # (was "k0  DRAM  -  AI 0.312  - of 100 GFLOP/s  -  memory-bound", file order)
    assert lines[1] == ("  k24  DRAM  floor 250 us  AI 0.0125  attainable 4 GFLOP/s  "
                        "memory-bound (DRAM)")
    assert [line.split()[0] for line in lines[1:21]] == [f"k{i}" for i in range(24, 4, -1)]
    assert lines[21] == "  ... 5 more point(s) (a.points)"


def test_an_llm_step_shows_the_projection_floor(t4):
    from rooflab.workloads.llm import Request, Settings, analyze_llm, load_config

    r = analyze_llm(load_config("tinyllama-1.1b"), t4, Settings(), Request())
    text = analysis_text(r.decode.analysis)
    # q_proj: 2048 x 2048 fp16 weights x 22 layers x 2 B / 320 GB/s = 577 us
    assert "  q_proj  DRAM  floor 577 us  AI 0.999  attainable 320 GFLOP/s" in text
    assert " - of " not in text


# --- N6: docs/python.md shows what the notebook prints -----------------------------------

def _doc_block(first_line: str) -> str:
    """The output block of docs/python.md that starts with first_line."""
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "docs" / "python.md").read_text()
    start = text.index(f"```\n{first_line}") + 4
    return text[start:text.index("```", start)].rstrip("\n")


def test_python_md_analysis_outputs_are_current(t4):
    from rooflab.workloads import ops

    k = Kernel("decode b=1", flop={"fp16": 2.2e9}, bytes={"DRAM": 2.2e9}, seconds=0.015)
    one = analysis_text(rooflab.analyze(t4, [k]))
    assert _doc_block("Analysis on 'NVIDIA T4' (nominal): 1 kernel(s)") == one
    mm = ops.matmul(4096, 4096, 4096, dtype="fp16")
    att = ops.attention(batch=1, heads=32, q_len=1, kv_len=500, head_dim=64, kv_heads=4)
    two = analysis_text(rooflab.analyze(t4, [mm.kernel(seconds=2.6e-3),
                                             att.kernel(seconds=6e-6)]))
    assert _doc_block("Analysis on 'NVIDIA T4' (nominal): 2 kernel(s)") == two
    # the hand numbers beside them: 2.2e9 / 0.015 = 146.7 GFLOP/s = 45.8 % of 320 GFLOP/s
    assert "15 ms  AI 1  147 GFLOP/s of 320 GFLOP/s  46 % of roof" in one


# --- N5: the keyword-clash check reads a Module's forward and warns for **kwargs ---------

def test_a_module_whose_forward_takes_name_is_refused():
    torch = pytest.importorskip("torch")
    from rooflab.errors import InputError

    class Lin(torch.nn.Module):
        def forward(self, x, name=None):
            return x

    # was accepted silently: forward never got name="lin"
    with pytest.raises(InputError, match=r"'Lin' has a parameter 'name' too"):
        rooflab.measure(Lin(), torch.ones(4), name="lin", flop=1, bytes=1, plan="quick")


def test_a_kwargs_wrapper_is_warned_that_device_stays_with_measure():
    def step(*args, **kwargs):
        return kwargs.get("device")

    with pytest.warns(rooflab.errors.InputWarning,
                      match=r"'step' takes \*\*kwargs, but device='cpu' stays with measure") as rec:
        k = rooflab.measure(step, 1, device="cpu", flop=1, bytes=1, plan="quick")
    assert k.name.endswith("step") and k.flop == {"fp32": 1.0}
    # once, at the user's line, and not about flop=/bytes= (measure's counts)
    (said,) = [w for w in rec if w.category is rooflab.errors.InputWarning]
    assert said.filename == __file__ and "flop=1" not in str(said.message)


def test_the_clash_error_says_how_to_mean_only_measures_name():
    from rooflab.errors import InputError

    def g(x, name=None):
        return x

    with pytest.raises(InputError, match=r"if you meant only measure's name=, call the "
                                         r"function in a lambda: measure\(lambda: g\(\.\.\.\)"):
        rooflab.measure(g, 1, name="label", flop=1, bytes=1)


# --- N7: measure counts complex arithmetic in real FLOP, as the trace rules do ------------

def test_measure_counts_a_complex_multiply_as_six_real_flop():
    torch = pytest.importorskip("torch")
    from rooflab.ingest.torch_ops import RULES
    from rooflab.ingest.torch_ops_base import OpCall

    x = torch.ones(100, dtype=torch.complex64)
    y = torch.ones(4, 4, dtype=torch.complex64)
    counted = {label: dict(rooflab.measure(f, plan="quick").flop) for label, f in [
        ("mul", lambda: x * 2), ("add", lambda: x + x), ("sum", lambda: x.sum()),
        ("mm", lambda: y @ y)]}
    # (a+bi)(c+di): 4 multiplies + 2 adds = 6 per element (was 100 'fp32' FLOP for 100)
    assert counted["mul"] == {"fp32": 600.0}
    assert counted["add"] == {"fp32": 200.0}            # 2 real adds per complex add
    assert counted["sum"] == {"fp32": 198.0}            # 99 complex adds x 2 (the trace's)
    assert counted["mm"] == {"fp32": 512.0}             # 4^3 multiply-adds x 8 real FLOP
    # the trace rules give the same numbers for the same calls
    cf = "c10::complex<float>"
    assert RULES["aten::mul"](OpCall("aten::mul", ((100,), (100,)), (cf, cf))).flop == 600.0
    assert RULES["aten::sum"](OpCall("aten::sum", ((100,), None), (cf, "ScalarType"),
                                     ("", ""))).flop == 198.0


def test_a_complex_op_without_a_formula_is_uncounted_not_one_flop_each():
    torch = pytest.importorskip("torch")
    from rooflab.measuring import CountWarning

    x = torch.ones(100, dtype=torch.complex64)
    with pytest.warns(CountWarning, match=r"no FLOP formula \(aten\.exp\)"):
        k = rooflab.measure(lambda: torch.exp(x), plan="quick")
    assert dict(k.flop) == {} and k.meta["uncounted_ops"] == ["aten.exp"]


# --- G: docs/python.md §9 runs report/whatif/compare/choose from Python ------------------

def test_python_md_section_9_runs_and_gives_its_numbers(t4):
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "docs" / "python.md").read_text()
    section = text[text.index("## 9. "):]
    code = section[section.index("```python\n") + 10:]
    code = code[:code.index("```")]
    k = Kernel("decode b=1", flop={"fp16": 2.2e9}, bytes={"DRAM": 2.2e9}, seconds=0.015)
    ns = {"rooflab": rooflab, "t4": t4, "k": k, "a": rooflab.analyze(t4, [k])}
    exec(compile(code, "python.md §9", "exec"), ns)
    d, w, c = ns["d"], ns["w"], ns["c"]
    # headroom 15 ms / 6.875 ms; gain 15 - 6.875 ms
    assert (d.kernel, d.bound) == ("decode b=1", "memory")
    assert d.headroom == pytest.approx(0.015 / 0.006875) and d.gain_s == pytest.approx(0.008125)
    assert ns["text"].startswith("# Roofline report: NVIDIA T4")
    assert w.total_before_s == 0.015 and w.total_after_s == pytest.approx(2.36e-3, rel=0.01)
    assert [(m.name, m.speedup) for m in c.matches] == [("decode b=1", 1.5)]
    # the A100's floor: 2.2e9 B / 2.039e12 B/s = 1.079 ms, before the T4's 6.875 ms
    ranked = ns["rank"]([k], [("T4", t4, 70.0), ("A100", ns["a100"], 400.0)])
    assert [(ch.name, round(ch.seconds, 6)) for ch in ranked] == [("A100", 0.001079),
                                                                   ("T4", 0.006875)]
