"""Shared memory per SM and per thread block, keyed by CUDA compute capability: what a
GEMM's staged tiles must fit in (`rooflab ai matmul --tile ... --on GPU`).

Source: NVIDIA CUDA C++ Programming Guide (legacy edition, CUDA 12.x/13.0), "Compute
Capabilities": Table 27 "Technical Specifications per Compute Capability" (rows "Maximum
amount of shared memory per SM" and "... per thread block", KB = 1024 bytes) and the
per-architecture "Shared Memory" sections, which give 7.0's numbers (the table starts at
7.5):
  7.0 (Volta)  96 KB per SM; "a single thread block can address the full capacity"
  7.5 (Turing) 64 KB per SM, 64 KB per block
  8.0, 8.7     164 KB per SM, 163 KB per block
  8.6, 8.9     100 KB per SM, 99 KB per block
  9.0, 10.0    228 KB per SM, 227 KB per block
  12.0         100 KB per SM, 99 KB per block
From 8.x on, "the 1 KB of shared memory not made available to a thread block is reserved
for system use": each resident block costs its own bytes + 1 KB of the SM's capacity
(cudaDeviceProp.reservedSharedMemPerBlock). Capabilities the guide gives no row for here
(7.2, 10.3, 11.0, 12.1, ...) are absent: the check is skipped with a note, not guessed.
Above 48 KB per block a kernel must opt in (cudaFuncAttributeMaxDynamicSharedMemorySize),
which every CUTLASS/cuBLAS multistage GEMM does: the opt-in maximum is the limit used.

AMD (LDS, 64 KB per CU on CDNA) and Apple are not tabled: no source was checked here.
"""

from __future__ import annotations

# The value types live in model/ (layer 2), which computes with them; this module (layer 3)
# holds the table of values and their sources.
from ..model.sm_limits import KIB, SmemLimits, SmLimits

__all__ = ["KIB", "SmemLimits", "SmLimits", "smem_limits", "sm_limits", "default_stages",
           "SMEM_BY_CC", "SM_BY_CC", "SOURCE", "SM_SOURCE"]


def _row(cc: str, per_sm_kib: int, per_block_kib: int) -> tuple[str, SmemLimits]:
    return cc, SmemLimits(cc, per_sm_kib * KIB, per_block_kib * KIB)


SMEM_BY_CC: dict[str, SmemLimits] = dict((
    _row("7.0", 96, 96),
    _row("7.5", 64, 64),
    _row("8.0", 164, 163),
    _row("8.6", 100, 99),
    _row("8.7", 164, 163),
    _row("8.9", 100, 99),
    _row("9.0", 228, 227),
    _row("10.0", 228, 227),
    _row("12.0", 100, 99),
))

SOURCE = ("CUDA C++ Programming Guide, Technical Specifications per Compute Capability "
          "(max shared memory per SM / per thread block)")


def smem_limits(cc: str | None) -> SmemLimits | None:
    """The limits of compute capability `cc` ("8.0"), None where the table has no row."""
    if cc is None:
        return None
    return SMEM_BY_CC.get(str(cc).strip())


# The pipeline depth assumed without --stages: CUTLASS 2.x's DefaultGemmConfiguration for
# tensor-op GEMMs (include/cutlass/gemm/device/default_gemm_configuration.h) uses
# kStages = 3 on SM80 and later (cp.async multistage mainloop) and 2 on SM75 and earlier
# (double buffering through registers); Triton's matmul tutorial configurations use 3-4.
# Without a compute capability the SM80 default is assumed.
DEFAULT_STAGES_SM80 = 3
DEFAULT_STAGES_PRE_SM80 = 2


def default_stages(cc: str | None) -> int:
    """3 from compute capability 8.0 on (or unknown), 2 before it (CUTLASS's defaults)."""
    try:
        major = int(str(cc).split(".")[0]) if cc else None
    except ValueError:
        major = None
    return DEFAULT_STAGES_PRE_SM80 if major is not None and major < 8 else DEFAULT_STAGES_SM80


# --- the other per-SM limits, for the occupancy calculator (`rooflab ai occupancy`) -------
# Source: CUDA C++ Programming Guide, "Technical Specifications per Compute Capability"
# https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#features-and-technical-specifications-technical-specifications-per-compute-capability
# rows "Maximum number of resident blocks per SM", "Maximum number of resident warps per
# SM", "Number of 32-bit registers per SM" (64 K on all of these), "Maximum number of
# 32-bit registers per thread" (255), "Maximum number of threads per block" (1024). The
# allocation units are the ones CUDA's own calculator uses (include/cuda_occupancy.h,
# cudaOccRegAllocationGranularity 256 registers per warp, cudaOccSMemAllocationGranularity
# 256 B on 7.x and 128 B from 8.x, cudaOccSubPartitionsPerMultiprocessor 4; and
# cudaOccAlignUpShmemSizeVoltaPlus for the shared-memory carveouts an SM can be set to).
# Checked against the device attributes Nsight Compute recorded on an RTX 4090-class CC 8.9
# part (fixtures/ncu/nersc-gpp/output5.ncu-rep: 48 warps, 24 blocks, 65536 registers, 255
# per thread, 102400 B shared per SM, 1024 B reserved per block). The register and thread
# figures every row shares are SmLimits' defaults (model/sm_limits.py).
_VOLTA = (0, 8, 16, 32, 64, 96)
_GA100 = (0, 8, 16, 32, 64, 100, 132, 164)
_GA10X = (0, 8, 16, 32, 64, 100)
_HOPPER = (0, 8, 16, 32, 64, 100, 132, 164, 196, 228)
SM_BY_CC: dict[str, SmLimits] = {
    cc: SmLimits(cc, warps, blocks, SMEM_BY_CC[cc], carve)
    for cc, warps, blocks, carve in (
        ("7.0", 64, 32, _VOLTA),
        ("7.5", 32, 16, (32, 64)),
        ("8.0", 64, 32, _GA100),
        ("8.6", 48, 16, _GA10X),
        ("8.7", 48, 16, _GA100),
        ("8.9", 48, 24, _GA10X),
        ("9.0", 64, 32, _HOPPER),
        ("10.0", 64, 32, _HOPPER),
        ("12.0", 48, 32, _GA10X),
    )}

SM_SOURCE = ("CUDA C++ Programming Guide, Technical Specifications per Compute Capability "
             "(resident warps and blocks per SM, registers, shared memory); allocation units "
             "of CUDA's cuda_occupancy.h")


def sm_limits(cc: str | None) -> SmLimits | None:
    """The residency limits of compute capability `cc` ("8.0"), None where not tabled."""
    if cc is None:
        return None
    return SM_BY_CC.get(str(cc).strip())
