"""A Markdown report: roof, record table, kernels, priorities, diagnosis per kernel, advice.

`markdown_report(analysis, profile=None, title="")` returns the text; the row builders here
(`kernel_rows`, `priority_rows`, `record_rows`, `advice_rows`) are shared with the HTML and
terminal renderers so the three say the same numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ..hardware.profile import MachineProfile
from ..model.analysis import Analysis, Point, Unplaced
from ..model.bandwidth_reached import bandwidth_of
from ..model.ceiling import Roof
from ..model.choose import count_text, timed_total
from ..model.diagnose import FLAG_HEADROOM, Diagnosis, diagnose
from ..model.diagnose_distances import factor_words
from ..model.dies import kind_words
from ..model.machine import Machine, machine_of
from ..sides import ai_apart, times_text
from ..units import fmt_ai, fmt_pct, fmt_rate, fmt_seconds, fmt_share, fmt_times, si
from ..units import fmt_bytes_binary as _binary  # cache sizes as datasheets give them

# The read-with-care lines and the probe's shortened load note live in read_with_care.py.
from .envelope_bound import AT_BEST, NO_ROOF, envelope_bound, envelope_header, level_words
from .md_escape import md_name, md_safe
from .read_with_care import above_roof, load_said, short_doubt, trust_warnings

# The record table (seed 004's 记录表) lives in record_table.py, one source for the
# terminal, the files and --json.
from .record_table import RECORD_HEADERS, RECORD_TITLE, RecordRow, record_notes, record_table

# The optimisation-step rows and findings live in steps.py.
from .steps import STEP_HEADERS, step_findings, step_rows
from .tables import bandwidth_note

KERNEL_HEADERS = ("kernel", "precision", "level", "AI (FLOP/B)", "achieved", "attainable",
                  "% of roof", "bound", "binding", "time", "share")
RANKED_BY = ("Ranked by the time each would save if it reached its roof (its launches stay: "
             "calls x the launch floor).")
PRIORITY_HEADERS = ("#", "kernel", "bound", "time share", "headroom", "gain at roof / total",
                    "best advice", "predicted")
# the gain column's header when each gain is of its kernel's own profiler file's time
# (several files, separate runs: Diagnosis.per_file; review s22 r4 F8)
GAIN_PER_FILE = "gain at roof / own file"
ADVICE_HEADERS = ("advice", "why", "shrinks", "new AI", "new FLOP/s", "speed-up", "assumption")
UNPLACED_HEADERS = ("kernel", "time", "share", "why not placed", "compute only (no AI)",
                    "how to place it")
UNPLACED_TITLE = "Not placed on this roof"
# the columns of the .md tables that hold names from files (md_escape.md_name); the rest
# are rooflab's words (md_safe)
NAME_COLUMNS = frozenset({"kernel", "step", "quantity"})


def machine_for(analysis: Analysis, profile: MachineProfile | None = None) -> Machine:
    """The machine behind the analysis' roof: the profile's host section when there is one,
    the catalog entry the roof is named after (its kind, and cache sizes when the host gives
    none), else what the roof itself shows (model.machine.machine_of). It carries the
    profile's nominal roof when that is not the roof judged, for the precision lever."""
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
    machine = machine_of(analysis.roof, host, kind)
    floors = _call_floors(profile)
    if floors:
        machine = replace(machine, call_floors=floors)
    nominal = profile.nominal if profile is not None else None
    if nominal is None or nominal == analysis.roof:
        return machine
    return replace(machine, nominal=nominal)   # the precision lever's cap (review r4 F3)


def _call_floors(profile: MachineProfile | None) -> dict[str, float]:
    """The probe's per-call floors (extras.overhead: {name: {"seconds": s, ...}}) by name."""
    overhead = ((profile.extras or {}).get("overhead") or {}) if profile is not None else {}
    return {n: float(v["seconds"]) for n, v in overhead.items()
            if isinstance(v, dict) and isinstance(v.get("seconds"), (int, float))}


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


def headroom_cell(d: Diagnosis) -> str:
    if d.headroom is None:
        return "-"
    # a kernel above a STREAM-counted roof by the write-allocate reads its counters include
    # is explained, not doubtful (sanity's write_allocate finding): said as that
    # the digits that keep it off the 2x line it is flagged on: '2.002x (>2x)', not
    # '2.00x (>2x)' (sides.py; review s22 r4 F3)
    return times_text(d.headroom, FLAG_HEADROOM) + (" (>2x)" if d.flagged else
                                   " (write-allocate)" if above_roof(d) and d.write_allocate
                                   else " (above roof)" if above_roof(d) else "")


def kernel_rows(analysis: Analysis) -> list[tuple[str, ...]]:
    """One row per point, longest kernel first (untimed ones last, in the order given), as
    `rooflab ncu`'s table and its CSV list them (review s22 r4 F10: edge.json's 100 ms
    kernel sat at row 8 of 12), levels as analysed. A point without
    FLOP (a copy) shows the bytes/s it moved, its level's bandwidth and the percent of it
    (bandwidth_reached.bandwidth_of, as `rooflab ncu`'s table): '0 FLOP/s | -' hid a copy
    at 87 %. The bound as `rooflab ncu` words it (envelope_bound.level_words)."""
    rows = []
    bounds = level_words(analysis)
    # stable: a kernel's levels stay together and in order, ties keep the file's order
    for p in sorted(analysis.points, key=lambda p: -(p.seconds or 0.0)):
        bound = bounds.get((p.kernel_index, p.level), p.bound)
        moved, pct = bandwidth_of(p)
        cells = ((si(moved, "B/s"), si(p.bytes_per_s, "B/s"), fmt_pct(pct)) if moved is not None
                 else (fmt_rate(p.achieved_flop_per_s, p.precision),
                       fmt_rate(p.attainable_flop_per_s, p.precision),
                       fmt_pct(p.percent_of_roof)))
        rows.append((p.kernel, precision_cell(analysis, p), p.level,
                     ai_apart(p.ai, p.ridge)[0], *cells, bound,
                     p.binding, fmt_seconds(p.seconds), fmt_share(p.time_share)))
    return rows


FALLBACK = "(fallback)"


def precision_cell(analysis: Analysis, p: Point) -> str:
    """What the point's precision column says: the kernel's precision and the unit it ran
    on ("fp16 tensor"), or, where the roof has no ceiling of its own and another stands in
    (Roof.compute_for), both: "fp32 -> fp16 tensor (fallback)". The kernel's precision with
    the stand-in's unit ("fp32 tensor") named a ceiling no GPU has (the seed 000 roof)."""
    own = p.precision + (f" {p.unit}" if p.unit else "")
    k = analysis.kernel_of(p)
    if k is not None and k.mixed:   # a weighted ceiling: its binding column names the mix
        return own
    unit = k.unit if k is not None else p.unit
    used, _ = analysis.roof.compute_for(p.precision, unit)
    if used.precision == p.precision and (unit is None or used.unit == unit):
        return own
    asked = p.precision + (f" {unit}" if unit else "")
    return f"{asked} -> {used.label} {FALLBACK}"


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
            + (f" = {fmt_pct(pct)} of {u.compute} {si(u.peak_flop_per_s, 'FLOP/s')}"
               if pct is not None else ""))


def unplaced_rows(analysis: Analysis) -> list[tuple[str, ...]]:
    """One row per kernel without a point (Analysis.unplaced), in UNPLACED_HEADERS order."""
    return [(u.kernel, fmt_seconds(u.seconds), fmt_share(u.time_share), u.reason,
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
    return (head + f": {fmt_seconds(seconds)}, {fmt_share(seconds / total)} of the "
            f"{fmt_seconds(total)} measured. The placed kernels' time shares are of the whole "
            f"{fmt_seconds(total)}, so they and these add up to 100 %.")


def priority_headers(diagnoses: Sequence[Diagnosis]) -> tuple[str, ...]:
    """PRIORITY_HEADERS, the gain column saying what its percent is of: '/ own file' when
    the gains are of each kernel's own file (Diagnosis.per_file), else '/ total'."""
    if not any(d.per_file for d in diagnoses):
        return PRIORITY_HEADERS
    return tuple(GAIN_PER_FILE if h == "gain at roof / total" else h for h in PRIORITY_HEADERS)


def priority_rows(diagnoses: Sequence[Diagnosis], roof: Roof | None = None
                  ) -> list[tuple[str, ...]]:
    """roof: the analysis' roof, so that on the envelope (no --on) the bound reads as the
    terminal's does: 'no roof (give --on)' or 'memory (relative)' (envelope_bound); the
    .md report said "compute" for output3.csv at 7.5 % of its GPU's DRAM (review s18 r4 F4)."""
    rows = []
    for d in diagnoses:
        a = d.best_advice
        action = a.action if a else "-"
        lever = next((x for x in d.advice[1:] if x.speedup > 1.0), None) if a else None
        if a is not None and lever is not None and a.action.startswith("re-time") \
                and a.speedup == 1.0:
            # a loaded probe put "re-time on a quiet machine 1.00x" on every row: the best
            # real lever beside it, as the detail below gives it (review r5 F6c)
            a, action = lever, f"re-time first, then: {lever.action}"
        bound = d.bound if roof is None else envelope_bound(d.point, roof, d.bound)
        rows.append((str(d.rank), d.kernel, bound, fmt_share(d.time_share), headroom_cell(d),
                     "-" if d.gain_s is None else
                     f"{fmt_seconds(d.gain_s)} / {fmt_share(d.priority)}",
                     action, fmt_times(a.speedup) if a else "-"))
    return rows


def advice_rows(d: Diagnosis, said: bool = False) -> list[tuple[str, ...]]:
    """said: the report's top says the probe's load note (load_said): the rows point there."""
    return [(a.action, short_doubt(a.detail, said), a.shrinks, fmt_ai(a.new_ai),
             fmt_rate(a.new_flop_per_s, d.point.precision),
             fmt_times(a.speedup), short_doubt(a.assumption, said)) for a in d.advice]


def record_rows(analysis: Analysis, profile: MachineProfile | None, top: int = 5,
                diags: Sequence[Diagnosis] | None = None) -> list[tuple[str, ...]]:
    """Seed 004's record table as the tables print it (record_table.RecordRow.cells: B, P,
    ridge, then each top kernel's FLOP/s and time against the nominal roof). diags: the
    analysis's diagnoses when the caller has them (diagnosing thousands of kernels twice
    costs seconds)."""
    return [r.cells for r in record_table_rows(analysis, profile, top, diags)]


def record_table_rows(analysis: Analysis, profile: MachineProfile | None, top: int = 5,
                      diags: Sequence[Diagnosis] | None = None) -> list[RecordRow]:
    """The record table's rows with their numbers, the one source of the terminal's,
    the files' and --json's (report/record_table.py)."""
    if profile is None:
        return []
    if diags is None:
        diags = diagnose(analysis, machine_for(analysis, profile))
    return record_table(analysis, profile, diags, top)


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """A GFM table: names escaped as data (md_name), the other cells kept free of HTML."""
    esc = [md_name if h in NAME_COLUMNS else (lambda c: md_safe(c, cell=True))
           for h in headers]
    out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    out += ["| " + " | ".join(e(c) for e, c in zip(esc, row, strict=False)) + " |"
            for row in rows]
    return out


def diagnosis_lines(d: Diagnosis, said: bool = False, roof: Roof | None = None) -> list[str]:
    """said: the top says the probe's load note (load_said). roof: the analysis' roof (on
    the envelope the class line says it has none to judge by, as the terminal's does)."""
    head = envelope_header(d.point, roof, d.bound)
    out = [f"### {d.rank}. {md_name(d.kernel)} — {head}", "",
           f"- **Position**: {md_safe(d.evidence)}",
           f"- **Gain**: {md_safe(d.gain_words)}" + (" — flagged: more than 2x below its roof"
                                                     if d.flagged else "")]
    out += [f"- **Kernel note**: {md_safe(n)}" for n in d.notes] + [""]
    out.append("Three distances (seed 004):")
    out.append("")
    for x in d.distances:
        f = factor_words(x)   # '1.0004x', not '1x' beside the ridge (sides.py)
        out.append(f"1. **{x.name}** ({f}): {md_safe(x.words)}")
    out.append("")
    if d.findings:
        out.append("Sanity checks:")
        out.append("")
        for f in d.findings:
            out.append(f"- **{f.check}** ({f.severity}): {md_safe(f.message)}")
            for c in f.causes:
                out.append(f"  - possible cause: {md_safe(short_doubt(c, said))}")
            if f.fix:
                out.append(f"  - check: {md_safe(f.fix)}")
        out.append("")
    if d.advice:
        out += _table(ADVICE_HEADERS, advice_rows(d, said))
        out.append("")
    return out


def class_counts(diags: Sequence[Diagnosis], roof: Roof) -> str:
    """'2 memory-bound, 1 compute-bound'; on the envelope roof (no --on) the classes are
    relative ('1 memory-bound (relative)') or none ('1 at the best here (no roof: give
    --on)'), as the tables word them (envelope_bound)."""
    counts: dict[str, int] = {}
    for d in diags:
        said = envelope_bound(d.point, roof, d.bound)
        key = (AT_BEST if said == NO_ROOF else
               f"{d.bound}-bound (relative)" if said != d.bound else f"{d.bound}-bound")
        counts[key] = counts.get(key, 0) + 1
    return ", ".join(f"{n} {b}" for b, n in counts.items())


def markdown_report(analysis: Analysis, profile: MachineProfile | None = None,
                    title: str = "", top: int = 10,
                    diags: Sequence[Diagnosis] | None = None) -> str:
    """The whole report as Markdown text (nothing is written or printed here). diags: the
    analysis's diagnoses where the caller has them (diagnosing thousands costs seconds)."""
    roof = analysis.roof
    machine = machine_for(analysis, profile)
    diags = list(diags) if diags is not None else diagnose(analysis, machine)
    total = timed_total(analysis.kernels)
    lines = [f"# {md_name(title or 'Roofline report: ' + roof.name)}", ""]
    lines.append(f"Roof: **{md_name(roof.name)}** ({md_name(kind_words(roof))})"
                 + (f", source: {md_name(roof.source)}" if roof.source else "") + ".")
    ceilings = ", ".join(f"{md_name(c.label)} {fmt_rate(c.value, c.precision)}"
                         for c in roof.compute)
    levels = ", ".join(f"{md_name(c.level)} {si(c.value, 'B/s')}" for c in roof.memory)
    lines += [f"Compute ceilings: {ceilings or 'none'}.", f"Memory ceilings: {levels or 'none'}."]
    if roof.overhead_s:
        lines.append(f"Launch/dispatch floor: {fmt_seconds(roof.overhead_s)} per call.")
    lines.append(machine_line(machine))
    lines.append("")
    lines.append(f"{count_text(analysis.kernels)}, {fmt_seconds(total) if total else 'no'} "
                 f"measured time; " + class_counts(diags, roof) + ".")
    flagged = [md_name(d.kernel) for d in diags if d.flagged]
    if flagged:
        lines.append(f"More than 2x below their roof: {', '.join(flagged)}.")
    if analysis.unplaced:
        lines.append(f"Not placed on this roof: "
                     f"{', '.join(md_name(u.kernel) for u in analysis.unplaced)}"
                     f" (see [{UNPLACED_TITLE}](#not-placed-on-this-roof)).")
    lines.append("")
    care = trust_warnings(diags, profile, analysis.notes, analysis.kernels)
    lines += [f"> **Read with care**: {md_safe(w)}\n" for w in care]
    if profile is not None:
        lines += [f"## {RECORD_TITLE}", ""]
        lines += _table(RECORD_HEADERS, record_rows(analysis, profile, diags=diags))
        lines.append("")
        lines += [f"- {md_safe(n)}" for n in record_notes(profile)]
        lines.append("")
    steps = step_rows(analysis)
    if steps:
        lines += ["## Optimisation steps", "",
                  "Speed-ups are time ratios (> 1x: faster than the reference step).", ""]
        lines += _table(STEP_HEADERS, steps)
        lines.append("")
        lines += [f"- {md_safe(s)}" for s in step_findings(analysis)] + [""]
    lines += ["## Top kernels to work on", "",
              RANKED_BY, ""]
    lines += _table(priority_headers(diags), priority_rows(diags[:top], roof))
    lines += ["", "## Kernels on the roof", ""]
    lines += _table(KERNEL_HEADERS, kernel_rows(analysis))
    bandwidth = kernel_row_notes(analysis)
    if bandwidth:
        lines += [""] + [f"- {md_safe(n)}" for n in bandwidth]
    if analysis.unplaced:
        lines += ["", f"## {UNPLACED_TITLE}", "", md_safe(unplaced_summary(analysis)), ""]
        lines += _table(UNPLACED_HEADERS, unplaced_rows(analysis))
    lines += ["", "## Diagnosis per kernel", ""]
    for d in diags[:top]:
        lines += diagnosis_lines(d, load_said(care), roof)
    if len(diags) > top:
        lines.append(f"({len(diags) - top} more kernel(s) not detailed; raise --top.)")
        lines.append("")
    if analysis.notes:
        lines += ["## Notes", ""] + [f"- {md_safe(n)}" for n in analysis.notes] + [""]
    footer = generator_footer(markdown=True)
    if footer:
        lines += ["", "---", "", footer]
    return "\n".join(lines).rstrip() + "\n"


def generator_footer(markdown: bool = False) -> str:
    """'Written by rooflab 0.1.0: rooflab report k.json -o r.md' when a command writes the
    report (files_generator.generator), so a report found later says how to make it again (the
    command as code in Markdown); '' in library use. No date: the same command on the same
    input gives the same file."""
    from ..files_generator import command_line, generator

    gen = generator()
    if gen is None:
        return ""
    command = command_line(gen).replace("`", "'") if markdown else command_line(gen)
    return f"Written by rooflab {gen['rooflab']}: " + (f"`{command}`" if markdown else command)


def chart_image(analysis: Analysis, display, diags: Sequence[Diagnosis], path: str) -> str:
    """The Markdown line showing the chart at `path`, with the HTML report's description
    as its alt text (html_static.chart_summary: roof, kernels per side of the ridge, the
    ridges, the top kernel) rather than "the roofline chart" (review 19c N13). display:
    the chart's RooflineDisplay (chart.roofline_data)."""
    from .html_static import chart_summary

    alt = chart_summary(analysis, display, diags)
    # escaped as a name (md_name): an image's description is parsed as Markdown before it
    # becomes the alt text, so a kernel '__k__ *b*' read 'k b', '&amp;' read '&' and a `]`
    # ended it early; escaped, it reads as the HTML report's (CommonMark, GFM)
    return "![" + md_name(alt) + f"]({path})"
