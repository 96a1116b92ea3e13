"""Per-CU residency limits of AMD CDNA GPUs (wave64), keyed by LLVM target, for
`rooflab ai occupancy --on MI300X` (model/occupancy_cdna.py computes with them).

Sources:
  ROCm "AMD GPU specifications" (rocm.docs.amd.com/en/latest/reference/gpu-specs.html):
    wavefront size 64; LDS 64 KiB per CU on gfx90a (MI210, MI250X) and gfx942 (MI300X,
    MI300A, MI325X), 160 KiB on gfx950 (MI350X, MI355X); VGPR file 512 KiB per CU on all
    three = 4 SIMDs x 512 VGPRs x 64 lanes x 4 B (architected and AccVGPRs share it, so
    one wave may allocate up to 512).
  HIP's occupancy calculator (ROCm clr, hipamd/src/hip_platform.cpp,
  ihipOccupancyMaxActiveBlocksPerMultiprocessor): 8 waves per SIMD on gfx9 ("limited by
    SPI 32 per CU, hence 8 per SIMD"; 32 waves = 2048 work-items, hipDeviceProp's
    maxThreadsPerMultiProcessor), VGPRs allocated in granules of 8 on gfx90a and later
    gfx9 (its vgprAllocGranularity; the LLVM AMDGPU backend encodes the kernel
    descriptor's VGPR count in blocks of 8 on gfx90a-gfx950), 800 SGPRs per SIMD in
    granules of 16, and at most 1024 work-items per workgroup (maxThreadsPerBlock).
gfx908 (MI100: separate 256 + 256 architected and AccVGPR files, granule 4) is not in the
catalog and not tabled.
"""

from __future__ import annotations

from ..model.occupancy_cdna import CuLimits

KIB = 1024

CU_BY_GFX: dict[str, CuLimits] = {
    "gfx90a": CuLimits("gfx90a", "MI210, MI250, MI250X (CDNA2)", 64 * KIB),
    "gfx942": CuLimits("gfx942", "MI300X, MI300A, MI325X (CDNA3)", 64 * KIB),
    "gfx950": CuLimits("gfx950", "MI350X, MI355X (CDNA4)", 160 * KIB),
}

# The catalog's AMD GPU entries (hardware/data/amd.toml) and their LLVM target (ROCm GPU
# specifications table, "LLVM target name")
GFX_BY_DEVICE = {
    "AMD Instinct MI210": "gfx90a", "AMD Instinct MI250X": "gfx90a",
    "AMD Instinct MI300X": "gfx942", "AMD Instinct MI300A": "gfx942",
    "AMD Instinct MI325X": "gfx942",
    "AMD Instinct MI350X": "gfx950", "AMD Instinct MI355X": "gfx950",
}

CU_SOURCE = ("ROCm 'AMD GPU specifications' table (wave64, LDS and VGPR file per CU); HIP's "
             "hipOccupancyMaxActiveBlocksPerMultiprocessor (ROCm clr hip_platform.cpp: 8 "
             "waves per SIMD, VGPR granule 8, 800 SGPRs per SIMD in granules of 16)")


def cu_limits(gfx: str | None) -> CuLimits | None:
    """The residency limits of LLVM target `gfx` ("gfx942", or a gcnArchName such as
    "gfx942:sramecc+:xnack-"), None where not tabled."""
    if not gfx:
        return None
    return CU_BY_GFX.get(str(gfx).split(":")[0].strip().lower())
