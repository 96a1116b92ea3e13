"""Read the chart like an expert (seed 000 §4.4; seed 004 "读图:一个点的三段距离").

For each kernel: its position (memory-, compute-, overhead- or latency-bound) with the
evidence in numbers; the headroom to its attainable roof (more than 2x is flagged, seed 000
§4.4 "差距超过 2 倍的 kernel 列为重点优化对象"); its time share; a priority that weighs both
(the seconds it would save at the roof, as a share of the total); the three distances of
seed 004 as factors and in words; the sanity findings; and advice with predicted gains.
Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..sides import factor_text
from ..units import fmt_fraction, fmt_seconds, fmt_share
from .above_roof_words import above_nominal, nominal_binding
from .advice import advise
from .advice_calls import CallCost, calls_evidence, many_calls, reachable_s
from .advice_core import Advice
from .analysis import Analysis, Point, share_totals
from .diagnose_calls import calls_below_roof
from .diagnose_distances import Distance, _narrow_weights, _other_family_top, _reuse, distances
from .diagnose_evidence import (
    _latency_evidence,
)
from .display import pretty
from .display_results import diagnosis_text
from .fma_ceiling import mix_words
from .held_unit import held_ceiling, top_ceiling, vector_kind_note
from .kernel import Kernel
from .machine import Machine, machine_of
from .retime import one_launch_step
from .sanity import Finding, check_kernel
from .sanity_ceilings import applicable_launch_s
from .sanity_finding import ABOVE_TOLERANCE

# Kernels further than this from their roof are flagged (seed 000 §4.4).
FLAG_HEADROOM = 2.0


@dataclass(frozen=True)
class Diagnosis:
    kernel: str
    point: Point                     # the binding point (the level with the lowest roof)
    bound: str
    evidence: str
    headroom: float | None           # measured time / time at the roof (= attainable / achieved)
    flagged: bool                    # headroom > FLAG_HEADROOM
    time_share: float | None
    gain_s: float | None             # seconds saved if it ran at its roof
    priority: float                  # gain_s / total measured seconds (0 without a time)
    rank: int
    distances: tuple[Distance, ...]
    findings: tuple[Finding, ...]
    advice: tuple[Advice, ...]
    notes: tuple[str, ...] = ()      # what the kernel's source says about it (meta "note")
    reachable_s: float | None = None  # least time at the roof: max(work floor, launch floor)
    # a many-calls kernel's per-call floor (advice_calls.many_calls): the floor its gain
    # keeps, the one its merge advice prices (review r5: not the roof's numba no-op)
    call_cost: CallCost | None = None
    # priority is of the kernel's own file's time, not of all kernels' (several profiler
    # files: separate runs, as time_share is: analysis.share_totals; review s22 r4 F8)
    per_file: bool = False

    # a notebook shows the CLI's row, not every field (display_results)
    _repr_pretty_ = pretty(diagnosis_text)

    @property
    def best_advice(self) -> Advice | None:
        return self.advice[0] if self.advice else None

    @property
    def reachable(self) -> float:
        """reachable_s, or computed from the point when the diagnosis was built without it."""
        return (reachable_s(self.point, self.call_cost) if self.reachable_s is None
                else self.reachable_s)

    @property
    def gain_speedup(self) -> float | None:
        """Measured time / reachable time: the gain's speed-up (None without a time or a
        reachable time; under 1 for a kernel above its roof)."""
        reach = self.reachable
        if self.point.seconds is None or reach <= 0:
            return None
        return self.point.seconds / reach

    @property
    def unranked(self) -> bool:
        """Held to a faster fallback ceiling on the compute side (_faster_fallback): no
        headroom, gain or advice (review 19a N4)."""
        return any(n.startswith(NOT_RANKED) for n in self.notes)

    @property
    def cache_resident(self) -> bool:
        """Whether sanity's cache_resident finding says the point's working set is served
        from a cache (sanity_counts.check_cache_resident): above the DRAM roof, not a roof
        too low."""
        return any(f.check == "cache_resident" and f.level == self.point.level
                   for f in self.findings)

    @property
    def write_allocate(self) -> bool:
        """Whether sanity's write_allocate finding explains why it is above its roof:
        counter bytes over a STREAM-counted DRAM roof (sanity_ceilings.check_write_allocate)."""
        return any(f.check == "write_allocate" for f in self.findings)

    @property
    def gain_words(self) -> str:
        if self.gain_s is None and self.point.seconds is not None and self.unranked:
            return "not predicted: held to a faster fallback ceiling (see the kernel note)"
        if self.gain_s is None or self.headroom is None:
            return "no measured time: position only"
        # three figures as every factor (fmt_factor: '10.0x', not '10.00x'), and the digits
        # that keep it past the tolerance line: 1.0504x is not '1.05x' above a 1.05 line
        above = factor_text(1 / self.headroom, 1 + ABOVE_TOLERANCE) if self.headroom else "-"
        if self.headroom < 1 / (1 + ABOVE_TOLERANCE) and self.write_allocate:
            return (f"none: it runs {above} above the STREAM-counted DRAM "
                    f"roof, as far as the write-allocate reads its counters include explain "
                    f"(up to 32/24 = 1.33x; see the sanity checks): at its roof")
        if self.headroom < 1 / (1 + ABOVE_TOLERANCE) and self.cache_resident:
            # served from a cache that holds it, the roof is not the low side (review s18
            # r2 F3: a 16 kB dot at 2x a loaded probe's DRAM roof was blamed on the roof)
            return (f"none: it runs {above} faster than its {self.point.level} "
                    f"roof allows: its working set fits a cache, which serves the repeated "
                    f"calls (see cache_resident), so the {self.point.level} floor does not bind")
        if self.headroom < 1 / (1 + ABOVE_TOLERANCE) and nominal_binding(self.point):
            # a datasheet roof is not "too low": cache reuse or miscounts (r3 F4)
            return (f"none: it runs {above} faster than its roof allows; "
                    f"{above_nominal(self.point)} (see the sanity checks)")
        if self.headroom < 1 / (1 + ABOVE_TOLERANCE):
            return (f"none: it runs {above} faster than its roof allows, so "
                    f"the roof is too low for it or its counts are wrong (see the sanity "
                    f"checks)")
        # The speed-up over the same floor the saved time is taken against: an RMSNorm of
        # 6 us over a 5 us launch floor is 1.2x from its roof, not the 156x its 38 ns work
        # floor alone would say (headroom keeps that: it is the point's height).
        reach = self.reachable
        speedup = self.gain_speedup or self.headroom
        launch = applicable_launch_s(self.point) > self.point.floor_s
        kept = f"{fmt_seconds(reach)} launch/dispatch floor"
        cost = self.call_cost
        if cost is not None and self.point.calls * cost.floor_s >= reach > self.point.floor_s:
            # calls x the per-call floor the merge advice prices, so the reader sees both
            # factors: 1000 x 349 ns = 349 us, not the roof's 177 ns no-op (review r5)
            launch, kept = True, (f"{self.point.calls} x {fmt_seconds(cost.floor_s)} = "
                                  f"{fmt_seconds(reach)} per-call floor")
        if speedup < 1.0 + 1e-9 or self.gain_s <= 0:
            # at its roof within the tolerance (up to 5 % above it): no gain, and no "0.97x
            # faster" (a slowdown) either
            return (f"none: it runs at its {kept}" if launch else
                    f"none: it runs at its roof ({fmt_seconds(reach)}; up to "
                    f"{fmt_fraction(ABOVE_TOLERANCE)} above it is within the tolerance)")
        # the share the report table's 'gain at roof / total' cell prints (one rounding)
        return (f"{fmt_seconds(self.gain_s)} saved ({fmt_share(self.priority)} of "
                f"{'its own file' if self.per_file else 'the total'}) if it "
                # 3 figures as the headroom's distance prints it: '4.41x', not '4.4x' beside it
                f"reached its roof ({factor_text(speedup)} faster"
                + (f"; the {kept} stays" if launch else "") + ")")


NOT_RANKED = "not ranked"


def _faster_fallback(findings, kernel: Kernel, p: Point) -> str:
    """Why a point is not ranked, where the roof holds its precision (all of its FLOP) to
    a ceiling for narrower, faster math (sanity's precision_fallback warning); ''
    otherwise. A mixed kernel's fallback part moves only part of its time: still ranked."""
    if kernel.mixed or p.precision != kernel.precision or p.memory_bound_side or not any(
            f.check == "precision_fallback" and f.severity == "warning" for f in findings):
        return ""
    return (f"{NOT_RANKED}: the roof has no {kernel.precision} ceiling and holds it to a "
            f"faster one for narrower math ({p.binding}), so no headroom or speed-up is "
            f"predicted; give the roof {'an' if kernel.precision[0] in 'f' else 'a'} "
            f"{kernel.precision} ceiling (`rooflab specs import --"
            f"{kernel.precision} RATE` beside the others, or --on a catalog device)")


def _ranked(analysis: Analysis, kernel: Kernel, p: Point, total_s: float,
            machine: Machine, per_file: bool = False) -> Diagnosis:
    """A kernel's diagnosis without its evidence, distances and advice (_detail): what
    ranks it (gain, time share, floor) and what a report reads off every kernel, shown or
    not (headroom, findings: the flagged count and the read-with-care lines)."""
    note = kernel.meta.get("note")
    headroom = p.seconds / p.floor_s if p.seconds and p.floor_s > 0 else None
    # many small calls whose time is per-call cost: overhead-bound, not latency (r5 F3);
    # its gain keeps calls x the per-call floor its merge advice prices
    cost = many_calls(p, analysis.roof, machine, kernel)
    reachable = reachable_s(p, cost)
    gain = max(0.0, p.seconds - reachable) if p.seconds is not None else None
    findings = check_kernel(analysis, kernel, machine)
    unranked = _faster_fallback(findings, kernel, p)
    if unranked:
        # Held to a ceiling for narrower, faster math than it does (fp32 work on an fp16
        # tensor roof): its headroom, gain and every prediction are against a rate its math
        # never reaches (review 19a N4: gemm_1024 ranked #2, "parallelism: 53.33x" = fp32
        # at 224 TFLOP/s), so it is not ranked, flagged or advised beyond the fix.
        headroom, gain = None, None
        note = "; ".join(x for x in (note if isinstance(note, str) else "", unranked) if x)
    return Diagnosis(
        kernel=kernel.name, point=p, bound="overhead" if cost else p.bound, evidence="",
        headroom=headroom,
        flagged=headroom is not None and headroom > FLAG_HEADROOM, time_share=p.time_share,
        gain_s=gain, priority=gain / total_s if gain is not None and total_s > 0 else 0.0,
        rank=0, distances=(), findings=findings, advice=(),
        notes=(note,) if isinstance(note, str) and note else (), reachable_s=reachable,
        call_cost=cost, per_file=per_file)


def _detail(analysis: Analysis, kernel: Kernel, d: Diagnosis, machine: Machine) -> dict:
    """The fields _ranked leaves empty: evidence, the three distances and the advice (two
    thirds of diagnosing: review r5 F5), as replace() keywords."""
    p, cost = d.point, d.call_cost
    top = top_ceiling(analysis.roof, kernel)
    vector = bool(vector_kind_note(analysis.roof, kernel))   # int4 tensor math is no lever
    # an unranked kernel (_ranked) is advised nothing beyond its note's fix
    advice = (() if _faster_fallback(d.findings, kernel, p)
              else advise(p, analysis.roof, kernel, machine=machine))
    dists = distances(p, top.label, top.value, machine, len(analysis.roof.compute),
                      _weighted_label(analysis, kernel),
                      None if vector else _other_family_top(analysis.roof, top),
                      _reuse(kernel, p), _narrow_weights(kernel, p.precision),
                      # a launch floor to speak of: not on a CPU roof (review 19a N10)
                      step=one_launch_step(kernel) and bool(analysis.roof.overhead_s),
                      fma=mix_words(kernel.meta, p.precision, p.unit),
                      vector_kind=vector)
    if cost is not None:
        dists = (calls_below_roof(dists[0], p, cost, machine), *dists[1:])
    return {"evidence": (calls_evidence(p, cost) if cost
                         else _latency_evidence(p, machine, kernel)),
            "distances": dists, "advice": advice}


def _weighted_label(analysis: Analysis, kernel: Kernel) -> str | None:
    """The name of a kernel's weighted ceiling ("weighted fp16 tensor + fp32 vector":
    ceiling.kernel_ceiling, as analyze holds it); None for one held to a roof ceiling."""
    held = held_ceiling(analysis.roof, kernel)
    return held.label if held.weighted else None


def diagnose(analysis: Analysis, machine: Machine | None = None,
             detail: int | None = None) -> tuple[Diagnosis, ...]:
    """One diagnosis per kernel that has a point, the biggest gain at the roof first.

    `machine` (model.machine.machine_of) names the levers of a CPU or a GPU; by default it
    is read off the analysis' roof. `detail`: how many of the first diagnoses get their
    evidence, distances and advice (None: all); the others keep their rank, point,
    headroom, gain and findings, with evidence "" and no distances or advice: for a
    terminal that details the top N of 10 000 kernels (review r5 F5: 13x json.load)."""
    total = sum(k.seconds for k in analysis.kernels if k.seconds)
    # several profiler files (separate runs): each gain is of its own file's time, as each
    # time share is; 0.7 % of eight runs' summed 174 s sat beside 'time share 100 %'
    totals = share_totals(analysis.kernels)
    per_file = len({k.meta.get("step_index") for k in analysis.kernels
                    if isinstance(k.meta, Mapping)} - {None}) > 1   # share_totals' rule
    machine = machine if machine is not None else machine_of(analysis.roof)
    # each kernel's own hardest-binding point (as Analysis.primary, but two kernels of one
    # name keep their own numbers)
    primary = {id(k): min(pts, key=lambda p: p.attainable_flop_per_s)
               for k in analysis.kernels if (pts := analysis.points_of(k))}
    ranked = [(k, _ranked(analysis, k, primary[id(k)], totals[i] if per_file else total,
                          machine, per_file))
              for i, k in enumerate(analysis.kernels) if id(k) in primary]
    # Untimed kernels (analytic counts) have no gain; the longest floor goes first.
    ranked.sort(key=lambda kd: (-kd[1].priority, -(kd[1].time_share or 0.0),
                                -kd[1].point.floor_s, kd[1].kernel))
    shown = len(ranked) if detail is None else detail
    from dataclasses import replace

    return tuple(replace(d, rank=i + 1, **(_detail(analysis, k, d, machine) if i < shown
                                           else {}))
                 for i, (k, d) in enumerate(ranked))


def top(diagnoses: tuple[Diagnosis, ...], n: int) -> tuple[Diagnosis, ...]:
    """The n kernels most worth working on."""
    return diagnoses[:n]


def diagnosis_to_dict(d: Diagnosis) -> dict:
    """The JSON shape of one diagnosis (SI numbers, unit-named fields)."""
    return {
        "kernel": d.kernel, "rank": d.rank, "bound": d.bound, "level": d.point.level,
        "evidence": d.evidence, "headroom": d.headroom, "flagged": d.flagged,
        "time_share": d.time_share, "gain_s": d.gain_s, "priority": d.priority,
        # what priority is a share of: "file" (each kernel's own profiler file, a separate
        # run, as time_share) or "total" (every kernel's summed time)
        "priority_of": "file" if d.per_file else "total",
        # the gain's floor and speed-up (the report's "1.2x faster"): time at the roof
        # with the launches kept, and measured / that time
        "reachable_s": d.reachable, "gain_speedup": d.gain_speedup,
        "distances": [{"name": x.name, "factor": x.factor, "words": x.words}
                      for x in d.distances],
        "findings": [{"check": f.check, "severity": f.severity, "level": f.level,
                      "message": f.message, "causes": list(f.causes), "fix": f.fix}
                     for f in d.findings],
        "advice": [{"action": a.action, "detail": a.detail, "shrinks": a.shrinks,
                    "new_ai": a.new_ai if a.new_ai != float("inf") else None,
                    "new_flop_per_s": a.new_flop_per_s, "new_seconds": a.new_seconds,
                    "speedup": a.speedup, "assumption": a.assumption,
                    # a whole step's lever: both ends, gap scaled then held (review 19a N2)
                    **({"new_seconds_gap_scaled": a.seconds_range[0],
                        "new_seconds_gap_held": a.seconds_range[1],
                        "speedup_range": [d.point.seconds / a.seconds_range[1],
                                          d.point.seconds / a.seconds_range[0]]}
                       if a.seconds_range and d.point.seconds else {})}
                   for a in d.advice],
        "notes": list(d.notes),
    }
