"""The scalar (one-lane) FMA kernel: the in-core ceiling under the SIMD one.

Williams et al.'s roofline (CACM 2009) and Intel Advisor draw "scalar" compute ceilings
below the vector peak, so a compute-limited loop that is not vectorised reads "vectorise:
up to Nx" rather than "at 12 % of roof". This is kernels.ert with one lane: `NVEC`
independent scalar FMA chains per thread (llvm.fma.f64 / llvm.fma.f32), loaded from and
stored to a register-resident block, the same structure and FLOP count per element.

LLVM's SLP vectoriser may pack isomorphic independent scalar chains into SIMD vectors
(numba 0.68 / LLVM here does not, but another build could), which would measure the vector
peak again; an empty inline-asm register barrier on each chain (per FMA, no instruction
emitted) keeps every value in its own scalar register: the compiled kernel is 12
vfmadd213sd (ss for fp32) on xmm registers on this Zen 3 (checked with inspect_asm). On a
CPU without a known barrier constraint the kernel has none (`barrier_isa()` is None).
"""

from __future__ import annotations

import platform

from ...errors import require

numba = require("numba", "cpu", "the CPU probe kernels")
from numba import types  # noqa: E402
from numba.extending import intrinsic  # noqa: E402

from .kernels import CACHE, fma_blocks_codegen  # noqa: E402
from .numba_cache import njit  # noqa: E402  (numba's, with rooflab's cache folder)

# The inline-asm constraint that ties a float to a SIMD/FP register: x86's xmm ("x"),
# AArch64's v ("w"). The asm is empty: it only hides the value from the vectoriser.
_BARRIER = {"x86_64": "=x,0", "amd64": "=x,0", "aarch64": "=w,0", "arm64": "=w,0"}


def barrier_isa() -> str | None:
    """The barrier constraint for this machine, None where none is known."""
    return _BARRIER.get(platform.machine().lower())


@intrinsic
def _ert_scalar_blocks(typingctx, src, dst, nblocks, k, m, c):
    """dst[block] = fma^k(src[block]) for each of `nblocks` blocks of NVEC scalars."""
    sig = types.void(src, dst, types.int64, types.int64, src.dtype, src.dtype)
    return sig, fma_blocks_codegen(simd=False, barrier=barrier_isa())


@njit(nogil=True, cache=CACHE, fastmath=True, boundscheck=False)
def ert_scalar(src, dst, nblocks, k, m, c, reps):
    """`reps` passes of k scalar FMAs per element over nblocks blocks: 2*k FLOP per
    element, as kernels.ert."""
    for _ in range(reps):
        _ert_scalar_blocks(src, dst, nblocks, k, m, c)
    return dst[0]


@njit(parallel=True, nogil=True, cache=CACHE, fastmath=True, boundscheck=False)
def par_ert_scalar(a, b, m, k, nblocks, reps, out):
    """The scalar FMA kernel on every thread, one row of a and b each (kernels.par_ert)."""
    for t in numba.prange(a.shape[0]):
        out[t] = ert_scalar(a[t], b[t], nblocks, k, m, 0.001, reps)
    return out[0]
