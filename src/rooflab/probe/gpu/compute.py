"""Compute ceilings: matmul peaks per precision through PyTorch, vector peaks through Triton.

A square matmul of size n does 2 n^3 FLOP (one multiply-add = 2 FLOP; FACTS.md). Inputs are
random, never zeros: on an H200 a bf16 matmul ran 13 % faster on zeros than on random data
(METHOD.md). The best call over several sizes is the ceiling, as seed 000 advises ("run a
few sizes and take the maximum as the attainable peak").
"""

from __future__ import annotations

import os
from contextlib import contextmanager

from ...model.ceiling import Ceiling
from ..stats import rates
from .context import Context, measured_ceiling
from .identity import gcn_arch
from .timing import time_calls

MATMUL_PRECISIONS = ("fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "int8")
VECTOR_PRECISIONS = ("fp64", "fp32", "fp16")
# Compute capabilities whose matrix units do fp64 (DMMA): A100, H100/H200, B200
# (NVIDIA architecture whitepapers); elsewhere fp64 matmuls run on the vector units.
FP64_TENSOR_CC = ("8.0", "9.0", "10.0")
# AMD targets whose matrix cores do fp64 (MFMA F64): CDNA2 gfx90a, CDNA3 gfx94x, CDNA4 gfx950
# (AMD CDNA 2/3/4 ISA guides; MI100's gfx908 has no fp64 MFMA). rocBLAS/hipBLASLt DGEMM runs
# there, so its peak is the "fp64 matrix" figure (163.4 TFLOP/s on an MI300X, not 81.7).
FP64_MATRIX_GFX = ("gfx90a", "gfx940", "gfx941", "gfx942", "gfx950")
# PyTorch's int8 GEMM calls cuBLASLt with no heuristic and a 0-byte workspace
# (aten/src/ATen/cuda/CUDABlas.cpp int8_gemm): what it gives is the library's figure.
INT8_METHOD = "torch._int_mm (cuBLASLt default algorithm and no workspace: a library figure)"
FMA_BLOCK = 1024
FMA_PROGRAMS_PER_SM = 32


@contextmanager
def fp32_matmul_mode(torch, mode: str):
    """Set CUDA fp32 matmuls to 'ieee' (TF32 off) or 'tf32' for the block, then restore."""
    m = torch.backends.cuda.matmul
    if hasattr(m, "fp32_precision"):
        # torch >= 2.9: the new API only; reading the legacy allow_tf32 after it raises.
        old = m.fp32_precision
        m.fp32_precision = mode
        try:
            yield
        finally:
            m.fp32_precision = old
    else:
        old = m.allow_tf32
        m.allow_tf32 = mode == "tf32"
        try:
            yield
        finally:
            m.allow_tf32 = old


# Variables that force TF32 on or off below PyTorch's switch: PyTorch's own (PR #77114: TF32
# for cuBLAS whatever allow_tf32 / fp32_precision says) and NVIDIA's library-level one
# (1 forces TF32 on, 0 off). Either one makes "fp32 vector" or "tf32 tensor" measure the
# other mode (review 14a #4), so the probe records them and checks what ran.
TF32_ENV = ("TORCH_ALLOW_TF32_CUBLAS_OVERRIDE", "NVIDIA_TF32_OVERRIDE")
# A 256 x 256 fp32 product against fp64: TF32 (10-bit mantissa inputs) errs by ~1e-4-1e-3
# of the largest element, IEEE fp32 by ~1e-7-1e-6. The boundary sits between the two.
TF32_ERROR_MIN = 3e-5
TF32_CHECK_N = 256
TF32_CONFIRM_N = 1024       # checked again at this size before a mode is skipped


def tf32_env(environ=None) -> dict[str, str | None]:
    """The TF32 override variables as this process sees them (None: unset)."""
    env = os.environ if environ is None else environ
    return {k: env.get(k) for k in TF32_ENV}


def fp32_matmul_error(torch, dev, mm=None, n: int = TF32_CHECK_N) -> float:
    """Largest error of an fp32 n^2 product against fp64, relative to the largest element:
    which path cuBLAS took, whatever the switches say (about a millisecond)."""
    a = torch.randn(n, n, device=dev)
    b = torch.randn(n, n, device=dev)
    got = (mm or torch.matmul)(a, b).double()
    ref = a.double() @ b.double()
    return float(((got - ref).abs().max() / ref.abs().max()).item())


def fp32_mode_problem(precision: str, rel_err: float, env: dict) -> str | None:
    """Why a measured fp32/tf32 matmul would carry the wrong label, or None when the mode
    took effect: "fp32" must run IEEE, "tf32" must run TF32."""
    tf32 = rel_err > TF32_ERROR_MIN
    if (precision == "tf32") == tf32:
        return None
    set_vars = ", ".join(f"{k}={v}" for k, v in env.items() if v is not None) or "none set"
    ran, asked = ("TF32", "TF32 off") if tf32 else ("IEEE fp32", "TF32 on")
    return (f"{ran} ran with {asked} (fp32 product vs fp64: relative error {rel_err:.1e}; "
            f"TF32 overrides: {set_vars}): not labelled {precision}")


def matmul_unit(ctx: Context, precision: str) -> str:
    if not ctx.is_cuda or precision == "fp32":
        return "vector"
    if precision == "fp64":
        if ctx.host.get("gcn_arch"):
            return "tensor" if ctx.host["gcn_arch"] in FP64_MATRIX_GFX else "vector"
        return "tensor" if ctx.host.get("compute_capability") in FP64_TENSOR_CC else "vector"
    return "tensor"


def fp8_dtype(torch, dev):
    """e4m3 as the device's fp8 GEMM takes it: OCP e4m3fn, except on MI300 (gfx940-942),
    whose matrix cores use the FNUZ variant: PyTorch's ROCm _scaled_mm refuses e4m3fn there
    (aten/src/ATen/native/cuda/Blas.cpp, `_scaled_mm_is_fnuz`)."""
    if getattr(torch.version, "hip", None) and dev.type == "cuda":
        if (gcn_arch(torch.cuda.get_device_properties(dev)) or "").startswith("gfx94"):
            return torch.float8_e4m3fnuz
    return torch.float8_e4m3fn


def matmul_op(torch, dev, precision: str, n: int):
    """A no-argument function computing one n x n x n product in `precision`."""
    if precision == "int8":
        a = torch.randint(-64, 64, (n, n), dtype=torch.int8, device=dev)
        # B column-major (K-major), as for fp8: the layout int8 tensor-core GEMMs run fastest.
        b = torch.randint(-64, 64, (n, n), dtype=torch.int8, device=dev).t()
        return lambda: torch._int_mm(a, b)
    if precision == "fp8":
        fp8 = fp8_dtype(torch, dev)
        a = torch.randn(n, n, device=dev).to(fp8)
        b = torch.randn(n, n, device=dev).to(fp8).t()   # _scaled_mm wants B column-major
        one = torch.ones((), device=dev)
        try:
            torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16,
                             use_fast_accum=True)
            fast = True
        except (RuntimeError, TypeError):
            fast = False
        return lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one,
                                        out_dtype=torch.bfloat16, use_fast_accum=fast)
    dtype = {"fp64": torch.float64, "fp32": torch.float32, "tf32": torch.float32,
             "fp16": torch.float16, "bf16": torch.bfloat16}[precision]
    a = torch.randn(n, n, device=dev, dtype=dtype)
    b = torch.randn(n, n, device=dev, dtype=dtype)
    out = torch.empty(n, n, device=dev, dtype=dtype)
    return lambda: torch.matmul(a, b, out=out)


def _matmul_best(ctx: Context, precision: str) -> Ceiling | None:
    torch, best = ctx.torch, None
    for n in ctx.sizes.matmul_sizes:
        name = f"matmul_{precision}_{n}"
        ctx.say(f"compute: {precision} matmul {n}")
        try:
            fn = matmul_op(torch, ctx.dev, precision, n)
            timing = time_calls(fn, ctx.timer, ctx.sizes.plan)
            # bf16 is judged (>= 760 TFLOP/s): its clocks under load, read before they fall.
            clocks = {"clocks": ctx.clocks_now()} if precision == "bf16" else {}
        except (RuntimeError, NotImplementedError, TypeError, AttributeError) as exc:
            ctx.skipped[name] = f"{type(exc).__name__}: {(str(exc).splitlines() or [''])[0][:200]}"
            continue
        finally:
            fn = None
        flop = 2.0 * n ** 3
        ctx.keep(name, timing, flop, "flop", kind="matmul", precision=precision, n=n,
                 flop_per_s_best=max(rates(flop, timing.samples)), **clocks)
        lib = INT8_METHOD if precision == "int8" else (
            f"torch._scaled_mm {str(fp8_dtype(torch, ctx.dev)).removeprefix('torch.float8_')}"
            if precision == "fp8" else "torch.matmul")
        c = measured_ceiling(flop, timing, precision=precision,
                             unit=matmul_unit(ctx, precision), source=ctx.source,
                             clocks=clocks.get("clocks"),
                             method=f"{lib} {n}x{n}x{n}, random inputs, 2n^3 FLOP, best call "
                                    f"over sizes {list(ctx.sizes.matmul_sizes)}")
        if best is None or c.value > best.value:
            best = c
    return best


def matmul_peaks(ctx: Context) -> list[Ceiling]:
    """One ceiling per precision the device runs; the rest are listed in ctx.skipped."""
    out = []
    for precision in MATMUL_PRECISIONS:
        if precision == "tf32" and not ctx.is_cuda:
            ctx.skipped["matmul_tf32"] = "TF32 is a mode of CUDA matrix units"
            continue
        try:
            if ctx.is_cuda and precision in ("fp32", "tf32"):
                with fp32_matmul_mode(ctx.torch, "tf32" if precision == "tf32" else "ieee"):
                    err = fp32_matmul_error(ctx.torch, ctx.dev)
                    check = {"relative_error_vs_fp64": err, "n": TF32_CHECK_N,
                             "tf32_env": tf32_env()}
                    problem = fp32_mode_problem(precision, err, tf32_env())
                    if problem:
                        # Confirm on a larger product before dropping a ceiling: a library
                        # could take another path for a small shape than for 8192.
                        err = fp32_matmul_error(ctx.torch, ctx.dev, n=TF32_CONFIRM_N)
                        check.update(relative_error_vs_fp64=err, n=TF32_CONFIRM_N,
                                     first_error=check["relative_error_vs_fp64"])
                        problem = fp32_mode_problem(precision, err, tf32_env())
                    ctx.record[f"{precision}_mode_check"] = check
                    if problem:
                        ctx.skipped[f"matmul_{precision}"] = problem
                        continue
                    c = _matmul_best(ctx, precision)
            else:
                c = _matmul_best(ctx, precision)
        except Exception as exc:  # noqa: BLE001 — e.g. a TF32 setting this torch refuses:
            # that precision is skipped (and said), the others (bf16 above all) still run
            ctx.skipped[f"matmul_{precision}"] = f"{type(exc).__name__}: {str(exc)[:200]}"
            continue
        if c is not None:
            out.append(c)
    triton_int8 = _triton_int8(ctx) if ctx.is_cuda else None
    if triton_int8 is not None:
        out.append(triton_int8)   # best_per_label keeps the faster int8 and names the other
    return out


def _triton_int8(ctx: Context) -> Ceiling | None:
    """int8 through a Triton tl.dot GEMM at the largest matmul size: the second method
    beside torch._int_mm's library path (review 14a #5); None, with the reason in skipped,
    when it cannot run."""
    kernels = ctx.triton_kernels()
    n = max(ctx.sizes.matmul_sizes)
    name = f"matmul_int8_triton_{n}"
    if kernels is None:
        return None           # skipped["triton"] says why
    if n % kernels.INT8_TILE[2]:
        ctx.skipped[name] = f"the Triton int8 GEMM needs n a multiple of {kernels.INT8_TILE[2]}"
        return None
    torch = ctx.torch
    ctx.say(f"compute: int8 Triton GEMM {n}")
    try:
        a = torch.randint(-64, 64, (n, n), dtype=torch.int8, device=ctx.dev)
        b = torch.randint(-64, 64, (n, n), dtype=torch.int8, device=ctx.dev).t()
        c = torch.empty(n, n, dtype=torch.int32, device=ctx.dev)
        timing = time_calls(lambda: kernels.launch_int8_matmul(a, b, c), ctx.timer,
                            ctx.sizes.plan)
    except Exception as exc:  # noqa: BLE001 — a compile error (ROCm LDS, an old Triton)
        ctx.skipped[name] = f"{type(exc).__name__}: {(str(exc).splitlines() or [''])[0][:200]}"
        return None
    flop = 2.0 * n ** 3
    ctx.keep(name, timing, flop, "flop", kind="matmul", precision="int8", n=n,
             flop_per_s_best=max(rates(flop, timing.samples)))
    bm, bn, bk = kernels.INT8_TILE
    return measured_ceiling(
        flop, timing, precision="int8", unit=matmul_unit(ctx, "int8"), source=ctx.source,
        method=f"Triton int8 tl.dot GEMM {n}x{n}x{n} (one untuned {bm}x{bn}x{bk} tile, int32 "
               f"accumulator), random inputs, 2n^3 OP, best call")


def vector_peaks(ctx: Context) -> list[Ceiling]:
    """fp64/fp32/fp16 FMA throughput on the vector units (Triton kernel, CUDA only)."""
    kernels = ctx.triton_kernels() if ctx.sizes.fma_iters else None
    if kernels is None:
        ctx.skipped.setdefault("vector_fma", "vector FMA peaks use a Triton kernel on CUDA")
        return []
    torch, iters = ctx.torch, ctx.sizes.fma_iters
    programs = ctx.host["multiprocessors"] * FMA_PROGRAMS_PER_SM
    dtypes = {"fp64": torch.float64, "fp32": torch.float32, "fp16": torch.float16}
    timer = ctx.timer.without_flush()   # registers only: nothing to flush
    out = []
    for precision in VECTOR_PRECISIONS:
        ctx.say(f"compute: {precision} vector FMA")
        buf = torch.empty(programs * FMA_BLOCK, device=ctx.dev, dtype=dtypes[precision])
        flop = 2.0 * iters * kernels.FMA_CHAINS * programs * FMA_BLOCK
        try:
            timing = time_calls(lambda b=buf, p=precision: kernels.launch_fma(
                b, iters, programs, FMA_BLOCK, p), timer, ctx.sizes.plan)
        except Exception as exc:  # noqa: BLE001 — a Triton compile error must not end the probe
            ctx.skipped[f"vector_{precision}"] = f"{type(exc).__name__}: {str(exc)[:200]}"
            continue
        ctx.keep(f"fma_{precision}", timing, flop, "flop", kind="fma", precision=precision,
                 flop_per_s_best=max(rates(flop, timing.samples)))
        out.append(measured_ceiling(
            flop, timing, precision=precision, unit="vector", source=ctx.source,
            method=f"Triton FMA kernel: {kernels.FMA_CHAINS} independent chains x {iters} "
                   f"iterations x {programs * FMA_BLOCK} elements, 2 FLOP per FMA, best call"))
    return out
