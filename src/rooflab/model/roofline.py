"""The roofline formulas (Williams, Waterman, Patterson 2009): attainable = min(P, B x AI)."""

from __future__ import annotations

from ..errors import InputError
from .ceiling import Roof


def attainable(ai, peak_flop_per_s=None, bytes_per_s: float | None = None):
    """Attainable FLOP/s at arithmetic intensity `ai` in FLOP/byte (scalar or array).

    attainable(ai, P, B) with P in FLOP/s and B in bytes/s; or attainable(roof, ai) (also
    attainable(ai, roof)) with a Roof: its top float ceiling (roof.top_float_compute(),
    the chart's top line; A100 SXM: fp16 tensor, 312 TFLOP/s, which bf16 ties; not int4)
    and its DRAM bandwidth (roof.bandwidth("DRAM")). For another ceiling:
    attainable(ai, roof.find_compute("int8").value, roof.bandwidth("DRAM").value)."""
    if isinstance(ai, Roof) and bytes_per_s is None and peak_flop_per_s is not None:
        ai, peak_flop_per_s = peak_flop_per_s, ai          # attainable(roof, ai)
    if isinstance(peak_flop_per_s, Roof) and bytes_per_s is None:
        roof = peak_flop_per_s
        peak_flop_per_s = roof.top_float_compute().value
        bytes_per_s = roof.bandwidth("DRAM").value
    elif bytes_per_s is None or _has_roof(ai, peak_flop_per_s, bytes_per_s):
        given = _args(ai, peak_flop_per_s, bytes_per_s)
        raise InputError(f"attainable() takes attainable(roof, ai) or attainable(ai, "
                         f"peak_flop_per_s, bytes_per_s); got attainable({given})")
    _positive_rates("attainable", peak_flop_per_s, bytes_per_s)
    if type(ai) is float and ai >= 0:
        # one point (placement.analyze_point, per kernel and level): the same IEEE min
        # without numpy's array round trip, 20x slower for a scalar
        return float(min(peak_flop_per_s, bytes_per_s * ai))
    # numpy only for arrays: importing it costs a CLI call ~0.06 s that llm/train never use
    import numpy as np

    ais = np.asarray(ai, dtype=float)
    if not np.all(ais >= 0):   # also NaN: min(P, B x -1) would be a negative FLOP/s
        bad = ais[~(ais >= 0)].flat[0]
        raise InputError(f"attainable(): the arithmetic intensity must be >= 0 FLOP/byte "
                         f"(FLOP over bytes moved); got {float(bad)!r}")
    result = np.minimum(peak_flop_per_s, bytes_per_s * ais)
    return float(result) if np.ndim(result) == 0 else result


def ridge(peak_flop_per_s, bytes_per_s: float | None = None) -> float:
    """The ridge point AI* = P / B in FLOP/byte: left of it memory bounds, right of it compute.

    ridge(P, B) with P in FLOP/s and B in bytes/s; or ridge(roof) with a Roof: its top
    float ceiling (roof.top_float_compute(), the ridge every chart and table of rooflab
    draws: A100 SXM fp16 tensor (bf16 ties; the tie names fp16) 312e12 / 2.039e12 = 153
    FLOP/B; integer TOPS are not
    FLOP/s) over its DRAM bandwidth (roof.bandwidth("DRAM")). For another pair,
    ridge(roof.find_compute("fp64").value, roof.bandwidth("L2").value)."""
    if isinstance(peak_flop_per_s, Roof) and bytes_per_s is None:
        roof = peak_flop_per_s
        return roof.top_float_compute().value / roof.bandwidth("DRAM").value
    if bytes_per_s is None or _has_roof(peak_flop_per_s, bytes_per_s):
        raise InputError(f"ridge() takes ridge(roof) or ridge(peak_flop_per_s, bytes_per_s); "
                         f"got ridge({_args(peak_flop_per_s, bytes_per_s)})")
    _positive_rates("ridge", peak_flop_per_s, bytes_per_s)
    return peak_flop_per_s / bytes_per_s


def _positive_rates(fn: str, peak_flop_per_s, bytes_per_s) -> None:
    """P and B are rates of a real machine: > 0 and finite (ridge(P, 0) divided by zero)."""
    for what, value, unit in (("peak_flop_per_s", peak_flop_per_s, "FLOP/s"),
                              ("bytes_per_s", bytes_per_s, "bytes/s")):
        try:
            # text is no rate even when float() reads it: ridge("1e12", 1e11) then divided
            # a str (TypeError), where Ceiling("1e12", ...) says "a plain number"
            if isinstance(value, str | bytes | bool):
                raise TypeError(value)
            ok = 0 < float(value) < float("inf")
        except (TypeError, ValueError):
            raise InputError(f"{fn}(): {what} must be a number in {unit}; got "
                             f"{value!r:.40}") from None
        if not ok:
            raise InputError(f"{fn}(): {what} must be > 0 and finite ({unit}, SI base "
                             f"units); got {value!r}")


def _has_roof(*args) -> bool:
    return any(isinstance(a, Roof) for a in args)


def _args(*args) -> str:
    """The call as given, short: 'Roof 'T4', None'."""
    return ", ".join(f"Roof '{a.name}'" if isinstance(a, Roof) else f"{a!r:.40}"
                     for a in args if a is not None)


def time_floor(flop: float, nbytes: float, peak_flop_per_s: float, bytes_per_s: float) -> float:
    """The least time the work can take on this roof: max(FLOP / P, bytes / B)."""
    return max(flop / peak_flop_per_s, nbytes / bytes_per_s)


def cpu_peak_flop_per_s(cores: int, ghz: float, simd_bits: int, element_bits: int,
                        fma_pipes: int) -> float:
    """cores x clock x SIMD lanes x FMA pipes x 2 (one FMA is 2 FLOP)."""
    lanes = simd_bits // element_bits
    # the clock as whole hertz first: 96 x 2.4 GHz x 16 is 3.6864e12, not 3686399999999.9995
    return cores * round(ghz * 1e9) * lanes * fma_pipes * 2.0
