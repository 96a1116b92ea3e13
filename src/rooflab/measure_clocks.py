"""Which device a measured call runs on and the clock that times it: perf_counter on the
CPU, a CUDA event read after a synchronize on CUDA devices.

The device is the one given, else that of a CUDA tensor argument, else that of the ops
the counting pass saw (a closure's or a module's CUDA tensors). When none of these says
CUDA but CUDA is in use in the process (torch.cuda.is_initialized()), the CPU clock is
read after a torch.cuda.synchronize(): a `with` block or `measure(lambda: model(x))`
would otherwise time the kernel launches, not the kernels (torch.utils.benchmark.Timer
and triton's do_bench synchronize whatever the arguments are)."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

from .errors import DeviceError, require
from .probe.timer import Clock

PERF_COUNTER = "perf_counter"
SYNCED = "perf_counter after torch.cuda.synchronize()"
CUDA_EVENTS = "CUDA events"


def infer_device(args, kwargs) -> str:
    """cuda when any torch tensor argument lives on a CUDA device, else cpu."""
    torch = sys.modules.get("torch")   # None also when imports of torch are blocked
    if torch is None:
        return "cpu"
    for value in list(args) + list(kwargs.values()):
        if isinstance(value, torch.Tensor) and value.is_cuda:
            return str(value.device)
    return "cpu"


def cuda_arg_device(args, kwargs) -> str | None:
    """The device of a CUDA tensor argument, None when there is none."""
    device = infer_device(args, kwargs)
    return device if device.startswith("cuda") else None


def cuda_sync() -> Callable[[], None] | None:
    """A synchronize of every visible CUDA device when CUDA is in use in this process
    (torch imported and its CUDA context made), else None: nothing can be queued."""
    torch = sys.modules.get("torch")
    cuda = getattr(torch, "cuda", None)
    if cuda is None or not cuda.is_initialized():
        return None

    def sync() -> None:
        for index in range(cuda.device_count()):
            cuda.synchronize(index)

    return sync


def synced(clock: Clock, sync: Callable[[], Any] | None) -> Clock:
    """The clock read after `sync` (for single runs, which read the clock twice)."""
    if sync is None:
        return clock

    def read() -> float:
        sync()
        return clock()

    return read


def benchmark_clock(device: str | None, op_devices: tuple[str, ...] = ()
                    ) -> tuple[str, Clock, Callable[[], Any] | None, str]:
    """(device, clock, sync, how) for measure(fn): `device` given or from the arguments
    (None: neither), `op_devices` from the counting pass. `how` names the clock for meta."""
    if device is None:
        device = next((d for d in op_devices if d.startswith("cuda")), None)
    if device is not None:
        clock, sync = device_clock(device)
        return device, clock, sync, CUDA_EVENTS if device.startswith("cuda") else PERF_COUNTER
    sync = cuda_sync()
    return "cpu", time.perf_counter, sync, SYNCED if sync else PERF_COUNTER


def cpu_clock_warning(label: str, how: str, op_devices: tuple[str, ...]) -> str | None:
    """What to say when counted ops ran on CUDA but the CPU clock timed them unsynchronized
    (device="cpu" given): the time is that of the launches."""
    cuda = [d for d in op_devices if d.startswith("cuda")]
    if not cuda or how != PERF_COUNTER:
        return None
    return (f"measure(): '{label}' ran PyTorch ops on {cuda[0]} but was timed with the CPU "
            f"clock and no synchronize (device='cpu'), so the time is that of launching the "
            f"kernels, not of running them; drop device='cpu' or pass device='{cuda[0]}'")


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
