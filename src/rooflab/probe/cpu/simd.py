"""The SIMD width this CPU's FMA kernels use, from its instruction-set flags."""

from __future__ import annotations

import platform

from ...hardware.host import cpu_flags


def simd_bits(flags: frozenset[str] | None = None, machine: str | None = None) -> int:
    """512 with AVX-512F, 256 with AVX2/FMA, else 128 (SSE2, NEON/ASIMD)."""
    flags = cpu_flags() if flags is None else flags
    machine = (machine or platform.machine()).lower()
    if machine in ("x86_64", "amd64", "i686", "x86"):
        if "avx512f" in flags:
            return 512
        if "avx2" in flags or "fma" in flags or "avx" in flags:
            return 256
    return 128
