"""The per-SM limits a kernel's launch is checked against, as value types: shared memory
per SM and per block (SmemLimits) and the residency limits (SmLimits) that model/occupancy.py
and model/tile_quantization.py compute with. The values, per compute capability and with
their sources, are tabled in hardware/smem.py (review s18 r6 F5: model/ imported them from
hardware/, a layer above it; ARCHITECTURE: model imports nothing above)."""

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


# The limits every tabled capability shares (CUDA C++ Programming Guide, "Technical
# Specifications per Compute Capability": 64 K 32-bit registers per SM and per block, 255
# per thread, 1024 threads per block; cuda_occupancy.h: registers allocated 256 per warp
# over an SM's 4 sub-partitions). hardware/smem.py gives the sources in full.
REGS_PER_SM = 65536
REGS_PER_BLOCK = 65536
MAX_REGS_PER_THREAD = 255
MAX_THREADS_PER_BLOCK = 1024
REG_ALLOC_UNIT = 256        # registers, per warp
SUB_PARTITIONS = 4          # an SM's register file is split over its 4 schedulers


@dataclass(frozen=True)
class SmLimits:
    """One compute capability's per-SM residency limits (provenance: nominal)."""

    cc: str
    max_warps: int                  # resident warps per SM
    max_blocks: int                 # resident blocks per SM
    smem: SmemLimits
    carveouts_kib: tuple[int, ...]  # the shared-memory sizes an SM can be configured to
    regs_per_sm: int = REGS_PER_SM
    regs_per_block: int = REGS_PER_BLOCK
    max_regs_per_thread: int = MAX_REGS_PER_THREAD
    max_threads_per_block: int = MAX_THREADS_PER_BLOCK
    reg_alloc_unit: int = REG_ALLOC_UNIT
    sub_partitions: int = SUB_PARTITIONS

    @property
    def smem_alloc_unit(self) -> int:
        """Bytes a block's shared memory is rounded up to: 256 on 7.x, 128 from 8.x."""
        return 256 if self.cc.startswith("7.") else 128
