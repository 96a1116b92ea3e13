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

from dataclasses import dataclass

KIB = 1024


@dataclass(frozen=True)
class SmemLimits:
    """One compute capability's shared-memory limits, in bytes (provenance: nominal, the
    CUDA C++ Programming Guide's table)."""

    cc: str
    per_sm_bytes: int
    per_block_bytes: int       # the opt-in maximum one block may allocate

    @property
    def reserved_per_block_bytes(self) -> int:
        """The SM's share each resident block costs beyond its own: 1 KB from 8.x on
        (per SM - per block), 0 on 7.x."""
        return self.per_sm_bytes - self.per_block_bytes


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
