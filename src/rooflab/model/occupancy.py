"""Theoretical occupancy of a CUDA kernel launch: how many of its blocks one SM holds at
once, and the resident warps over the SM's maximum (seed 000 §5.2 "提高占用率": block size,
registers, shared memory).

The arithmetic is CUDA's own occupancy calculator (include/cuda_occupancy.h,
cudaOccMaxActiveBlocksPerMultiprocessor), which Nsight Compute reports as
launch__occupancy_limit_{warps,registers,shared_mem,blocks} and
sm__maximum_warps_per_active_cycle_pct:
  warps    max warps per SM // warps per block
  registers  registers per warp = regs x 32 rounded up to 256; each of the SM's 4
             sub-partitions holds (65536 / 4) // that many warps; // warps per block
  shared   (the block's bytes + 1 KiB reserved on cc >= 8.0) rounded up to 128 B
             (256 B on 7.x), into the SM's carveout (the configured shared memory,
             rounded up to a size the SM supports; by default all of it, as the
             calculator assumes without a carveout preference)
  blocks   the SM's resident-block cap
Occupancy = min of the four x warps per block / max warps per SM. A theoretical number:
the achieved occupancy (sm__warps_active) is lower where blocks finish unevenly or the
grid is smaller than one wave.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..errors import InputError
from .sm_limits import KIB, SmLimits

WARP = 32


def round_up(x: int, unit: int) -> int:
    """x rounded up to a whole number of `unit`s (an allocation granule)."""
    return -(-x // unit) * unit


def resident(limits: Mapping[str, int | None]) -> int:
    """The blocks (workgroups) resident at once: the least of the resources' limits
    (None: that resource sets none), CUDA's and HIP's calculators alike."""
    return min(v for v in limits.values() if v is not None)


def binding_limits(limits: Mapping[str, int | None]) -> tuple[str, ...]:
    """The resources whose limit is the resident count (ties: all of them)."""
    n = resident(limits)
    return tuple(k for k, v in limits.items() if v == n)


@dataclass(frozen=True)
class Occupancy:
    """Blocks per SM each resource allows (None: that resource sets no limit), the
    resident blocks and warps, and the theoretical occupancy (provenance: derived)."""

    cc: str
    block: int
    regs_per_thread: int
    smem_per_block: int               # the kernel's own bytes (static + dynamic)
    warps_per_block: int
    regs_per_warp: int                # allocated: regs x 32 rounded up to 256
    smem_allocated_per_block: int     # + the reserved 1 KiB, rounded to the unit
    smem_config_bytes: int            # the carveout the blocks share
    carveout_note: str | None
    limit_warps: int
    limit_registers: int | None
    limit_shared_memory: int | None
    limit_blocks: int
    max_warps: int

    @property
    def active_blocks(self) -> int:
        return resident(self.limits())

    @property
    def active_warps(self) -> int:
        return self.active_blocks * self.warps_per_block

    @property
    def occupancy(self) -> float:
        """Active warps / max warps per SM (0..1)."""
        return self.active_warps / self.max_warps

    def limits(self) -> dict[str, int | None]:
        return {"warps": self.limit_warps, "registers": self.limit_registers,
                "shared_memory": self.limit_shared_memory, "blocks": self.limit_blocks}

    @property
    def binding(self) -> tuple[str, ...]:
        return binding_limits(self.limits())


def occupancy(block: int, regs: int, smem: int, lim: SmLimits,
              carveout: int | None = None) -> Occupancy:
    """Theoretical occupancy of `block` threads using `regs` registers per thread and `smem`
    bytes of shared memory per block (static + dynamic, without the reserved 1 KiB) on an SM
    with limits `lim`; carveout: the SM's configured shared memory in bytes (Nsight
    Compute's launch__shared_mem_config_size; None: all of it). InputError where no block
    of this shape can launch at all."""
    _check(block, regs, smem, lim)
    warps = -(-block // WARP)
    limit_warps = lim.max_warps // warps
    regs_per_warp = round_up(regs * WARP, lim.reg_alloc_unit)
    if regs_per_warp:
        per_partition = (lim.regs_per_sm // lim.sub_partitions) // regs_per_warp
        limit_regs: int | None = per_partition * lim.sub_partitions // warps
    else:
        limit_regs = None
    # the reserved 1 KiB is the per-SM minus the per-block maximum (0 on 7.x): smem.py
    smem_alloc = round_up(smem + lim.smem.reserved_per_block_bytes, lim.smem_alloc_unit)
    config, note = _config(smem_alloc, lim, carveout)
    limit_smem = config // smem_alloc if smem_alloc else None
    return Occupancy(lim.cc, block, regs, smem, warps, regs_per_warp, smem_alloc, config, note,
                     limit_warps, limit_regs, limit_smem, lim.max_blocks, lim.max_warps)


def _check(block: int, regs: int, smem: int, lim: SmLimits) -> None:
    """Refuse a launch that cannot start (cudaErrorInvalidConfiguration, or ptxas's limit)."""
    if not 1 <= block <= lim.max_threads_per_block:
        raise InputError(f"--block must be 1..{lim.max_threads_per_block} threads (the most "
                         f"one block may have on compute capability {lim.cc}); got {block}")
    if not 0 <= regs <= lim.max_regs_per_thread:
        raise InputError(f"--regs must be 0..{lim.max_regs_per_thread} registers per thread "
                         f"(ptxas's per-thread maximum; past it the compiler spills to local "
                         f"memory); got {regs}")
    regs_block = round_up(regs * WARP, lim.reg_alloc_unit) * round_up(
        -(-block // WARP), lim.sub_partitions)
    if regs_block > lim.regs_per_block:
        raise InputError(f"--block {block} x --regs {regs} needs {regs_block} registers, more "
                         f"than one block may hold ({lim.regs_per_block}): the launch fails "
                         f"with 'too many resources requested'; use fewer threads per block "
                         f"or cap registers (__launch_bounds__, -maxrregcount)")
    if smem < 0 or smem > lim.smem.per_block_bytes:
        raise InputError(f"--smem must be 0..{lim.smem.per_block_bytes // KIB}K bytes per "
                         f"block on compute capability {lim.cc} (the opt-in maximum; above "
                         f"48K a kernel opts in with cudaFuncAttributeMaxDynamicSharedMemory"
                         f"Size); got {smem} bytes")


def _config(smem_alloc: int, lim: SmLimits, carveout: int | None) -> tuple[int, str | None]:
    """The shared memory the SM's blocks share, and a note where the driver changed the
    carveout. As cuda_occupancy.h (cudaOccSMemPreferenceVoltaPlus, cudaOccAlignUpShmemSize-
    VoltaPlus) the preference is rounded up to the next size the SM can be set to (a 50K
    preference on an A100 is a 64K configuration: 5 blocks of 11 KiB, not 4), and raised
    further where it holds no block of this size."""
    if carveout is None:
        return lim.smem.per_sm_bytes, None
    if not 0 <= carveout <= lim.smem.per_sm_bytes:
        raise InputError(f"--carveout must be 0..{lim.smem.per_sm_bytes // KIB}K or "
                         f"0..100% (the SM's shared memory on compute capability {lim.cc}); "
                         f"got {carveout} bytes")
    sizes = [k * KIB for k in lim.carveouts_kib]
    aligned = next(k for k in sizes if k >= carveout)
    if aligned >= smem_alloc:
        if aligned == carveout:
            return carveout, None
        return aligned, (f"a {_k(carveout)} carveout is not a size compute capability "
                         f"{lim.cc} can configure ({', '.join(map(_k, sizes))}): the driver "
                         f"rounds it up to {_k(aligned)}")
    raised = next(k for k in sizes if k >= smem_alloc)
    return raised, (f"a {_k(carveout)} carveout holds no block of {smem_alloc} B: the "
                    f"driver raises it to {_k(raised)}")


def _k(nbytes: int) -> str:
    return f"{nbytes // KIB}K" if nbytes % KIB == 0 else f"{nbytes} B"


def levers(o: Occupancy, lim: SmLimits) -> tuple[str, ...]:
    """What admits one more resident block (seed 000 §5.2: "通过调整 block 大小、减少寄存器
    使用、优化共享内存分配可以提高占用率"), for each binding limit; () at 100 %. Each threshold
    inverts that limit's formula above, so applying it raises that limit to n + 1 blocks."""
    if o.occupancy >= 1:
        return ()
    n, w, out = o.active_blocks, o.warps_per_block, []
    if "warps" in o.binding:
        fits = [f"{32 * d}" for d in range(1, lim.max_threads_per_block // WARP + 1)
                if lim.max_warps % d == 0 and lim.max_warps // d <= lim.max_blocks]
        out.append(f"{n} blocks x {w} warps leave {lim.max_warps - n * w} of "
                   f"{lim.max_warps} warp slots idle: a block of {', '.join(fits)} threads "
                   f"fills them")
    if "blocks" in o.binding:
        need = -(-lim.max_warps // lim.max_blocks)
        out.append(f"the SM holds at most {lim.max_blocks} blocks: blocks of {32 * need} or "
                   f"more threads can fill its {lim.max_warps} warps")
    if "registers" in o.binding and "warps" not in o.binding and "blocks" not in o.binding:
        # (regs_per_sm / 4) // regs_per_warp >= ceil((n + 1) * warps / 4)
        per_part = -(-(n + 1) * w // lim.sub_partitions)
        rpw = (lim.regs_per_sm // lim.sub_partitions // per_part) // lim.reg_alloc_unit \
            * lim.reg_alloc_unit
        regs = rpw // WARP
        if regs >= 1:
            out.append(f"{n + 1} blocks need <= {regs} registers per thread (now "
                       f"{o.regs_per_thread}): __launch_bounds__({o.block}, {n + 1}) or "
                       f"-maxrregcount={regs}; spilling to local memory costs bytes")
    if "shared_memory" in o.binding and "warps" not in o.binding and "blocks" not in o.binding:
        alloc = o.smem_config_bytes // (n + 1) // lim.smem_alloc_unit * lim.smem_alloc_unit
        smem = alloc - lim.smem.reserved_per_block_bytes
        if smem >= 0:
            out.append(f"{n + 1} blocks need <= {smem} B of shared memory per block (now "
                       f"{o.smem_per_block}) in this {o.smem_config_bytes // 1024}K carveout: "
                       f"smaller tiles or fewer pipeline stages")
    return tuple(out)
