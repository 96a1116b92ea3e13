"""rooflab.measure times and counts what really ran (review 16b #2, #4, #13, #8, #12, #3):
CUDA work with no CUDA argument is synchronized, torch.compile'd code is said to be counted
by its eager ops, and the kernel keeps its threads, timing recipe, TF32 math and one-pass
(fused) bytes. CUDA is faked on this CPU-only machine: torch.cuda.is_initialized /
device_count / synchronize are patched, and the counter's per-op device reader."""

from __future__ import annotations

import warnings

import pytest

import rooflab
from rooflab import measure_clocks
from rooflab.measure_counts import COMPILED_BYTES, CountWarning
from rooflab.measuring import Measurement, TimingWarning, timed_kernel
from rooflab.probe.timer import QUICK, FakeClock, TimingPlan

torch = pytest.importorskip("torch")
from rooflab.bench import torch_count  # noqa: E402  (needs torch)

TINY = TimingPlan(warmup_s=0.0, sample_s=0.001, budget_s=0.005, min_samples=3, max_samples=5)
MIB4 = 4 * 1024 * 1024   # bytes of a 1024x1024 (or 256x4096) fp32 matrix


@pytest.fixture
def fake_cuda(monkeypatch):
    """CUDA in use: a log of every synchronize (and clock read, for a fake clock)."""
    log: list[str] = []
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda device=None: log.append("sync"))
    return log


def _logging_clock(log, times=(0.0, 0.25)):
    it = iter(times)

    def clock():
        log.append("clock")
        return next(it)

    return clock


# --- #2: CUDA work with no CUDA argument ---------------------------------------------------

def test_a_with_block_synchronizes_before_both_clock_reads_when_cuda_is_in_use(fake_cuda):
    # before: the block's clock was perf_counter with no synchronize: queued kernels untimed
    with Measurement(name="step", flop=1e9, bytes=1e6, clock=_logging_clock(fake_cuda)) as m:
        fake_cuda.append("block")
    assert fake_cuda == ["sync", "clock", "block", "sync", "clock"]
    assert m.kernel.seconds == 0.25
    assert m.kernel.meta["clock"] == measure_clocks.SYNCED


def test_a_with_block_without_cuda_reads_the_clock_only():
    log: list[str] = []
    assert not torch.cuda.is_initialized()   # the CPU build: nothing to wait for
    with Measurement(name="cpu", flop=1e9, bytes=1e6, clock=_logging_clock(log)) as m:
        pass
    assert log == ["clock", "clock"] and m.kernel.meta["clock"] == "perf_counter"


def test_a_decorated_function_with_tensors_on_self_synchronizes(fake_cuda):
    # before: infer_device(args) said "cpu" (no tensor argument), so no synchronize
    @rooflab.measure(name="step", flop=2e9, bytes=1e6)
    def step():
        fake_cuda.append("step")

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TimingWarning)   # a run shorter than 100 µs
        step()
    assert fake_cuda == ["sync", "step", "sync"]
    assert step.kernel.meta["clock"] == measure_clocks.SYNCED


def test_the_benchmark_form_of_a_closure_synchronizes_around_every_sample(fake_cuda):
    # measure(lambda: model(x)): the tensors are in the closure, not the arguments
    k = rooflab.measure(lambda: None, flop=1e6, bytes=1e6, plan=TINY)
    runs = k.meta["warmup_calls"] - 1 + k.meta["samples_n"]   # settle call: no clock
    assert k.meta["clock"] == measure_clocks.SYNCED
    # the timer syncs before each of its two clock reads of every warm-up, calibration and
    # sample run; at least two per sample
    assert fake_cuda.count("sync") >= 2 * k.meta["samples_n"]
    assert fake_cuda.count("sync") >= 2 * min(runs, k.meta["samples_n"])


def test_counted_cuda_ops_pick_the_cuda_clock(monkeypatch):
    seen = {}
    monkeypatch.setattr(measure_clocks, "device_clock",
                        lambda device: seen.setdefault(device, ("event clock", None)))
    device, clock, sync, how = measure_clocks.benchmark_clock(None, ("cpu", "cuda:1"))
    assert (device, clock, how) == ("cuda:1", "event clock", measure_clocks.CUDA_EVENTS)
    # a CUDA tensor argument or a given device wins over the ops
    assert measure_clocks.benchmark_clock("cuda:0", ("cuda:1",))[0] == "cuda:0"


def test_counted_ops_on_cuda_timed_by_an_unsynchronized_cpu_clock_warn(monkeypatch):
    monkeypatch.setattr(torch_count, "_device_of", lambda tensors: "cuda:0")
    a = torch.ones(8, 8)
    with pytest.warns(TimingWarning, match="ran PyTorch ops on cuda:0 but was timed with the "
                                           "CPU clock and no synchronize"):
        rooflab.measure(torch.mm, a, a, device="cpu", plan=TINY)


def test_a_with_block_of_cuda_ops_records_their_device(fake_cuda, monkeypatch):
    monkeypatch.setattr(torch_count, "_device_of", lambda tensors: "cuda:0")
    a = torch.ones(8, 8)
    with warnings.catch_warnings():
        warnings.simplefilter("error", TimingWarning)   # no "unsynchronized" warning ...
        warnings.filterwarnings("ignore", "measure\\(\\): a single timed run")
        with rooflab.measure(name="blk") as m:
            torch.mm(a, a)
    # ... before: device "cpu", so `bench --run` probed the CPU for a GPU kernel
    assert m.kernel.meta["device"] == "cuda:0"
    assert m.kernel.meta["clock"] == measure_clocks.SYNCED
    assert m.kernel.flop == {"fp32": 2 * 8 * 8 * 8}


# --- #4: torch.compile'd callables -----------------------------------------------------------

def _softmax(x):
    m = x.amax(-1, keepdim=True)
    e = (x - m).exp()
    return e / e.sum(-1, keepdim=True)


def test_a_compiled_function_is_counted_by_its_eager_ops_and_says_so():
    compiled = torch.compile(_softmax, backend="eager")   # compiles in seconds, no C compiler
    x = torch.randn(64, 256)
    with pytest.warns(CountWarning, match=r"is torch.compile'd: rooflab counted its eager "
                                          r"original.*the timed calls run the compiled code\. "
                                          r"The counted 525 kB are those of its 5 eager ops.*"
                                          r"it moves 131 kB"):
        k = rooflab.measure(compiled, x, plan=TINY)
    # x is 65536 B, a row statistic 256 B. 5 eager ops: amax 65536 + 256, sub 65536 + 256 +
    # 65536, exp 2 x 65536, sum 65536 + 256, div 65536 + 256 + 65536 = 8 x 65536 + 4 x 256
    # = 525312 B; one pass: x read, y written = 2 x 65536
    assert k.bytes == {"DRAM": 525312.0}
    assert k.provenance["bytes"] == COMPILED_BYTES
    assert k.provenance["flop"] == "derived"
    assert k.meta["fused_bytes"] == 131072.0


def test_a_compiled_module_is_detected_and_an_eager_one_is_not():
    from rooflab.measure_counts import is_compiled

    lin = torch.nn.Linear(4, 4)
    assert is_compiled(torch.compile(lin, backend="eager"))
    assert is_compiled(torch.compile(_softmax, backend="eager"))
    assert not is_compiled(lin) and not is_compiled(_softmax) and not is_compiled(torch.mm)


def test_a_decorated_compiled_function_says_so_too():
    step = rooflab.measure(name="sm")(torch.compile(_softmax, backend="eager"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TimingWarning)
        with pytest.warns(CountWarning, match="torch.compile'd"):
            step(torch.randn(64, 256))
    assert step.kernel.provenance["bytes"] == COMPILED_BYTES


def test_given_bytes_of_a_compiled_function_are_kept_without_a_warning():
    compiled = torch.compile(_softmax, backend="eager")
    with warnings.catch_warnings():
        warnings.simplefilter("error", CountWarning)
        k = rooflab.measure(compiled, torch.randn(64, 256), bytes=131072, plan=TINY)
    assert k.provenance["bytes"] == "given" and k.bytes == {"DRAM": 131072.0}


# --- #13: the thread count ------------------------------------------------------------------

def test_torch_ops_on_the_cpu_record_torch_s_thread_count():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        a = torch.ones(32, 32)
        k = rooflab.measure(torch.mm, a, a, plan=TINY)
        with rooflab.measure(name="blk", flop=1e9, bytes=1e6) as m:
            torch.mm(a, a)
        step = rooflab.measure(name="step", flop=1e9, bytes=1e6)(torch.mm)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TimingWarning)
            step(a, a)   # given counts: the CPU tensor arguments say torch ran
    finally:
        torch.set_num_threads(before)
    assert k.meta["threads"] == 1 and k.meta["threads_from"] == "torch.get_num_threads()"
    assert step.kernel.meta["threads"] == 1
    assert "threads" not in m.kernel.meta   # given counts, no argument: nothing knowable


def test_a_numba_function_records_its_threads():
    numba = pytest.importorskip("numba")

    @numba.njit(parallel=True)
    def par(n):
        total = 0
        for i in numba.prange(n):
            total += i
        return total

    @numba.njit
    def one(n):
        return n + 1

    k = rooflab.measure(par, 3, flop=1, bytes=8, plan=TINY)
    assert k.meta["threads"] == numba.get_num_threads()
    assert rooflab.measure(one, 3, flop=1, bytes=8, plan=TINY).meta["threads"] == 1
    assert "threads" not in rooflab.measure(lambda: None, flop=1, bytes=8, plan=TINY).meta


# --- #8: the timing recipe ------------------------------------------------------------------

def test_timed_kernel_records_its_plan_and_every_untimed_call():
    # Each call costs 1/1024 s. Warm-up 20/1024 s: 20 calls. Calibration (sample 64/1024 s):
    # 1 call reads 1/1024 < 64/1024/50, so 2 calls; 2/1024 > 1.28/1024, so the estimate
    # 2 x 64/2 + 1 = 65 rounds up to 128 calls per sample: 1 + 2 = 3 calls. 20 + 3 = 23.
    step = 2.0 ** -10
    clock = FakeClock(step)
    plan = TimingPlan(warmup_s=20 * step, sample_s=64 * step, budget_s=0.0, min_samples=3,
                      max_samples=3)
    k = timed_kernel(clock.tick, name="t", flop={"fp32": 1.0}, bytes={"DRAM": 1.0},
                     provenance={}, plan=plan, clock=clock, calls_before=2)
    assert k.meta["warmup_calls"] == 2 + 23
    assert k.meta["calls_per_sample"] == 128 and k.meta["samples_n"] == 3
    assert clock.calls == 23 + 3 * 128
    assert k.meta["plan"] == {"warmup_s": 20 * step, "sample_s": 64 * step, "budget_s": 0.0,
                              "min_samples": 3, "max_samples": 3, "max_inner": 1 << 24}


def test_measure_records_the_named_plan_and_the_count_and_settle_calls():
    calls = [0]

    def fn(a):
        calls[0] += 1
        return a + 1

    k = rooflab.measure(fn, torch.ones(4), plan="quick")
    assert k.meta["plan"]["name"] == "quick"
    assert k.meta["plan"]["warmup_s"] == QUICK.warmup_s == 0.01
    assert k.meta["plan"]["budget_s"] == QUICK.budget_s == 0.08
    # every call was the counting pass, the settle call, warm-up/calibration or a sample
    timed = k.meta["samples_n"] * k.meta["calls_per_sample"]
    assert calls[0] == k.meta["warmup_calls"] + timed
    assert k.meta["warmup_calls"] >= 2   # the counting pass and the settle call at least


# --- #12: TF32 convolutions -----------------------------------------------------------------

def _conv():
    x, w = torch.randn(1, 3, 8, 8), torch.randn(4, 3, 3, 3)
    return torch_count.count_call(torch.nn.functional.conv2d, (x, w), {"padding": 1})[1]


def test_a_cuda_fp32_conv_with_tf32_allowed_counts_as_tf32_on_the_tensor_unit(monkeypatch):
    monkeypatch.setattr(torch_count, "_device_of", lambda tensors: "cuda:0")
    monkeypatch.setattr(torch_count, "tf32_enabled", lambda kind: kind == "conv")
    count = _conv()
    # 2 N K P Q C R S = 2 * 1 * 4 * 8 * 8 * 3 * 9 = 13824 FLOP
    assert count.flop == {"tf32": 13824.0}
    assert count.unit == "tensor"
    assert "tf32" in count.meta()["tf32_note"]


def test_the_same_conv_stays_fp32_with_tf32_off_or_on_the_cpu(monkeypatch):
    assert _conv().flop == {"fp32": 13824.0}   # the CPU: no TF32 whatever the flag
    assert _conv().unit is None and "tf32_note" not in _conv().meta()
    monkeypatch.setattr(torch_count, "_device_of", lambda tensors: "cuda:0")
    monkeypatch.setattr(torch_count, "tf32_enabled", lambda kind: False)
    assert _conv().flop == {"fp32": 13824.0}


def test_tf32_flags_read_as_pytorch_sets_them(monkeypatch):
    # torch's defaults: cuDNN convs allow TF32, cuBLAS matmuls do not
    assert torch_count.tf32_enabled("conv") is torch.backends.cudnn.allow_tf32 is True
    assert torch_count.tf32_enabled("matmul") is False
    monkeypatch.setattr(torch.backends.cudnn, "allow_tf32", False)
    assert torch_count.tf32_enabled("conv") is False
    monkeypatch.setattr(torch.backends.cudnn, "allow_tf32", True)
    before = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision("high")
    try:
        assert torch_count.tf32_enabled("matmul") is True
    finally:
        torch.set_float32_matmul_precision(before)


# --- #3: one-pass (fused) bytes ------------------------------------------------------------

def test_eager_softmax_sums_five_passes_and_fuses_to_one():
    x = torch.randn(1024, 4096)
    _, count = torch_count.count_call(_softmax, (x,))
    # review 16b #3: amax 16.8 MB, sub 33.6, exp 33.6, sum 16.8, div 33.6 = 134,234,112 B;
    # one pass reads x and writes y: 2 x 4 x 4,194,304 = 33,554,432 B (aten._softmax's count)
    assert count.bytes == 134_234_112.0
    assert count.fused_bytes == 33_554_432.0 == 2 * 4 * 1024 * 4096
    assert count.meta()["fused_bytes"] == 33_554_432.0


def test_fused_bytes_count_inputs_written_in_place_and_out_buffers():
    x = torch.ones(1024, 1024)
    out = torch.empty(1024, 1024)

    def scale(t):          # returns nothing: its output is the input it wrote
        t.add_(1)
        t.mul_(2)

    def into(t):           # writes a buffer of the caller's
        torch.exp(t, out=out)

    def fresh(t):          # a buffer it allocates, then a returned result
        y = torch.empty_like(t)
        torch.exp(t, out=y)
        return y * 2

    assert torch_count.count_call(scale, (x,))[1].fused_bytes == 2 * MIB4   # read + write x
    assert torch_count.count_call(scale, (x,))[1].bytes == 4 * MIB4
    assert torch_count.count_call(into, (x,))[1].fused_bytes == 2 * MIB4
    _, count = torch_count.count_call(fresh, (x,))
    assert (count.bytes, count.fused_bytes) == (4 * MIB4, 2 * MIB4)   # y stays inside


def test_measure_and_a_decorated_function_record_fused_bytes():
    x = torch.randn(256, 1024)
    k = rooflab.measure(_softmax, x, plan=TINY)
    assert k.meta["fused_bytes"] == 2 * 4 * 256 * 1024
    step = rooflab.measure(name="sm")(_softmax)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TimingWarning)
        step(x)
        step(x)
        step(x)
    # the first call, counted (its time mostly counting), is left out: the two later calls
    # with the same shapes reuse its counts, timed without the counter, summed
    assert step.kernel.calls == 2 and step.kernel.meta["counted_runs_left_out"] == 1
    assert step.kernel.meta["fused_bytes"] == 2 * 2 * 4 * 256 * 1024   # two calls, summed
    assert step.kernel.bytes == {"DRAM": 2 * k.bytes["DRAM"]}
