"""Short text for a notebook cell's value, the verbs' results: a Diagnosis (`rooflab
report`), a Comparison (`compare`), a Choice (`choose`) and a MachineProfile (`probe`,
`specs show me.json`).

Without these a frozen dataclass prints every field: a Diagnosis its point, roof and every
advice's detail (~10 kB), a probed MachineProfile its raw sweeps and samples (tens of kB).
Each says what the CLI table says, and points at the fields for the rest. Pure functions
of the values (duck-typed, so hardware/ is not imported here); model/display.py has the
`pretty` hook and the Kernel, Analysis and LLM texts.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..sides import pct_text, times_text
from ..units import fmt_ai, fmt_fraction, fmt_rate, fmt_seconds, fmt_share, fmt_times, si
from .dies import kind_words, label_kind
from .display import TOP_POINTS, bandwidth_part

# advice listed after the best one: the CLI's table shows one, its detail below it more
ADVICE_SHOWN = 1


def _headroom(d) -> str:
    """'1.84x', '2.50x (>2x)': the report table's headroom cell (no time: '-')."""
    from .diagnose import FLAG_HEADROOM

    if d.headroom is None:
        return "-"
    # '2.002x (>2x)', not '2.00x (>2x)' (sides.py)
    return times_text(d.headroom, FLAG_HEADROOM) + (" (>2x)" if d.flagged else "")


def _roof_part(p) -> str:
    """'54% of roof (147 GFLOP/s of 270 GFLOP/s)'; untimed: 'floor 577 us, attainable
    320 GFLOP/s' (its one number is the floor)."""
    attainable = fmt_rate(p.attainable_flop_per_s, p.precision)
    moved = bandwidth_part(p)
    if moved:   # no FLOP (a copy): the bandwidth it reached, as the CLI shows it
        return moved
    if p.seconds is None or p.percent_of_roof is None:
        return f"floor {fmt_seconds(p.floor_s)}, attainable {attainable}"
    return (f"{pct_text(p.percent_of_roof)} of roof "
            f"({fmt_rate(p.achieved_flop_per_s, p.precision)} of {attainable})")


def diagnosis_text(d) -> str:
    """A Diagnosis as one row of `rooflab report`'s table: rank, kernel, bound and what
    binds it, % of roof, time share, headroom, the gain at the roof, and the best advice
    with its predicted speed-up; the rest counted, with the field that holds it."""
    p = d.point
    lines = [f"Diagnosis #{d.rank} '{d.kernel}': {d.bound}-bound ({p.binding}), "
             f"{_roof_part(p)}"]
    if p.seconds is not None:
        gain = (f"; gain: {d.gain_words}" if d.gain_s is None else   # held to a fallback
                f"; gain at roof {fmt_seconds(d.gain_s)} ({fmt_share(d.priority)} of "
                f"{'its own file' if getattr(d, 'per_file', False) else 'the total'})")
        lines.append(f"  time {fmt_seconds(p.seconds)} ({fmt_share(d.time_share)} of the "
                     f"total), headroom {_headroom(d)}{gain}")
    else:
        lines.append(f"  gain: {d.gain_words}")
    for a in d.advice[:ADVICE_SHOWN]:
        # a throughput gain says its unit, as the CLI's table does: '8.00x per request'
        unit = re.search(r"per (\w+) \(throughput\)", a.detail)
        per = f" per {unit[1]}" if unit else ""
        lines.append(f"  best advice: {a.action}: {fmt_times(a.speedup)} predicted{per}")
    more = [f"{n} {what} (.{field})" for n, what, field in (
        (len(d.advice) - ADVICE_SHOWN, "more advice", "advice"),
        (len(d.findings), "finding(s)", "findings"),
        (len(d.notes), "note(s)", "notes")) if n > 0]
    if not d.advice:
        lines.append("  no advice")
    if more:
        lines.append(f"  {', '.join(more)}; distances in .distances")
    return "\n".join(lines)


def _match_row(m) -> list[str]:
    """['gemm', '5 ms', '->', '4 ms', '1.25x', '-20.0 %', noise]: the compare table's row;
    noise is the U test's word where it could judge ('within noise', 'outside noise'), or
    'cannot tell' where its p is the smallest the samples allow or a run is noisy."""
    b, a = m.before.seconds, m.after.seconds
    times = ["-" if b is None else fmt_seconds(b), "->", "-" if a is None else fmt_seconds(a)]
    if m.speedup is None:
        return [m.name, *times, "-", "-", "not timed on both sides"]
    noise = {True: "within noise", False: "outside noise"}.get(m.within_noise, "")
    if m.cannot_tell:   # a significant p the runs cannot back (review r4 F2), as the CLI says
        noise = "cannot tell (see .cannot_tell)"
    # a signed change, as compare's table and gate notes print it (no share, no % of roof)
    return [m.name, *times, fmt_times(m.speedup), f"{m.change_pct:+.1f} %", noise]


def _names(kernels, top: int) -> str:
    names = [k.name for k in kernels]
    return ", ".join(names[:top]) + (f", ... ({len(names) - top} more)"
                                     if len(names) > top else "")


def comparison_text(c, top: int = TOP_POINTS) -> str:
    """A Comparison as `rooflab compare` gives it: the matched total, then before -> after
    per kernel (the longest before first, at most `top`), the kernels in one run only, and
    the notes."""
    lines = [f"Comparison: {len(c.matches)} matched kernel(s)"]
    if c.speedup is not None:
        lines[0] += (f", matched total {fmt_seconds(c.total_before_s)} -> "
                     f"{fmt_seconds(c.total_after_s)} ({fmt_times(c.speedup)})")
    order = sorted(c.matches, key=lambda m: -(m.before.seconds or 0.0))
    if order:
        lines += _aligned([["kernel", "before", "", "after", "speed-up", "change", ""],
                           *(_match_row(m) for m in order[:top])])
    if len(order) > top:
        lines.append(f"  ... {len(order) - top} more matched (.matches)")
    if c.only_before:
        lines.append(f"  only in the first run: {_names(c.only_before, top)}")
    if c.only_after:
        lines.append(f"  only in the second run: {_names(c.only_after, top)}")
    lines += [f"  note: {n}" for n in c.notes]
    return "\n".join(lines)


def _binding(ch) -> str:
    return f"{ch.binding} ({fmt_fraction(ch.binding_share)})"


def choice_text(ch) -> str:
    """A Choice as its row of `rooflab choose`'s ranking: device, work floor, with
    launches, what binds it (its share of the time), TDP and energy; then why it cannot
    run the work, where it cannot. rank() returns them fastest first, so a notebook shows
    the ranking as a tuple of these lines (ranking_text numbers them)."""
    launches = ("" if ch.with_launches_s is None else
                f", with launches {fmt_seconds(ch.with_launches_s)}")
    power = ("" if ch.tdp_w is None else
             f", TDP {ch.tdp_w:g} W ({si(ch.energy_j, 'J')} at TDP)")
    lines = [f"Choice '{ch.name}' ({kind_words(ch.roof)}): work floor {fmt_seconds(ch.seconds)}"
             f"{launches}, binding {_binding(ch)}{power}"]
    if ch.missing:
        lines.append(f"  not viable: no math for {', '.join(ch.missing)}")
    if ch.fits is False:
        lines.append("  not viable: the model does not fit in its memory")
    if ch.notes:   # one line per device otherwise: rank()'s tuple reads as the ranking
        lines.append(f"  {len(ch.notes)} note(s) (.notes); per kernel in .per_kernel")
    return "\n".join(lines)


def ranking_text(choices: Sequence) -> str:
    """rank()'s tuple as `rooflab choose`'s table: '#, device, with launches, vs best, work
    floor, vs best, binding (share), TDP', in the order given (rank() sorts by the time with
    launches, what binds; equal times by the work floor)."""
    from .choose import no_ratio  # choose imports this module: here, not at the top

    def ratio(value, best, ch):
        # a device that cannot run the work beside one that can: '-', as the CLI's table
        # and --json's null `relative` (review s20 r5 F4)
        ok = best and value is not None and not no_ratio(ch, choices)
        return fmt_times(value / best) if ok else "-"

    # the best among the devices that can run the work (all of them where none can)
    pool = [ch for ch in choices if ch.viable] or list(choices)
    best = min((ch.seconds for ch in pool if ch.seconds > 0), default=None)
    best_l = min((ch.with_launches_s for ch in pool
                  if ch.with_launches_s is not None and ch.with_launches_s > 0), default=None)
    title = ("Predicted time at the roof (lower bounds), ranked by the time with launches "
             "(what binds), fastest first")
    rows = [["#", "device", "with launches", "vs best", "work floor", "vs best",
             "binding (share)", "TDP"]]
    # tied devices share a place, as the CLI's table and --json (review s23 r2 F7);
    # imported here: choose.py imports this module for Choice's text
    from .choose import standings

    for i, ch in zip(standings(choices), choices, strict=True):
        rows.append([str(i), ch.name + ("" if ch.viable else " (not viable)"),
                     "-" if ch.with_launches_s is None else fmt_seconds(ch.with_launches_s),
                     ratio(ch.with_launches_s, best_l, ch), fmt_seconds(ch.seconds),
                     ratio(ch.seconds, best, ch), _binding(ch),
                     "-" if ch.tdp_w is None else f"{ch.tdp_w:g} W"])
    return "\n".join([title, *_aligned(rows)])


def _aligned(rows: list[list[str]]) -> list[str]:
    """Rows as text columns, two spaces apart, each line indented by two."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  " + "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True))
            .rstrip() for row in rows]


def _cell(c, kind: str) -> str:
    """A ceiling's value, its provenance where it differs from its roof's kind (a derived
    real-traffic DRAM row in a measured roof, a nominal DRAM ceiling a probe copied)."""
    value = fmt_rate(c.value, c.precision) if c.is_compute else si(c.value, "B/s")
    return value if c.provenance == kind else f"{value} ({c.provenance})"


def _ridge(c, roof) -> str:
    """' (ridge 6)': a compute ceiling's ridge point against the roof's DRAM, as `specs
    show` and `specs compare` give it; '' without DRAM."""
    dram = roof.find_memory("DRAM")
    return f" (ridge {fmt_ai(c.value / dram.value)})" if dram is not None and dram.value else ""


def _profile_rows(roofs) -> list[list[str]]:
    """One row per ceiling label any roof has (compute, then memory), a cell per roof."""
    labels = list(dict.fromkeys(c.label for r in roofs for c in r.compute))
    levels = list(dict.fromkeys(c.label for r in roofs for c in r.memory))
    rows = []
    for label in labels + levels:
        row = [label]
        for r in roofs:
            c = next((c for c in (*r.compute, *r.memory) if c.label == label), None)
            row.append("-" if c is None else
                       _cell(c, label_kind(r)) + (_ridge(c, r) if c.is_compute else ""))
        rows.append(row)
    over = [fmt_seconds(r.overhead_s) if r.overhead_s is not None else "-" for r in roofs]
    if any(o != "-" for o in over):
        rows.append(["overhead per launch", *over])
    return rows


def _host_line(host) -> str:
    """'Zen 4, 1 core(s) / 1 thread(s) at 3 GHz, 17.2 GB RAM': what the probe found."""
    parts = []
    if host.get("microarch"):
        parts.append(str(host["microarch"]))
    if host.get("cores"):
        cores = f"{host['cores']} core(s) / {host.get('threads') or '?'} thread(s)"
        clock = host.get("clock_hz")
        parts.append(cores + (f" at {si(clock, 'Hz')}" if isinstance(clock, (int, float))
                              else ""))
    if isinstance(host.get("memory_bytes"), (int, float)):
        parts.append(f"{si(host['memory_bytes'], 'B')} RAM")
    return ", ".join(parts)


def profile_text(p) -> str:
    """A MachineProfile as `specs show` / `specs compare` give it: the machine, each
    ceiling of its measured and nominal roofs side by side with its provenance and its
    ridge against DRAM, the launch floor; the raw sweeps and samples stay in .extras."""
    when = ", ".join(x for x in (
        f"{p.extras['mode']} probe" if isinstance(p.extras.get("mode"), str) else "",
        p.created[:10]) if x)
    lines = [f"MachineProfile '{p.name}'" + (f" ({when})" if when else "")]
    host = _host_line(p.host)
    if host:
        lines.append(f"  {host}")
    roofs = p.roofs
    if not roofs:
        return "\n".join(lines + ["  no roof"])
    lines += _aligned([["ceiling", *(kind_words(r) for r in roofs)], *_profile_rows(roofs)])
    lines += [f"  {kind_words(r)} roof: '{r.name}'" for r in roofs]
    if p.extras:
        lines.append(f"  (raw measurements in .extras: {', '.join(sorted(p.extras))})")
    return "\n".join(lines)
