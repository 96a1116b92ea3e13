"""Review s21 r8 F2: the host<->device transfer stage leaves its pinned buffers unfilled.
torch.randint on the CPU filled the host buffer at about 20 ns a byte (5.5 s for the default
256 MiB) inside the judged probe time, and a PCIe DMA copy does not care what the bytes are.
The stage runs on CUDA only, so it runs here on PyTorch's CPU device dressed as a CUDA one
(test_probe_gpu_fakecuda's stand-ins)."""

from __future__ import annotations

import time
from dataclasses import replace

import pytest

torch = pytest.importorskip("torch")

from test_probe_gpu_fakecuda import FakeDevice, FakeTorch  # noqa: E402

from rooflab.probe.gpu import context, memory  # noqa: E402
from rooflab.probe.gpu.timing import clock_timer  # noqa: E402


def _no_randint(*args, **kw):
    raise AssertionError("torch.randint called: the host buffer is filled on the CPU")


def test_host_transfers_time_pinned_copies_without_filling_the_host_buffer(monkeypatch):
    monkeypatch.setattr(torch, "randint", _no_randint)
    # A CPU-only torch cannot pin; the copies themselves are what the stage times.
    monkeypatch.setattr(torch.Tensor, "pin_memory", lambda self: self)
    n = 1 << 20
    sizes = replace(context.CUDA_SIZES["quick"], host_bytes=n,
                    plan=context.CPU_SIZES["quick"].plan)
    ctx = context.Context(torch=FakeTorch([]), dev=FakeDevice(),
                          timer=clock_timer(time.perf_counter), sizes=sizes,
                          host={"name": "NVIDIA H200"}, source="test")
    out = memory.host_transfers(ctx)
    assert [c.level for c in out] == ["PCIe"]
    assert "host-to-device copy of 1 MiB from pinned memory" in out[0].method
    for name in ("h2d_pinned", "d2h_pinned"):
        assert ctx.record[name]["work_per_call"] == n
        assert ctx.record[name]["kind"] == "host_transfer"
    assert "host_transfers" not in ctx.skipped


def test_the_pinned_buffer_is_n_unfilled_bytes(monkeypatch):
    monkeypatch.setattr(torch, "randint", _no_randint)
    pinned = []
    monkeypatch.setattr(torch.Tensor, "pin_memory", lambda self: pinned.append(self) or self)
    buf = memory.pinned_host_buffer(torch, 3 << 20)
    assert (buf.dtype, buf.numel(), buf.device.type) == (torch.uint8, 3 << 20, "cpu")
    assert pinned == [buf]
