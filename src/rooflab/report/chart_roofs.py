"""The roofs' lines and ridges on a roofline chart, as plain data (chart.roofline_data).

Each roof's slopes and compute ceilings in its colour and style (measured solid, nominal
dashed, a best-achieved envelope dotted, the real-traffic DRAM slope dash-dot-dot), the
ridges marked against a reference level, mixed-precision kernels' weighted ceilings and
the measured sweep (_chart_lines); which ceilings are drawn (_shown_roofs); the probe's
load note a chart's caveats quote (_load_note).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import replace

from ..model.byte_convention import on_real_traffic
from ..model.ceiling import Ceiling, Roof, fastest
from ..model.held_unit import held_unit
from ..model.kernel import Kernel
from ..model.real_traffic import REAL_TRAFFIC
from ..units import fmt_ai, fmt_rate, si
from .chart_ceilings import MIXED_SPAN, MixedRoof, mixed_label
from .chart_nofma import nofma_lines
from .chart_parts import (
    COMPUTE_BOUND_COLOR,
    ROOF_COLORS,
    SWEEP_COLOR,
    DrawnPoint,
    Line,
    Ridge,
    ceiling_style,
    roof_label,
)

REAL_TRAFFIC_HOVER = ("; judges the kernels whose DRAM bytes are real traffic: measured by "
                      "hardware counters, or counted so (read-only kinds, meta byte_count "
                      "\"real traffic\")")


def _reference_level(roof: Roof, level: str | None) -> str | None:
    """The level ridges are marked against: the chosen one, DRAM, else the slowest."""
    levels = roof.levels
    if level in levels:
        return level
    if "DRAM" in levels:
        return "DRAM"
    return min(roof.memory, key=lambda c: c.value).level if roof.memory else None


def _positive_finite(x: float | None) -> bool:
    return x is not None and 0 < x < math.inf


def _own_ceiling(roof: Roof, k: Kernel, owners: dict[int, MixedRoof],
                 found: dict[tuple[str, str | None], Ceiling]) -> tuple[Ceiling, str, bool]:
    """(ceiling, its name, drawn anyway) a kernel's ridge is marked at on `roof`: its
    weighted ceiling where the chart draws one for it there (owners: _owners' of the
    roof), else its precision's (found: the roof's compute_for by precision and unit so
    far, asked once each)."""
    m = owners.get(id(k))
    if m is not None:
        return m.held.ceiling, m.held.label, True
    key = (k.precision, held_unit(roof, k))
    if key not in found:
        found[key] = roof.compute_for(*key)[0]
    c = found[key]
    return c, c.label, False


def _owners(mixed: Sequence[MixedRoof], roof: Roof) -> dict[int, MixedRoof]:
    """The weighted ceiling on `roof` (by name) of each kernel that has one there, by the
    kernel's id, the first where two hold it: a scan of every weighted ceiling for each
    kernel was quadratic in a file of thousands of mixes."""
    label = roof_label(roof)
    return {id(k): m for m in reversed(mixed) if roof_label(m.roof) == label
            for k in m.kernels}


def _ridges(roofs: Sequence[Roof], kept: Sequence[tuple[Ceiling, ...]],
            kernels: Sequence[Kernel], level: str | None,
            sweep_precision: str | None = None,
            mixed: Sequence[MixedRoof] = ()) -> list[Ridge]:
    out: list[Ridge] = []
    for roof, drawn in zip(roofs, kept, strict=True):
        ref = _reference_level(roof, level)
        if ref is None or not drawn:
            continue
        mem = roof.bandwidth(ref)
        # The kernels' own ceilings first: the first ridge is the one that judges them
        # (a mixed kernel's weighted one, drawn as its own segment); then the top ceiling
        # drawn. A ceiling left out of the chart gets no ridge.
        owners, found = _owners(mixed, roof), {}
        ceilings = list(dict.fromkeys(_own_ceiling(roof, k, owners, found) for k in kernels))
        if sweep_precision and roof.find_compute(sweep_precision):   # the sweep's knee
            c = roof.find_compute(sweep_precision)
            ceilings.append((c, c.label, False))
        top = fastest(drawn)   # the roof's own tie rule (fp16 over an equal bf16)
        ceilings = [(c, name) for c, name, own in ceilings if own or c in drawn] + [
            (top, top.label)]
        # equal ceilings (A100 bf16 = fp16 tensor), and ones whose ridges print alike (a
        # CPU probe's fp64 / fp32 vector at 6.7 / 6.72 GFLOP/s over 5.9 GB/s: AI 1.136 and
        # 1.139, one spot, both labelled 'AI*=1.14', review s34 C): one ridge, both named
        shown: dict[str, int] = {}
        for c, name in dict.fromkeys(ceilings):
            ai = c.value / mem.value
            if fmt_ai(ai) in shown:
                i = shown[fmt_ai(ai)]
                if c.value != out[i].flop_per_s:    # an equal one adds no name (as before)
                    both = joined_names(out[i].compute, name)
                    out[i] = replace(out[i], compute=both,
                                     label=f"{both} / {ref}: AI* = {fmt_ai(out[i].ai)}")
                continue
            shown[fmt_ai(ai)] = len(out)
            label = f"{name} / {ref}: AI* = {fmt_ai(ai)}"
            out.append(Ridge(label=label, ai=ai, flop_per_s=c.value, roof=roof_label(roof),
                             compute=name, level=ref))
    return out


def joined_names(first: str, other: str) -> str:
    """Two ceilings' names for one ridge: 'fp64 / fp32 vector' where the unit is one (as
    the chart's shared ceiling label names them), else 'fp32 vector / fp64 tensor'."""
    a, b = first.rsplit(" ", 1), other.split(" ", 1)
    if len(a) == 2 and len(b) == 2 and a[1] == b[1]:
        return f"{a[0]} / {b[0]} {a[1]}"
    return f"{first} / {other}"


def _mixed_lines(mixed: Sequence[MixedRoof], shown: Sequence[Roof], level: str | None,
                 colors: dict[int, str], points: Sequence[DrawnPoint],
                 xlim: tuple[float, float]) -> list[Line]:
    """Each weighted ceiling as a thin dashed segment in its first kernel's colour, from
    its ridge (on the reference level's slope, as the drawn ridges) to the right; where the
    roof's drawn slope stops short of that ridge (its drawn ceilings all lower, or the roof
    not drawn at all: a before-roof), the slope up to the ridge too."""
    out = []
    tops = {roof_label(r): max((c.value for c in r.compute), default=None) for r in shown}
    for m in mixed:
        ref = _reference_level(m.roof, level)
        if ref is None:
            continue
        bw = m.roof.bandwidth(ref).value
        ridge = m.value / bw
        names = {k.name for k in m.kernels}
        far = [2.0 * p.ai for p in points if p.kernel in names and _positive_finite(p.ai)]
        x_end = min(xlim[1], max([ridge * MIXED_SPAN, *far]))
        xs, ys = (ridge, x_end), (m.value, m.value)
        label = roof_label(m.roof)
        if label not in tops:                       # its roof's slopes are not drawn
            xs, ys = (xlim[0], *xs), (bw * xlim[0], *ys)
        elif tops[label] is not None and tops[label] < m.value:   # slope ends at top / bw
            xs, ys = (tops[label] / bw, *xs), (tops[label], *ys)
        judge = roof_label(shown[0]) if shown else ""
        name = mixed_label(m, judge)
        out.append(Line(label=name, xs=xs, ys=ys, style="dashed",
                        kind="mixed", color=colors.get(id(m.kernels[0]), COMPUTE_BOUND_COLOR),
                        ceiling=m.held.ceiling, level=ref,
                        hover=f"{name}: {m.held.label} {si(m.value, 'FLOP/s', 4)} (derived; "
                              f"{m.held.ceiling.method}); ridge vs {ref} {fmt_ai(ridge)} "
                              f"FLOP/B"))
    return out


def _roof_lines(roof: Roof, color: str, xlim: tuple[float, float]) -> list[Line]:
    from .chart_words import REAL_TRAFFIC_STYLE  # chart's word (the HTML report reads it)

    x_lo, x_hi = xlim
    label = roof_label(roof)
    lines = []
    fastest_bw = max((c.value for c in roof.memory), default=None)
    top = roof.top_compute.value if roof.compute else None
    ref = _reference_level(roof, None)
    ref_bw = roof.bandwidth(ref).value if ref else None
    # Slopes run from the left edge to where they meet the top compute ceiling; compute
    # ceilings run from the fastest slope to the right edge, so every ceiling is visible.
    best = is_envelope(roof)
    for m in roof.memory:
        x_end = top / m.value if top else x_hi
        name = f"{m.level}{_flag(m)} {si(m.value, 'B/s')}"
        real = m.level == REAL_TRAFFIC
        lines.append(Line(label=name, xs=(x_lo, x_end),
                          ys=(m.value * x_lo, m.value * x_end),
                          style=REAL_TRAFFIC_STYLE if real else ENVELOPE_STYLE if best
                          else ceiling_style(m),
                          kind="memory", roof=label, color=color, ceiling=m, level=m.level,
                          hover=f"{roof.name}: {name} ({_provenance(m)})"
                                + (REAL_TRAFFIC_HOVER if real else "")))
    for c in roof.compute:
        x_start = c.value / fastest_bw if fastest_bw else x_lo
        name = f"{c.label}{_flag(c)} {fmt_rate(c.value, c.precision)}"
        ridge = (f"; ridge vs {ref} {fmt_ai(c.value / ref_bw)} FLOP/B" if ref_bw else "")
        lines.append(Line(label=name, xs=(x_start, x_hi),
                          ys=(c.value, c.value),
                          style=ENVELOPE_STYLE if best else ceiling_style(c), kind="compute",
                          roof=label, color=color, ceiling=c,
                          hover=f"{roof.name}: {name} ({_provenance(c)}){ridge}"))
    return lines


# The "best achieved" roof compare/plot/report build where no roof is given (ingest/
# profile_envelope._envelope): the fastest these kernels ran, a lower bound on the
# machine's. Drawn in a style of its own, dotted and light (review 18c F19: dashed, it
# read as a datasheet roof, "DRAM 13.4 GB/s" for a GPU), named for what it is, and its
# points carry no "% of roof" (100 % there means the fastest here, not a ceiling).
ENVELOPE_STYLE = "dotted"


ENVELOPE_LEGEND = "best achieved by these kernels, not a machine ceiling"


def is_envelope(roof: Roof) -> bool:
    from ..ingest.profile_envelope import ENVELOPE_SOURCE

    return roof.source == ENVELOPE_SOURCE


def _flag(c: Ceiling) -> str:
    from .chart_words import FLAGGED_MARK, flagged  # chart's rule (the HTML report reads it)

    return FLAGGED_MARK if flagged(c) else ""


def _provenance(c: Ceiling) -> str:
    return c.provenance + (f"; {c.source}" if c.source else "")


def _real_traffic_roofs(judges: Sequence[Roof], kernels: Sequence[Kernel],
                        level: str | None) -> set[str]:
    """The labels of the roofs whose REAL_TRAFFIC ceiling judges a drawn kernel's DRAM
    point (counter-measured bytes: byte_convention.on_real_traffic); none when the chart shows
    another level only."""
    if level not in (None, "DRAM"):
        return set()
    return {roof_label(r) for r, k in zip(judges, kernels, strict=True)
            if on_real_traffic(r, k)}


# The GPU probe's derived triad ceiling (probe/gpu/memory.py TRIAD): a kernel selects it
# by its bytes' level; the copy judges every other DRAM byte.
TRIAD = "DRAM (triad)"


def _drawn_memory(roof: Roof, real: set[str], triad: bool = False) -> tuple[Ceiling, ...]:
    """The roof's memory ceilings to draw: every one, less REAL_TRAFFIC where no drawn
    kernel is judged against it (_real_traffic_roofs), and less TRIAD where no drawn kernel
    has bytes at it (review 19a N3: a second solid slope under the copy judged nothing)."""
    drop = (set() if roof_label(roof) in real else {REAL_TRAFFIC}) | (set() if triad
                                                                      else {TRIAD})
    return tuple(c for c in roof.memory if c.level not in drop)


def _chart_lines(shown: Sequence[Roof], mixed: Sequence[MixedRoof], level: str | None,
                 to_draw: Sequence[Kernel], per_kernel: Sequence[Sequence[DrawnPoint]],
                 xlim: tuple[float, float], good_sweep: Sequence[tuple[float, float]],
                 sweep_precision: str | None) -> list[Line]:
    """Every line of the chart: each roof's slopes and ceilings in its colour, the mixed
    kernels' weighted ceilings in their kernel's colour, and the measured sweep."""
    lines: list[Line] = []
    for i, roof in enumerate(shown):
        lines.extend(_roof_lines(roof, ROOF_COLORS[i % len(ROOF_COLORS)], xlim))
    colors = {id(k): p.color for k, pts in zip(to_draw, per_kernel, strict=True)
              if (p := _pick(pts, level)) is not None}
    points = [p for pts in per_kernel for p in pts]
    lines.extend(_mixed_lines(mixed, shown, level, colors, points, xlim))
    if shown:   # the longest kernel's no-FMA ceiling (chart_nofma, s22 r6 F8)
        lines.extend(nofma_lines(shown, to_draw, _reference_level(shown[0], level), colors,
                                 xlim))
    if good_sweep:
        what = f"intensity sweep {sweep_precision}" if sweep_precision else "intensity sweep"
        lines.append(Line(label=f"{what} (measured)", xs=tuple(x for x, _ in good_sweep),
                          ys=tuple(y for _, y in good_sweep), style="dotted", kind="sweep",
                          color=SWEEP_COLOR))
    return lines


def _pick(points: list[DrawnPoint], level: str | None) -> DrawnPoint | None:
    """The point an arrow or a trajectory goes through: the chosen level, DRAM, else first."""
    for want in (level, "DRAM"):
        for p in points:
            if p.level == want:
                return p
    return points[0] if points else None


def _shown_roofs(roofs: Sequence[Roof], kept: Sequence[tuple[Ceiling, ...]],
                 judges: Sequence[Roof], kernels: Sequence[Kernel], level: str | None
                 ) -> list[Roof]:
    """The roofs as drawn: their kept compute ceilings (select_ceilings) and the memory
    ceilings _drawn_memory keeps for these kernels."""
    real = _real_traffic_roofs(judges, kernels, level)
    # the GPU probe's triad ceiling, drawn only where a kernel is judged on it (19a N3)
    triad = any(TRIAD in k.bytes for k in kernels)
    return [replace(r, compute=c, memory=_drawn_memory(r, real, triad))
            for r, c in zip(roofs, kept, strict=True)]


# A roof note that says the probe shared the machine (probe/cpu/flags.machine_load_notes)
LOAD_WORDS = ("read low", "(steal)")


def _load_note(note: str) -> str:
    """'other processes used 82% of the CPUs while the probe ran' from the probe's note,
    less its load average aside and its advice."""
    head = note.split(":", 1)[0]
    return re.sub(r" \(and the load average[^)]*\)", "", head).strip()
