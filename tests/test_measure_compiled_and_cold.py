"""rooflab.measure must not change or swamp what it times (review 17b N1, N4, N6, N2, N3).

N1/N4: counting a torch.compile'd callable under rooflab's dispatch mode made Dynamo skip
its frame for good; the eager original is counted instead. The compiled functions here use
a backend that counts calls of the compiled graph (no Inductor build; Dynamo's skip is
decided before any backend runs). Each test compiles a function of its own: a skip sticks
to the code object. N6: the counter's first use (importing torch._dynamo, seconds) is paid
before the clock; a run timed under the counter says so; a decorated function times later
calls with the same shapes uncounted. N2/N3: one table of backward counts for the counter
and the trace; convolution_backward's grad_bias sum counts 0 FLOP in both.
"""

from __future__ import annotations

import subprocess
import sys
import warnings

import pytest

import rooflab
from rooflab.measure_counts import COMPILED_BYTES, CountWarning, eager_original
from rooflab.measuring import TimingWarning
from rooflab.model.sanity_timing import counting_finding
from rooflab.probe.timer import TimingPlan

torch = pytest.importorskip("torch")
from rooflab.bench import torch_count  # noqa: E402  (needs torch)
from rooflab.ingest import torch_ops_backward  # noqa: E402
from rooflab.workloads.torch_rules import flop as torch_flop_rules  # noqa: E402

TINY = TimingPlan(warmup_s=0.0, sample_s=0.001, budget_s=0.005, min_samples=3, max_samples=5)


def _counting_backend():
    """A torch.compile backend that runs the captured graph eagerly and counts its calls."""
    calls = {"n": 0}

    def backend(gm, inputs):
        def run(*args):
            calls["n"] += 1
            return gm.forward(*args)
        return run

    return backend, calls


# --- N1: measure(compiled f, x) keeps f compiled ----------------------------------------------

def test_measure_of_a_compiled_function_times_the_compiled_graph_and_leaves_it_compiled():
    def sm(x):
        m = x.amax(-1, keepdim=True)
        e = (x - m).exp()
        return e / e.sum(-1, keepdim=True)

    backend, calls = _counting_backend()
    f = torch.compile(sm, backend=backend)
    x = torch.randn(64, 256)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        k = rooflab.measure(f, x, plan=TINY)
    timed = k.meta["samples_n"] * k.meta["calls_per_sample"]
    # every call but the counting pass ran the compiled graph: the settle call, warm-up and
    # calibration calls, and the timed ones (before: 0, Dynamo had skipped the frame)
    assert calls["n"] == k.meta["warmup_calls"] - 1 + timed
    assert timed >= 3
    calls["n"] = 0
    f(x)
    assert calls["n"] == 1                      # still compiled after measure (before: 0)
    # counted by its eager ops (x 65,536 B, row statistics 256 B: 8 x 65,536 + 4 x 256)
    assert k.bytes == {"DRAM": 525_312.0} and k.provenance["bytes"] == COMPILED_BYTES


def test_the_eager_original_of_compiled_functions_modules_and_methods():
    def g(x):
        return x + 1

    lin = torch.nn.Linear(4, 4)
    assert eager_original(torch.compile(g, backend="eager")) is g
    assert eager_original(torch.compile(torch.compile(g, backend="eager"),
                                        backend="eager")) is g
    assert eager_original(torch.compile(lin, backend="eager")) is lin   # hooks kept
    assert eager_original(g) is g and eager_original(torch.mm) is torch.mm

    class Model:
        @torch.compile(backend="eager")
        def step(self, x):
            return x * 2

    m = Model()
    orig = eager_original(m.step)
    assert orig.__self__ is m and not hasattr(orig.__func__, "_torchdynamo_orig_callable")
    assert torch.equal(orig(torch.ones(2)), torch.full((2,), 2.0))


# --- N4: the decorated form -------------------------------------------------------------------

def test_a_decorated_compiled_function_runs_the_compiled_graph_after_its_counted_call():
    def sm2(x):
        return (x - x.amax(-1, keepdim=True)).exp()

    backend, calls = _counting_backend()
    step = rooflab.measure(name="sm2")(torch.compile(sm2, backend=backend))
    x = torch.randn(64, 256)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        step(x)                               # counted: the eager original
        step(x)                               # same shapes: the compiled graph, uncounted
        step(x)
    assert calls["n"] == 2                    # before: 0 (the counted call de-compiled it)
    said = [str(w.message) for w in seen if issubclass(w.category, CountWarning)]
    assert len(said) == 1 and "a counted single run of compiled code runs eagerly" in said[0]
    assert "pass flop= and bytes=" in said[0]
    first, second, _ = step.runs
    assert first.meta["timing_includes_counting"] is True
    assert second.meta["timing_includes_counting"] is False and "counts_reused" in second.meta
    assert second.flop == first.flop and second.bytes == first.bytes
    k = step.kernel      # the counted (eager + counting) run left out: compiled runs only
    assert k.calls == 2 and k.meta["counted_runs_left_out"] == 1
    assert k.seconds == pytest.approx(sum(r.seconds for r in step.runs[1:]))
    assert k.meta["timing_includes_counting"] is False and counting_finding(k) is None


def test_a_decorated_function_counts_each_new_shape_and_reuses_the_counts_of_a_known_one():
    @rooflab.measure(name="double")
    def double(x):
        return x + x

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TimingWarning)
        double(torch.randn(100))
        double(torch.randn(300))
        double(torch.randn(100))
    a, b, c = double.runs
    assert (a.flop, b.flop, c.flop) == ({"fp32": 100.0}, {"fp32": 300.0}, {"fp32": 100.0})
    assert [r.meta["timing_includes_counting"] for r in double.runs] == [True, True, False]
    k = double.kernel   # the 100-element counted run left out, the 300-element one kept
    assert k.calls == 2 and dict(k.flop) == {"fp32": 400.0}
    assert k.meta["timing_includes_counting"] is True


def test_a_decorated_call_reuses_counts_for_the_same_module_but_not_for_other_objects():
    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(8, 8)

        @rooflab.measure(name="fwd")
        def forward(self, x):
            return self.lin(x)

    class Holder:        # its state could change the work unseen: counted every call
        @rooflab.measure(name="held")
        def run(self, x):
            return x * 2

    m, h, x = Model(), Holder(), torch.randn(4, 8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TimingWarning)
        for _ in range(3):
            m(x)
            h.run(x)
    assert [r.meta["timing_includes_counting"] for r in Model.forward.runs] == [True, False,
                                                                                False]
    assert Model.forward.kernel.flop == {"fp32": 2 * (2 * 4 * 8 * 8)}   # addmm 2mnk, 2 calls
    assert [r.meta["timing_includes_counting"] for r in Holder.run.runs] == [True] * 3
    # all three counted; a first call that ran past SLOW_RUN_RATIO x the others (a loaded
    # machine: 1 run in 6 under xdist) is left out as a warm-up, and said so
    held = Holder.run.kernel
    assert held.calls + held.meta.get("first_calls_left_out", 0) == 3


# --- N6: cold first use, and the time that includes counting -----------------------------------

_COLD = """
import sys, time, torch
from rooflab.measuring import Measurement
seen = []
def clock():
    seen.append("torch._dynamo" in sys.modules)
    return time.perf_counter()
a = torch.randn(64, 64)
m = Measurement(name="mm", clock=clock)
with m:
    a @ a
print(seen, m.kernel.seconds)
"""


def test_a_counted_with_block_pays_the_counters_first_use_before_the_clock():
    out = subprocess.run([sys.executable, "-c", _COLD], capture_output=True, text=True,
                         timeout=120, check=True).stdout.split()
    # torch._dynamo (imported by the first op dispatched under the counter: ~2 s here) was
    # loaded before the clock was first read (before: [False, True], 1.8-2.4 s for the mm)
    assert out[:2] == ["[True,", "True]"]
    assert float(out[2]) < 1.0


def test_a_counted_with_block_says_its_time_includes_the_counting():
    a = torch.randn(64, 64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TimingWarning)
        with rooflab.measure(name="mm") as m:
            a @ a
    k = m.kernel
    assert k.meta["timing_includes_counting"] is True
    assert "includes rooflab's counting of the 1 PyTorch op" in k.meta["warning"]
    finding = counting_finding(k)
    assert finding.check == "timing_includes_counting" and finding.severity == "warning"
    assert "counting of its 1 dispatched op" in finding.message
    with rooflab.measure(name="given", flop=2 * 64 ** 3, bytes=3 * 4 * 64 * 64) as g:
        a @ a
    assert "timing_includes_counting" not in g.kernel.meta
    assert counting_finding(g.kernel) is None


# --- N2: backward ops, one table for the counter and the trace --------------------------------

def _counted(fn) -> dict:
    _, count = torch_count.count_call(fn)
    return count.summary()


def test_the_counter_counts_the_backward_ops_the_trace_counts():
    torch.manual_seed(0)
    h = torch.randn(4, 64, 512, requires_grad=True)
    y = torch.nn.functional.gelu(h)
    ops = _counted(lambda: y.backward(torch.ones_like(y)))
    assert ops["aten.gelu_backward"]["flop"] == 2 * 4 * 64 * 512 == 262_144

    ln = torch.nn.LayerNorm(128)
    z = ln(torch.randn(4, 64, 128, requires_grad=True))
    ops = _counted(lambda: z.sum().backward())
    # x̂ 2 + grad_input 7 + dy·γ 1 + grad_weight 2 + grad_bias 1 = 13 per element
    assert ops["aten.native_layer_norm_backward"]["flop"] == 13 * 4 * 64 * 128 == 425_984

    s = torch.softmax(torch.randn(4, 64, 64, requires_grad=True), -1)
    ops = _counted(lambda: s.backward(torch.ones_like(s)))
    assert ops["aten._softmax_backward_data"]["flop"] == 4 * 4 * 64 * 64 == 65_536

    logits = torch.randn(256, 1000, requires_grad=True)
    loss = torch.nn.functional.cross_entropy(logits, torch.randint(0, 1000, (256,)))
    ops = _counted(loss.backward)
    assert ops["aten._log_softmax_backward_data"]["flop"] == 4 * 256 * 1000 == 1_024_000

    emb = torch.nn.Embedding(1000, 128)
    e = emb(torch.randint(0, 1000, (4, 64)))
    _, count = torch_count.count_call(lambda: e.backward(torch.ones_like(e)))
    row = count.summary()["aten.embedding_dense_backward"]
    assert row["flop"] == 4 * 64 * 128 == 32_768     # one add per grad_output element
    # grad 131,072 + ids 2,048 (int64) + the dense weight gradient 512,000 (review 17b)
    assert row["bytes"] == 645_120
    assert not {"aten.gelu_backward", "aten.embedding_dense_backward"} & set(count.uncounted)


def test_the_trace_rules_read_the_counters_table():
    assert torch_ops_backward.BACKWARD_PER_ELEMENT is torch_count.BACKWARD_PER_ELEMENT
    assert torch_flop_rules.layernorm_backward_per_element(True, True, True, True) == 13
    assert torch_flop_rules.layernorm_backward_per_element(True, False, False, False) == 9


# --- N3: convolution_backward, one convention across verbs -------------------------------------

def test_conv_backward_counts_the_same_in_the_trace_and_the_counter(tmp_path):
    from torch.profiler import ProfilerActivity, profile

    from rooflab.ingest.torch_trace import load_torch_trace

    conv = torch.nn.Conv1d(16, 16, 3, padding=1)       # with a bias: grad_bias is computed
    x = torch.randn(2, 16, 32, requires_grad=True)
    y = conv(x)
    _, count = torch_count.count_call(lambda: y.backward(torch.ones_like(y)))
    counted = count.summary()["aten.convolution_backward"]["flop"]
    # grad_input + grad_weight, 2·N·K·L·C·taps each; the bias sum N·K·L = 1,024 not counted
    assert counted == 2 * (2 * 2 * 16 * 32 * 16 * 3) == 196_608
    y = conv(x)
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        y.backward(torch.ones_like(y))
    path = str(tmp_path / "conv.json")
    prof.export_chrome_trace(path)
    (k,) = [k for k in load_torch_trace(path).kernels if k.meta.get("op") == "conv1d_backward"]
    assert k.flop == {"fp32": counted}               # before: 197,632 (+ grad_bias)
