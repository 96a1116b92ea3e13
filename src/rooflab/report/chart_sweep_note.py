"""What a chart says when its measured intensity sweep rises above the ceiling drawn beside
it (chart_words.caveats puts it under the axis, roofline_data in the notes)."""

from __future__ import annotations

from collections.abc import Sequence

from ..model.sanity_finding import ABOVE_TOLERANCE
from ..units import fmt_rate, fmt_times


def sweep_over_ceiling(lines, roofs: Sequence[str]) -> str:
    """'the intensity sweep reaches 12.1 GFLOP/s, 3.13x fp64 vector* 3.86 GFLOP/s: that
    ceiling reads low, not the kernels high' where the measured sweep (drawn from the
    profile's extras) rises above the first roof's ceiling of its precision ('' else).
    Review s18 r5 F8: a probe run under load fitted fp64 vector at 3.86 GFLOP/s while its
    own sweep reached 12.1, and the chart, with the evidence on it, did not say so."""
    sweeps = [ln for ln in lines if ln.kind == "sweep" and ln.ys]
    if not sweeps:
        return ""
    sw = sweeps[0]
    prec = sw.label.removeprefix("intensity sweep").removesuffix("(measured)").strip()
    flats = [ln for ln in lines if ln.kind == "compute" and ln.roof in roofs
             and ln.ceiling is not None and (not prec or ln.ceiling.precision == prec)]
    if not flats:
        return ""
    top = max(flats, key=lambda ln: ln.ceiling.value)
    peak = max(sw.ys)
    # over by more than the report's above-roof tolerance: the ceiling, not noise
    if peak <= top.ceiling.value * (1 + ABOVE_TOLERANCE):
        return ""
    from .chart_words import FLAGGED_MARK, flagged

    mark = FLAGGED_MARK if flagged(top.ceiling) else ""
    return (f"the intensity sweep reaches {fmt_rate(peak, prec or None)}, "
            f"{fmt_times(peak / top.ceiling.value)} {top.ceiling.label}{mark} "
            f"{fmt_rate(top.ceiling.value, top.ceiling.precision)}: that ceiling reads low, "
            f"not the kernels above it high")
