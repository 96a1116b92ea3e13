"""Theoretical occupancy of a HIP kernel launch on an AMD CDNA GPU (wave64): how many of its
workgroups one compute unit (CU) holds at once, and the resident waves over the CU's
maximum (review s28 R4 F10: `ai occupancy` had only NVIDIA's warp-32 rules).

The arithmetic is HIP's own calculator, hipOccupancyMaxActiveBlocksPerMultiprocessor
(ROCm clr, hipamd/src/hip_platform.cpp, ihipOccupancyMaxActiveBlocksPerMultiprocessor),
the counterpart of CUDA's cuda_occupancy.h that model/occupancy.py follows:
  waves     a CU's 4 SIMDs x 8 wave slots ("limited by SPI 32 per CU, hence 8 per SIMD")
            // waves per workgroup (ceil(threads / 64))
  VGPRs     each SIMD lane holds 512 VGPRs (architected + AccVGPR, one unified file on
            CDNA2-4); a wave's count is rounded up to a granule of 8, and a SIMD holds
            512 // that many waves; x 4 SIMDs // waves per workgroup
  SGPRs     800 per SIMD on gfx9, a wave's count rounded up to 16 (only when given)
  LDS       the CU's LDS // the workgroup's bytes (HIP rounds nothing up)
Occupancy = min of the limits x waves per workgroup / 32. HIP pools the CU's four SIMDs, as
here: a workgroup's waves are spread over them by the hardware.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import InputError
from .occupancy import binding_limits, resident, round_up


@dataclass(frozen=True)
class CuLimits:
    """One AMD GPU target's per-CU residency limits (provenance: nominal; the values and
    sources are in hardware/cdna_limits.py)."""

    gfx: str                       # LLVM target, e.g. "gfx942"
    chips: str                     # "MI300X, MI300A, MI325X (CDNA3)"
    lds_bytes: int                 # LDS per CU, and the most one workgroup may allocate
    wave_size: int = 64
    simds: int = 4
    max_waves_per_simd: int = 8
    vgprs_per_simd: int = 512      # per lane; also the most one wave may allocate
    vgpr_granule: int = 8
    sgprs_per_simd: int = 800
    sgpr_granule: int = 16
    max_workgroup: int = 1024

    @property
    def max_waves(self) -> int:
        """Resident waves per CU (32: 2048 work-items, hipDeviceProp's
        maxThreadsPerMultiProcessor)."""
        return self.simds * self.max_waves_per_simd


@dataclass(frozen=True)
class CuOccupancy:
    """Workgroups per CU each resource allows (None: that resource sets no limit), the
    resident workgroups and waves, and the theoretical occupancy (provenance: derived)."""

    gfx: str
    block: int
    vgprs: int                     # per work-item, architected + AccVGPR
    sgprs: int                     # per wave; 0: not given
    lds: int                       # bytes per workgroup, static + dynamic
    waves_per_block: int
    vgprs_allocated: int           # rounded up to the granule
    sgprs_allocated: int
    limit_waves: int
    limit_vgprs: int | None
    limit_sgprs: int | None
    limit_lds: int | None
    max_waves: int
    lds_bytes: int

    def limits(self) -> dict[str, int | None]:
        return {"waves": self.limit_waves, "vgprs": self.limit_vgprs,
                "sgprs": self.limit_sgprs, "lds": self.limit_lds}

    @property
    def active_blocks(self) -> int:
        return resident(self.limits())

    @property
    def active_waves(self) -> int:
        return self.active_blocks * self.waves_per_block

    @property
    def occupancy(self) -> float:
        """Active waves / max waves per CU (0..1)."""
        return self.active_waves / self.max_waves

    @property
    def binding(self) -> tuple[str, ...]:
        return binding_limits(self.limits())


def cu_occupancy(block: int, vgprs: int, lds: int, lim: CuLimits, sgprs: int = 0) -> CuOccupancy:
    """Theoretical occupancy of a workgroup of `block` work-items using `vgprs` VGPRs per
    work-item (architected + AccVGPR), `sgprs` SGPRs per wave (0: not counted) and `lds`
    bytes of LDS per workgroup on a CU with limits `lim`. InputError where no workgroup of
    this shape can launch."""
    _check(block, vgprs, sgprs, lds, lim)
    waves = -(-block // lim.wave_size)
    v_alloc = round_up(vgprs, lim.vgpr_granule)
    s_alloc = round_up(sgprs, lim.sgpr_granule)

    def per_simd(n: int) -> int:
        # HIP: 4 SIMDs x min(8, the waves a SIMD's registers hold) // waves per workgroup
        return lim.simds * min(lim.max_waves_per_simd, n) // waves

    limit_v = per_simd(lim.vgprs_per_simd // v_alloc) if v_alloc else None
    limit_s = per_simd(lim.sgprs_per_simd // s_alloc) if s_alloc else None
    if min(x for x in (limit_v, limit_s, 1) if x is not None) == 0:
        # HIP answers 0 workgroups; the launch fails ("out of resources")
        what = "VGPRs" if limit_v == 0 else "SGPRs"
        raise InputError(f"--block {block} ({waves} waves) with {vgprs} VGPRs per work-item"
                         f"{f' and {sgprs} SGPRs per wave' if sgprs else ''} needs more "
                         f"{what} than a CU's {lim.simds} SIMDs hold: the launch fails; use "
                         f"fewer work-items per workgroup or cap registers "
                         f"(__launch_bounds__({block}) lets the compiler fit them)")
    return CuOccupancy(lim.gfx, block, vgprs, sgprs, lds, waves, v_alloc, s_alloc,
                       lim.max_waves // waves, limit_v, limit_s,
                       lim.lds_bytes // lds if lds else None, lim.max_waves, lim.lds_bytes)


def _check(block: int, vgprs: int, sgprs: int, lds: int, lim: CuLimits) -> None:
    """Refuse a launch that cannot start (hipErrorInvalidConfiguration, or the compiler's
    limit)."""
    if not 1 <= block <= lim.max_workgroup:
        raise InputError(f"--block must be 1..{lim.max_workgroup} work-items (the most one "
                         f"workgroup may have on {lim.gfx}); got {block}")
    if not 0 <= vgprs <= lim.vgprs_per_simd:
        raise InputError(f"--regs must be 0..{lim.vgprs_per_simd} VGPRs per work-item on "
                         f"{lim.gfx} (architected + AccVGPR; past it the compiler spills to "
                         f"scratch); got {vgprs}")
    if not 0 <= sgprs <= lim.sgprs_per_simd:
        raise InputError(f"--sgprs must be 0..{lim.sgprs_per_simd} SGPRs per wave (a SIMD's "
                         f"file on {lim.gfx}); got {sgprs}")
    if not 0 <= lds <= lim.lds_bytes:
        raise InputError(f"--smem must be 0..{lim.lds_bytes // 1024}K bytes of LDS per "
                         f"workgroup on {lim.gfx} (the CU's LDS); got {lds} bytes")


def cu_levers(o: CuOccupancy, lim: CuLimits) -> tuple[str, ...]:
    """What admits one more resident workgroup, for each binding limit; () at 100 %. Each
    threshold inverts that limit's formula above."""
    if o.occupancy >= 1:
        return ()
    n, w, out = o.active_blocks, o.waves_per_block, []
    if "waves" in o.binding:
        fits = [f"{lim.wave_size * d}" for d in range(1, lim.max_workgroup // lim.wave_size + 1)
                if lim.max_waves % d == 0]
        out.append(f"{n} workgroups x {w} waves leave {lim.max_waves - n * w} of "
                   f"{lim.max_waves} wave slots idle: a workgroup of {', '.join(fits)} "
                   f"work-items fills them")
    # n + 1 workgroups need ceil((n + 1) w / 4) waves on each SIMD
    per_simd = -(-(n + 1) * w // lim.simds)
    if "waves" not in o.binding and per_simd <= lim.max_waves_per_simd:
        if "vgprs" in o.binding:
            v = lim.vgprs_per_simd // per_simd // lim.vgpr_granule * lim.vgpr_granule
            out.append(f"{n + 1} workgroups need <= {v} VGPRs per work-item (now {o.vgprs}): "
                       f"__attribute__((amdgpu_waves_per_eu({per_simd}))) asks the compiler "
                       f"for {per_simd} waves per SIMD; spilling to scratch costs bytes")
        if "sgprs" in o.binding:
            s = lim.sgprs_per_simd // per_simd // lim.sgpr_granule * lim.sgpr_granule
            out.append(f"{n + 1} workgroups need <= {s} SGPRs per wave (now {o.sgprs})")
        if "lds" in o.binding:
            out.append(f"{n + 1} workgroups need <= {lim.lds_bytes // (n + 1)} B of LDS each "
                       f"(now {o.lds}): smaller tiles or fewer pipeline stages")
    return tuple(out)
