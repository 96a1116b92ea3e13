"""benchmarks/gpu_check.py loaded as a module, for the tests of its checks and table (it is
a script, not part of the package)."""

from __future__ import annotations

from benchmark_script import load_benchmark


def load_gpu_check(name: str = "gpu_check"):
    """A fresh module of the script (each call executes it anew: monkeypatches stay local)."""
    return load_benchmark("gpu_check", name)


def tiny_cpu_sizes(monkeypatch) -> None:
    """The GPU probe's quick mode on PyTorch's CPU device at the tiny sizes of the Triton
    rehearsal (256 KiB streams, a 64^3 matmul, 5 launches), two samples per measurement and
    the smallest cache flush (8 MiB, not 2x the host's L3): for tests of what gpu_check does
    around the probe, not of what it measures (the quick CPU-device sizes cost ~20 CPU-s per
    dry run on the 2-vCPU CI VM)."""
    import time

    import rooflab.probe.gpu as gpu
    from rooflab.probe.gpu import context as C
    from rooflab.probe.gpu.timing import clock_timer, torch_flush
    from rooflab.probe.timer import TimingPlan

    monkeypatch.setattr(gpu, "_make_timer", lambda torch, dev, host: clock_timer(
        time.perf_counter, flush=torch_flush(torch, dev, 0)))

    plan = TimingPlan(warmup_s=0.0, budget_s=0.0, min_samples=2, max_samples=2)
    monkeypatch.setitem(C.CPU_SIZES, "quick", C.Sizes(
        stream_bytes=1 << 18, sweep_lo=8 << 10, sweep_hi_l2=0.05, sweep_step=1.4,
        sweep_call_bytes=1 << 20, host_bytes=0, matmul_sizes=(64,), fma_iters=0,
        launch_calls=5, plan=plan, sweep_plan=plan))
