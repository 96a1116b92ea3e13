"""GPU-probe logic on a fake clock: do_bench-style timing, sweeps and plateaus, the nominal
check, device strings and the no-device error. No torch needed except where marked."""

from __future__ import annotations

import ast
import math
from pathlib import Path

import pytest

from rooflab.errors import DeviceError, InputError
from rooflab.model.ceiling import Ceiling, Roof
from rooflab.probe.gpu import compare_to_nominal
from rooflab.probe.gpu.identity import parse_torch_device
from rooflab.probe.gpu.sweep import (
    Plateau,
    find_plateaus,
    label_plateaus,
    run_sweep,
    sweep_sizes,
)
from rooflab.probe.gpu.timing import (
    ESTIMATE_CALLS,
    clock_timer,
    plan_counts,
    time_batched,
    time_calls,
)
from rooflab.probe.timer import FakeClock, TimingPlan

MiB = 1 << 20
GPU_PKG = Path(__file__).resolve().parents[1] / "src" / "rooflab" / "probe" / "gpu"


# --- timing -------------------------------------------------------------------------

def test_plan_counts_turn_time_budgets_into_calls():
    plan = TimingPlan(warmup_s=0.01, budget_s=0.05, min_samples=5, max_samples=200)
    assert plan_counts(1e-3, plan) == (10, 50)
    assert plan_counts(1.0, plan) == (1, 5)            # slow call: min_samples still taken
    assert plan_counts(1e-6, plan) == (10000, 200)     # fast call: capped at max_samples
    assert plan_counts(1e-9, plan) == (10000, 200)     # warm-up capped too


def test_flush_runs_outside_the_timed_region():
    # Each call costs 2 ms; each flush costs a whole second. If a flush leaked into the
    # timed region every sample would be >= 1 s.
    clock = FakeClock(2e-3)
    flushes = []

    def flush():
        flushes.append(clock.now)
        clock.now += 1.0

    timer = clock_timer(clock, flush=flush)
    plan = TimingPlan(warmup_s=0.01, budget_s=0.02, min_samples=5, max_samples=100)
    t = time_calls(clock.tick, timer, plan)
    assert t.samples == pytest.approx([2e-3] * len(t.samples))
    # do_bench counts: the estimate includes flushes (5 calls of 1.002 s) -> min_samples.
    assert len(t.samples) == 5
    assert len(flushes) == ESTIMATE_CALLS + len(t.samples)
    assert t.stats.spread == pytest.approx(0, abs=1e-9) and not t.stats.noisy


def test_samples_are_kept_raw_and_noise_is_flagged():
    clock = FakeClock(lambda i: 1e-3 * (1.2 if i % 4 == 0 else 1.0))
    t = time_calls(clock.tick, clock_timer(clock), TimingPlan(warmup_s=0.004, budget_s=0.04,
                                                              min_samples=5, max_samples=100))
    assert set(round(s, 9) for s in t.samples) == {1e-3, 1.2e-3}
    assert t.best == pytest.approx(1e-3)
    assert 30 <= len(t.samples) <= 40
    assert t.stats.noisy and t.stats.spread == pytest.approx(0.2)


def test_time_batched_divides_one_region_by_its_calls():
    clock = FakeClock(5e-6)
    t = time_batched(clock.tick, clock_timer(clock), calls=200,
                     plan=TimingPlan(warmup_s=0.0, budget_s=0.01, min_samples=3))
    assert t.inner == 200
    assert t.median == pytest.approx(5e-6)


# --- sweeps and plateaus ----------------------------------------------------------------

def test_sweep_sizes_are_geometric_and_aligned():
    sizes = sweep_sizes(2 * MiB, 400 * MiB, 1.25)
    assert sizes[0] == 2 * MiB and sizes[-1] <= 400 * MiB
    assert len(sizes) == 24  # floor(log(200) / log(1.25)) + 1
    assert all(s % 4096 == 0 for s in sizes)
    ratios = [b / a for a, b in zip(sizes, sizes[1:], strict=False)]
    assert all(1.2 < r < 1.3 for r in ratios)
    with pytest.raises(ValueError):
        sweep_sizes(10, 5, 1.5)


def _h200_like(ws: float) -> float:
    """Synthetic read bandwidth: under-occupied below 4 MiB, L2 12 TB/s to 40 MiB,
    a ramp, DRAM 4 TB/s from 80 MiB (an H200-shaped curve; L2 is 50 MiB)."""
    if ws < 4 * MiB:
        return 12e12 * ws / (4 * MiB)
    if ws <= 40 * MiB:
        return 12e12
    if ws >= 80 * MiB:
        return 4e12
    f = math.log(ws / (40 * MiB)) / math.log(2)
    return 12e12 * (4e12 / 12e12) ** f


def _fake_sweep(curve, sizes, jitter=0.01):
    clock = FakeClock(0.0)
    state = {"dt": 0.0}
    clock._cost = lambda i: state["dt"] * (1 + jitter * ((i % 3) - 1))

    def make_op(size):
        nbytes = 64.0 * size
        state["dt"] = nbytes / curve(size)
        return clock.tick, nbytes

    plan = TimingPlan(warmup_s=0.0, budget_s=1e-3, min_samples=3, max_samples=5)
    return run_sweep(sizes, make_op, clock_timer(clock), plan)


def test_sweep_on_a_fake_clock_finds_the_l2_plateau_and_dram():
    points = _fake_sweep(_h200_like, sweep_sizes(1 * MiB, 400 * MiB, 1.25))
    # Every point's median is the curve's value (jitter is symmetric, +-1 %).
    for p in points:
        assert p.bytes_per_s == pytest.approx(_h200_like(p.working_set_bytes), rel=0.011)
        assert len(p.samples) >= 3
    found = label_plateaus(find_plateaus([(p.working_set_bytes, p.bytes_per_s)
                                          for p in points]), {"L2": 50 * MiB})
    assert set(found) == {"L2", "DRAM"}
    assert found["L2"].bytes_per_s == pytest.approx(12e12, rel=0.011)
    # 3.8 MiB still runs at 11.4 TB/s, within the 12 % tolerance of the plateau.
    assert 3.5 * MiB <= found["L2"].first_bytes and found["L2"].last_bytes <= 40 * MiB
    assert found["DRAM"].bytes_per_s == pytest.approx(4e12, rel=0.011)
    assert found["DRAM"].first_bytes >= 80 * MiB


def test_flat_curve_has_no_cache_plateau():
    points = _fake_sweep(lambda ws: 4e12, sweep_sizes(4 * MiB, 400 * MiB, 1.5))
    found = label_plateaus(find_plateaus([(p.working_set_bytes, p.bytes_per_s)
                                          for p in points]), {"L2": 50 * MiB})
    # The only plateau spans every size and reaches past the L2: DRAM, no L2.
    assert list(found) == ["DRAM"]


def test_cpu_like_curve_is_labelled_level_by_level():
    caps = {"L1": 64 << 10, "L2": 2 * MiB, "L3": 32 * MiB}

    def curve(ws):
        return 800e9 if ws <= 48 << 10 else 350e9 if ws <= 1.5 * MiB else (
            200e9 if ws <= 24 * MiB else 40e9 if ws >= 64 * MiB else 90e9)

    points = _fake_sweep(curve, sweep_sizes(16 << 10, 256 * MiB, 1.3), jitter=0.0)
    found = label_plateaus(find_plateaus([(p.working_set_bytes, p.bytes_per_s)
                                          for p in points]), caps)
    assert {k: round(v.bytes_per_s / 1e9) for k, v in found.items()} == {
        "L1": 800, "L2": 350, "L3": 200, "DRAM": 40}


def test_find_plateaus_needs_two_points_and_tolerance():
    pts = [(1, 100.0), (2, 105.0), (3, 50.0), (4, 10.0), (5, 10.5), (6, 9.8)]
    got = find_plateaus(pts)
    assert got == (Plateau(1, 2, 102.5, 2), Plateau(4, 6, 10.0, 3))
    # A faster plateau outside a slower cache is not that cache.
    assert label_plateaus([Plateau(1, 2, 5.0, 2), Plateau(4, 60, 10.0, 3)],
                          {"L2": 4}) == {"DRAM": Plateau(4, 60, 10.0, 3)}


# --- the nominal check ------------------------------------------------------------------

def _m(value, **kw):
    return Ceiling(value=value, provenance="measured", samples=(value * 0.99, value), **kw)


def test_measured_above_nominal_is_flagged_not_hidden():
    nominal = Roof("NVIDIA H200 SXM", compute=(
        Ceiling(989.5e12, precision="bf16", unit="tensor"),
        Ceiling(67e12, precision="fp32", unit="vector")),
        memory=(Ceiling(4.8e12, level="DRAM"),))
    measured = Roof("NVIDIA H200", kind="measured", compute=(
        _m(1.1e15, precision="bf16", unit="tensor"),
        _m(110e12, precision="fp16", unit="vector")),
        memory=(_m(4.3e12, level="DRAM"), _m(11e12, level="L2")))
    checked, rows = compare_to_nominal(measured, nominal)
    bf16 = checked.find_compute("bf16", "tensor")
    assert bf16.value == 1.1e15 and len(bf16.warnings) == 1
    assert "above the nominal 990 TFLOP/s" in bf16.warnings[0]
    assert checked.bandwidth("DRAM").warnings == ()
    by = {r["ceiling"]: r for r in rows}
    # fp16 vector has no nominal vector counterpart: not compared against a tensor peak.
    assert set(by) == {"bf16 tensor", "DRAM"}
    assert by["DRAM"]["ratio"] == pytest.approx(4.3 / 4.8)
    assert by["bf16 tensor"]["above_nominal"] and not by["DRAM"]["above_nominal"]
    assert compare_to_nominal(measured, None) == (measured, [])


# --- devices ----------------------------------------------------------------------------

def test_parse_device():
    assert parse_torch_device("cuda") == ("cuda", None)
    assert parse_torch_device("CUDA:1") == ("cuda", 1)
    assert parse_torch_device("cpu") == ("cpu", None)
    for bad in ("tpu", "cuda:x", "cpu:0", ""):
        with pytest.raises(InputError, match="'cuda', 'cuda:N' or 'cpu'"):
            parse_torch_device(bad)


def test_no_cuda_device_is_a_clear_device_error(monkeypatch):
    torch = pytest.importorskip("torch")
    from rooflab.probe.gpu import probe_gpu

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)   # refused before the device check
    with pytest.raises(DeviceError, match=r"no CUDA device is visible \(torch\.cuda\."
                                          r"is_available\(\) is False\)") as err:
        probe_gpu("cuda:0", "quick")
    assert err.value.exit_code == 2 and "CUDA_VISIBLE_DEVICES" in str(err.value)


def test_missing_cuda_index_names_the_visible_ones(monkeypatch):
    torch = pytest.importorskip("torch")
    from rooflab.probe.gpu.identity import open_device

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    with pytest.raises(DeviceError, match=r"cuda:5 does not exist: 2 CUDA device\(s\) visible"):
        open_device(torch, "cuda:5")


def test_bad_mode_is_an_input_error():
    from rooflab.probe.gpu import probe_gpu

    with pytest.raises(InputError, match="mode must be one of quick, default, full"):
        probe_gpu("cpu", "fast")


# --- Triton stays isolated ---------------------------------------------------------------

def test_triton_is_imported_only_by_the_kernels_module():
    for path in GPU_PKG.glob("*.py"):
        tree = ast.parse(path.read_text())
        top = {a.name.split(".")[0] for node in tree.body
               if isinstance(node, (ast.Import, ast.ImportFrom)) for a in node.names
               if isinstance(node, ast.Import)} | {
            (node.module or "").split(".")[0] for node in tree.body
            if isinstance(node, ast.ImportFrom) and node.level == 0}
        heavy = top & {"torch", "triton", "pynvml"}
        if path.name == "kernels.py":
            assert heavy == {"triton"}
        else:
            assert not heavy, f"{path.name} imports {heavy} at module level"


# triton installs without torch (the test extra on Python 3.12+, where no CPU build of torch
# is at hand), but the children compare the kernels with torch and run them on its tensors
_NO_TORCH = "torch is not installed here: the interpreted kernels run on torch tensors"

_CHECK_KERNELS = ("import torch; from rooflab.probe.gpu.kernels import check_kernels, "
                  "check_int8_matmul; p = check_kernels(torch, 'cpu') + check_int8_matmul("
                  "torch, 'cpu'); print(p); raise SystemExit(1 if p else 0)")


def test_triton_kernels_agree_with_torch_under_the_interpreter(_interpreted):
    # TRITON_INTERPRET=1 runs the kernels on the CPU: the same check gpu_check.py runs on
    # the device before it measures anything.
    pytest.importorskip("triton", reason="triton is not installed here; gpu_check.py runs "
                                         "the same check on the device machine")
    pytest.importorskip("torch", reason=_NO_TORCH)
    run = _interpreted("check_kernels", timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr


_INTERPRETED_PROBE = """
import json
from rooflab.probe.gpu import context as C, probe_gpu, timing
from rooflab.probe.timer import TimingPlan
plan = TimingPlan(warmup_s=0.0, budget_s=0.0, min_samples=2, max_samples=2)
# one estimate call, not 5: with no warm-up or time budget the estimate sets no count (2
# samples, 1 warm-up call whatever it reads), and over half of this child's minute of
# interpreter went to the estimates' 5 calls a measurement (session 33; as gpu_check's dry run)
timing.ESTIMATE_CALLS = 1
# sweep_lo 8 KiB: the top is 0.05 x the host's L2, 26 KB on a 512 KiB-L2 core (64 KiB
# started above it there and the sweep refused lo > hi)
C.CPU_SIZES["quick"] = C.Sizes(stream_bytes=1 << 18, sweep_lo=8 << 10, sweep_hi_l2=0.05,
    sweep_step=1.4, sweep_call_bytes=1 << 20, host_bytes=0, matmul_sizes=(64,), fma_iters=4,
    launch_calls=5, plan=plan, sweep_plan=plan)
p = probe_gpu("cpu", "quick", triton=True)
g = p.extras["gpu"]
print(json.dumps({"labels": [c.label for c in p.measured.compute],
                  "methods": [c.method for c in p.measured.compute],
                  "host": p.host, "skipped": g["skipped"], "errors": g["errors"],
                  "overheads": sorted(g["overheads"]), "sweep": sorted(g["sweep"]),
                  "work": {k: v["work_per_call"] for k, v in g["measurements"].items()}}))
"""


def test_best_per_label_keeps_the_fastest_and_names_the_other():
    from rooflab.model.ceiling import Ceiling
    from rooflab.probe.gpu import best_per_label

    mm = Ceiling(value=50e12, precision="fp32", unit="vector", provenance="measured",
                 method="torch.matmul 8192x8192x8192, random inputs")
    fma = Ceiling(value=60e12, precision="fp32", unit="vector", provenance="measured",
                  method="Triton FMA kernel: 8 chains")
    tc = Ceiling(value=400e12, precision="fp32", unit="tensor", provenance="measured",
                 method="tf32")
    out = best_per_label([mm, tc, fma])
    assert [c.label for c in out] == ["fp32 vector", "fp32 tensor"]
    assert out[0].value == 60e12
    assert out[0].method == "Triton FMA kernel: 8 chains; beat torch.matmul 8192x8192x8192 " \
                            "(50 TFLOP/s)"
    assert best_per_label([fma, mm])[0].method.endswith("beat torch.matmul 8192x8192x8192 "
                                                        "(50 TFLOP/s)")


# --- CUDA-only pieces, on fakes ---------------------------------------------------------

class _FakeEvent:
    def __init__(self, clock):
        self.clock, self.t = clock, None

    def record(self):
        self.t = self.clock.now

    def elapsed_time(self, end):      # CUDA events answer in milliseconds
        return (end.t - self.t) * 1e3


def test_cuda_event_timer_converts_milliseconds_and_flushes_between_calls():
    from types import SimpleNamespace

    from rooflab.probe.gpu.timing import cuda_timer

    clock = FakeClock(3e-4)
    zeroed = []
    syncs = []

    class Buf:
        def sum(self):                # the flush reads its buffer (s38: no dirty lines)
            zeroed.append(1)
            clock.now += 0.5          # a slow flush that must stay outside the samples

    fake_torch = SimpleNamespace(
        int32="int32", zeros=lambda n, dtype, device: Buf(),
        cuda=SimpleNamespace(Event=lambda enable_timing: _FakeEvent(clock),
                             synchronize=lambda dev: syncs.append(dev)))
    timer = cuda_timer(fake_torch, "cuda:0", 100 << 20)
    assert timer.kind == "cuda-events"
    t = time_calls(clock.tick, timer, TimingPlan(warmup_s=0.0, budget_s=0.003, min_samples=4))
    assert t.samples == pytest.approx([3e-4] * 4)
    assert len(zeroed) == ESTIMATE_CALLS + 4
    # One synchronize around the estimate and one before and after the timed calls.
    assert len(syncs) == 4


def test_nvml_state_only_reads(monkeypatch):
    import sys
    from types import SimpleNamespace

    from rooflab.probe.gpu.identity import nvml_state

    calls = []

    def getter(name, value):
        def fn(*args):
            calls.append(name)
            return value
        return fn

    fake = SimpleNamespace(
        NVML_CLOCK_SM=0, NVML_CLOCK_MEM=1, NVML_TEMPERATURE_GPU=0,
        nvmlInit=getter("nvmlInit", None), nvmlShutdown=getter("nvmlShutdown", None),
        nvmlDeviceGetHandleByUUID=getter("byuuid", "h"),
        nvmlDeviceGetClockInfo=lambda h, which: calls.append("clock") or (1980, 3201)[which],
        nvmlDeviceGetMaxClockInfo=lambda h, which: (1980, 3201)[which],
        nvmlDeviceGetApplicationsClock=getter("app", 1755),
        nvmlDeviceGetTemperature=getter("temp", 41),
        nvmlDeviceGetPowerUsage=getter("power", 123456),
        nvmlDeviceGetEnforcedPowerLimit=getter("limit", 700000),
        nvmlDeviceGetCurrentClocksEventReasons=getter("reasons", 0),
        nvmlSystemGetDriverVersion=getter("driver", b"575.57.08"))
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    state = nvml_state(SimpleNamespace(uuid="abc"), 0)
    assert state == {"sm_clock_mhz": 1980, "mem_clock_mhz": 3201, "max_sm_clock_mhz": 1980,
                     "max_mem_clock_mhz": 3201, "app_sm_clock_mhz": 1755, "temperature_c": 41,
                     "power_w": pytest.approx(123.456), "power_limit_w": 700.0,
                     "clock_event_reasons": 0, "driver": "575.57.08"}
    assert not [c for c in calls if "Set" in c or "Reset" in c]
    assert calls[-1] == "nvmlShutdown"


def test_nvml_missing_is_recorded_not_raised(monkeypatch):
    import sys
    from types import SimpleNamespace

    from rooflab.probe.gpu.identity import nvml_state

    monkeypatch.setitem(sys.modules, "pynvml", None)
    assert nvml_state(SimpleNamespace(), 0)["nvml"].startswith("unavailable")


def test_a_failing_stage_is_recorded_and_the_rest_kept(monkeypatch):
    torch = pytest.importorskip("torch")
    from rooflab.probe.gpu import memory, overhead, probe_gpu

    def broken(ctx):
        raise RuntimeError("simulated Triton compile error")

    monkeypatch.setattr(memory, "cache_sweep", broken)
    monkeypatch.setattr(overhead, "overheads", broken)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        p = probe_gpu("cpu", "quick")
    finally:
        torch.set_num_threads(threads)
    errors = p.extras["gpu"]["errors"]
    assert set(errors) == {"memory: sweep", "overhead"}
    assert "simulated Triton compile error" in errors["overhead"]
    assert p.measured.find_compute("fp32") is not None and "DRAM" in p.measured.levels
    assert p.measured.overhead_s is None


def test_cli_probe_device_cuda_without_a_gpu_exits_2(monkeypatch, capsys):
    torch = pytest.importorskip("torch")
    from rooflab.cli.main import main

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert main(["probe", "--device", "cuda:0", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: no CUDA device is visible (torch.cuda.is_available() is False)")
    assert "Traceback" not in err


def test_probe_notes_say_what_was_skipped_and_which_stage_failed():
    from rooflab.hardware.profile import MachineProfile
    from rooflab.model.ceiling import Ceiling, Roof
    from rooflab.report.tables import profile_notes

    measured = Roof("NVIDIA H200", kind="measured",
                    memory=(Ceiling(4.3e12, level="DRAM", provenance="measured"),))
    tb = ('Traceback (most recent call last):\n  File "sweep.py", line 3, in run\n'
          'RuntimeError: CUDA out of memory\n')
    p = MachineProfile(host={"name": "NVIDIA H200"}, measured=measured, extras={"gpu": {
        "errors": {"memory: sweep": tb},
        "skipped": {"graph_replay": "RuntimeError: capture failed", "matmul_int8_2048": "x"}}})
    assert profile_notes(p) == [
        "stage 'memory: sweep' failed (RuntimeError: CUDA out of memory); the other stages "
        "ran — the traceback is in the profile's extras.gpu.errors",
        "not measured: graph_replay (RuntimeError: capture failed); matmul_int8_2048 (x)"]


def test_cli_says_no_gpu_before_starting_its_progress_bar(monkeypatch, capsys):
    torch = pytest.importorskip("torch")
    import rooflab.cli.probe as cli_probe
    from rooflab.cli.main import main

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)

    def no_bar(*a, **k):
        raise AssertionError("the progress bar started before the device was checked")
    monkeypatch.setattr(cli_probe, "_with_progress", no_bar)
    assert main(["probe", "--device", "cuda"]) == 2
    assert capsys.readouterr().err.startswith("error: no CUDA device is visible")


def test_int8_far_below_nominal_blames_the_library_path_not_the_machine():
    # torch._int_mm runs cuBLASLt's default algorithm with no workspace (review 14a #5): an
    # int8 roof at 30 % of 1979 TOPS gets its own note, and bf16 at 30 % keeps the usual one.
    from rooflab.probe.gpu.compute import INT8_METHOD
    from rooflab.probe.nominal import below_nominal_notes

    nominal = Roof("NVIDIA H200 SXM", compute=(
        Ceiling(989.5e12, precision="bf16", unit="tensor"),
        Ceiling(1979e12, precision="int8", unit="tensor")))
    measured = Roof("NVIDIA H200", kind="measured", compute=(
        _m(600e12, precision="int8", unit="tensor", method=INT8_METHOD),
        _m(300e12, precision="bf16", unit="tensor")))
    compute, int8 = below_nominal_notes(measured, nominal, "gpu")
    assert compute.startswith("far below nominal ('NVIDIA H200 SXM'): bf16 tensor 300 TFLOP/s")
    assert "int8" not in compute and "another process on the GPU" in compute
    assert int8.startswith("far below nominal ('NVIDIA H200 SXM'): int8 tensor 600 TOP/s = "
                           "30 % of 1.98 POP/s")
    assert "Usual causes: PyTorch's int8 GEMM path (torch._int_mm runs cuBLASLt's default " \
           "algorithm with no workspace" in int8
    assert INT8_METHOD == ("torch._int_mm (cuBLASLt default algorithm and no workspace: a "
                           "library figure)")


_INTERPRETED_INT8 = """
import json, time, torch
from rooflab.probe.gpu import best_per_label, compute, context as C
from rooflab.probe.gpu.timing import clock_timer
from rooflab.probe.timer import TimingPlan
plan = TimingPlan(warmup_s=0.0, budget_s=0.0, min_samples=2, max_samples=2)
sizes = C.Sizes(stream_bytes=1 << 16, sweep_lo=1 << 16, sweep_hi_l2=1.0, sweep_step=2.0,
    sweep_call_bytes=1 << 16, host_bytes=0, matmul_sizes=(128, 256), fma_iters=4,
    launch_calls=5, plan=plan, sweep_plan=plan)
ctx = C.Context(torch=torch, dev=torch.device("cpu"), timer=clock_timer(time.perf_counter),
                sizes=sizes, host={"multiprocessors": 1}, source="t", triton=True)
c = compute._triton_int8(ctx)
from rooflab.model.ceiling import Ceiling
lib = Ceiling(value=1.0, precision="int8", unit="vector", provenance="measured",
              method=compute.INT8_METHOD + " 256x256x256, random inputs")
merged = best_per_label([lib, c])
print(json.dumps({"method": c.method, "unit": c.unit, "label": c.label,
                  "work": ctx.record["matmul_int8_triton_256"]["work_per_call"],
                  "merged": merged[0].method, "skipped": ctx.skipped}))
"""


def test_the_triton_int8_gemm_is_a_second_int8_method_under_the_interpreter(_interpreted):
    # Review 14a #5: beside torch._int_mm (cuBLASLt default algorithm, no workspace) a Triton
    # tl.dot int8 GEMM (IGMMA on sm_90) runs at the largest matmul size; the faster of the two
    # is the int8 ceiling and its method names the other.
    pytest.importorskip("triton", reason="triton is not installed here")
    pytest.importorskip("torch", reason=_NO_TORCH)
    import json

    run = _interpreted("int8", timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert out["method"] == ("Triton int8 tl.dot GEMM 256x256x256 (one untuned 128x256x128 "
                             "tile, int32 accumulator), random inputs, 2n^3 OP, best call")
    assert out["work"] == 2 * 256 ** 3 and out["label"] == "int8 vector"   # CPU: no tensor
    assert out["merged"].startswith("Triton int8 tl.dot GEMM 256x256x256") and \
        "; beat torch._int_mm (cuBLASLt default algorithm and no workspace: a library " \
        "figure) 256x256x256 (1 OP/s)" in out["merged"]
    assert out["skipped"] == {}


# --- the Triton interpreter's three children, started together -----------------------------

_USES = {"probe": "test_the_probe_runs_its_triton_path_under_the_interpreter",
         "check_kernels": "test_triton_kernels_agree_with_torch_under_the_interpreter",
         "int8": "test_the_triton_int8_gemm_is_a_second_int8_method_under_the_interpreter"}


@pytest.fixture(scope="module", autouse=True)
def _interpreted(request, tmp_path_factory):
    """The three runs under TRITON_INTERPRET=1 (about a minute of one core for the probe),
    started when this module starts: they run beside each other and beside the in-process
    tests on the CI box's second core; each test waits for its own child. Output goes to
    files, not pipes, so a child nobody reads yet never stalls on a full pipe."""
    import importlib.util
    import os
    import subprocess
    import sys

    if any(importlib.util.find_spec(m) is None for m in ("triton", "torch")):
        yield None
        return
    where = tmp_path_factory.mktemp("interpreted")
    codes = {"probe": _INTERPRETED_PROBE, "check_kernels": _CHECK_KERNELS,
             "int8": _INTERPRETED_INT8}
    # only the children whose tests are selected (-k): no minute of interpreter for nothing
    selected = {getattr(item, "originalname", None) for item in request.session.items
                if getattr(item, "module", None) is request.module}
    codes = {name: code for name, code in codes.items() if _USES[name] in selected}
    envs = {"check_kernels": {"TRITON_DEFAULT_FP_FUSION": "1"}}
    procs = {}
    for name, code in codes.items():
        with open(where / f"{name}.out", "w") as out, open(where / f"{name}.err", "w") as err:
            procs[name] = subprocess.Popen(
                [sys.executable, "-c", code], stdout=out, stderr=err, text=True,
                env={**os.environ, "TRITON_INTERPRET": "1", **envs.get(name, {})})

    def result(name: str, timeout: float) -> subprocess.CompletedProcess:
        assert name in procs, f"{name} was not started: its test was not selected"
        procs[name].wait(timeout=timeout)
        return subprocess.CompletedProcess(procs[name].args, procs[name].returncode,
                                           (where / f"{name}.out").read_text(),
                                           (where / f"{name}.err").read_text())

    yield result
    for proc in procs.values():
        if proc.poll() is None:      # its test was deselected or failed before waiting
            proc.kill()
            proc.wait()


def test_the_probe_runs_its_triton_path_under_the_interpreter(_interpreted):
    # Everything the CUDA run does with Triton (copy/triad kernels, both working-set sweeps,
    # vector FMA peaks, the empty kernel) runs here on the CPU device under Triton's
    # interpreter, with tiny sizes: only events, NVML, graphs and pinned copies stay uncovered.
    pytest.importorskip("triton", reason="triton is not installed here")
    pytest.importorskip("torch", reason=_NO_TORCH)
    import json

    run = _interpreted("probe", timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert out["errors"] == {}
    assert "triton" not in out["skipped"] and "vector_fma" not in out["skipped"]
    assert {"host_transfers", "graph_replay"} <= set(out["skipped"])
    work = out["work"]
    programs = out["host"]["multiprocessors"] * 32          # FMA_PROGRAMS_PER_SM
    for p in ("fp64", "fp32", "fp16"):                      # 2 FLOP x 4 iters x 8 chains
        assert work[f"fma_{p}"] == 2 * 4 * 8 * programs * 1024
    n = (1 << 18) // 4                                      # fp32 elements per array
    assert work["copy_triton"] == work["copy_torch"] == 2 * 4 * n
    assert work["triad_triton"] == work["triad_torch"] == 3 * 4 * n
    assert "triton_empty_kernel_back_to_back_s" in out["overheads"]
    assert out["sweep"] == ["l1", "main"]
    # The matmul and the FMA kernel both measure "fp64 vector" here: one ceiling remains.
    assert len(out["labels"]) == len(set(out["labels"]))
    fp64 = out["methods"][out["labels"].index("fp64 vector")]
    assert "beat" in fp64 and "torch.matmul" in fp64 and "Triton FMA" in fp64
