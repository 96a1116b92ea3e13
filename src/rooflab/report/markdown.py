"""A Markdown report: roof, record table, kernels, priorities, diagnosis per kernel, advice.

`markdown_report(analysis, profile=None, title="")` returns the text; the row builders here
(`kernel_rows`, `priority_rows`, `record_rows`, `advice_rows`) are shared with the HTML and
terminal renderers so the three say the same numbers.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..hardware.profile import MachineProfile
from ..model.analysis import Analysis, Point, Unplaced, held_on, point_on
from ..model.choose import count_text
from ..model.diagnose import Diagnosis, diagnose, level_bounds
from ..model.kernel import Kernel
from ..model.machine import Machine, machine_of
from ..model.sanity import ABOVE_TOLERANCE
from ..units import fmt_ai, fmt_factor, fmt_pct, fmt_rate, fmt_seconds, rate_unit, si

# The optimisation-step rows and findings live in steps.py; re-exported for the renderers.
from .steps import STEP_HEADERS, step_findings, step_kernels, step_rows  # noqa: F401
from .tables import MEASURED_DERIVED, bandwidth_note, bandwidth_of

KERNEL_HEADERS = ("kernel", "precision", "level", "AI (FLOP/B)", "achieved", "attainable",
                  "% of roof", "bound", "binding", "time", "share")
RANKED_BY = ("Ranked by the time each would save if it reached its roof (its launches stay: "
             "calls x the launch floor).")
PRIORITY_HEADERS = ("#", "kernel", "bound", "time share", "headroom", "gain at roof / total",
                    "best advice", "predicted")
ADVICE_HEADERS = ("advice", "why", "shrinks", "new AI", "new FLOP/s", "speed-up", "assumption")
RECORD_HEADERS = ("quantity", "nominal", "measured", "measured / nominal")
UNPLACED_HEADERS = ("kernel", "time", "share", "why not placed", "compute only (no AI)",
                    "how to place it")
UNPLACED_TITLE = "Not placed on this roof"


NOT_PUBLISHED = "not published"
# Measured ceilings whose samples' IQR / median exceeds this are listed under the table.
NOISY_CEILING = 0.05


def machine_for(analysis: Analysis, profile: MachineProfile | None = None) -> Machine:
    """The machine behind the analysis' roof: the profile's host section when there is one,
    the catalog entry the roof is named after (its kind, and cache sizes when the host gives
    none), else what the roof itself shows (model.machine.machine_of)."""
    host = dict(profile.host) if profile is not None else {}
    kind = ""
    try:
        from ..hardware.catalog import match_device_name

        dev = match_device_name(analysis.roof.name)
    except Exception:   # noqa: BLE001 — no catalog, or a name it cannot parse: roof evidence
        dev = None
    if dev is not None:
        kind = dev.kind
        if not host.get("caches"):
            caches = {"L2": dev.l2_bytes} if dev.l2_bytes else {}
            if dev.kind == "cpu" and dev.llc_bytes:
                caches["L3"] = dev.llc_bytes
            host["caches"] = caches
    if profile is not None and not kind:
        kind = machine_of(analysis.roof, host).kind
    return machine_of(analysis.roof, host, kind)


def _binary(nbytes: float) -> str:
    """Cache sizes the way datasheets give them: 32768 -> '32 KiB', 33554432 -> '32 MiB'."""
    for scale, unit in ((2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB")):
        if nbytes >= scale:
            return f"{nbytes / scale:.3g} {unit}"
    return f"{nbytes:.0f} B"


def machine_line(m: Machine) -> str:
    """One sentence on whose levers the advice names."""
    if m.kind == "cpu":
        feats = [n for f, n in (("avx512", "AVX-512"), ("avx2", "AVX2"), ("fma", "FMA"),
                                ("neon", "NEON"), ("sve", "SVE"), ("avx512_bf16", "AVX512-BF16"),
                                ("vnni", "VNNI"), ("amx", "AMX")) if f in m.features]
        caches = ", ".join(f"{lv} {_binary(v)}" for lv, v in m.caches.items())
        return ("Machine: a CPU" + (f" ({', '.join(feats)})" if feats else "")
                + (f"; caches {caches}" if caches else "")
                + (" (L1/L2 per core)" if {"L1", "L2"} & set(m.caches) else "")
                + ". Advice names CPU levers: SIMD/FMA, cache blocking, threads, dispatch.")
    if m.kind == "gpu":
        return "Machine: a GPU. Advice names GPU levers: coalescing, occupancy, tensor cores, " \
               "CUDA graphs."
    if m.kind == "accelerator":
        return "Machine: an accelerator. Advice is worded for any machine."
    return "Machine kind unknown (neither the roof nor a profile says): advice is worded for " \
           "any machine."


def _pct(x: float | None) -> str:
    return fmt_pct(x, space=True)


def _share(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f} %"


def above_roof(d: Diagnosis) -> bool:
    """Faster than its roof allows (beyond the sanity tolerance)."""
    return d.headroom is not None and d.headroom < 1 / (1 + ABOVE_TOLERANCE)


def headroom_cell(d: Diagnosis) -> str:
    if d.headroom is None:
        return "-"
    # a kernel above a STREAM-counted roof by the write-allocate reads its counters include
    # is explained, not doubtful (sanity's write_allocate finding): said as that
    return f"{d.headroom:.2f}x" + (" (>2x)" if d.flagged else
                                   " (write-allocate)" if above_roof(d) and d.write_allocate
                                   else " (above roof)" if above_roof(d) else "")




def _floor(row) -> float:
    """The fraction of nominal under which a measured ceiling reads as a disturbed probe:
    the probe's own floors (probe/nominal.py: bandwidth 60 %, compute 50 %), so `report`
    and `probe` flag the same ceilings; ridges and the launch floor are not judged."""
    from ..probe.nominal import BANDWIDTH_FLOOR, COMPUTE_FLOOR

    return {"B/s": BANDWIDTH_FLOOR, "FLOP/s": COMPUTE_FLOOR,
            "OP/s": COMPUTE_FLOOR}.get(row.unit, 0.0)


# The notes `rooflab report` adds when --on names another device than the kernels ran on
# (ingest.profile_import.device_mismatch): the whole report is judged on the wrong roof.
DEVICE_MISMATCH = ("the kernels were profiled on a compute capability",
                   "the kernels ran on the CPU")


def trust_warnings(diags: Sequence[Diagnosis], profile: MachineProfile | None = None,
                   notes: Sequence[str] = (), kernels: Sequence[Kernel] = ()) -> list[str]:
    """What makes the whole report doubtful: a roof of another device than the kernels ran
    on (from `notes`), kernels above their roof, and measured ceilings far below nominal (a
    disturbed probe). kernels: the analysis's (ridge_band_warnings)."""
    out = [n for n in notes if n.startswith(DEVICE_MISMATCH)]
    # a write_allocate finding (sanity: counter bytes up to 4/3 over a STREAM-counted DRAM
    # roof) already says why such a kernel is above it: its counts are not wrong
    above = [d for d in diags if above_roof(d) and not d.write_allocate]
    if above:
        out.append(f"{len(above)} kernel(s) run faster than the roof allows: "
                   + ", ".join(f"{d.kernel} ({1 / d.headroom:.2f}x above)" for d in above)
                   + ". The roof is too low for them or their counts are wrong; their "
                     "ranking and advice mean little until that is fixed (see their sanity "
                     "checks).")
    out += ai_high_warnings(diags)
    if profile is not None:
        from .tables import profile_rows

        for key in ("machine_load", "device_load"):   # the probe said it was disturbed
            for note in ((profile.extras or {}).get(key) or {}).get("notes") or ():
                out.append(f"When this profile was measured, {note}.")
        low = [f"{r.quantity} {r.ratio:.0%}" for r in profile_rows(profile)
               if r.ratio is not None and r.ratio < _floor(r)]
        if low:
            from ..probe.nominal import healthy_range

            device = "cpu" if (profile.host or {}).get("kind") == "cpu" else "gpu"
            out.append(f"Measured ceilings far below nominal (a quiet probe reaches "
                       f"{healthy_range(device)} of a nominal compute peak): "
                       f"{', '.join(low)}. The probe was most likely disturbed by other "
                       f"load; every % of roof held by those ceilings is inflated by as much. "
                       f"Re-probe on a quiet machine, or judge by the nominal roof.")
        out += ridge_band_warnings(diags, profile, kernels)
    return out


def ai_high_warnings(diags: Sequence[Diagnosis]) -> list[str]:
    """The read-with-care line for kernels whose AI is too high for their op (sanity's
    ai_high: seed 000 §6.3, FLOP or bytes miscounted): like a point above its roof, their
    counts are wrong, so their bound, gain and advice are too (review 12a #3)."""
    flagged = [(d, f) for d in diags for f in d.findings if f.check == "ai_high"]
    if not flagged:
        return []
    named = ", ".join(f"{d.kernel} (AI {fmt_ai(d.point.ai)})" if f.level == d.point.level
                      else d.kernel for d, f in flagged)
    return [f"{len(flagged)} kernel(s) have an AI too high for their op: {named}. Their FLOP "
            f"or bytes are most likely miscounted (writes left out, a multiply-add counted "
            f"twice); their bound, gain and advice mean little until the counts are fixed "
            f"(see their ai_high checks)."]


def _kernel_at(kernels: Sequence[Kernel], p: Point) -> Kernel | None:
    """The point's kernel in `kernels` (the analysis's: p.kernel_index indexes them);
    None for a point of no kernel there."""
    i = p.kernel_index
    return kernels[i] if 0 <= i < len(kernels) and kernels[i].name == p.kernel else None


def ridge_band_warnings(diags: Sequence[Diagnosis], profile: MachineProfile,
                        kernels: Sequence[Kernel] = ()) -> list[str]:
    """Kernels whose AI lies between the measured and the nominal ridge: the two roofs put
    them on opposite sides, so memory- vs compute-bound (and the advice) depends on which
    roof is believed. Seed 004: near the ridge only the measured lines decide (T4: measured
    185, nominal 203; AI 180-200 flips). kernels: the analysis's, so that a mixed-precision
    kernel's nominal ridge is its weighted one, as its ridge on this roof is."""
    nominal = profile.nominal
    if nominal is None or not nominal.compute:
        return []
    out, names = [], []
    for d in diags:
        p = d.point
        m = nominal.find_memory(p.level)
        if m is None or not p.ai or p.ai <= 0:
            continue
        held = held_on(nominal, p, _kernel_at(kernels, p))
        c, name = held.ceiling, held.label
        nominal_ridge = c.value / m.value
        if p.memory_bound_side == (p.ai < nominal_ridge):
            continue
        side = "memory" if p.memory_bound_side else "compute"
        other = "compute" if side == "memory" else "memory"
        names.append(f"{p.kernel} (AI {fmt_ai(p.ai)}: {side} here, {other} nominal)")
        out.append(f"{p.kernel}: AI {fmt_ai(p.ai)} lies between the ridges of the two roofs "
                   f"({fmt_ai(p.ridge)} on this one, {fmt_ai(nominal_ridge)} nominal, "
                   f"{name} / {p.level}): this roof calls it {side}-side, the nominal "
                   f"one {other}-side. Near the ridge only measured lines decide (seed 004); "
                   f"check that the probe measured this ceiling well before acting on it.")
    if len(out) > 3:   # one line, not a wall of them
        return [f"{len(names)} kernels lie between the measured and the nominal ridge, so "
                f"the two roofs put them on opposite sides: {'; '.join(names)}. Near the "
                f"ridge only measured lines decide (seed 004); check that the probe measured "
                f"those ceilings well before acting on their bound."]
    return out


def kernel_rows(analysis: Analysis) -> list[tuple[str, ...]]:
    """One row per point, kernels in the order given, levels as analysed. A point without
    FLOP (a copy) shows the bytes/s it moved, its level's bandwidth and the percent of it
    (tables.bandwidth_of, as `rooflab ncu`'s table): '0 FLOP/s | -' hid a copy at 87 %."""
    rows = []
    for p, bound in zip(analysis.points, level_bounds(analysis), strict=True):
        moved, pct = bandwidth_of(p)
        cells = ((si(moved, "B/s"), si(p.bytes_per_s, "B/s"), _pct(pct)) if moved is not None
                 else (fmt_rate(p.achieved_flop_per_s, p.precision),
                       fmt_rate(p.attainable_flop_per_s, p.precision),
                       _pct(p.percent_of_roof)))
        rows.append((p.kernel, p.precision + (f" {p.unit}" if p.unit else ""), p.level,
                     fmt_ai(p.ai), *cells, bound,
                     p.binding, fmt_seconds(p.seconds), _share(p.time_share)))
    return rows


def kernel_row_notes(analysis: Analysis) -> list[str]:
    """What the bandwidth cells of kernel_rows mean, once per kernel and level."""
    return list(dict.fromkeys(bandwidth_note(p.kernel, p.level) for p in analysis.points
                              if bandwidth_of(p)[0] is not None))


def compute_only_words(u: Unplaced) -> str:
    """An unplaced kernel's compute position: achieved FLOP/s against the compute ceiling
    it is held to ('-' untimed or without FLOP); without a memory level there is no AI,
    so no attainable roof and no bound."""
    if u.achieved_flop_per_s is None:
        return "-"
    pct = u.percent_of_peak
    return (f"{si(u.achieved_flop_per_s, 'FLOP/s')}"
            + (f" = {pct:.3g} % of {u.compute} {si(u.peak_flop_per_s, 'FLOP/s')}"
               if pct is not None else ""))


def unplaced_rows(analysis: Analysis) -> list[tuple[str, ...]]:
    """One row per kernel without a point (Analysis.unplaced), in UNPLACED_HEADERS order."""
    return [(u.kernel, fmt_seconds(u.seconds), _share(u.time_share), u.reason,
             compute_only_words(u), u.fix) for u in analysis.unplaced]


def unplaced_summary(analysis: Analysis) -> str:
    """'1 kernel(s) got no point on this roof, ...: 1 ms, 10.3 % of the 9.7 ms measured.
    ...' ('' when every kernel is placed): what the placed kernels' shares leave out."""
    gone = analysis.unplaced
    if not gone:
        return ""
    head = (f"{len(gone)} kernel(s) got no point on this roof, so no AI, bound, ranking or "
            f"advice")
    total = sum(k.seconds for k in analysis.kernels if k.seconds)
    seconds = sum(u.seconds for u in gone if u.seconds)
    if not (seconds and total):
        return head + "."
    return (head + f": {fmt_seconds(seconds)}, {100 * seconds / total:.1f} % of the "
            f"{fmt_seconds(total)} measured. The placed kernels' time shares are of the whole "
            f"{fmt_seconds(total)}, so they and these add up to 100 %.")


def priority_rows(diagnoses: Sequence[Diagnosis]) -> list[tuple[str, ...]]:
    rows = []
    for d in diagnoses:
        a = d.best_advice
        rows.append((str(d.rank), d.kernel, d.bound, _share(d.time_share), headroom_cell(d),
                     "-" if d.gain_s is None else
                     f"{fmt_seconds(d.gain_s)} / {100 * d.priority:.1f} %",
                     a.action if a else "-", f"{a.speedup:.2f}x" if a else "-"))
    return rows


def advice_rows(d: Diagnosis) -> list[tuple[str, ...]]:
    return [(a.action, a.detail, a.shrinks, fmt_ai(a.new_ai),
             fmt_rate(a.new_flop_per_s, d.point.precision),
             f"{a.speedup:.2f}x", a.assumption) for a in d.advice]


def record_rows(analysis: Analysis, profile: MachineProfile | None,
                top: int = 5) -> list[tuple[str, ...]]:
    """Seed 004's record table: B, P, ridge (nominal, measured, ratio), then workload rows.

    Workload rows: each top kernel's achieved FLOP/s against the slope/roof height at its AI
    on the nominal roof, and its time against the floor on the judging roof.
    """
    if profile is None:
        return []
    from .tables import profile_rows

    nominal = profile.nominal
    rows = []
    for r in profile_rows(profile):
        cells = list(r.cells()[:4])
        if r.nominal is None and r.derived_method:
            # derived from measured ceilings (the real-traffic DRAM): no datasheet has it,
            # and "not published" read as a missing datasheet value (review 17a N13e); the
            # whole method follows under the table (record_notes)
            cells[1] = derived_words(r.derived_method)
        elif r.nominal is None and nominal is not None:
            # A vendor publishes peaks, not cache bandwidths (nor, for CPUs, always DRAM);
            # a ridge needs both numbers.
            level = r.quantity.rsplit("/ ", 1)[-1] if r.quantity.startswith("ridge") else ""
            cells[1] = (f"{NOT_PUBLISHED} (no nominal {level})" if level
                        and nominal.find_memory(level) is None else NOT_PUBLISHED)
        rows.append(tuple(cells))
    for d in diagnose(analysis, machine_for(analysis, profile))[:top]:
        p = d.point
        nom = nom_floor = None
        nom_words = "-"
        if nominal is not None:
            # the same kernel placed on the nominal roof: the model's attainable and floor
            k = analysis.kernel_of(p)
            there = point_on(nominal, p, k) if k is not None else None
            if there is not None:
                nom, nom_floor = there.attainable_flop_per_s, there.floor_s
                nom_words = fmt_rate(nom, p.precision)
            else:
                c = held_on(nominal, p, k).ceiling
                nom_words = (f"<= {fmt_rate(c.value, c.precision)} (peak; {p.level} "
                             f"{NOT_PUBLISHED})")
        rows.append((f"{p.kernel}: {rate_unit(p.precision)}", nom_words,
                     fmt_rate(p.achieved_flop_per_s, p.precision),
                     "-" if p.percent_of_roof is None else   # untimed: no achieved point
                     f"{_pct(p.percent_of_roof)} of the {analysis.roof.kind} roof"))
        # Seed 004's TPOT row: the floor on the nominal roof, the measured time, the ratio;
        # the floor on the judging roof follows, since the headroom is taken against it.
        judged = ("-" if d.headroom is None else
                  f"{d.headroom:.2f}x the {fmt_seconds(p.floor_s)} floor of the "
                  f"{analysis.roof.kind} roof")
        if nom_floor is not None and p.seconds:
            ratio = f"{p.seconds / nom_floor:.2f}x the floor; {judged}"
        else:
            ratio = judged
        rows.append((f"{p.kernel}: time",
                     f"{fmt_seconds(nom_floor)} (floor)" if nom_floor is not None else
                     f"{NOT_PUBLISHED} (no nominal {p.level})" if nominal is not None else "-",
                     fmt_seconds(p.seconds), ratio))
    return rows


def derived_words(method: str) -> str:
    """A derived ceiling's nominal cell: its method's head ("derived from this run's
    measured DRAM rates"), the part before the first colon."""
    head = method.split(":", 1)[0].strip()
    return head if head.startswith("derived") else f"derived: {head}"


def record_notes(profile: MachineProfile | None) -> list[str]:
    """Under the record table: how its derived measured values are derived, measured
    ceilings too noisy to lean on, then the roofs' notes."""
    if profile is None:
        return []
    from .tables import profile_rows

    derived = [f"{r.quantity} {MEASURED_DERIVED}: {r.derived_method}"
               for r in profile_rows(profile) if r.derived_method]
    return derived + _measured_notes(profile)


def _measured_notes(profile: MachineProfile) -> list[str]:
    from .tables import profile_notes, profile_rows

    noisy = [f"{r.quantity} {r.spread:.0%}" for r in profile_rows(profile)
             if r.spread is not None and r.spread > NOISY_CEILING]
    if not noisy:
        return profile_notes(profile)
    # The per-ceiling "samples vary" warnings say the same as this one line.
    notes = [n for roof in profile.roofs for n in roof.notes]
    return ([f"Measured ceilings whose samples spread more than {NOISY_CEILING:.0%} "
             f"(IQR / median): {', '.join(noisy)}. The roof is the best sample of each; with "
             f"this much spread every % of roof moves with it: re-probe on a quiet machine "
             f"(`rooflab probe --full`)."] + list(dict.fromkeys(notes)))


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    def esc(cell: str) -> str:
        return str(cell).replace("|", "\\|").replace("\n", " ")

    out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    out += ["| " + " | ".join(esc(c) for c in row) + " |" for row in rows]
    return out


def diagnosis_lines(d: Diagnosis) -> list[str]:
    out = [f"### {d.rank}. {d.kernel} — {d.bound}-bound", "",
           f"- **Position**: {d.evidence}",
           f"- **Gain**: {d.gain_words}" + (" — flagged: more than 2x below its roof"
                                            if d.flagged else "")]
    out += [f"- **Kernel note**: {n}" for n in d.notes] + [""]
    out.append("Three distances (seed 004):")
    out.append("")
    for x in d.distances:
        f = fmt_factor(x.factor)
        out.append(f"1. **{x.name}** ({f}): {x.words}")
    out.append("")
    if d.findings:
        out.append("Sanity checks:")
        out.append("")
        for f in d.findings:
            out.append(f"- **{f.check}** ({f.severity}): {f.message}")
            for c in f.causes:
                out.append(f"  - possible cause: {c}")
            if f.fix:
                out.append(f"  - check: {f.fix}")
        out.append("")
    if d.advice:
        out += _table(ADVICE_HEADERS, advice_rows(d))
        out.append("")
    return out


def markdown_report(analysis: Analysis, profile: MachineProfile | None = None,
                    title: str = "", top: int = 10) -> str:
    """The whole report as Markdown text (nothing is written or printed here)."""
    roof = analysis.roof
    machine = machine_for(analysis, profile)
    diags = diagnose(analysis, machine)
    total = sum(k.seconds for k in analysis.kernels if k.seconds)
    lines = [f"# {title or 'Roofline report: ' + roof.name}", ""]
    lines.append(f"Roof: **{roof.name}** ({roof.kind})"
                 + (f", source: {roof.source}" if roof.source else "") + ".")
    ceilings = ", ".join(f"{c.label} {fmt_rate(c.value, c.precision)}" for c in roof.compute)
    levels = ", ".join(f"{c.level} {si(c.value, 'B/s')}" for c in roof.memory)
    lines += [f"Compute ceilings: {ceilings or 'none'}.", f"Memory ceilings: {levels or 'none'}."]
    if roof.overhead_s:
        lines.append(f"Launch/dispatch floor: {fmt_seconds(roof.overhead_s)} per call.")
    lines.append(machine_line(machine))
    lines.append("")
    bounds: dict[str, int] = {}
    for d in diags:
        bounds[d.bound] = bounds.get(d.bound, 0) + 1
    lines.append(f"{count_text(analysis.kernels)}, {fmt_seconds(total) if total else 'no'} "
                 f"measured time; " + ", ".join(f"{n} {b}-bound" for b, n in bounds.items())
                 + ".")
    flagged = [d.kernel for d in diags if d.flagged]
    if flagged:
        lines.append(f"More than 2x below their roof: {', '.join(flagged)}.")
    if analysis.unplaced:
        lines.append(f"Not placed on this roof: {', '.join(u.kernel for u in analysis.unplaced)}"
                     f" (see [{UNPLACED_TITLE}](#not-placed-on-this-roof)).")
    lines.append("")
    lines += [f"> **Read with care**: {w}\n"
              for w in trust_warnings(diags, profile, analysis.notes, analysis.kernels)]
    if profile is not None:
        lines += ["## Record table (nominal vs measured)", ""]
        lines += _table(RECORD_HEADERS, record_rows(analysis, profile))
        lines.append("")
        lines += [f"- {n}" for n in record_notes(profile)]
        lines.append("")
    steps = step_rows(analysis)
    if steps:
        lines += ["## Optimisation steps", "",
                  "Speed-ups are time ratios (> 1x: faster than the reference step).", ""]
        lines += _table(STEP_HEADERS, steps)
        lines.append("")
        lines += [f"- {s}" for s in step_findings(analysis)] + [""]
    lines += ["## Top kernels to work on", "",
              RANKED_BY, ""]
    lines += _table(PRIORITY_HEADERS, priority_rows(diags[:top]))
    lines += ["", "## Kernels on the roof", ""]
    lines += _table(KERNEL_HEADERS, kernel_rows(analysis))
    bandwidth = kernel_row_notes(analysis)
    if bandwidth:
        lines += [""] + [f"- {n}" for n in bandwidth]
    if analysis.unplaced:
        lines += ["", f"## {UNPLACED_TITLE}", "", unplaced_summary(analysis), ""]
        lines += _table(UNPLACED_HEADERS, unplaced_rows(analysis))
    lines += ["", "## Diagnosis per kernel", ""]
    for d in diags[:top]:
        lines += diagnosis_lines(d)
    if len(diags) > top:
        lines.append(f"({len(diags) - top} more kernel(s) not detailed; raise --top.)")
        lines.append("")
    if analysis.notes:
        lines += ["## Notes", ""] + [f"- {n}" for n in analysis.notes] + [""]
    footer = generator_footer(markdown=True)
    if footer:
        lines += ["", "---", "", footer]
    return "\n".join(lines).rstrip() + "\n"


def generator_footer(markdown: bool = False) -> str:
    """'Written by rooflab 0.1.0: rooflab report k.json -o r.md' when a command writes the
    report (files.generator), so a report found later says how to make it again (the
    command as code in Markdown); '' in library use. No date: the same command on the same
    input gives the same file."""
    from ..files import command_line, generator

    gen = generator()
    if gen is None:
        return ""
    command = command_line(gen).replace("`", "'") if markdown else command_line(gen)
    return f"Written by rooflab {gen['rooflab']}: " + (f"`{command}`" if markdown else command)
