"""Triton kernels of the GPU probe, kept in one module that imports triton at the top.

Only the CUDA path imports this module (lazily, inside functions), so `import rooflab`,
the CPU-device dry run and CI without Triton never touch it. Each kernel's traffic or
arithmetic is fixed by construction, so its bytes and FLOP are counted exactly:

- copy / triad: each element read once and written once (bytes = reads + writes, as STREAM
  counts them, FACTS.md); 64-bit offsets so multi-GB buffers work.
- read_sweep: the programs share reps x nblocks block reads evenly (each block read `reps`
  times), accumulating so the loads cannot be dropped; `CACHE` ".cg" skips L1 (the L2 / DRAM
  curve), "" keeps it (L1).
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
    # One flat loop over the reps x nblocks block reads, program pid taking every nprog-th:
    # every program does floor or ceil(reps * nblocks / nprog) reads, so a call lasts as long
    # as the mean program, not as one with an extra block in each rep (review 14a #1: up to
    # 42 % lost with the nested loops). b = i % nblocks is kept by adding nprog % nblocks and
    # wrapping once per step (no modulo in the loop). When nprog divides nblocks a program
    # reads the same blocks in every rep (its own SM's L1 holds them: the L1 sweep).
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    step = nprog % nblocks
    b = pid % nblocks
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for _i in range(pid, reps * nblocks, nprog):
        # 64-bit offsets: sets beyond 8 GiB work
        acc += tl.load(x_ptr + b.to(tl.int64) * BLOCK + tl.arange(0, BLOCK), cache_modifier=CACHE)
        b += step
        b = tl.where(b >= nblocks, b - nblocks, b)
    tl.store(out_ptr + pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK), acc)


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
def int8_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk,
                       stride_bn, stride_cm, stride_cn, BLOCK_M: tl.constexpr,
                       BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    # The Triton matmul tutorial's kernel with int8 inputs and an int32 accumulator (sm_90:
    # IGMMA, i.e. wgmma): a second int8 method beside torch._int_mm's library path. K must
    # be a multiple of BLOCK_K (no K mask); rows and columns wrap (% M, % N) and are masked
    # on the store.
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    in_group = GROUP_M * num_pid_n
    first_m = (pid // in_group) * GROUP_M
    group_m = min(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + ((pid % in_group) % group_m)
    pid_n = (pid % in_group) // group_m
    offs_m = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_n = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.int32)
    for _k in range(0, tl.cdiv(K, BLOCK_K)):
        # out_dtype named: Triton 3.6 (the device's) asserts the accumulator's type equals
        # out_dtype, whose default is float32; 3.9 infers it from acc.
        acc = tl.dot(tl.load(a_ptrs), tl.load(b_ptrs), acc, out_dtype=tl.int32)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + rm[:, None].to(tl.int64) * stride_cm + rn[None, :] * stride_cn
    tl.store(c_ptrs, acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def empty_kernel(x_ptr):
    pass


def triton_dtype(name: str):
    return {"fp64": tl.float64, "fp32": tl.float32, "fp16": tl.float16, "bf16": tl.bfloat16}[name]


# Every launch asks for FP fusion explicitly: Triton 3.9 warns on each first compile that
# its unset default turns from enabled to disabled in 3.10 (triton/knobs.py warns only when
# it is None), and the FMA kernel's tl.fma does not depend on it (review 14a #13).
FP_FUSION = True
# The compiled kernel of each launch function's last launch (Triton returns it; None under
# the interpreter): gpu_check records its registers and spills (resources()).
COMPILED: dict[str, object] = {}


def _keep(name: str, compiled) -> None:
    if compiled is not None:
        COMPILED[name] = compiled


def launch_copy(src, dst, n: int) -> None:
    _keep("copy", copy_kernel[(triton.cdiv(n, BLOCK),)](src, dst, n, BLOCK=BLOCK, num_warps=8,
                                                        enable_fp_fusion=FP_FUSION))


def launch_triad(a, b, c, scalar: float, n: int) -> None:
    _keep("triad", triad_kernel[(triton.cdiv(n, BLOCK),)](a, b, c, scalar, n, BLOCK=BLOCK,
                                                          num_warps=8,
                                                          enable_fp_fusion=FP_FUSION))


def launch_read_sweep(x, out, nblocks: int, reps: int, programs: int, block: int,
                      cache: str) -> None:
    _keep(f"read_sweep{cache or '.ca'}_{block}", read_sweep_kernel[(programs,)](
        x, out, nblocks, reps, BLOCK=block, CACHE=cache, num_warps=4,
        enable_fp_fusion=FP_FUSION))


def launch_fma(out, iters: int, programs: int, block: int, dtype: str) -> None:
    # x -> x*a + b converges to b / (1 - a) = 1: no overflow, no denormals, in any dtype.
    _keep(f"fma_{dtype}", fma_kernel[(programs,)](out, 0.999, 0.001, iters, BLOCK=block,
                                                  DTYPE=triton_dtype(dtype), num_warps=4,
                                                  enable_fp_fusion=FP_FUSION))


# One fixed tile (no autotuning: one compile), the tutorial's fp8 choice for Hopper: 128 x 256
# x 128 int8, 3 stages = 144 KiB of shared memory, 8 warps. Compiled for sm_90 offline it
# issues IGMMA (benchmarks/gpu_kernels_sass.py).
INT8_TILE = (128, 256, 128)
INT8_GROUP_M = 8


def launch_int8_matmul(a, b, c) -> None:
    """c (int32, M x N) = a (int8, M x K) @ b (int8, K x N); K a multiple of INT8_TILE[2]."""
    (m, k), n = a.shape, b.shape[1]
    bm, bn, bk = INT8_TILE
    _keep("int8_matmul", int8_matmul_kernel[(triton.cdiv(m, bm) * triton.cdiv(n, bn),)](
        a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
        c.stride(1), BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=INT8_GROUP_M, num_warps=8,
        num_stages=3, enable_fp_fusion=FP_FUSION))


def launch_empty(x) -> None:
    _keep("empty", empty_kernel[(1,)](x, num_warps=1, enable_fp_fusion=FP_FUSION))


def resources() -> dict:
    """Registers, spills and shared memory of each kernel compiled so far, with Triton's
    version: the occupancy claims (8 sweep programs per SM, no spills) for the Triton the
    device runs, not the one the SASS was read with."""
    out = {"triton": triton.__version__}
    for name, k in sorted(COMPILED.items()):
        # n_regs and n_spills are set by the first launch (CompiledKernel._init_handles).
        out[name] = {"n_regs": getattr(k, "n_regs", None),
                     "n_spills": getattr(k, "n_spills", None), "shared": shared_bytes(k)}
    return out


def shared_bytes(k) -> int | None:
    """A compiled kernel's shared memory in bytes. Triton 3.x keeps it only in
    `k.metadata.shared` (metadata a namedtuple; `k.shared` does not exist, review s21 r8 F1);
    Triton 2.x set `k.shared` beside a dict `k.metadata`. Whichever is present is read."""
    if hasattr(k, "shared"):
        return k.shared
    meta = getattr(k, "metadata", None)
    if isinstance(meta, dict):
        return meta.get("shared")
    return getattr(meta, "shared", None)


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
    problems += _check_read_sweep(torch, device)
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
    launch_empty(o)
    return problems


def check_int8_matmul(torch, device) -> list[str]:
    """The int8 GEMM on 256 x 256 x 256 with B column-major, as the probe lays it out,
    against fp64 (exact here: |sums| <= 256 x 64^2 < 2^53). Apart from check_kernels: it is
    a second int8 method, and a Triton that cannot compile it must not fail the check of
    the kernels every figure depends on (gpu_check reports that as info); raises then."""
    n = 256
    a = torch.randint(-64, 64, (n, n), dtype=torch.int8, device=device)
    b = torch.randint(-64, 64, (n, n), dtype=torch.int8, device=device).t()
    c = torch.full((n, n), -1, dtype=torch.int32, device=device)
    launch_int8_matmul(a, b, c)
    want = a.double() @ b.double()
    if not torch.equal(c.double(), want):
        bad = (c.double() != want).sum().item()
        return [f"int8_matmul_kernel: {bad} of {n * n} results differ from the fp64 product"]
    return []


def _check_read_sweep(torch, device) -> list[str]:
    """Each program's sum is the sum of exactly the blocks memory.sweep_reads gives it, for
    fewer and for more programs than blocks: the kernel splits the work as the balance test
    (tests/test_probe_gpu_sweep.py) assumes."""
    from .memory import sweep_reads

    problems = []
    block = 2048
    for nblocks, programs, reps in ((8, 3, 5), (3, 8, 5)):
        x = torch.rand(nblocks * block, device=device)
        sums = x.double().reshape(nblocks, block).sum(dim=1).tolist()
        want = [sum(sums[b] for b in sweep_reads(p, nblocks, reps, programs))
                for p in range(programs)]
        out = torch.full((programs * block,), float("nan"), device=device)
        for cache in (".cg", ""):
            launch_read_sweep(x, out, nblocks, reps, programs, block, cache)
            got = out.double().reshape(programs, block).sum(dim=1).tolist()
            bad = [p for p in range(programs) if not abs(got[p] - want[p]) <= 1e-4 * want[p]]
            if bad:
                problems.append(f"read_sweep_kernel({cache!r}, {nblocks} blocks, {programs} "
                                f"programs): program {bad[0]} summed {got[bad[0]]:.6g}, "
                                f"its blocks {want[bad[0]]:.6g}")
    return problems
