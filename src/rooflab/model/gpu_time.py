"""Whether a kernel's time is GPU-side: a profiler's device duration (Nsight Compute's
gpu__time_duration, rocprof's kernel begin-to-end, the torch profiler's CUDA kernel time
linked to each op). Such a time never contains the CPU launch cost, so the launch floor
is no part of it at any length: not in its bound class, its gain or its advice (review s21
r3 F1: 200 ncu launches of 5.1 us read "overhead-bound, CUDA graph 2.60x" and the same at
4.9 us "memory, 40 % of roof"; graphs cannot shrink a GPU-side duration). Its per-kernel
cost is closed by fewer kernels (fusion, batching). Pure: no I/O.
"""

from __future__ import annotations

from .kernel import Kernel

# The readers whose `seconds` are device durations: ingest.aggregate.group_kernel (ncu,
# rocprof); ingest.torch_trace_groups sets "torch.profiler" with meta time "cuda kernels"
# on a CUDA trace ("cpu op" on a CPU-only trace: a host duration, launch cost included).
DEVICE_TIME_SOURCES = frozenset({"ncu", "rocprof"})
TORCH_DEVICE_TIME = "cuda kernels"


def gpu_side_time(kernel: Kernel) -> bool:
    """Whether the kernel's measured time is a GPU-side duration (module doc)."""
    if kernel.seconds is None:
        return False
    source = kernel.meta.get("source")
    if not isinstance(source, str):   # a list or dict is unhashable (s23 r4 F5)
        return False
    if source in DEVICE_TIME_SOURCES:
        return True
    return source == "torch.profiler" and kernel.meta.get("time") == TORCH_DEVICE_TIME
