"""Triton kernels of the GPU probe, kept in one module that imports triton at the top.

Only the CUDA path imports this module (lazily, inside functions), so `import rooflab`,
the CPU-device dry run and CI without Triton never touch it. Each kernel's traffic or
arithmetic is fixed by construction, so its bytes and FLOP are counted exactly:

- copy / triad: each element read once and written once (bytes = reads + writes, as STREAM
  counts them, FACTS.md); 64-bit offsets so multi-GB buffers work.
- read_sweep: every program re-reads the same blocks `reps` times, accumulating so the
  loads cannot be dropped; `CACHE` ".cg" skips L1 (the L2 / DRAM curve), "" keeps it (L1).
- fma: 8 independent FMA chains per element (enough instruction-level parallelism to keep
  the FMA pipes full), 2 FLOP per FMA, the result stored so nothing is eliminated.
- empty: no work, for launch latency.
"""

from __future__ import annotations

import triton
import triton.language as tl

BLOCK = 4096
FMA_CHAINS = 8
# Triton compiles one kernel per specialisation of its int arguments (== 1, divisible by 16
# or neither). The sweep's block and repeat counts and the FMA loop count change with every
# working set and between check_kernels and the probe: specialised, they cost up to 3 more
# compiles of the sweep and 3 of the FMA kernel (a second or so each on a cold cache, inside
# the probe's 60 s / 20 s budget) for loop bounds that gain nothing from it. Sizes that
# address memory (n of copy and triad) stay specialised: their alignment vectorises loads.


@triton.jit
def copy_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


@triton.jit
def triad_kernel(a_ptr, b_ptr, c_ptr, scalar, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    b = tl.load(b_ptr + offs, mask=mask)
    c = tl.load(c_ptr + offs, mask=mask)
    tl.store(a_ptr + offs, b + scalar * c, mask=mask)


@triton.jit(do_not_specialize=["nblocks", "reps"])
def read_sweep_kernel(x_ptr, out_ptr, nblocks, reps, BLOCK: tl.constexpr, CACHE: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)   # a 64-bit loop index: sets beyond 8 GiB work
    nprog = tl.num_programs(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for _r in range(reps):
        for b in range(pid, nblocks, nprog):
            acc += tl.load(x_ptr + b * BLOCK + tl.arange(0, BLOCK), cache_modifier=CACHE)
    tl.store(out_ptr + pid * BLOCK + tl.arange(0, BLOCK), acc)


@triton.jit(do_not_specialize=["iters"])
def fma_kernel(out_ptr, a, b, iters, BLOCK: tl.constexpr, DTYPE: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    base = (offs % 13).to(tl.float32) * 0.01
    av = tl.cast(a, DTYPE)
    bv = tl.cast(b, DTYPE)
    x0 = (base + 0.1).to(DTYPE)
    x1 = (base + 0.2).to(DTYPE)
    x2 = (base + 0.3).to(DTYPE)
    x3 = (base + 0.4).to(DTYPE)
    x4 = (base + 0.5).to(DTYPE)
    x5 = (base + 0.6).to(DTYPE)
    x6 = (base + 0.7).to(DTYPE)
    x7 = (base + 0.8).to(DTYPE)
    for _i in range(iters):
        x0 = tl.fma(x0, av, bv)
        x1 = tl.fma(x1, av, bv)
        x2 = tl.fma(x2, av, bv)
        x3 = tl.fma(x3, av, bv)
        x4 = tl.fma(x4, av, bv)
        x5 = tl.fma(x5, av, bv)
        x6 = tl.fma(x6, av, bv)
        x7 = tl.fma(x7, av, bv)
    tl.store(out_ptr + offs, ((x0 + x1) + (x2 + x3)) + ((x4 + x5) + (x6 + x7)))


@triton.jit
def empty_kernel(x_ptr):
    pass


def triton_dtype(name: str):
    return {"fp64": tl.float64, "fp32": tl.float32, "fp16": tl.float16, "bf16": tl.bfloat16}[name]


def launch_copy(src, dst, n: int) -> None:
    copy_kernel[(triton.cdiv(n, BLOCK),)](src, dst, n, BLOCK=BLOCK, num_warps=8)


def launch_triad(a, b, c, scalar: float, n: int) -> None:
    triad_kernel[(triton.cdiv(n, BLOCK),)](a, b, c, scalar, n, BLOCK=BLOCK, num_warps=8)


def launch_read_sweep(x, out, nblocks: int, reps: int, programs: int, block: int,
                      cache: str) -> None:
    read_sweep_kernel[(programs,)](x, out, nblocks, reps, BLOCK=block, CACHE=cache,
                                   num_warps=4)


def launch_fma(out, iters: int, programs: int, block: int, dtype: str) -> None:
    # x -> x*a + b converges to b / (1 - a) = 1: no overflow, no denormals, in any dtype.
    fma_kernel[(programs,)](out, 0.999, 0.001, iters, BLOCK=block, DTYPE=triton_dtype(dtype),
                            num_warps=4)


def launch_empty(x) -> None:
    empty_kernel[(1,)](x, num_warps=1)


def check_kernels(torch, device) -> list[str]:
    """Run every kernel once on small random inputs and compare with torch (METHOD.md:
    correct first). Returns the problems found; [] when all agree. Runs on a CUDA device,
    or on the CPU under TRITON_INTERPRET=1 (how CI without a GPU checks the kernels)."""
    problems = []
    n = 3 * BLOCK
    src = torch.rand(n, device=device)
    dst = torch.full((n,), float("nan"), device=device)   # poisoned: every element written?
    launch_copy(src, dst, n)
    if not torch.equal(src, dst):
        problems.append("copy_kernel: output differs from its input")
    a = torch.full((n,), float("nan"), device=device)
    b, c = torch.rand(n, device=device), torch.rand(n, device=device)
    launch_triad(a, b, c, 1.5, n)
    if not torch.allclose(a, b + 1.5 * c):
        problems.append("triad_kernel: a != b + 1.5 c")
    block, nblocks, programs, reps = 2048, 8, 3, 5
    x = torch.rand(nblocks * block, device=device)
    out = torch.full((programs * block,), float("nan"), device=device)
    for cache in (".cg", ""):
        launch_read_sweep(x, out, nblocks, reps, programs, block, cache)
        got, want = out.double().sum().item(), reps * x.double().sum().item()
        if not abs(got - want) <= 1e-4 * want:
            problems.append(f"read_sweep_kernel({cache!r}): sum {got} != {reps} x sum(x) {want}")
    iters, elems = 20, 2 * 1024
    base = (torch.arange(elems, device=device) % 13).double() * 0.01
    ref = torch.zeros(elems, dtype=torch.float64, device=device)
    for j in range(FMA_CHAINS):
        v = base + 0.1 * (j + 1)
        for _ in range(iters):
            v = v * 0.999 + 0.001
        ref += v
    # The kernel's start values are made in fp32, so fp64 agrees to fp32 rounding only.
    tol = {"fp64": 1e-6, "fp32": 1e-5, "fp16": 1e-2}
    for name, dtype in (("fp64", torch.float64), ("fp32", torch.float32),
                        ("fp16", torch.float16)):
        o = torch.full((elems,), float("nan"), dtype=dtype, device=device)
        launch_fma(o, iters, 2, 1024, name)
        err = ((o.double() - ref).abs().max() / ref.abs().max()).item()
        if not err <= tol[name]:
            problems.append(f"fma_kernel({name}): relative error {err:.2e} > {tol[name]:.0e}")
    launch_empty(x)
    return problems
