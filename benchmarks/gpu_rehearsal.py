"""gpu_check.py's CPU dry run as a rehearsal of its Triton path (review r4 F2).

    TRITON_INTERPRET=1 PYTHONPATH=src python3 benchmarks/gpu_check.py OUT --device cpu --quick

With TRITON_INTERPRET=1 set and triton importable, the dry run on PyTorch's CPU device runs
the stages the CUDA run gives to Triton, under Triton's interpreter: the preflight's empty
kernel, check_kernels, the int8 GEMM check, and the probe with triton=True (vector FMA,
Triton copy and triad, the working-set sweeps, the empty-kernel launch overhead), at tiny
sizes: the interpreter runs every program one after another in Python, so the figures are
not rates worth reading; what the rehearsal shows is that the code runs end to end.
Without the variable the dry run is what it was (no Triton); CUDA never comes here.

Only gpu_check.py's CPU path imports this module.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping

# Triton 3.6's interpreter calls int() on 1-element arrays (range() over a program id, in
# read_sweep_kernel); numpy 2.3 made that a TypeError with this text. Triton 3.9 is fine.
NUMPY_SCALAR_ERROR = "only 0-dimensional arrays can be converted to Python scalars"
KiB = 1 << 10
# The rehearsal's working-set sweep: 8 KiB (one Triton block of 2048 fp32) to 48 KiB,
# whatever the host's L2 (review r4 F1: a top relative to the L2 fell below the start on a
# small-L2 host), each set read about once a call.
SWEEP_LO = 8 * KiB
SWEEP_TOP = 48 * KiB
SWEEP_CALL_BYTES = 64 * KiB


def rehearsal_sizes(mode: str, caches: Mapping[str, float]):
    """Sizes for the probe under the interpreter: tiny and short, with the CUDA mode's sweep
    step, so the rehearsal runs the stages that mode runs on CUDA (the L1 sweep only where
    the step is under 1.5: default and full, as on the device)."""
    from rooflab.probe.gpu.context import CUDA_SIZES, Sizes
    from rooflab.probe.timer import TimingPlan

    # memory.cache_sweep tops the sweep at sweep_hi_l2 x its largest cache (the L2 on the
    # Triton path); this ratio puts the top at SWEEP_TOP on this host.
    top = caches.get("L2") or max((v for v in caches.values() if v), default=SWEEP_TOP)
    plan = TimingPlan(warmup_s=0.0, budget_s=0.0, min_samples=2, max_samples=2)
    return Sizes(stream_bytes=256 * KiB, sweep_lo=SWEEP_LO, sweep_hi_l2=SWEEP_TOP / top,
                 sweep_step=CUDA_SIZES[mode].sweep_step, sweep_call_bytes=SWEEP_CALL_BYTES,
                 host_bytes=0, matmul_sizes=(64,), fma_iters=2, launch_calls=5, plan=plan,
                 sweep_plan=plan)


def interpreter_problem(torch, dev, kernels) -> str | None:
    """One line when this Triton's interpreter cannot run here (Triton 3.6 with numpy >=
    2.3), found by running the read sweep on one 16-element block; None when it runs. Any
    other failure is left to the stages, which name it in their own rows."""
    x, out = torch.ones(16, device=dev), torch.empty(16, device=dev)
    try:
        kernels.launch_read_sweep(x, out, 1, 1, 1, 16, "")
    except Exception as exc:  # noqa: BLE001 — InterpreterError wraps the TypeError
        if NUMPY_SCALAR_ERROR in str(exc):
            import numpy
            import triton

            return (f"REHEARSAL SKIPPED: Triton {triton.__version__}'s interpreter fails "
                    f"under numpy {numpy.__version__} (>= 2.3 refuses int() of a 1-element "
                    f"array); install numpy<2.3 here to rehearse the Triton stages. The "
                    f"device's compiled kernels do not use the interpreter")
    return None


def start(torch, dev, environ=None) -> dict | None:
    """What the dry run rehearses: None without TRITON_INTERPRET (as before), else
    {"triton": True} or {"triton": False, "why": one line} (triton missing, or an
    interpreter that cannot run here)."""
    from rooflab.probe.gpu import interpreter_refusal

    if dev.type != "cpu" or interpreter_refusal(environ) is None:
        return None
    try:
        from rooflab.probe.gpu import kernels
    except ImportError as exc:
        return {"triton": False, "why": f"REHEARSAL SKIPPED: TRITON_INTERPRET is set but "
                                         f"triton is not importable ({exc})"}
    why = interpreter_problem(torch, dev, kernels)
    return {"triton": False, "why": why} if why else {"triton": True}


@contextlib.contextmanager
def tiny_sizes(torch, dev, mode: str) -> Iterator[object]:
    """The probe's CPU sizes of `mode` replaced by rehearsal_sizes for the block's length
    (probe_gpu reads them through context.sizes_for at its start)."""
    from rooflab.probe.gpu import context
    from rooflab.probe.gpu.identity import identify

    sizes = rehearsal_sizes(mode, identify(torch, dev).get("caches") or {})
    old = context.CPU_SIZES[mode]
    context.CPU_SIZES[mode] = sizes
    try:
        yield sizes
    finally:
        context.CPU_SIZES[mode] = old


def row(rehearsal: dict) -> tuple[str, str, str]:
    """The table's line on the rehearsal (info: what ran is judged in the rows above)."""
    name = "Triton path rehearsed under TRITON_INTERPRET (CPU dry run)"
    if not rehearsal.get("triton"):
        return (name, "info", rehearsal.get("why") or "not run")
    return (name, "info", "preflight, check_kernels, int8 GEMM check and the probe's Triton "
                          "stages ran under the interpreter at tiny sizes (their rates mean "
                          "nothing)")
