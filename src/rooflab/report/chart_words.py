"""The chart's words and marking rules (split from report/chart.py, which re-exports them):
the legend for the markers' sizes, the footnote of an unreliable roof, the roof's label with
its provenance, the memory ops with no point, the ring for a point above its roof, the
real-traffic DRAM line's style and words, and the mark of a flagged ceiling. The PNG chart,
the HTML report and the CLI read the same ones."""

from __future__ import annotations

from dataclasses import replace

from ..model.analysis import analyze
from ..model.ceiling import Ceiling, Roof
from ..model.sanity_finding import ABOVE_TOLERANCE
from ..units import fmt_pct, si
from .chart_parts import DrawnPoint, RooflineDisplay, roof_label
from .chart_points import one_kernel_per_file
from .chart_roofs import ENVELOPE_LEGEND, LOAD_WORDS, _load_note, is_envelope
from .chart_sweep_note import sweep_over_ceiling
from .marker_size import SIZE_LEGEND

# What a marker's size says, in the PNG legend and the HTML one alike (size_legend). Sizes
# are shares of each kernel's own file's time (model/analysis.share_totals): where every
# file holds one timed kernel (before.ncu-rep after.ncu-rep, a --trajectory of steps) each
# is 100 % of its file, so all would be drawn the largest and the size would say nothing.
# They are drawn alike then (POINT_SIZE), and the legend says why, so that equal markers
# are not read as equal times. (Sizing them by time relative to the longest was the
# other choice: a ratio of two runs' times, which the labels and tables already give.)
SIZES_ALIKE = "size: alike (one timed kernel per file: each is 100 % of its file's time)"


def size_legend(display: RooflineDisplay) -> str:
    """The legend's words for the markers' sizes, one rule for the PNG and the HTML chart:
    SIZE_LEGEND where areas are shares of the time, SIZES_ALIKE where every file holds one
    timed kernel, "" where sizes say nothing to explain (no timed kernel, --size-by none
    on one run)."""
    if display.sized:
        return SIZE_LEGEND
    return SIZES_ALIKE if one_kernel_per_file(display.kernels) else ""


def caveats(display: RooflineDisplay) -> str:
    """The footnote a chart of an unreliable roof carries (review 18c F5: the PNG is what
    gets pasted, and the warnings were on stderr only): 'measured under load: other
    processes used 82% of the CPUs while the probe ran; * flagged by the probe: fp64
    vector, L3 (...)'; '' for a roof nothing is said of."""
    load = [_load_note(n) for r in display.roofs for n in r.notes
            if any(w in n for w in LOAD_WORDS)]
    marked = list(dict.fromkeys(
        ln.ceiling.label for ln in display.lines
        if ln.kind in ("compute", "memory") and ln.ceiling is not None and flagged(ln.ceiling)))
    parts = [n.split("; ", 1)[-1] for r in display.roofs if is_envelope(r)
             for n in r.notes[:1]]
    over = sweep_over_ceiling(display.lines, display.roof_labels[:1])
    if over:
        parts.append(over)
    if load:
        parts.append("measured under load: " + "; ".join(dict.fromkeys(load)))
    if marked:
        parts.append(f"{FLAGGED_MARK} flagged by the probe (disturbed samples, calibration "
                     f"gave up, or far below nominal; `rooflab specs show` says why): "
                     + ", ".join(marked))
    return "; ".join(parts)


# A "nominal" roof whose every ceiling the profile calls derived (the CPU probe's: cores x
# its measured clock x FLOP/cycle, "derived, not a datasheet figure" in its table; a
# catalog CPU's: cores x the datasheet clock x FLOP/cycle): the chart says both, the roof's
# kind as text, MD and JSON state it ("nominal") and its ceilings' ("derived"). Review 18c
# F10: "nominal" alone read as a datasheet at 100 %; s22 r4 F2: "derived" alone on the
# chart beside "(nominal)" in every other format read as two different roofs.
DERIVED_WORDS = "nominal; peaks derived, not datasheet figures"


def provenance_label(roof: Roof) -> str:
    """The roof's name with its ceilings' provenance as the profile states it: roof_label,
    its kind followed by DERIVED_WORDS where it is nominal and every ceiling derived."""
    if is_envelope(roof):
        return ENVELOPE_LEGEND
    from ..model.dies import label_kind  # one die of a package: roof_label's (s34 G)

    provs = {c.provenance for c in (*roof.compute, *roof.memory)}
    if label_kind(roof) == "nominal" and provs == {"derived"}:
        return roof_label(replace(roof, kind=DERIVED_WORDS))
    return roof_label(roof)


# Ops with bytes but no FLOP (embedding, cat, copy_) have no AI, so no point on a FLOP/s
# chart; the chart names the longest of them under its axis (PNG) or in its caption (HTML)
# with what they did reach: the bytes/s moved and its % of their level's bandwidth, as the
# tables give them (model/bandwidth_reached.bandwidth_of). `plot` left them out but for a
# count (review 17b N5). The longest MEMORY_OPS_SHOWN by time; the rest are counted.
MEMORY_OPS_SHOWN = 5


def memory_ops(display: RooflineDisplay) -> str:
    """'no FLOP, so not on the chart: aten::cat 66.1 MB/s = 0.002 % of DRAM; ... (DRAM
    3.35 TB/s)' for the display's kernels without FLOP, judged by its first roof; ''
    when there are none."""
    from ..model.bandwidth_reached import bandwidth_of
    from .chart_layout_texts import with_word

    ops = [k for k in display.kernels if k.total_flop <= 0 and sum(k.bytes.values()) > 0]
    if not ops or not display.roofs:
        return ""
    ops.sort(key=lambda k: -(k.seconds or 0.0))
    words, levels = [], {}
    for k in ops[:MEMORY_OPS_SHOWN]:
        points = analyze(display.roofs[0], [k]).points
        # the level whose bandwidth holds it longest binds a memory op
        p = max(points, key=lambda q: q.floor_s, default=None)
        moved, pct = bandwidth_of(p) if p is not None else (None, None)
        if moved is None:
            words.append(with_word(k.name, "untimed"))   # 'embedding (before, untimed)'
            continue
        words.append(f"{k.name} {si(moved, 'B/s')} = {fmt_pct(pct)} of {p.level}")
        levels[p.level] = p.bytes_per_s
    more = len(ops) - MEMORY_OPS_SHOWN
    of = ", ".join(f"{lv} {si(bw, 'B/s')}" for lv, bw in levels.items())
    return ("no FLOP, so not on the chart: " + "; ".join(dict.fromkeys(words))
            + (f"; {more} more" if more > 0 else "") + (f" ({of})" if of else ""))


def above_roof(p: DrawnPoint) -> bool:
    """A measured point over ABOVE_TOLERANCE above the roof that judges it (the report's
    threshold): impossible on a correct roof with correct counts."""
    return (p.measured and p.percent_of_roof is not None
            and p.percent_of_roof > 100 * (1 + ABOVE_TOLERANCE))


# The legend's words for the ring around such a point (chart_draw)
ABOVE_LEGEND = "above its roof: check the counts or the roof"


# The CPU probe's second DRAM ceiling (probe/cpu/dram_ceiling.real_traffic): derived, in
# the bytes hardware counters see. It judges counter-measured kernels only, so the chart
# draws it only where a drawn kernel is judged against it, in a line style of its own
# (dash-dot-dot: not the dashes that mean nominal) and with its own legend words; every
# other chart would show a second DRAM slope nothing on it is read against.
REAL_TRAFFIC_STYLE = "dashdotdot"


# Its words follow model/byte_convention.real_traffic_reason: the kernels judged on it are those
# whose DRAM bytes are real traffic, counter-measured or counted so (read-only kinds, meta
# byte_count "real traffic"); "counters' bytes" was wrong on hand-counted charts (18c F8).
REAL_TRAFFIC_LEGEND = ("DRAM, real traffic (derived; judges counter-measured and "
                       "read-only kernels)")


# A ceiling its probe flagged (review 18c F5): samples disturbed, calibration given up, a
# figure far below its nominal, an L1 slower than L2. The probe's own warnings
# (Ceiling.warnings) decide it; the chart marks its name with FLAGGED_MARK and says under
# the axis what the mark means (caveats), as the report's "Read with care" lines do.
FLAGGED_MARK = "*"


def flagged(c: Ceiling) -> bool:
    """Whether the probe flagged this ceiling: a measured (or measured-derived) one with
    warnings; a catalog figure has none."""
    return c.provenance != "nominal" and bool(c.warnings)
