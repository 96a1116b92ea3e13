"""rooflab compare's terminal table: the matched kernels, the totals, the notes."""

from __future__ import annotations

from ..report.term_text import cell
from ..sides import change_text, times_text
from .row_cap import cap, more_line


def untimed_words(cmp, floors) -> str | None:
    """Why the speed-ups are null when no matched kernel has a time in both runs (None
    when some has): the table's line and a note of the JSON document."""
    if not cmp.matches or cmp.timed:
        return None
    if floors is not None:
        return ("no matched kernel has a time in both runs, so these are the roofline's "
                "work floors (each file's FLOP and bytes on its roof, no launches), not "
                "speed-ups seen")
    return ("no matched kernel has a time in both runs (FLOP and bytes only, as "
            "`rooflab llm --json` writes): no speed-up to show; `rooflab choose` and "
            "`rooflab whatif` give their floors")


def _floor_table(moves, step):
    from rich.table import Table

    from ..units import fmt_seconds

    t = Table(title="Work floors (derived, not measured)", title_justify="left")
    for h in ("kernel", "floor before", "floor after", "speed-up"):
        # fold, never "…": a narrow terminal keeps every digit (s22 r3 F6)
        t.add_column(h, justify="left" if h == "kernel" else "right", overflow="fold")
    for m in (*moves, step):
        t.add_row(cell(m.name), fmt_seconds(m.before_s), fmt_seconds(m.after_s),
                  "-" if m.speedup is None else times_text(m.speedup, 1.0))
    return t


def compare_table(cmp, fail_pct, floors=None):
    from rich.console import Group
    from rich.text import Text

    from ..units import fmt_seconds, seconds_apart

    capped = _shown_matches(cmp, fail_pct)
    shown = capped.shown
    parts: list = [_Fitted(lambda work: _matches_table(cmp, fail_pct, work, shown),
                           lambda: _work_lines(shown))]
    if capped.left_out:
        gate = f"slower by more than {fail_pct:g} %" if fail_pct is not None else ""
        parts.append(Text(more_line(capped, "matched kernels", "`--json`", kept=gate),
                          style="dim"))
    if cmp.speedup:
        span = cmp.total_range()
        total = ("{} -> {} ".format(*seconds_apart(cmp.total_before_s, cmp.total_after_s))
                 + f"({times_text(cmp.speedup, 1.0)})" if span is None else
                 f"{_span(*span[0])} -> {_span(*span[1])} ({_ratio_span(*span)})")
        parts.append(Text(f"matched total: {total}"))
        apart = [m.name for m in cmp.timed if all(m is not t for t in cmp.totalled)]
        if apart:   # an llm file's other phase's measured step (s35 E)
            parts.append(Text(f"not in the totals: {', '.join(apart)} (another phase's "
                              f"whole step, timed apart: a row of its own)", style="dim"))
        if cmp.only_before or cmp.only_after:
            # kernels in one run only are outside the matched total: the whole runs beside
            # it, or a slower run hides behind a faster matched total (review s19 r5 F7)
            rb, ra = cmp.run_before_s, cmp.run_after_s
            parts.append(Text(f"whole runs (every timed kernel, matched or not): "
                              f"{fmt_seconds(rb)} -> {fmt_seconds(ra)}"
                              + (f" ({times_text(rb / ra, 1.0)})" if rb and ra else "")))
    for side, extra in ((cmp.only_before, "first"), (cmp.only_after, "second")):
        rest = cap(side, lambda k: k.seconds)
        for k in rest.shown:
            parts.append(Text(f"only in the {extra} run: {k.name} ({_only_time(k)}"
                              + ("; use --map OLD=NEW if renamed)" if extra == "first"
                                 else ")"), style="dim"))
        if rest.left_out:
            parts.append(Text(more_line(rest, f"kernels only in the {extra} run",
                                        "`--json`"), style="dim"))
    if floors is not None:
        parts.append(_floor_table(*floors))
        step = floors[1]
        parts.append(Text(f"{step.name}: {fmt_seconds(step.before_s)} -> "
                          f"{fmt_seconds(step.after_s)}"
                          + (f" ({times_text(step.speedup, 1.0)})" if step.speedup else "")
                          + "; " + untimed_words(cmp, floors)))
    elif (why := untimed_words(cmp, floors)) is not None:
        parts.append(Text(why))
    return Group(*parts)


def table_notes(cmp, fail_pct) -> list[str]:
    """The notes under the table, said on stderr as `note:` lines (s21 r7 F7: on stdout
    they were part of the report, which -q did not silence and a grep of stderr missed)."""
    from ..model.compare_gate import gate_notes
    from ..model.compare_trust import trust_notes

    gate = gate_notes(cmp, fail_pct) if fail_pct is not None else trust_notes(cmp.matches)
    return [*cmp.notes, *gate]


def _only_time(k) -> str:
    from ..units import fmt_seconds

    return (f"{fmt_seconds(k.seconds)}, not in the matched total" if k.seconds
            else "no time")


def _span(low: float, high: float) -> str:
    from ..units import fmt_seconds

    return (fmt_seconds(low) if fmt_seconds(low) == fmt_seconds(high)
            else f"{fmt_seconds(low)}-{fmt_seconds(high)}")


def _ratio_span(before, after) -> str:
    """The speed-up range of two (low, high) time ranges: slowest before over fastest after
    and the other way round."""
    from ..units import fmt_times

    low, high = fmt_times(before[0] / after[1]), fmt_times(before[1] / after[0])
    return low if low == high else f"{low}-{high}"


def _times(m) -> tuple[str, str, str]:
    """The before, after and speed-up cells: a what-if range where a side has one."""
    from ..model.compare_notes import seconds_range
    from ..units import fmt_seconds, fmt_times, seconds_apart

    rb, ra = seconds_range(m.before), seconds_range(m.after)
    before = _span(*rb) if rb else fmt_seconds(m.before.seconds)
    after = _span(*ra) if ra else fmt_seconds(m.after.seconds)
    if not (rb or ra) and m.before.seconds and m.after.seconds:
        # two times that differ are not printed alike: '1 ms -> 1.0004 ms' (s28 R2 F2)
        before, after = seconds_apart(m.before.seconds, m.after.seconds)
    if m.speedup is None:
        return before, after, "-"
    r = m.speedup_range
    return before, after, (f"{fmt_times(r[0])}-{fmt_times(r[1])}" if r
                           else times_text(m.speedup, 1.0))


class _Fitted:
    """The matches table with its work columns (FLOP before -> after, FLOP/s change) where
    they fit the width it is printed at; else without them, and the same figures on a line
    per kernel below it (the numbers that decide the gate are never folded)."""

    def __init__(self, table, lines):
        self.table, self.lines = table, lines

    def __rich_console__(self, console, options):
        from rich.measure import Measurement

        full = self.table(True)
        # measured unbounded: Measurement.get clamps to the width it is given
        wanted = Measurement.get(console, options.update(max_width=10_000), full).maximum
        if wanted <= options.max_width:
            yield full
            return
        yield self.table(False)
        yield from self.lines()


def _shown_matches(cmp, fail_pct):
    """The matches the table shows (row_cap.Capped): all where they fit TERMINAL_ROWS,
    else the gate's heaviest failures and the longest others (the slower side's time)."""
    regressed = ({id(m) for m in cmp.regressions(fail_pct)} if fail_pct is not None
                 else set())
    return cap(cmp.matches, _longest, keep=lambda m: id(m) in regressed)


def _longest(m) -> float:
    return max(m.before.seconds or 0.0, m.after.seconds or 0.0)


def _matches_table(cmp, fail_pct, work: bool, shown):
    from rich.table import Table

    from ..units import fmt_ai

    predicted = any(m.predicted for m in cmp.timed)
    t = Table(title="Matched kernels (speed-up = before / after"
              + ("; a what-if side is predicted, not measured)" if predicted else ")"),
              title_justify="left")
    for h in ("kernel", "before", "after", "speed-up", "change", "noise",
              *(("FLOP before -> after (work)", "FLOP/s change") if work else ()),
              "AI DRAM before -> after"):
        # fold, never "…": a narrow terminal keeps every digit (s22 r3 F6)
        t.add_column(h, justify="left" if h == "kernel" else "right", overflow="fold")
    regressed = set(id(m) for m in cmp.regressions(fail_pct)) if fail_pct is not None else ()
    for m in shown:
        ai_b, ai_a = m.ai_move()
        # the decimals that put it on its side of the gate: '+0.04 %' failing a 0.01 % gate
        change = change_text(m.change_pct, (0.0,) if fail_pct is None else (0.0, fail_pct))
        name = _row_name(m)
        t.add_row(cell(name), *_times(m),
                  f"[bold red]{change}[/]" if id(m) in regressed else change,
                  _noise_cell(m), *((_work_cell(m), _rate_cell(m)) if work else ()),
                  f"{fmt_ai(ai_b)} -> {fmt_ai(ai_a)}")
    return t


def _row_name(m) -> str:
    return m.name if m.before.name == m.name else f"{m.before.name} -> {m.name}"


def _work_lines(shown):
    from rich.text import Text

    for m in shown:
        if m.before.total_flop or m.after.total_flop:
            yield Text(f"work: {m.name}: FLOP {_work_cell(m)}, FLOP/s change {_rate_cell(m)}")


def _rate_cell(m) -> str:
    return change_text(m.rate_change_pct)


def _work_cell(m) -> str:
    """'2.6 TFLOP -> 1.09 TFLOP (-57.9 %)': the work each run did (a speed-up from fewer
    FLOP is not a faster kernel: the FLOP/s change beside it says how the rate moved)."""
    from ..units import si

    b, a = m.before.total_flop, m.after.total_flop
    if not (b or a):
        return "-"
    pct = m.work_change_pct
    return f"{si(b, 'FLOP')} -> {si(a, 'FLOP')}" + (f" ({change_text(pct)})"
                                                   if pct is not None else "")


def _noise_cell(m) -> str:
    """'within (p 0.41)' / 'outside (p 0.002)' from the U test of the runs' samples; '-'
    without samples, 'too few' when no outcome of so few could reach p < 0.05."""
    from ..model.compare_merge import untestable

    if m.speedup is not None and (untestable(m.before) or untestable(m.after)):
        return "not testable"
    if m.noise is None:
        return "-"
    if m.within_noise is None:
        return "too few"
    if m.cannot_tell:
        return f"cannot tell (p {m.noise.p_value:.2g}; see notes)"
    where = "within" if m.within_noise else "outside"
    return f"{where} noise (p {m.noise.p_value:.2g})"
