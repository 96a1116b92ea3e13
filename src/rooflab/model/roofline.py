"""The roofline formulas (Williams, Waterman, Patterson 2009): attainable = min(P, B x AI)."""

from __future__ import annotations

import numpy as np


def attainable(ai, peak_flop_per_s: float, bytes_per_s: float):
    """Attainable FLOP/s at arithmetic intensity `ai` (scalar or array)."""
    result = np.minimum(peak_flop_per_s, bytes_per_s * np.asarray(ai, dtype=float))
    return float(result) if np.ndim(result) == 0 else result


def ridge(peak_flop_per_s: float, bytes_per_s: float) -> float:
    """The ridge point AI* = P / B in FLOP/byte: left of it memory bounds, right of it compute."""
    return peak_flop_per_s / bytes_per_s


def time_floor(flop: float, nbytes: float, peak_flop_per_s: float, bytes_per_s: float) -> float:
    """The least time the work can take on this roof: max(FLOP / P, bytes / B)."""
    return max(flop / peak_flop_per_s, nbytes / bytes_per_s)


def cpu_peak_flop_per_s(cores: int, ghz: float, simd_bits: int, element_bits: int,
                        fma_pipes: int) -> float:
    """cores x clock x SIMD lanes x FMA pipes x 2 (one FMA is 2 FLOP)."""
    lanes = simd_bits // element_bits
    return cores * ghz * 1e9 * lanes * fma_pipes * 2.0
