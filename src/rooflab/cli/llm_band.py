"""`rooflab llm --tpot-ms`: where a measured decode step falls against seed 004's rule of
thumb, "decode 那行的预期在 40% 到 70% 之间" (a decode step reaches about 40-70 % of the
*measured* memory roof: TPOT 1.5-3x the floor, read off a measured roof). A rule of thumb
from the seed, not a measurement, and the line says so."""

from __future__ import annotations

# seed 004's band, in percent of a measured memory roof
SEED_DECODE_BAND = (40.0, 70.0)
# seed 004 (Day 13): measured bandwidth is usually 75-90 % of nominal, so on a nominal roof
# the same run reads lower: 40 x 0.75 = 30 %, 70 x 0.9 = 63 %
SEED_BANDWIDTH_SHARE = (0.75, 0.90)


def decode_band(nominal: bool) -> tuple[float, float]:
    """The band in percent of this roof: the seed's on a measured roof, scaled by the
    seed's measured-to-nominal bandwidth on a nominal one (30-63 %)."""
    lo, hi = SEED_DECODE_BAND
    if not nominal:
        return lo, hi
    return lo * SEED_BANDWIDTH_SHARE[0], hi * SEED_BANDWIDTH_SHARE[1]


def band_line(percent: float, roof_kind: str, bound: str) -> str:
    """One line: the measured decode's percent of the roof against the seed's band; below
    it, what usually explains it (seed 004's first distance, host waits and kernel
    efficiency); inside, typical; above, good. A step not memory-bound is not compared
    (the band is the seed's batch-1 decode)."""
    from ..units import fmt_pct, fmt_pct_range

    head = ("seed 004's rule of thumb, not a measurement: decode reaches about 40-70 % of "
            "a measured memory roof")
    if bound != "memory":
        return f"{head}; this step is {bound}-bound, so it is not compared"
    nominal = roof_kind != "measured"
    lo, hi = decode_band(nominal)
    where = (f"{head} ({fmt_pct_range(lo, hi)} of a nominal one like this, bandwidth "
             f"measuring 75-90 % of nominal)" if nominal else head)
    pct, side = fmt_pct(percent), band_side(percent, lo, hi)
    if side == "below":
        return (f"{where}; {pct} is below it: usually the GPU waiting on the CPU (launches, "
                f"Python between kernels) or kernels short of the bandwidth (the gap line)")
    return f"{where}; {pct} is {side}: {'typical' if side == 'inside' else 'good'}"


def band_side(percent: float, lo: float, hi: float) -> str:
    return "below" if percent < lo else "inside" if percent <= hi else "above"


def band_dict(percent: float, roof_kind: str, bound: str) -> dict:
    """llm.measured.seed_band: the band_line's numbers (low/high in percent of this roof;
    where: below, inside, above, or null for a step not memory-bound)."""
    lo, hi = decode_band(roof_kind != "measured")
    where = band_side(percent, lo, hi) if bound == "memory" else None
    return {"low_percent": lo, "high_percent": hi, "percent_of_roof": percent,
            "where": where, "roof_kind": roof_kind, "kind": "rule of thumb",
            "source": "seed 004: decode 40-70 % of a measured memory roof; measured "
                      "bandwidth 75-90 % of nominal"}
