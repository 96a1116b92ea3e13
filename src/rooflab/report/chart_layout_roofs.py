"""Where the roof's own labels go: the compute ceilings' (by their line), the slopes'
(along theirs) and the ridges' (by their diamond), and the launch caps' boxes.

Part of the chart's label layout (chart_layout); no matplotlib here.
"""

from __future__ import annotations

import math
from dataclasses import replace

from ..units import fmt_ai
from .chart_layout_cost import (
    AXES_PT,
    CHAR_PT,
    LINE_PT,
    _box,
    _cost,
    _line_boxes,
    _marker_box,
    _overlap,
    _place,
)
from .chart_marks import beaded
from .chart_parts import CAP_TICK_PT, LaunchCap

# How far a slope label's text reaches across its line, in points: chart_draw sets it 3 pt
# off the line, and 7-pt text is 7 pt tall (ascent + descent), so 3 to 10 pt, and 11 with
# another line's half width. The model took 1.5 to 8.5: a slope 9.6 pt away (bench chart:
# DRAM (real traffic) 13.7 GB/s over L1 8.99 GB/s) missed the box and struck the drawn
# "L1* 8.99 GB/s" through (review s22 h2 F3).
SLOPE_TEXT_PT = (3.0, 11.0)


def _slope_boxes(anchor, text, angle, side=1):
    """A rotated label as a chain of small boxes along its baseline, just above the line
    (side 1) or hanging just below it (side -1)."""
    u = (math.cos(angle), math.sin(angle))
    n = (-u[1] * side, u[0] * side)
    steps = max(int(CHAR_PT * len(text) / 7), 1)
    mid, r = sum(SLOPE_TEXT_PT) / 2, (SLOPE_TEXT_PT[1] - SLOPE_TEXT_PT[0]) / 2
    return [_marker_box((anchor[0] + u[0] * (7 * k + 3.5) + n[0] * mid,
                         anchor[1] + u[1] * (7 * k + 3.5) + n[1] * mid), r)
            for k in range(steps)]


# A slope label hangs below its line only where above it costs more: two slopes of nearly
# one bandwidth (L3 188 GB/s, L2 222 GB/s: a few points apart) leave no room between them,
# so the lower one's label, above its line, was struck through by the upper line and sat
# against the upper one's label; below, the two lines part them.
SLOPE_BELOW = 3.0


def _place_slope_label(ln, lines, roof_labels, pt, xlim, ylim, placed, soft):
    """A slope's label along its line: first where each roof and level has its own stretch
    (x 3, x 4 per roof, x 1.6 per level), else the least crowded spot along the slope,
    above the line, else below it. The slope labels placed before are in `placed`, so
    labels of near-equal slopes go to different stretches or sides."""
    angle = math.atan2(AXES_PT[1] / math.log10(ylim[1] / ylim[0]),
                       AXES_PT[0] / math.log10(xlim[1] / xlim[0]))
    text = beaded(roof_labels, ln.roof, " " + ln.label)   # as chart_draw writes it
    r = roof_labels.index(ln.roof) if ln.roof in roof_labels else 0
    mem = [m.label for m in lines if m.roof == ln.roof and m.kind == "memory"]
    first = 3.0 * 4.0 ** r * 1.6 ** (mem.index(ln.label) if ln.label in mem else 0)
    span = ln.xs[1] / ln.xs[0]
    shifts = [first] + [f for f in (1.5, 3.0, 6.0, 12.0, 25.0, 50.0, 100.0, 200.0, 400.0)
                        if f != first]
    own = set(_line_boxes([ln], pt))   # its own line runs along it, by design
    others = [b for b in soft if b not in own]
    best = None
    for j, f in enumerate(s for s in shifts if s < span / 2 or s == first):
        xy = (ln.xs[0] * f, ln.ys[0] * f)
        for side in (1, -1):
            boxes = _slope_boxes(pt(*xy), text, angle, side)
            cost = (sum(_cost(b, placed, others) for b in boxes) + 2.0 * j
                    + (SLOPE_BELOW if side < 0 else 0.0))
            if best is None or cost < best[0]:
                best = (cost, xy, boxes, side)
    placed.extend(best[2])
    return replace(ln, label_xy=best[1], label_va="bottom" if best[3] > 0 else "top")


def cap_box(cap: LaunchCap, pt) -> tuple[float, float, float, float]:
    """The box, in points, of a launch cap's dash and its down-ticks (chart_draw), a
    little wider than the line, so no label is written over it."""
    (x0, y), (x1, _) = pt(cap.xs[0], cap.flop_per_s), pt(cap.xs[1], cap.flop_per_s)
    return (x0 - 0.5, y - CAP_TICK_PT - 0.5, x1 + 0.5, y + 1.0)


# A ceiling's label nearer another ceiling than its own (or with another between them)
# is read as that one's: fp32 2.58 written between the 2.58 and 3.86 lines and fp64 3.86
# pushed under the 2.58 line read top-down as 2.58 then 3.86 (review s18 r5 F1). It costs
# more than any spot off its line or on a marker, so it is the last resort but one: a
# spot on another ceiling's label costs twice as much (_spot_cost). A label across a line
# is misread; two labels on each other are not read at all ('int8 tensor 132 TOP/s' was
# written on 'tf32 tensor 156 TFLOP/s' where three roofs' ceilings interleave).
ACROSS = 400.0
# A label wedged between its own line and another one (a gap of a line or less beyond
# it) reads as either's: it costs more than sliding along its line (6) or dropping under
# it (1), so two close ceilings label the lower one under its line, the upper one above.
WEDGED = 30.0
# Lines closer than this (points) print as one line: a label is by both of them.
SAME_LINE_PT = 2.0


def _across(box, own_y, roof, ceilings) -> float:
    """What a ceiling label's box costs for the other ceilings (ceilings: each compute
    line's roof and two ends, in points) that run over its width: ACROSS where one is
    between the label and its own line (at own_y), or one of its own roof is nearer the
    label's middle than its own line; WEDGED where one of its roof runs just beyond it,
    so the label sits between two lines. (Another roof's lines are drawn dashed or in
    grey, and labelled at the other end: only one across the label misleads.)"""
    mid = (box[1] + box[3]) / 2
    up = mid > own_y
    cost = 0.0
    for other, ((x0, y), (x1, _)) in ceilings:
        if abs(y - own_y) <= SAME_LINE_PT or x1 <= box[0] or x0 >= box[2]:
            continue
        if (own_y < y < mid if up else mid < y < own_y) or (
                other == roof and abs(mid - y) <= abs(mid - own_y)):
            return ACROSS
        beyond = y - box[3] if up else box[1] - y
        if other == roof and 0 <= beyond <= LINE_PT:
            cost = WEDGED
    return cost


def _spot_cost(box, own_y, roof, ceilings, labels) -> float:
    """A ceiling label spot's cost for where it is read: _across, plus twice ACROSS where
    the box touches a ceiling label placed before (labels), so that a spot on a label
    costs more than one across a line even when that one is also pushed 4 lines off its
    line (160) and on a marker (200, _cost). Markers are left to _cost: a label on a
    marker is still read as its line's, one across a line is not."""
    hits = any(_overlap(box, b) > 0 for b in labels)
    return _across(box, own_y, roof, ceilings) + (2 * ACROSS if hits else 0.0)


def _label_cands(ln, text, first, pt, ceilings, labels):
    """(anchor point, label point xy, candidates with their spot costs) of one ceiling's
    label text: at its end of the line above, then below it, slid along it, then pushed
    off it."""
    # The judging roof labels its ceilings at the right edge, the others at their left
    # end, so two roofs with similar peaks do not print on top of each other.
    xy, ha = (((ln.xs[1], ln.ys[1]), "right") if first
              else ((ln.xs[0] * 1.15, ln.ys[0]), "left"))
    anchor = pt(*xy)
    w = CHAR_PT * len(text) + 6
    along = -1 if first else 1
    room = abs(anchor[0] - pt(ln.xs[0 if first else 1], ln.ys[0])[0])
    slides = [along * w * k for k in (1, 2) if w * (k + 1) <= room]
    if not first:   # or right-aligned at the right edge, like the judging roof's
        slides.append(pt(ln.xs[1], ln.ys[1])[0] - anchor[0] - w + 6)
    cands = [((dx, dy), ha, va, 6.0 * j + (dy < 0))
             for j, dx in enumerate([0.0, *slides])
             for dy, va in ((1.0, "bottom"), (-1.0, "top"))]
    # Pushed off its line: the last resort (a label must stay by its line to be read).
    cands += [((0.0, s * (1.0 + k * LINE_PT)), ha, "bottom" if s > 0 else "top", 40.0 * k)
              for k in (1, 2, 3, 4) for s in (1, -1)]
    return anchor, xy, [(o, h, v, p + _spot_cost(_box(anchor, o, h, v, text), anchor[1],
                                                 ln.roof, ceilings, labels))
                        for o, h, v, p in cands]


def _ceiling_labels(lines, roof_labels, pt, placed, soft) -> list:
    """Compute ceilings' labels (equal ceilings of one roof share one); slopes keep their
    text here and are placed after every ceiling."""
    groups = label_groups(lines, pt)
    out_lines = list(lines)
    first_label = len(placed)   # placed grows by each ceiling's label from here on
    ceilings = [(ln.roof, (pt(ln.xs[0], ln.ys[0]), pt(ln.xs[-1], ln.ys[-1]))) for ln in lines
                if ln.kind == "compute"]
    # Lowest ceiling first, so a crowded stack grows upwards in order.
    for i in sorted(range(len(lines)), key=lambda i: (lines[i].kind != "compute", lines[i].ys[0])):
        ln = lines[i]
        group = groups.get(i, [])
        if ln.kind != "compute" or group[0] != i:
            out_lines[i] = replace(ln, text=ln.label if ln.kind == "memory" else "")
            continue
        # a later roof's label starts with its bead (review s23 r6 F3: in grey, two roofs'
        # labels were one grey): "\u25cb fp16 vector 78 TFLOP/s"
        # (two spaces before a bead: clear of its roof's ridge diamond at the line's end)
        name = beaded(roof_labels, ln.roof, " " + group_label([lines[j].label for j in group]))
        text = ("" if name.startswith(" ") else "  ") + name + " "
        first = roof_labels[:1] == (ln.roof,)
        anchor, xy, cands = _label_cands(ln, text, first, pt, ceilings, placed[first_label:])
        offset, ha, va = _place(anchor, text, cands, placed, soft)
        xy, offset = _on_line(ln, xy, offset, pt)
        out_lines[i] = replace(ln, text=text, label_xy=xy, label_offset=offset, label_ha=ha,
                               label_va=va)
    return out_lines


def label_groups(lines, pt) -> dict[int, list[int]]:
    """The compute ceilings that share one label: each compute line's index -> its group's
    indices, top line first (the first one carries the label). Equal ceilings of one roof
    (A100: fp32 vector = fp64 tensor) and ones that print as one line (within SAME_LINE_PT
    of the next: a CPU probe's fp32 and fp64 scalar at 87.5 and 87.6 MFLOP/s, whose two
    labels sat on each other, review s33 I) are one group."""
    by_roof: dict[str, list[int]] = {}
    for i, ln in enumerate(lines):
        if ln.kind == "compute":
            by_roof.setdefault(ln.roof, []).append(i)
    groups: dict[int, list[int]] = {}
    for idx in by_roof.values():
        idx.sort(key=lambda i: -lines[i].ys[0])   # stable: equal ones keep their order
        run: list[int] = []
        for i in idx:
            if run and (pt(1.0, lines[run[-1]].ys[0])[1] - pt(1.0, lines[i].ys[0])[1]
                        > SAME_LINE_PT):
                groups.update((j, run) for j in run)
                run = []
            run.append(i)
        groups.update((j, run) for j in run)
    return groups


def group_label(group: list[str]) -> str:
    """One label for a label group (label_groups), top line first. Ceilings of one unit
    name ("scalar*") and one rate unit say the name once: "fp32 = fp64 scalar* 87.5
    MFLOP/s" where the values print alike, "fp32 / fp64 vector* 6.72 / 6.7 GFLOP/s" where
    not; others as shared_label joins them."""
    if len(group) < 2:
        return shared_label(group)
    parts = [(g.rsplit(" ", 2), g) for g in group]   # (name, number, unit)
    names = [name.split(" ", 1) for (name, _, _), _ in parts]
    if any(len(n) != 2 for n in names) or len({n[1] for n in names}) != 1 \
            or len({u for (_, _, u), _ in parts}) != 1:
        return shared_label(group)
    numbers = list(dict.fromkeys(num for (_, num, _), _ in parts))
    kind, unit = names[0][1], parts[0][0][2]
    if len(numbers) == 1:
        return f"{' = '.join(n[0] for n in names)} {kind} {numbers[0]} {unit}"
    values = " / ".join(num for (_, num, _), _ in parts)
    return f"{' / '.join(n[0] for n in names)} {kind} {values} {unit}"


def shared_label(group: list[str]) -> str:
    """One label for equal ceilings of a roof: "bf16 tensor, fp16 tensor 312 TFLOP/s", the
    names then the value, once per unit: an integer ceiling of the same height keeps its
    OP/s ("fp8 tensor 1.98 PFLOP/s, int8 tensor 1.98 POP/s"; the first one's unit on all
    named int8 in PFLOP/s, review s22 r6 F7)."""
    by_value: dict[str, list[str]] = {}
    for g in group:   # each label is "<name> <number> <unit>"
        name, number, unit = g.rsplit(" ", 2)
        by_value.setdefault(f"{number} {unit}", []).append(name)
    return ", ".join(f"{', '.join(names)} {value}" for value, names in by_value.items())


def _on_line(ln, xy, offset, pt):
    """A label slid along its line as a point on the line (data units) and no sideways
    offset: the same spot on the model's axes, but one that moves with the drawn axes as
    the other labels' anchors do. Slid by points from its end, it did not: the drawn axes
    are up to 557 pt wide, not the model's 550 (AXES_PT), so a label slid left from the
    right edge and another at a point on its line, 1.7 pt apart in the model, overlapped
    in the PNG (a crowded 3-roof chart: 'fp64 vector 85 TFLOP/s' on 'fp64 vector 100
    TFLOP/s', measured 85/120/160 vs nominal 100/140/190 TFLOP/s)."""
    dx, dy = offset
    (x0, _), (x1, _) = pt(ln.xs[0], ln.ys[0]), pt(ln.xs[-1], ln.ys[-1])
    if not dx or x1 == x0:
        return xy, offset
    # the model's x is log-linear in the data: dx points is a factor along the line
    x = xy[0] * (ln.xs[-1] / ln.xs[0]) ** (dx / (x1 - x0))
    return (x, xy[1]), (0.0, dy)


def _ridge_labels(ridges, roof_labels, pt, placed, soft) -> list:
    out_ridges = []
    for r in ridges:
        first = roof_labels[:1] == (r.roof,)
        offsets = [((4.0, -11.0), "left"), ((-4.0, 5.0), "right"), ((4.0, 5.0), "left"),
                   ((-4.0, -11.0), "right"), ((8.0, -20.0), "left"), ((-8.0, 14.0), "right")]
        if not first:
            offsets = offsets[1:2] + offsets[:1] + offsets[2:]
        cands = [(o, ha, "baseline", 3.0 * j) for j, (o, ha) in enumerate(offsets)]
        offset, ha, va = _place(pt(r.ai, r.flop_per_s), f"AI*={fmt_ai(r.ai)}", cands, placed,
                                soft)
        out_ridges.append(replace(r, label_offset=offset, label_ha=ha, label_va=va))
    return out_ridges
