"""The numba kernels of the CPU probe, compiled once and cached on disk (`cache=True`;
compiled on every run, with one warning, where numba finds no writable cache folder:
numba_cache).

Memory kernels are STREAM's (McCalpin, https://www.cs.virginia.edu/stream/ref.html):
copy, scale, add, triad, plus a read-only sum; each repeats `reps` passes over its arrays so
one call lasts long enough to time even when the arrays fit in L1. Stores are ordinary
(temporal) stores; no non-temporal stores are emitted (checked with `inspect_asm`).

The FMA kernels are written directly in LLVM IR (a numba intrinsic) because numba's
vectoriser does not keep independent SIMD accumulators in registers: `ert_blocks` loads
`NVEC` vectors of the CPU's SIMD width, applies `k` fused multiply-adds to each (`NVEC`
independent chains, enough to cover FMA pipes x latency), and stores them back — the
Empirical Roofline Toolkit's kernel (Lo et al., 2014, https://crd.lbl.gov/ert). With `k`
large and one block it measures the FMA peak; over a big array it traces the roof.
"""

from __future__ import annotations

from ...errors import require
from .numba_cache import disk_cache, njit
from .simd import simd_bits

numba = require("numba", "cpu", "the CPU probe kernels")
from llvmlite import ir  # noqa: E402  (numba depends on llvmlite)
from numba import types  # noqa: E402
from numba.core import cgutils  # noqa: E402
from numba.extending import intrinsic  # noqa: E402


def compile_features() -> frozenset[str]:
    """The ISA features numba compiles for, which also key its on-disk cache (codegen
    `magic_tuple`). The FMA kernel's vector width is baked into the cached code; taken
    from /proc/cpuinfo instead, it could differ from a cached kernel's (flags read another
    way, no /proc on macOS, NUMBA_CPU_FEATURES, NUMBA_ENABLE_AVX=0), and the kernel ran
    past its arrays: `malloc(): invalid size`, or a peak counted for lanes never run."""
    from numba.core import config
    from numba.core.codegen import get_host_cpu_features

    text = config.CPU_FEATURES if config.CPU_FEATURES is not None else get_host_cpu_features()
    return frozenset(f[1:].lower() for f in text.split(",") if f.startswith("+"))


SIMD_BITS = simd_bits(compile_features())
# Independent vector accumulators: >= FMA pipes x FMA latency (2 x 4 on Zen 4/5 and
# Skylake-SP..Granite Rapids, 4 x 4 on Neoverse V1) while leaving registers for the
# two broadcast operands (32 vector registers with AVX-512 / NEON, 16 with AVX2).
NVEC = 12 if SIMD_BITS == 256 else 16


def _this_file():
    """Stands for this file's kernels in disk_cache's check (kernels_scalar sits beside it
    and uses the same answer)."""


# numba raised "cannot cache function" at the first decorator below when no cache folder
# was writable (a read-only install, HOME not writable: review s23 r2 F1)
CACHE = disk_cache(_this_file)
_KW = dict(nogil=True, cache=CACHE, fastmath=True, boundscheck=False)


def lanes(itemsize: int) -> int:
    return SIMD_BITS // (8 * itemsize)


def block_elements(itemsize: int) -> int:
    """Elements one ert_blocks block covers (NVEC vectors)."""
    return NVEC * lanes(itemsize)


# --- STREAM kernels ------------------------------------------------------------------
@njit(**_KW)
def copy(a, b, reps):
    for _ in range(reps):
        for i in range(a.size):
            a[i] = b[i]
    return a[0]


@njit(**_KW)
def scale(a, b, s, reps):
    for _ in range(reps):
        for i in range(a.size):
            a[i] = s * b[i]
    return a[0]


@njit(**_KW)
def add(a, b, c, reps):
    for _ in range(reps):
        for i in range(a.size):
            a[i] = b[i] + c[i]
    return a[0]


@njit(**_KW)
def triad(a, b, c, s, reps):
    for _ in range(reps):
        for i in range(a.size):
            a[i] = b[i] + s * c[i]
    return a[0]


@njit(**_KW)
def read_sum(a, reps):
    total = 0.0
    for _ in range(reps):
        acc = 0.0
        for i in range(a.size):
            acc += a[i]
        total += acc
    return total


# --- FMA kernels (LLVM IR) -----------------------------------------------------------
def _splat(builder, value, vty):
    vec = ir.Constant(vty, ir.Undefined)
    for lane in range(vty.count):
        vec = builder.insert_element(vec, value, ir.Constant(ir.IntType(32), lane))
    return vec


def fma_blocks_codegen(simd: bool, barrier: str | None = None):
    """The LLVM IR of dst[block] = fma^k(src[block]) over `nblocks` blocks of NVEC
    registers: full-width SIMD vectors (llvm.fma.vNfB), or one lane each (llvm.fma.fB, the
    scalar ceiling's kernel: kernels_scalar). barrier: an inline-asm register constraint put
    on every FMA result so the vectoriser cannot pack scalar chains (None: none)."""

    def codegen(context, builder, signature, args):
        s_arr, d_arr, nb, kk, mm, cc = args
        aryty = signature.args[0]
        fty = context.get_value_type(aryty.dtype)
        size = context.get_abi_sizeof(fty)
        width = SIMD_BITS // (8 * size) if simd else 1
        rty = ir.VectorType(fty, width) if simd else fty
        i64 = ir.IntType(64)
        src_p = builder.bitcast(context.make_array(aryty)(context, builder, s_arr).data,
                                rty.as_pointer())
        dst_p = builder.bitcast(context.make_array(signature.args[1])(
            context, builder, d_arr).data, rty.as_pointer())
        mv, cv = (_splat(builder, mm, rty), _splat(builder, cc, rty)) if simd else (mm, cc)
        name = f"llvm.fma.v{width}f{8 * size}" if simd else f"llvm.fma.f{8 * size}"
        fma = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(rty, [rty, rty, rty]), name)
        accs = [cgutils.alloca_once(builder, rty) for _ in range(NVEC)]
        with cgutils.for_range(builder, nb) as blk:
            base = builder.mul(blk.index, ir.Constant(i64, NVEC))
            for j in range(NVEC):
                ptr = builder.gep(src_p, [builder.add(base, ir.Constant(i64, j))])
                builder.store(builder.load(ptr, align=size), accs[j])
            with cgutils.for_range(builder, kk):
                for j in range(NVEC):
                    v = builder.call(fma, [builder.load(accs[j]), mv, cv])
                    if barrier:
                        v = builder.asm(ir.FunctionType(rty, [rty]), "", barrier, [v], False)
                    builder.store(v, accs[j])
            for j in range(NVEC):
                out = builder.gep(dst_p, [builder.add(base, ir.Constant(i64, j))])
                builder.store(builder.load(accs[j]), out, align=size)
        return context.get_dummy_value()

    return codegen


@intrinsic
def _ert_blocks(typingctx, src, dst, nblocks, k, m, c):
    """dst[block] = fma^k(src[block]) for each of `nblocks` blocks of NVEC SIMD vectors."""
    sig = types.void(src, dst, types.int64, types.int64, src.dtype, src.dtype)
    return sig, fma_blocks_codegen(simd=True)


@njit(**_KW)
def ert(src, dst, nblocks, k, m, c, reps):
    """`reps` passes of k FMAs per element over nblocks blocks: 2*k FLOP per element,
    one load and one store per element."""
    for _ in range(reps):
        _ert_blocks(src, dst, nblocks, k, m, c)
    return dst[0]


# --- overhead and clock ----------------------------------------------------------------
@njit(nogil=True, cache=CACHE)
def empty(x):
    return x


@njit(nogil=True, cache=CACHE)
def alu_chain(x, n):
    """A dependent chain of 2n single-cycle integer ops (shift, then add): 2 cycles per
    iteration on every x86 and Arm core, so time / (2n) is the cycle time."""
    for _ in range(n):
        x = x + (x >> 7)
    return x


# --- the parallel driver --------------------------------------------------------------
# One parallel region runs one kernel per thread, each on its own row of 2-D arrays.
# numba's OpenMP/TBB pools keep their threads spinning between regions, as an OpenMP C
# benchmark does; threads that sleep between samples (a Python thread pool) lose their
# vCPU to other guests on a shared host and measured half the machine here.
COPY, SCALE, ADD, TRIAD, SUM, ERT, ALU = range(7)


@njit(parallel=True, nogil=True, cache=CACHE, fastmath=True, boundscheck=False)
def par_run(kind, a, b, c, s, k, nblocks, reps, out, n):
    """Run kernel `kind` on the first n elements of every row t of a, b, c (one row per
    thread); out[t] keeps each result so nothing is optimised away. Rows are longer than n
    when they come from the probe's array pool: each thread's row is the memory that
    thread first-touched (par_fill), whatever the working set (a[t, :n] stays contiguous)."""
    for t in numba.prange(a.shape[0]):
        if kind == COPY:
            out[t] = copy(a[t, :n], b[t, :n], reps)
        elif kind == SCALE:
            out[t] = scale(a[t, :n], b[t, :n], s, reps)
        elif kind == ADD:
            out[t] = add(a[t, :n], b[t, :n], c[t, :n], reps)
        elif kind == TRIAD:
            out[t] = triad(a[t, :n], b[t, :n], c[t, :n], s, reps)
        elif kind == SUM:
            out[t] = read_sum(a[t, :n], reps)
        elif kind == ERT:
            out[t] = ert(a[t], b[t], nblocks, k, s, 0.001, reps)
        else:
            out[t] = alu_chain(t + 1, reps)
    return out[0]


@njit(parallel=True, nogil=True, cache=CACHE, boundscheck=False)
def par_fill(a, value):
    """a[t, :] = value, each row written by the thread that later streams it: the same
    prange over rows as par_run, so Linux's first-touch policy puts every thread's pages on
    its own NUMA node (STREAM's parallel initialisation loop does the same)."""
    for t in numba.prange(a.shape[0]):
        row = a[t]
        for i in range(row.size):
            row[i] = value
    return a.shape[0]


@njit(parallel=True, nogil=True, cache=CACHE, fastmath=True, boundscheck=False)
def par_ert(a, b, m, k, nblocks, reps, out):
    """The FMA kernel alone (for fp32 arrays: compiling all of par_run again for float32
    would double the first run's compile time)."""
    for t in numba.prange(a.shape[0]):
        out[t] = ert(a[t], b[t], nblocks, k, m, 0.001, reps)
    return out[0]


# --- likwid-bench's other kernels (rooflab bench --kernel) ------------------------------
# Defined as likwid-bench's bench/x86-64/*.ptt kernels are (RRZE-HPC/likwid: store.ptt,
# update.ptt, daxpy.ptt, ddot.ptt); the byte and FLOP counts live in bench/kernel_runner.py.
@njit(**_KW)
def store_only(a, s, reps):
    """a[i] = v: one store per element, no load (likwid store.ptt). v changes each pass so
    no pass is a dead store of the next."""
    for r in range(reps):
        v = s + r
        for i in range(a.size):
            a[i] = v
    return a[0]


@njit(**_KW)
def update(a, s, reps):
    """a[i] = s*a[i]: one load and one store of the same element (likwid update.ptt)."""
    for _ in range(reps):
        for i in range(a.size):
            a[i] = s * a[i]
    return a[0]


@njit(**_KW)
def daxpy(a, b, s, reps):
    """b[i] = b[i] + s*a[i] (likwid daxpy.ptt: STR1 = s*STR0 + STR1)."""
    for _ in range(reps):
        for i in range(a.size):
            b[i] = b[i] + s * a[i]
    return b[0]


@njit(**_KW)
def ddot(a, b, reps):
    """sum of a[i]*b[i] (likwid ddot.ptt): two loads, no store."""
    total = 0.0
    for _ in range(reps):
        acc = 0.0
        for i in range(a.size):
            acc += a[i] * b[i]
        total += acc
    return total


STORE, UPDATE, DAXPY, DDOT = range(10, 14)


@njit(parallel=True, nogil=True, cache=CACHE, fastmath=True, boundscheck=False)
def par_more(kind, a, b, s, reps, out, n):
    """par_run for the kernels above (a separate region: par_run's cached code stays as
    it is), one row of a and b per thread."""
    for t in numba.prange(a.shape[0]):
        if kind == STORE:
            out[t] = store_only(a[t, :n], s, reps)
        elif kind == UPDATE:
            out[t] = update(a[t, :n], s, reps)
        elif kind == DAXPY:
            out[t] = daxpy(a[t, :n], b[t, :n], s, reps)
        else:
            out[t] = ddot(a[t, :n], b[t, :n], reps)
    return out[0]
