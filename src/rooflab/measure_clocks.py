"""Which device a measured call runs on and the clock that times it: perf_counter on the
CPU, a CUDA event read after a synchronize on CUDA devices."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

from .errors import DeviceError, require
from .probe.timer import Clock


def infer_device(args, kwargs) -> str:
    """cuda when any torch tensor argument lives on a CUDA device, else cpu."""
    torch = sys.modules.get("torch")   # None also when imports of torch are blocked
    if torch is None:
        return "cpu"
    for value in list(args) + list(kwargs.values()):
        if isinstance(value, torch.Tensor) and value.is_cuda:
            return str(value.device)
    return "cpu"


def device_clock(device: str) -> tuple[Clock, Callable[[], Any] | None]:
    """(clock, sync) for a device: perf_counter on the CPU; a CUDA event clock on GPUs."""
    if not str(device).startswith("cuda"):
        return time.perf_counter, None
    torch = require("torch", "gpu", "timing on CUDA devices")
    if not torch.cuda.is_available():
        raise DeviceError(f"no CUDA device is visible for '{device}'; use the CPU "
                          f"(--device cpu on the command line, device='cpu' in Python) or "
                          f"check CUDA_VISIBLE_DEVICES and the driver")
    return _cuda_event_clock(torch, device), None


def _cuda_event_clock(torch, device: str) -> Clock:
    # Seconds since a start event, read by recording an event and waiting for it: the
    # device time of all queued work (torch.cuda.Event.elapsed_time is in milliseconds).
    # Not exercised on the CPU-only CI; the GPU probe owns the full CUDA timer.
    dev = torch.device(device)
    with torch.cuda.device(dev):
        start = torch.cuda.Event(enable_timing=True)
        start.record()

    def clock() -> float:
        with torch.cuda.device(dev):
            now = torch.cuda.Event(enable_timing=True)
            now.record()
            now.synchronize()
        return start.elapsed_time(now) / 1e3

    return clock
