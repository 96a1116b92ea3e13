"""Optimisation steps: several profiles of one kernel (meta step_index, e.g. one ncu file
per version) compared in order, as rows and as findings (seed 000 §4.4, reading trends).

The Markdown, HTML and terminal reports all show these.
"""

from __future__ import annotations

from ..model.analysis import Analysis
from ..model.compare_notes import mostly
from ..model.kernel import Kernel
from ..model.meta_check import step_of
from ..units import fmt_ai, fmt_fraction, fmt_pct, fmt_rate, fmt_seconds, fmt_times, si
from .envelope_bound import NO_ROOF_LINE, envelope_bound, on_envelope

STEP_HEADERS = ("step", "kernel", "time", "vs previous", "vs first", "FLOP", "DRAM bytes",
                "AI DRAM", "AI L2", "AI L1", "achieved", "bound")


def _speedup(ref: float | None, seconds: float | None) -> str:
    return fmt_times(ref / seconds) if ref and seconds else "-"


def step_rows(analysis: Analysis) -> list[tuple[str, ...]]:
    """Optimisation steps (kernels with meta step_index, e.g. several ncu files) in order,
    one row per step (its longest kernel, as the chart's trajectory joins them): time and
    speed-up against the previous and the first step, FLOP, bytes, AI per level."""
    steps = step_kernels(analysis, timed=False)
    if len(steps) < 2:
        return []
    primary = {p.kernel: p for p in analysis.primary()}
    others = _other_kernels(analysis)
    rows, first, prev = [], steps[0].seconds, None
    for k in steps:
        p = primary.get(k.name)
        ai = {lv: fmt_ai(k.total_flop / k.bytes[lv]) if k.bytes.get(lv) else "-"
              for lv in ("DRAM", "L2", "L1")}
        name = str(k.meta.get("full_name", k.name))
        n, seconds = others.get(step_of(k.meta), (0, 0.0))
        if n:
            name += f" (+{n} other kernel{'s' if n > 1 else ''}, {fmt_seconds(seconds)})"
        rows.append((str(k.meta.get("step", step_of(k.meta))),
                     name, fmt_seconds(k.seconds),
                     _speedup(prev, k.seconds), _speedup(first, k.seconds),
                     si(k.total_flop, "FLOP"), si(k.bytes.get("DRAM"), "B"), ai["DRAM"],
                     ai["L2"], ai["L1"], fmt_rate(p.achieved_flop_per_s if p else None,
                                               p.precision if p else None),
                     envelope_bound(p, analysis.roof) if p else "-"))
        prev = k.seconds
    return rows


def step_kernels(analysis: Analysis, timed: bool = True):
    """Each step's longest kernel, in step order. A step (one profiler file) may hold
    several kernels (an OpenACC reduction beside the main kernel); comparing the main
    kernel of one step with the reduction of another would read as a 300,000x speed-up."""
    best: dict[int, Kernel] = {}
    for k in analysis.kernels:
        i = step_of(k.meta)   # an int (model/meta_check): int("first") was a traceback
        if i is None or (timed and not k.seconds):
            continue
        if i not in best or (k.seconds or 0.0) > (best[i].seconds or 0.0):
            best[i] = k
    return [best[i] for i in sorted(best)]


def _other_kernels(analysis: Analysis) -> dict[int, tuple[int, float]]:
    """Per step: how many kernels besides its longest, and their time."""
    chosen = {id(k) for k in step_kernels(analysis, timed=False)}
    out: dict[int, tuple[int, float]] = {}
    for k in analysis.kernels:
        i = step_of(k.meta)
        if i is not None and id(k) not in chosen:
            n, t = out.get(i, (0, 0.0))
            out[i] = (n + 1, t + (k.seconds or 0.0))
    return out


def step_findings(analysis: Analysis, threshold: float = 0.05) -> list[str]:
    """What moved between optimisation steps, read the way seed 000 §4.4 (third level:
    trends) reads them: each step's speed-up against the change in FLOP and in DRAM bytes,
    and whether the achieved FLOP/s moved at all."""
    steps = step_kernels(analysis)
    if len(steps) < 2:
        return []
    rates = [k.total_flop / k.seconds for k in steps]
    lo, hi = min(rates), max(rates)
    times = [k.seconds for k in steps]
    out = [f"Achieved FLOP/s stays between {si(lo, 'FLOP/s')} and {si(hi, 'FLOP/s')} "
           f"({fmt_fraction(hi / lo - 1)} apart) while the time ranges over "
           f"{fmt_times(max(times) / min(times))}: "
           + ("the steps changed how much work is done, not how fast it runs."
              if hi / lo < 1.15 else "the steps changed how fast the work runs.")]
    for a, b in zip(steps, steps[1:], strict=False):
        speed = a.seconds / b.seconds
        if a.calls != b.calls:
            pa, pb = a.seconds / a.calls, b.seconds / b.calls
            out.append(f"{a.meta.get('step')} -> {b.meta.get('step')}: {a.calls} -> {b.calls} "
                       f"launch(es) profiled; per launch {fmt_seconds(pa)} -> "
                       f"{fmt_seconds(pb)} ({fmt_times(pa / pb)}); the speed-ups compare totals.")
        flop = b.total_flop / a.total_flop if a.total_flop else 1.0
        da, db = a.bytes.get("DRAM"), b.bytes.get("DRAM")
        dram = db / da if da and db else 1.0
        name = f"{a.meta.get('step')} -> {b.meta.get('step')}"
        moved = (f"FLOP x{flop:.2f}, DRAM bytes x{dram:.2f}")
        if abs(speed - 1) <= threshold:
            if abs(dram - 1) > 0.5 or abs(flop - 1) > 0.1:
                out.append(f"{name}: no faster ({fmt_times(speed)}) although {moved}: "
                           + ("fewer DRAM bytes do not help a kernel that is not "
                              "memory-bound." if dram < 0.67 else "the change did not touch "
                              "what binds."))
            continue
        out.append(f"{name}: {fmt_times(speed)} {'faster' if speed > 1 else 'slower'}; "
                   f"{moved}: mostly {mostly(flop, dram)}." if speed > 1 else
                   f"{name}: {fmt_times(speed)} (slower); {moved}.")
    # The step's own points (a name may repeat across steps), at the level binding hardest.
    own = analysis.points_of(steps[-1])
    last = min(own, key=lambda p: p.attainable_flop_per_s) if own else None
    if last is not None and last.percent_of_roof and on_envelope(analysis.roof):
        # the kernels' own best is no roof: no class, no "x left to the roof" (r4 F4)
        out.append(f"Latest step ({steps[-1].meta.get('step')}): "
                   f"{fmt_pct(last.percent_of_roof)} of the best these kernels reached "
                   f"({last.binding}, AI {fmt_ai(last.ai)} at {last.level}); "
                   f"{NO_ROOF_LINE} (how far it is from the machine's roof is not known).")
    elif last is not None and last.percent_of_roof:
        out.append(f"Latest step ({steps[-1].meta.get('step')}): {last.bound}-bound at "
                   f"{fmt_pct(last.percent_of_roof)} of its roof ({last.binding}, AI "
                   f"{fmt_ai(last.ai)} at {last.level}); {fmt_times(100 / last.percent_of_roof)} "
                   f"is left to the roof. The steps are versions of one kernel: the priority "
                   f"table below ranks them as if they were separate kernels.")
    return out
