"""Short text for a notebook cell's value: a Kernel, an Analysis, an LLM estimate.

IPython shows `_repr_pretty_` (Jupyter too, as text/plain); without it a frozen
dataclass prints every field, nested roofs and raw samples included: a measured Kernel
~1 kB, an LLM estimate ~150 kB (review 18b C). These say what the CLI tables say, with
SI prefixes and where each number came from, and point at the fields for the rest.
Pure functions of the values: no IPython import.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..sides import pct_text
from ..units import fmt_ai, fmt_fraction, fmt_rate, fmt_seconds, si
from .dies import kind_words
from .sample_spread import spread_short

# an Analysis shows its longest points first, this many, then "... N more" (pandas' head
# of a long frame; the CLI's --top)
TOP_POINTS = 20
# kernel names listed after a note shared by many kernels
NAMES_SHOWN = 3


def pretty(text: Callable[[Any], str]) -> Callable[[Any, Any, bool], None]:
    """A `_repr_pretty_` method that prints text(self) (a cycle cannot occur in these
    values, but IPython's protocol asks for the flag)."""

    def _repr_pretty_(self, printer, cycle: bool) -> None:
        printer.text(f"{type(self).__name__}(...)" if cycle else text(self))

    return _repr_pretty_


def _counts(values: Mapping[str, float], unit: str, provenance: str | None) -> str:
    if not values:
        return "-"
    parts = ", ".join(f"{si(v, unit)} {key}" for key, v in values.items())
    return f"{parts} ({provenance})" if provenance else parts


def _percent(x: float) -> str:
    """3.1, 92, 105, 241: two significant digits, whole numbers from 100 on (`.2g` wrote
    105 as '1e+02', review 19b N4), as TimingWarning writes '105 %'."""
    return f"{x:.2g}" if abs(x) < 99.5 else f"{x:.0f}"


def _timing(k) -> str:
    """'4.13 us per call: median of 12 samples x 100 calls, IQR 3.1 %, best 4.01 us
    (measured)', as torch.utils.benchmark's Measurement shows median and IQR."""
    if k.seconds is None:
        return "not timed"
    per_call = k.seconds / k.calls
    head = (f"{fmt_seconds(per_call)} per call" if k.calls == 1 else
            f"{fmt_seconds(k.seconds)} for {k.calls} calls ({fmt_seconds(per_call)} per call)")
    meta = k.meta
    stats = []
    n = meta.get("samples_n") or len(k.samples)
    if n:
        inner = meta.get("calls_per_sample")
        stat = meta.get("seconds_stat", "median") if n > 1 else "one run"
        stats.append(f"{stat} of {n} sample{'s' if n != 1 else ''}"
                     + (f" x {inner} calls" if inner and inner != 1 else "")
                     if n > 1 else stat)
    if isinstance(meta.get("iqr_rel"), (int, float)):
        # under 4 samples iqr_over_median is the full range (sample_spread.spread_short)
        stats.append(f"{spread_short(n)} {_percent(meta['iqr_rel'] * 100)} %")
    if isinstance(meta.get("best_s"), (int, float)):
        stats.append(f"best {fmt_seconds(meta['best_s'])}")
    prov = k.provenance.get("seconds")
    tail = f" ({prov})" if prov else ""
    return f"{head}: {', '.join(stats)}{tail}" if stats else f"{head}{tail}"


def kernel_text(k) -> str:
    """A Kernel in a few lines: name and time (median, IQR, samples), FLOP and bytes by
    precision / level with their provenance, AI, and what it ran on."""
    lines = [f"Kernel '{k.name}': {_timing(k)}",
             f"  FLOP  {_counts(k.flop, 'FLOP', k.provenance.get('flop'))}",
             f"  bytes {_counts(k.bytes, 'B', k.provenance.get('bytes'))}"]
    extra = []
    dram = k.bytes.get("DRAM")
    if k.flop and dram:
        extra.append(f"AI {fmt_ai(k.total_flop / dram)} FLOP/B (DRAM)")
    if k.seconds is not None and k.flop:
        extra.append(fmt_rate(k.total_flop / k.seconds, k.precision))
    if k.unit:
        extra.append(f"unit {k.unit}")
    for key in ("device", "threads"):
        if k.meta.get(key) is not None:
            extra.append(f"{key} {k.meta[key]}")
    if extra:
        lines.append("  " + ", ".join(extra))
    if k.meta.get("warning"):
        lines.append(f"  warning: {k.meta['warning']}")
    hidden = [f for f in ("samples", "meta") if getattr(k, f)]
    if hidden:
        lines.append(f"  (more in .{' and .'.join(hidden)})")
    return "\n".join(lines)


def grouped_notes(notes, names) -> list[str]:
    """Notes that differ only in the kernel name they start with ('k7: roof X has no L2
    ceiling ...'), said once with a count and the first names, in first-seen order."""
    known = set(names)
    groups: dict[str, list[str]] = {}
    for note in notes:
        head, sep, rest = note.partition(": ")
        key, who = (rest, head) if sep and head in known else (note, None)
        groups.setdefault(key, [])
        if who is not None:
            groups[key].append(who)
    out = []
    for text, who in groups.items():
        if len(who) > 1:
            shown = ", ".join(who[:NAMES_SHOWN]) + (", ..." if len(who) > NAMES_SHOWN else "")
            out.append(f"{len(who)} kernels ({shown}): {text}")
        else:
            out.append(f"{who[0]}: {text}" if who else text)
    return out


def _cost(p) -> float:
    """A point's time for ordering: measured, or its floor when untimed (an LLM step, op
    counts: every measured time was 0, so the cut kept file order, review 19b N8)."""
    return p.seconds if p.seconds is not None else p.floor_s


def _point_line(p, lead: str | None = None) -> str:
    """'decode b=1  DRAM  15 ms  AI 1  147 GFLOP/s of 320 GFLOP/s  46 % of roof  ...';
    untimed: 'q_proj  DRAM  floor 577 us  AI 0.999  attainable 320 GFLOP/s  ...' (a
    prediction's one number is its floor time, not three dashes). lead: what stands
    before the level (the kernel's name)."""
    rate = fmt_rate(p.attainable_flop_per_s, p.precision)
    moved = bandwidth_part(p)
    if moved:
        timing = f"{fmt_seconds(p.seconds)}  AI {fmt_ai(p.ai)}  {moved}"
    elif p.seconds is None:
        timing = f"floor {fmt_seconds(p.floor_s)}  AI {fmt_ai(p.ai)}  attainable {rate}"
    else:
        # % of roof as every table and page rounds it (units.fmt_pct: "46 %", "3.3 %"; the
        # digits that keep it on its side of a class line), not one decimal of its own
        pct = "-" if p.percent_of_roof is None else f"{pct_text(p.percent_of_roof)} of roof"
        timing = (f"{fmt_seconds(p.seconds)}  AI {fmt_ai(p.ai)}  "
                  f"{fmt_rate(p.achieved_flop_per_s, p.precision)} of {rate}  {pct}")
    lead = p.kernel if lead is None else lead
    return f"{lead}  {p.level}  {timing}  {p.bound}-bound ({p.binding})"


def point_text(p) -> str:
    """A Point as its row of the Analysis display, led by its precision (the row's
    binding names the ceiling; an fp32 kernel held to 'fp16 tensor' shows both), then its
    stand-in note and grid reason where it has them; the rest in its fields."""
    head = _point_line(p, f"Point '{p.kernel}' ({p.precision})")
    # p.grid reads 'grid of 4 blocks x 256 threads on 24 SMs: ...' (why latency-bound)
    extra = [f"  note: {p.note}"] * bool(p.note) + [f"  {p.grid}"] * bool(p.grid)
    return "\n".join([head, *extra])


def bandwidth_part(p) -> str:
    """'80 GB/s = 80% of DRAM bandwidth 100 GB/s' for a timed point without FLOP (a copy):
    what the CLI tables show in its achieved and % roof cells (bandwidth_reached), not
    '0 FLOP/s of 0 FLOP/s' (review s22 r4 F7); '' for any other point."""
    from .bandwidth_reached import bandwidth_of

    moved, pct = bandwidth_of(p)
    if moved is None:
        return ""
    return (f"{si(moved, 'B/s')} = {pct_text(pct)} of {p.level} bandwidth "
            f"{si(p.bytes_per_s, 'B/s')}")


def analysis_text(a, top: int = TOP_POINTS) -> str:
    """An Analysis in at most `top` point lines, longest time first (an untimed point's
    floor time; then the order placed), "... N more (.points)", and each note once with the
    number of kernels it is about (review 18b I: 500 kernels printed 1 001 lines, one note
    per kernel)."""
    lines = [f"Analysis on '{a.roof.name}' ({kind_words(a.roof)}): {len(a.kernels)} kernel(s), "
             f"{len(a.points)} point(s)"]
    order = sorted(range(len(a.points)), key=lambda i: (-_cost(a.points[i]), i))
    for i in order[:top]:
        lines.append(f"  {_point_line(a.points[i])}")
    if len(order) > top:
        lines.append(f"  ... {len(order) - top} more point(s) (a.points)")
    unplaced = list(a.unplaced)
    lines += [f"  not placed: {u.kernel} ({u.reason})" for u in unplaced[:top]]
    if len(unplaced) > top:
        lines.append(f"  ... {len(unplaced) - top} more not placed (a.unplaced)")
    lines += [f"  note: {n}" for n in grouped_notes(a.notes, (k.name for k in a.kernels))]
    return "\n".join(lines)


def llm_result_text(r) -> str:
    """An LLM estimate as the `rooflab llm` summary gives it: TPOT, TTFT, tokens/s and the
    bound of the decode step (time-weighted), not the ~150 kB of nested values. For
    workloads/llm's LLMResult._repr_pretty_ (its owner hooks it in)."""
    req = r.request
    points = r.decode.points
    floor = sum(p.floor_s for p in points) or 1.0
    memory = sum(p.floor_s for p in points if p.bound == "memory") / floor
    lines = [f"LLMResult: {r.config.name} on '{r.roof.name}' ({kind_words(r.roof)})",
             f"  decode  TPOT {fmt_seconds(r.tpot_s)} at batch {req.batch}, "
             f"{r.tokens_per_s:.4g} tokens/s (floor); {fmt_fraction(memory)} of it memory-bound",
             f"  prefill TTFT {fmt_seconds(r.ttft_s)}",
             f"  request {fmt_seconds(r.request_s)} (TTFT + (generate - 1) x TPOT)"]
    if r.sweep is not None:
        lines.append("  batch sweep in .sweep")
    lines += [f"  note: {n}" for n in r.notes]
    lines.append("  (tables: .decode.analysis, .prefill.analysis, .footprint)")
    return "\n".join(lines)
