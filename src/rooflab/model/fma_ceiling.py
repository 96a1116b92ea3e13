"""The no-FMA ceiling of a kernel's instruction mix (the hierarchical roofline's "no-FMA"
line: NERSC/Williams; AMD uProf's noFMA ceilings). A vector peak counts every issue slot
as an FMA, 2 FLOP; a separate add or multiply fills the same slot for 1 FLOP. With a share
s of FMA among a precision's add, mul and fma instructions, the FLOP per slot are
(1 - s) x 1 + s x 2 = 1 + s of the peak's 2, so the mix tops out at (1 + s) / 2 of the
peak. NERSC GPP: dfma 734.8 G of 122.3 + 372.0 + 734.8 = 1229.1 G instructions, s = 0.598,
(1 + 0.598) / 2 = 79.9 % = 1963.8 GFLOP / (2 x 1229.1 G) (review s21 r3 F9). Read from
Kernel.meta fma_share ({precision: s}; ingest.ncu_flop.fma_instructions gives the
counts). Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..units import fmt_fraction

# Under this FMA share the mix ceiling (under 95 % of peak) is worth naming
FMA_SHARE_NAMED = 0.9


def mix_ceiling(share: float) -> float:
    """The fraction of a vector peak an instruction mix with this FMA share can reach."""
    return (1.0 + share) / 2.0


# A CSV has no nested meta: an `fma_share_<precision>` column (kernelfile_csv keeps an
# unknown column as a meta number) stands for meta fma_share[precision].
FLAT_KEY = "fma_share_"


def fma_share_of(meta: Mapping, precision: str) -> float | None:
    """meta fma_share's figure for `precision` (0..1), else its flat `fma_share_<precision>`
    (a CSV column), else None."""
    shares = meta.get("fma_share")
    s = shares.get(precision) if isinstance(shares, Mapping) else None
    if s is None:
        s = meta.get(FLAT_KEY + precision)
    if isinstance(s, bool) or not isinstance(s, (int, float)) or not 0.0 <= s <= 1.0:
        return None
    return float(s)


def mix_words(meta: Mapping, precision: str, unit: str | None) -> str:
    """'FMA share 60 % of fp64 instructions: this mix tops out at (1 + 0.60) / 2 = 80 % of
    the peak (the no-FMA ceiling) ...' for a vector kernel under FMA_SHARE_NAMED; ''
    otherwise (a tensor-core kernel's matrix instructions are no add/mul/fma mix)."""
    s = fma_share_of(meta, precision)
    if s is None or s >= FMA_SHARE_NAMED or unit == "tensor":
        return ""
    return (f"FMA share {fmt_fraction(s)} of {precision} add/mul/fma instructions: this mix tops "
            f"out at (1 + {s:.2f}) / 2 = {fmt_fraction(mix_ceiling(s))} of the peak (the no-FMA "
            f"ceiling: an add or a multiply takes an FMA's issue slot for half its FLOP); "
            f"fusing multiply-add pairs into FMAs raises it")
