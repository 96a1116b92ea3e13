"""The GPU probe's CUDA branches end to end, on PyTorch's CPU device dressed as a CUDA one.

The CPU-device dry run takes the `dev.type == "cpu"` side of every branch; this test takes
the other side: CUDA events, the device's properties and NVML state, TF32 modes, tensor
units, pinned host transfers, CUDA-graph replay, and the device check's table on an H200's
catalog roof. The stand-ins do only what the real calls are documented to do (events answer
in milliseconds, a graph replays what was captured); the arithmetic runs on the CPU. What
this cannot check is the CUDA runtime itself: that waits for a device (issue 4).
"""

from __future__ import annotations

import contextlib
import importlib.util
import sys
import time
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest

torch = pytest.importorskip("torch")

from rooflab.probe.gpu import context  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


class FakeDevice:
    """What torch.device("cuda", 0) answers to: the probe reads .type and .index only."""

    type = "cuda"

    def __init__(self, index: int = 0):
        self.index = index

    def __str__(self) -> str:
        return f"cuda:{self.index}"


class FakeEvent:
    def __init__(self, enable_timing: bool = False):
        assert enable_timing, "the probe must ask for timing events"
        self.t = None

    def record(self, stream=None):
        self.t = time.perf_counter()

    def elapsed_time(self, end) -> float:     # milliseconds, as CUDA events answer
        return (end.t - self.t) * 1e3


class FakeGraph:
    """Capture records the captured calls' count; replay runs them again."""

    def __init__(self):
        self.calls: list = []

    def replay(self):
        for fn in self.calls:
            fn()


class FakeCuda:
    def __init__(self, log: list):
        self.log = log
        self.Event = FakeEvent
        self.CUDAGraph = FakeGraph

    def is_available(self):
        return True

    def device_count(self):
        return 1

    def current_device(self):
        return 0

    def get_device_properties(self, dev):
        return SimpleNamespace(name="NVIDIA H200", major=9, minor=0, multi_processor_count=132,
                               total_memory=150_000_000_000, L2_cache_size=1 << 20,
                               uuid="0a1b2c3d-0000-0000-0000-000000000000")

    def synchronize(self, dev=None):
        self.log.append("synchronize")

    def device(self, dev):
        self.log.append(f"device {dev}")
        return contextlib.nullcontext()

    def set_device(self, dev):
        self.log.append(f"set_device {dev}")

    def Stream(self, device=None):            # noqa: N802 — torch's spelling
        return SimpleNamespace(wait_stream=lambda other: None)

    def current_stream(self, dev=None):
        return SimpleNamespace(wait_stream=lambda other: None)

    def stream(self, s):
        return contextlib.nullcontext()

    @contextlib.contextmanager
    def graph(self, g):
        # Capture: the real add_ runs once here; replay repeats it through the graph.
        self.log.append("graph capture")
        real_add = torch.Tensor.add_
        captured = []

        def record(t, *a, **kw):
            captured.append(lambda: real_add(t, *a, **kw))
            return t
        torch.Tensor.add_ = record
        try:
            yield
        finally:
            torch.Tensor.add_ = real_add
            g.calls = captured


class FakeTorch:
    """The real torch with .cuda replaced and device=cuda arguments sent to the CPU."""

    def __init__(self, log: list):
        self.cuda = FakeCuda(log)
        self.version = SimpleNamespace(cuda="12.8")

    def device(self, kind, index=None):
        if kind == "cuda":
            return FakeDevice(index or 0)
        return torch.device(kind)

    def __getattr__(self, name):
        attr = getattr(torch, name)
        if not callable(attr) or isinstance(attr, type):
            return attr

        def on_cpu(*args, **kw):
            if isinstance(kw.get("device"), FakeDevice):
                kw["device"] = "cpu"
            return attr(*args, **kw)
        return on_cpu


def _fake_nvml():
    def value(v):
        return lambda *args: v

    return SimpleNamespace(
        NVML_CLOCK_SM=0, NVML_CLOCK_MEM=1, NVML_TEMPERATURE_GPU=0,
        nvmlInit=value(None), nvmlShutdown=value(None),
        nvmlDeviceGetHandleByUUID=value("h"),
        nvmlDeviceGetClockInfo=lambda h, which: (1980, 3201)[which],
        nvmlDeviceGetMaxClockInfo=lambda h, which: (1980, 3201)[which],
        nvmlDeviceGetApplicationsClock=value(1755), nvmlDeviceGetTemperature=value(38),
        nvmlDeviceGetPowerUsage=value(95_000), nvmlDeviceGetEnforcedPowerLimit=value(700_000),
        nvmlDeviceGetCurrentClocksEventReasons=value(0),
        nvmlSystemGetDriverVersion=value("575.57.08"))


@pytest.fixture()
def fake_cuda(monkeypatch):
    """probe_gpu("cuda:0") on the fake, with small sizes and no Triton (its kernels have
    their own interpreter test); returns the call log."""
    log: list = []
    with dressed_as_gpu(monkeypatch, FakeTorch(log), _fake_nvml()):
        yield log


@contextlib.contextmanager
def dressed_as_gpu(monkeypatch, fake_torch, nvml):
    """probe_gpu runs on PyTorch's CPU device behind `fake_torch` (its torch.cuda stand-ins)
    and `nvml` (a pynvml stand-in, or None for none), with quick sizes a CPU gets through;
    shared by the ROCm and busy-GPU tests."""
    import rooflab.probe.gpu as gpu

    monkeypatch.setattr(gpu, "require", lambda *a, **k: fake_torch)
    monkeypatch.setitem(sys.modules, "pynvml", nvml)
    monkeypatch.setattr(torch.Tensor, "pin_memory", lambda self: self)
    small = replace(context.CPU_SIZES["quick"], host_bytes=1 << 20, launch_calls=50)
    monkeypatch.setitem(context.CUDA_SIZES, "quick", small)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def test_the_cuda_branches_run_end_to_end(fake_cuda):
    from rooflab.probe.gpu import probe_gpu

    p = probe_gpu("cuda:0", "quick", triton=False)
    gpu = p.extras["gpu"]
    assert gpu["errors"] == {}
    assert gpu["timer"] == "cuda-events"
    # Only what needs Triton is skipped; tf32, pinned transfers and graphs all ran.
    assert set(gpu["skipped"]) <= {"triton", "vector_fma", "sweep"}
    assert "graph capture" in fake_cuda and "device cuda:0" in fake_cuda
    # Identity from the device's properties and NVML, the catalog matched by name and CC.
    h = p.host
    assert (h["compute_capability"], h["multiprocessors"], h["backend"]) == ("9.0", 132, "cuda")
    assert h["caches"] == {"L1": 132 * 256 * 1024, "L2": 1 << 20}
    assert h["catalog"] == "NVIDIA H200 SXM"
    assert h["clocks_before"]["sm_clock_mhz"] == 1980
    assert h["clocks_after"]["power_limit_w"] == 700.0
    # Matrix units on CC 9.0: fp64 runs on DMMA, tf32 is its own ceiling, fp32 with TF32 off
    # stays on the vector units.
    labels = {c.label for c in p.measured.compute}
    assert {"fp64 tensor", "fp32 vector", "tf32 tensor", "fp16 tensor", "bf16 tensor",
            "fp8 tensor", "int8 tensor"} <= labels
    assert torch.backends.cuda.matmul.fp32_precision in ("none", "ieee", "tf32")
    pcie = p.measured.find_memory("PCIe")
    assert pcie is not None and "pinned" in pcie.method
    assert gpu["measurements"]["h2d_pinned"]["work_per_call"] == 1 << 20
    assert "d2h_pinned" in gpu["measurements"]
    # The graph replays 50 captured adds per replay: its per-kernel figure is one replay / 50.
    replay = gpu["measurements"]["graph_replay_per_kernel"]
    assert replay["inner"] == 50 and gpu["overheads"]["graph_replay_per_kernel_s"] > 0
    # Every ceiling was compared with the H200's datasheet figure; none is above it here.
    # The host link's is derived from PCIe Gen5 x16: 16 x 32 GT/s x 128/130 / 8 = 63.0 GB/s.
    checks = {r["ceiling"]: r for r in gpu["nominal_checks"]}
    assert set(checks) >= {"bf16 tensor", "fp64 tensor", "DRAM", "PCIe"}
    assert checks["PCIe"]["nominal"] == pytest.approx(16 * 32e9 * 128 / 130 / 8)
    assert p.nominal.find_memory("PCIe").provenance == "derived"
    assert not any(r["above_nominal"] for r in gpu["nominal_checks"])


def test_the_device_checks_table_reads_a_cuda_profile(fake_cuda):
    from rooflab.probe.gpu import probe_gpu

    spec = importlib.util.spec_from_file_location("gpu_check", ROOT / "benchmarks" /
                                                  "gpu_check.py")
    gc = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gc)
    p = probe_gpu("cuda:0", "quick", triton=False)
    results = gc.checks(p, [], 5.0, "quick", problems=[], cli=None)
    status = {name: s for name, s, _ in results}
    # An H200 by name: the targets apply, and a CPU's numbers fail them, as they must.
    assert status["copy >= 4.2 TB/s (read + write)"] == "FAIL"
    assert status["bf16 matmul >= 760 TFLOP/s"] == "FAIL"
    assert status["measured <= nominal (else flagged)"] == "PASS"
    assert status["L2 plateau found"] == "FAIL"           # no sweep without Triton
    assert status["probe <= 20 s"] == "PASS"
    text = gc.table(p, [], results, 6.0, {"probe": 5.0})
    assert "bf16 tensor" in text and "PCIe" in text and "graph_replay_per_kernel_s" in text
    assert "'sm_clock_mhz': 1980" in text


def test_cli_probe_on_cuda_prints_the_table_and_its_time(fake_cuda, capsys, tmp_path):
    import rooflab.probe.gpu as gpu
    from rooflab.cli.main import main

    real = gpu.probe_gpu
    out = tmp_path / "h200.json"
    import rooflab.errors as errors

    real_require = errors.require
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(gpu, "probe_gpu", lambda d, m, p=None: real(d, m, p, triton=False))
        # The CLI checks the device itself before its progress bar starts.
        mp.setattr(errors, "require", lambda module, *a, **k: FakeTorch([]) if module == "torch"
                   else real_require(module, *a, **k))
        assert main(["probe", "--device", "cuda:0", "--quick", "--quiet", "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "bf16 tensor peak" in printed and "PCIe bandwidth" in printed
    # fp64 has a vector and a tensor peak on an H200: each ridge names its unit
    # (34 / 4.8 = 7.08 and 67 / 4.8 = 14.0 FLOP/B), the fp32 one needs no unit.
    ridges = {ln.split("│")[1].strip(): ln.split("│")[2].strip() for ln in printed.splitlines()
              if ln.startswith("│ ridge")}
    assert ridges["ridge fp64 vector / DRAM"] == "7.08"
    assert ridges["ridge fp64 tensor / DRAM"] == "14"
    assert "ridge fp32 / DRAM" in ridges and "ridge fp64 / DRAM" not in ridges
    assert "probe took" in printed and out.exists()
