"""Peak FLOP/s per precision: an FMA-throughput kernel, BLAS GEMM through numpy, and
low precisions through PyTorch's CPU matmul where the CPU has a fast path.

The ceiling is the best of the methods (issue 3): the FMA kernel shows what the core can
retire, GEMM what the installed BLAS reaches (it may run far below, e.g. with
OPENBLAS_CORETYPE forcing AVX2 kernels — worth telling the user).
One multiply-add is 2 FLOP everywhere.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ...errors import install_command
from ...units import fmt_times
from ..timer import TimingPlan
from .bandwidth import rows_of
from .runner import Rate, Team, measure_rate

FMA_PER_CALL = 2048   # FMAs per element per kernel call: the block stays in registers
DTYPES = {"fp64": np.float64, "fp32": np.float32}


# A vector FMA kernel at under this many times the scalar one did not use its SIMD lanes
# (or the scalar kernel was vectorised): the two ceilings would tell a loop nothing.
LEAST_SIMD_RATIO = 1.5
# Above this many times the scalar one, the scalar kernel was held up: the ratio is the
# lanes (both kernels issue on the same FMA pipes), at most 16 (AVX-512 fp32), so 2x that
# is no width (review s19 x2 F17: a loaded VM read 522 for fp64, 12.9 vs 0.196 GFLOP/s).
MOST_SIMD_RATIO = 32.0


def simd_ratio_note(p: str, ratio: float) -> str | None:
    """What a vector/scalar FMA ratio outside [LEAST_SIMD_RATIO, MOST_SIMD_RATIO] says
    (the full run's notes, probe/cpu/assemble.py; a scaling row's flags, scaling.py)."""
    if ratio < LEAST_SIMD_RATIO:
        return (f"{p}: the vector FMA peak is only {fmt_times(ratio)} the scalar one (SIMD lanes "
                f"would give 2-16x): other load held the vector kernel up, or the scalar "
                f"kernel was vectorised; rerun on a quiet machine")
    if ratio > MOST_SIMD_RATIO:
        return (f"{p}: the vector FMA peak is {fmt_times(ratio)} the scalar one (SIMD lanes would "
                f"give 2-16x): other load held the scalar kernel up, so the {p} scalar "
                f"ceiling and its ridges are too low; rerun on a quiet machine")
    return None


def fp32_below_fp64(compute: list) -> tuple[list, str | None]:
    """The compute ceilings with a warning on an fp32 vector ceiling measured below the fp64
    one, and the note saying why that is impossible (None when in order). An fp32 SIMD
    vector holds twice the lanes of an fp64 one on the same FMA pipes, so an undisturbed
    fp32 peak is about 2x fp64's; below 1x, other load held the fp32 kernels up and that
    ceiling judges every fp32 kernel high (review s33 D: fp32 9.36 GFLOP/s under fp64's
    71.3 on a loaded 2-vCPU VM, and `ai matmul --dtype fp32 --on` took the 9.36)."""
    from dataclasses import replace

    from ...units import si

    vec = {c.precision: c for c in compute if c.unit == "vector"}
    f64, f32 = vec.get("fp64"), vec.get("fp32")
    if f64 is None or f32 is None or f32.value >= f64.value:
        return list(compute), None
    note = (f"fp32 vector peak {si(f32.value, 'FLOP/s')} measured below fp64's "
            f"{si(f64.value, 'FLOP/s')}, which is impossible on an undisturbed run (an fp32 "
            f"SIMD vector holds twice the lanes of an fp64 one: about 2x fp64's rate): other "
            f"load held the fp32 kernels up, so every fp32 % of roof judged by it reads "
            f"high; rerun on a quiet machine")
    return [replace(c, warnings=c.warnings + (note,)) if c is f32 else c
            for c in compute], note


@dataclass(frozen=True)
class Measured:
    """One method's measurement of one precision (FLOP/s samples) and its description."""

    precision: str
    method: str
    rate: Rate


def fma_peak(precision: str, team: Team, plan: TimingPlan, clock=time.perf_counter
             ) -> Measured:
    """NVEC independent SIMD FMA chains per thread, kept in registers (kernels.ert)."""
    from . import kernels as K

    dtype = DTYPES[precision]
    item = np.dtype(dtype).itemsize
    n = K.block_elements(item)
    src = rows_of(team.threads, n, 0.5, dtype)
    dst = rows_of(team.threads, n, 0.0, dtype)
    out = np.zeros(team.threads)
    m = dtype(0.999)   # x -> 0.999x + 0.001 stays near 1: no denormals

    def call(reps: int) -> None:
        if dtype is np.float64:
            K.par_run(K.ERT, src, dst, dst, m, FMA_PER_CALL, 1, reps, out, n)
        else:
            K.par_ert(src, dst, m, FMA_PER_CALL, 1, reps, out)

    rate = measure_rate(call, 2.0 * FMA_PER_CALL * n * team.threads, plan, clock=clock)
    method = (f"FMA throughput: {K.NVEC} independent {K.SIMD_BITS}-bit FMA chains per thread "
              f"(LLVM llvm.fma.v{K.lanes(item)}f{8 * item}), {team.threads} threads, "
              f"value = best sample")
    return Measured(precision, method, rate)


def scalar_fma_peak(precision: str, team: Team, plan: TimingPlan, clock=time.perf_counter
                    ) -> Measured:
    """fma_peak with one lane: NVEC independent scalar FMA chains per thread
    (kernels_scalar), the in-core ceiling a loop that is not vectorised is held to."""
    from . import kernels as K
    from . import kernels_scalar as KS

    dtype = DTYPES[precision]
    n = K.NVEC
    src = rows_of(team.threads, n, 0.5, dtype)
    dst = rows_of(team.threads, n, 0.0, dtype)
    out = np.zeros(team.threads)
    m = dtype(0.999)

    def call(reps: int) -> None:
        KS.par_ert_scalar(src, dst, m, FMA_PER_CALL, 1, reps, out)

    rate = measure_rate(call, 2.0 * FMA_PER_CALL * n * team.threads, plan, clock=clock)
    bits = 8 * np.dtype(dtype).itemsize
    method = (f"scalar FMA throughput (no SIMD): {K.NVEC} independent scalar FMA chains per "
              f"thread (LLVM llvm.fma.f{bits}), {team.threads} threads, value = best sample")
    return Measured(precision, method, rate)


def _blas_threads(threads: int):
    """Limit BLAS threads when threadpoolctl is available (else BLAS uses its default)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        import contextlib

        return contextlib.nullcontext()
    return threadpool_limits(limits=threads, user_api="blas")


def blas_threads_match(threads: int) -> bool:
    """Whether GEMM runs on `threads` threads: threadpoolctl can set it, or the BLAS's own
    default (all CPUs) is what was asked for."""
    import importlib.util

    from ..cpus import mask_cpus

    return importlib.util.find_spec("threadpoolctl") is not None or threads >= mask_cpus()


def gemm_peak(precision: str, sizes: tuple[int, ...], threads: int, plan: TimingPlan,
              clock=time.perf_counter) -> tuple[Measured, dict[int, float]]:
    """numpy matmul (BLAS) of n x n matrices; the best size's samples, and each size's best
    sample (FLOP/s by n: the JSON's gemm_by_size), as the peak itself is the best sample."""
    from ...hardware.host import blas_info

    dtype = DTYPES[precision]
    rng = np.random.default_rng(0)
    best: Rate | None = None
    best_n = 0
    bests: dict[int, float] = {}
    with _blas_threads(threads):
        for n in sizes:
            a, b = rng.random((n, n)).astype(dtype), rng.random((n, n)).astype(dtype)
            out = np.empty((n, n), dtype=dtype)

            def call(reps: int, a=a, b=b, out=out) -> None:
                for _ in range(reps):
                    np.matmul(a, b, out=out)

            rate = measure_rate(call, 2.0 * n**3, plan, clock=clock)
            bests[n] = rate.best
            if best is None or rate.best > best.best:
                best, best_n = rate, n
    method = (f"numpy matmul {best_n}x{best_n}x{best_n} ({blas_info()}), "
              f"2n^3 FLOP, best of sizes {list(sizes)}, value = best sample")
    return Measured(precision, method, best), bests


# --- low precision through PyTorch ---------------------------------------------------------
def torch_matmul_peak(precision: str, n: int, threads: int, plan: TimingPlan,
                      clock=time.perf_counter) -> Measured | str:
    """torch CPU matmul (oneDNN) for bf16/fp16, torch._int_mm for int8. Returns the
    measurement, or a reason (str) why it could not be measured."""
    try:
        import torch
    except ImportError:
        return f"PyTorch is not installed; install it with: {install_command('torch')}"
    old = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        if precision == "int8":
            a = torch.randint(-64, 64, (n, n), dtype=torch.int8)
            b = torch.randint(-64, 64, (n, n), dtype=torch.int8)
            op, what = (lambda: torch._int_mm(a, b)), "torch._int_mm int8 x int8 -> int32"
        else:
            dt = {"bf16": torch.bfloat16, "fp16": torch.float16}[precision]
            a, b = torch.rand(n, n).to(dt), torch.rand(n, n).to(dt)
            op, what = (lambda: torch.matmul(a, b)), f"torch.matmul {precision}"
        try:
            op()
        except (RuntimeError, NotImplementedError) as exc:
            return f"{what} failed on this CPU: {str(exc).splitlines()[0][:120]}"

        def call(reps: int) -> None:
            for _ in range(reps):
                op()

        rate = measure_rate(call, 2.0 * n**3, plan, clock=clock)
    finally:
        torch.set_num_threads(old)
    method = (f"{what} {n}x{n}x{n} (PyTorch {torch.__version__} CPU), {threads} threads, "
              f"2n^3 FLOP (int8: 2 OP per multiply-add), value = best sample")
    return Measured(precision, method, rate)
