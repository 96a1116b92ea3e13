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
import sys
import time
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest
from gpu_check_script import load_gpu_check

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


def to_tf32(x):
    """fp32 rounded to TF32's 10-bit mantissa (nearest), as tensor cores read it."""
    bits = x.contiguous().view(torch.int32)
    return ((bits + 0x1000) & ~0x1FFF).view(torch.float32)


class FakeTorch:
    """The real torch with .cuda replaced and device=cuda arguments sent to the CPU. Its
    fp32 matmul rounds the inputs to TF32 when the TF32 switch is on, as cuBLAS does, or
    always with `force_tf32` True (TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1 / NVIDIA_TF32_OVERRIDE=1)
    and never with it False (NVIDIA_TF32_OVERRIDE=0)."""

    def __init__(self, log: list, force_tf32: bool | None = None):
        self.cuda = FakeCuda(log)
        self.version = SimpleNamespace(cuda="12.8")
        self.force_tf32 = force_tf32

    def matmul(self, a, b, **kw):
        m = torch.backends.cuda.matmul
        on = (getattr(m, "fp32_precision", None) == "tf32" if hasattr(m, "fp32_precision")
              else m.allow_tf32)
        if self.force_tf32 is not None:
            on = self.force_tf32
        if a.dtype == torch.float32 and on:
            a, b = to_tf32(a), to_tf32(b)
        return torch.matmul(a, b, **kw)

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
    # A suite run under TRITON_INTERPRET=1 must not have the fake CUDA probe refused.
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
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

    gc = load_gpu_check()
    p = probe_gpu("cuda:0", "quick", triton=False)
    results = gc.checks(p, [], 5.0, "quick", problems=[], cli=None)
    status = {name: s for name, s, _ in results}
    # An H200 by name: the targets apply, and a CPU's numbers fail them, as they must.
    assert status["copy >= 4.2 TB/s (read + write)"] == "FAIL"
    assert status["bf16 matmul >= 760 TFLOP/s"] == "FAIL"
    assert status["measured <= nominal, or flagged above it"] == "PASS"
    assert status[gc.L2_CHECK] == "FAIL"                  # no sweep without Triton
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


# --- review 14a #4, #8, #10 on the dressed-up CPU -----------------------------------------

@pytest.mark.parametrize(("force", "env", "lost", "kept", "ran"), [
    (True, {"TORCH_ALLOW_TF32_CUBLAS_OVERRIDE": "1"}, "fp32", "tf32 tensor", "TF32 ran with "
     "TF32 off"),
    (False, {"NVIDIA_TF32_OVERRIDE": "0"}, "tf32", "fp32 vector", "IEEE fp32 ran with TF32 on"),
])
def test_a_tf32_mode_that_did_not_take_effect_is_skipped_not_labelled(
        monkeypatch, force, env, lost, kept, ran):
    from rooflab.probe.gpu import probe_gpu

    for k, v in env.items():
        monkeypatch.setenv(k, v)
    with dressed_as_gpu(monkeypatch, FakeTorch([], force_tf32=force), _fake_nvml()):
        p = probe_gpu("cuda:0", "quick", triton=False)
    gpu = p.extras["gpu"]
    labels = {c.label for c in p.measured.compute}
    assert kept in labels and f"{lost} {'vector' if lost == 'fp32' else 'tensor'}" not in labels
    reason = gpu["skipped"][f"matmul_{lost}"]
    (name, value), = env.items()
    assert reason.startswith(ran) and f"{name}={value}" in reason
    assert reason.endswith(f"not labelled {lost}")
    assert p.host["tf32_env"][name] == value
    # The check's own numbers: TF32 errs ~3e-4 of the largest element, IEEE ~3e-7.
    check = gpu["measurements"][f"{lost}_mode_check"]
    err = check["relative_error_vs_fp64"]
    assert (1e-4 < err < 3e-3) if force else (err < 3e-6)
    # Confirmed on a 1024^2 product before the ceiling was dropped; the 256^2 error kept.
    assert check["n"] == 1024 and "first_error" in check
    kept_check = gpu["measurements"][f"{'tf32' if lost == 'fp32' else 'fp32'}_mode_check"]
    assert kept_check["n"] == 256 and "first_error" not in kept_check


class _LoadedNvml:
    """NVML whose first reading is an idle card and every later one a card under load at its
    power cap: what the clocks beside the judged rows must show."""

    def __init__(self):
        self.reads = 0
        base = _fake_nvml()
        for k, v in vars(base).items():
            setattr(self, k, v)
        self.nvmlDeviceGetClockInfo = self._clock
        self.nvmlDeviceGetPowerUsage = lambda h: 95_000 if self.reads <= 1 else 690_000
        self.nvmlDeviceGetCurrentClocksEventReasons = lambda h: 0x1 if self.reads <= 1 else 0x4

    def _clock(self, h, which):
        if which == 0:
            self.reads += 1
            return 345 if self.reads == 1 else 1755
        return 3201


def test_clocks_are_read_right_after_the_judged_measurements(monkeypatch):
    from rooflab.probe.gpu import probe_gpu

    nvml = _LoadedNvml()
    with dressed_as_gpu(monkeypatch, FakeTorch([]), nvml):
        p = probe_gpu("cuda:0", "quick", triton=False)
    rec = p.extras["gpu"]["measurements"]
    assert p.host["clocks_before"]["sm_clock_mhz"] == 345         # idle, before the run
    for name in ("matmul_bf16_96", "copy_torch"):
        assert rec[name]["clocks"]["sm_clock_mhz"] == 1755
        assert rec[name]["clocks"]["power_w"] == pytest.approx(690.0)
    assert "clocks" not in rec["matmul_fp16_96"]                  # only the judged ones
    gc = load_gpu_check()
    lines = gc.table(p, [], [], 1.0).splitlines()
    for label in ("bf16 tensor", "DRAM"):
        i = next(i for i, x in enumerate(lines) if x.startswith(label))
        assert lines[i + 1] == ("  under load    SM 1755 of 1980 MHz, mem 3201 MHz, 690 of "
                                "700 W, reasons: sw power cap")


def test_an_l2_unlike_the_catalogs_gets_a_host_note():
    from rooflab.probe.gpu import l2_catalog_note

    mib = 2 ** 20
    note = l2_catalog_note({"l2_bytes": 60 * mib, "catalog": "NVIDIA H200 SXM"})
    assert note.startswith("device reports L2 60 MiB, catalog 'NVIDIA H200 SXM' 50 MiB: the "
                           "sweep and its plateau labels use the device's figure")
    # within 5 % of the catalog's 50 MiB: no note; no catalog entry: no note
    assert l2_catalog_note({"l2_bytes": 52 * mib, "catalog": "NVIDIA H200 SXM"}) is None
    assert l2_catalog_note({"l2_bytes": 60 * mib, "catalog": None}) is None
