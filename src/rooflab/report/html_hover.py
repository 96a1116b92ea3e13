"""The hover text of a point in the HTML chart: every number of it, with its provenance."""

from __future__ import annotations

import html

from ..model.analysis import Analysis, Point
from ..model.diagnose_evidence import level_bound
from ..model.dies import kind_words
from ..model.kernel import Kernel
from ..model.sanity_ceilings import applicable_launch_s
from ..sides import ai_apart, pct_text, share_text
from ..units import fmt_rate, fmt_seconds, si
from .chart_points import launch_bound_rate
from .envelope_bound import envelope_bound

e = html.escape


def _bound(p: Point, analysis: Analysis, k: Kernel | None) -> str:
    """The point's bound as the tables print it (diagnose_evidence.level_bound: "not binding (DRAM
    binds)" for a level under another level's binding roof), worded on the envelope roof
    (no --on) as they word it: "no roof (give --on)", "compute (relative)" (review s22 r4
    F1: the hover said "bound: memory" where the table below the chart said "no roof")."""
    pts = analysis.points_of(k) if k is not None else ()
    said = level_bound(p, min(pts, key=lambda q: q.attainable_flop_per_s) if pts else None)
    return envelope_bound(p, analysis.roof, said)


def hover_text(p: Point, analysis: Analysis) -> str:
    """Every number of a point, with the provenance of its kernel's numbers."""
    k = analysis.kernel_of(p)
    # provenance is free text in a kernel file (model/provenance.py): escaped as the names
    prov = {n: e(str(w)) for n, w in (k.provenance if k is not None else {}).items()}
    launch = applicable_launch_s(p)
    reach = launch_bound_rate(p, launch)
    attainable = (f"attainable: {fmt_rate(p.attainable_flop_per_s, p.precision)} (binding: "
                  f"{e(p.binding)})")
    if reach is not None:
        attainable += "; the roof at its AI, above where its launches let it reach"
    rows = [
        f"<b>{e(p.kernel)}</b> @ {e(p.level)}",
        f"FLOP: {si(p.flop, 'FLOP')} ({p.precision}; {prov.get('flop', '?')})",
        f"bytes: {si(p.bytes, 'B')} ({p.level}; {prov.get('bytes', '?')})",
        (f"time: {fmt_seconds(p.seconds)} over {p.calls} call(s) ({prov.get('seconds', '?')})"
         if p.seconds else _untimed_words(p, reach, launch)),
        # figures that keep AI and ridge apart: 'AI: 9.996 FLOP/B (ridge 10)', not
        # 'AI: 10 (ridge 10)' for a memory-bound point (sides.py; review s22 r4 F3)
        "AI: {} FLOP/B (ridge {})".format(*ai_apart(p.ai, p.ridge)),
        f"achieved: {fmt_rate(p.achieved_flop_per_s, p.precision)}",
        attainable,
        f"% of roof: {pct_text(p.percent_of_roof)}",   # '9.996 %', not '10 %'
        f"bound: {_bound(p, analysis, k)}; {floor_words(p)}",
        f"time share: {'-' if p.time_share is None else share_text(100 * p.time_share, True)}",
        f"roof: {e(analysis.roof.name)} ({e(kind_words(analysis.roof))})",
    ]
    if p.note:
        rows.append(e(p.note))
    return "<br>".join(rows)


def floor_words(p: Point) -> str:
    """The point's time floor as `rooflab ai` names it (review 13v F-H): where calls x the
    launch floor is above the work floor, both, the launch one first ("time floor 5 us
    (launch); work floor 155 ns"): "overhead; floor 155 ns" named the floor that does not
    bind. The launch floor is the one that applies to its time (applicable_launch_s, the
    rule the chart's launch cap follows): none for a GPU-side time (a profiler's; review s21
    x2 F5: 200 ncu launches of 5.1 us read "time floor 1 ms (launch)") or one below it."""
    launch = applicable_launch_s(p)
    if p.gpu_side:
        return f"floor {fmt_seconds(p.floor_s)} (a GPU-side time: no launch cost in it)"
    if launch > p.floor_s:
        return (f"time floor {fmt_seconds(launch)} (launch); work floor "
                f"{fmt_seconds(p.floor_s)}")
    return f"floor {fmt_seconds(p.floor_s)}"


def _untimed_words(p: Point, reach: float | None, launch: float) -> str:
    """Where an untimed point is drawn, and why there (review s18 r5 F11: a launch-bound
    rope drawn at 1.38 GFLOP/s said 'drawn at its attainable FLOP/s', 240 G, 174x above)."""
    head = f"time: not measured ({p.calls} call(s)); drawn at"
    if reach is None:
        return (f"{head} its attainable FLOP/s, "
                f"{fmt_rate(p.attainable_flop_per_s, p.precision)} (predicted)")
    return (f"{head} FLOP / ({p.calls} call(s) x {fmt_seconds(launch / p.calls)} launch "
            f"floor) = {fmt_rate(reach, p.precision)} (predicted, launch-bound: its "
            f"launches, {fmt_seconds(launch)}, take longer than its work at the roof, "
            f"{fmt_seconds(p.floor_s)})")
