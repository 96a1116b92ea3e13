"""Where a roofline chart's labels go: a deterministic layout in a model of the figure.

chart.py works out what to draw; this module places the ceiling, slope, ridge and point
labels so that none overlap, as plain data the tests can check (no matplotlib here).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace

import numpy as np

from ..units import fmt_ai, fmt_pct
from .boxes import (
    aligned_box,
    as_array,
    as_points,
    crosses,
    crossings_matrix,
    hits,
    hits_matrix,
    marker_box,
    overlap_area,
    overlap_matrix,
    sums_in_order,
)
from .chart_parts import CAP_TICK_PT, DrawnPoint, LaunchCap

# Point labels: the full three-line label up to this many labelled points, one line after.
FULL_LABELS = 8


# --- label layout --------------------------------------------------------------------
# Labels are placed in a model of the default 9 x 6 in figure (axes about 550 x 378 pt;
# 7 pt text is 3.7-4.5 pt per character, digits widest, and 8.6 pt per line, measured
# with matplotlib's Agg; 4.3 errs wide), so the layout is plain data the tests can check;
# on other axes sizes it is approximate.
AXES_PT = (550.0, 378.0)   # 550-557 wide, as the tick labels' width varies
CHAR_PT, LINE_PT = 4.3, 8.6


def _to_pt(x, y, xlim, ylim):
    return (AXES_PT[0] * math.log(x / xlim[0]) / math.log(xlim[1] / xlim[0]),
            AXES_PT[1] * math.log(y / ylim[0]) / math.log(ylim[1] / ylim[0]))


def _box(anchor, offset, ha, va, text):
    """The (left, bottom, right, top) box, in points, of a text placed like matplotlib."""
    rows = text.split("\n")
    return aligned_box(anchor[0] + offset[0], anchor[1] + offset[1],
                       CHAR_PT * max(len(r) for r in rows), LINE_PT * len(rows), ha, va)


# The shared helpers (report/boxes.py) under the names this module and its tests use.
_overlap = overlap_area
_crosses = crosses
_hits = hits


def _cost(box, placed, soft=()) -> float:
    inside = (max(box[0], 0), max(box[1], 0), min(box[2], AXES_PT[0]), min(box[3], AXES_PT[1]))
    area = (box[2] - box[0]) * (box[3] - box[1])
    outside = area - max(inside[2] - inside[0], 0) * max(inside[3] - inside[1], 0)
    # A line through a label is a lesser fault than two labels on top of each other.
    # Any overlap with a label or marker costs 200 on top of its area: a touch is a fault.
    hard = sum(200 + a for a in (_overlap(box, b) for b in placed) if a > 0)
    # A line through a label costs 8 (more than sliding the label one step along its own
    # line, 6, or dropping it below, 1) plus a little per point of overlap.
    lines = sum(_overlap(box, b) for b in soft)
    return 4 * outside + hard + (8 + 0.15 * lines if lines > 0 else 0.0)


@dataclass(frozen=True)
class _Scene:
    """What labels are scored against, as arrays built once for many candidates: the boxes
    placed (labels, markers), the lines' boxes, the walls (ceilings' labels) and the
    leaders drawn. Scoring candidates one by one against lists (_cost, _leader_cost) was
    most of the chart's time; here they are scored all at once, with the same float
    operations and the same sums in the same order, so to the last bit the same costs."""

    placed: np.ndarray
    soft: np.ndarray
    walls: np.ndarray
    starts: np.ndarray
    ends: np.ndarray

    @classmethod
    def of(cls, placed, soft=(), walls=(), leaders=()) -> _Scene:
        return cls(as_array(placed), as_array(soft), as_array(walls),
                   as_points([a for a, _ in leaders]), as_points([b for _, b in leaders]))

    def parts(self, boxes, anchors, ends) -> list[tuple]:
        """For each candidate (its box, its anchor, its leader's end): what _cost and
        _leader_cost add up against this scene, (4 x area outside, overlap sum, line
        overlap sum, leaders crossed, placed struck, walls struck, leaders through it).
        The leader's counts mean something only where the candidate has a leader."""
        return list(zip(*self.columns(boxes, anchors, ends), strict=True))

    def columns(self, boxes, anchors, ends) -> tuple[list, ...]:
        """parts, one list per part (each candidate's at its index)."""
        bx, an, en = as_array(boxes), as_points(anchors), as_points(ends)
        w = np.maximum(np.minimum(bx[:, 2], AXES_PT[0]) - np.maximum(bx[:, 0], 0), 0)
        h = np.maximum(np.minimum(bx[:, 3], AXES_PT[1]) - np.maximum(bx[:, 1], 0), 0)
        out4 = (4 * ((bx[:, 2] - bx[:, 0]) * (bx[:, 3] - bx[:, 1]) - w * h)).tolist()
        hard = sums_in_order(overlap_matrix(bx, self.placed), 200)
        lines = sums_in_order(overlap_matrix(bx, self.soft))
        # a leader is not struck through the marker it starts in (asked only of the
        # boxes it passes through: a few of hundreds)
        i, j = np.nonzero(hits_matrix(an, en, self.placed))
        p, x, y = self.placed[j], an[i, 0], an[i, 1]
        around = (p[:, 0] <= x) & (x <= p[:, 2]) & (p[:, 1] <= y) & (y <= p[:, 3])
        struck = np.bincount(i[~around], minlength=len(bx)).tolist()
        walls = hits_matrix(an, en, self.walls).sum(axis=1).tolist()
        crossed = crossings_matrix(an, en, self.starts, self.ends).sum(axis=1).tolist()
        through = hits_matrix(self.starts, self.ends, bx).sum(axis=0).tolist()
        return out4, hard, lines, crossed, struck, walls, through

    def alone(self, items) -> tuple[list[float], list[tuple]]:
        """(_arrangement_cost([item]) for each item, its parts): each scored as the only
        label placed against the scene, all at once."""
        geo = [_geometry(it) for it in items]
        cols = self.columns([g[0] for g in geo], [g[1] for g in geo], [g[2] for g in geo])
        out4, hard, lines, crossed, struck, walls, through = map(np.array, cols)
        far = np.array([g[3] for g in geo], dtype=bool)
        base = out4 + hard.astype(float) + np.where(lines > 0, 8 + 0.15 * lines, 0.0)
        lead = np.where(far, 20 * crossed + LEADER_THROUGH * struck
                        + LEADER_THROUGH_WALL * walls, 0.0) + LEADER_THROUGH * through
        dist = np.array([0.02 * math.dist(g[1], g[2]) if g[3] else 0.0 for g in geo])
        cost = (base + lead) + dist
        return cost.tolist(), list(zip(*cols, strict=True))

    @staticmethod
    def costs(parts, box, anchor, end, extra=(), extra_leaders=()) -> tuple[float, float]:
        """(_cost(box, placed + extra, soft), _leader_cost(anchor, end, box, placed +
        extra, leaders + extra_leaders, walls)) from the candidate's parts."""
        out4, hard, lines, crossed, struck, walls, through = parts
        for b in extra:
            a = _overlap(box, b)
            if a > 0:
                hard += 200 + a
        cost = out4 + hard + (8 + 0.15 * lines if lines > 0 else 0.0)
        lead = 0.0
        if end is not None:
            lead += 20 * (crossed + sum(_crosses(anchor, end, a, b) for a, b in extra_leaders))
            lead += LEADER_THROUGH * (struck + sum(
                _hits(anchor, end, b) for b in extra
                if not (b[0] <= anchor[0] <= b[2] and b[1] <= anchor[1] <= b[3])))
            lead += LEADER_THROUGH_WALL * walls
        lead += LEADER_THROUGH * (through + sum(_hits(a, b, box) for a, b in extra_leaders))
        return cost, lead


# A leader line through a label or a marker: drawn over the text it strikes it through, so
# it costs more than a roof line through a label (8) and than a label moved a few rows
# further up its column (2.5 a row), and less than two labels touching (200 and up).
LEADER_THROUGH = 60.0


# A leader through a ceiling's label costs as much as two labels touching: the ceiling
# label names the line the reader is comparing the point with, so a leader struck through
# it (gemm_fp32_2048 through 'fp32 vector 235 GFLOP/s' on the bench chart) hides the one
# thing the point is read against; a roomier spot further out is better.
LEADER_THROUGH_WALL = 200.0


def _leader_cost(anchor, end, box, placed, leaders, walls=()) -> float:
    """(The definition, one candidate at a time; the layout scores with _Scene, which
    tests/test_report_boxes.py holds to it.) Leaders struck through labels: this
    candidate's leader (anchor -> end; None when it has none) through the boxes placed
    so far (not the marker it starts in), and the leaders drawn so far through this
    candidate's box; through a wall (a ceiling's label) it costs more."""
    cost = 0.0
    if end is not None:
        cost += 20 * sum(_crosses(anchor, end, a, b) for a, b in leaders)
        cost += LEADER_THROUGH * sum(
            _hits(anchor, end, b) for b in placed
            if not (b[0] <= anchor[0] <= b[2] and b[1] <= anchor[1] <= b[3]))
        cost += LEADER_THROUGH_WALL * sum(_hits(anchor, end, b) for b in walls)
    cost += LEADER_THROUGH * sum(_hits(a, b, box) for a, b in leaders)
    return cost


def _place(anchor, text, candidates, placed, soft=(), leaders=None, walls=()):
    """The candidate (offset, ha, va, penalty) with the least cost: overlap with the labels
    and markers placed so far (and, less, with lines) plus the candidate's own penalty for
    straying from where the label belongs. Its box joins `placed`. Deterministic.
    leaders: the leader lines drawn so far, for labels placed away from their point; a
    leader that would cross one, or strike through a label or marker, costs (less than
    any overlap), and so does a label that an earlier leader would strike through.
    walls: boxes a leader must not pass through at all (the ceilings' labels)."""
    best = None
    ordered = sorted(candidates, key=lambda c: c[3])
    items = [(None, anchor, offset, ha, va, text) for offset, ha, va, _ in ordered]
    # Every candidate scored at once against what is placed so far (fixed while they run).
    scene = _Scene.of(placed, soft, walls, leaders or ())
    for (offset, ha, va, penalty), part in zip(ordered, _item_parts(scene, items),
                                               strict=True):
        if best is not None and penalty >= best[0]:
            break   # costs never go below the penalty: no later candidate can win
        box = _box(anchor, offset, ha, va, text)
        end = (anchor[0] + offset[0], anchor[1] + offset[1])
        base, lead = _Scene.costs(part, box, anchor, end if _far(offset) else None)
        cost = base + penalty
        if leaders is not None:
            cost += lead
        if best is None or cost < best[0]:
            best = (cost, offset, ha, va, box, end)
    placed.append(best[4])
    if leaders is not None and _far(best[1]):
        leaders.append((anchor, best[5]))
    return best[1], best[2], best[3]


def _marker_box(xy, r=4.5):
    return marker_box(xy, r)


def _line_boxes(lines, pt) -> list[tuple[float, float, float, float]]:
    """Thin boxes along the roof lines, so a label is not struck through by another line."""
    out = []
    for ln in lines:
        (x0, y0), (x1, y1) = pt(ln.xs[0], ln.ys[0]), pt(ln.xs[-1], ln.ys[-1])
        if ln.kind == "compute":
            out.append((x0, y0 - 0.6, x1, y0 + 0.6))
        elif ln.kind == "mixed":   # a mixed kernel's flat roof: its last two vertices
            x0, y0 = pt(ln.xs[-2], ln.ys[-2])
            out.append((x0, y0 - 0.6, x1, y0 + 0.6))
        elif ln.kind == "memory":
            n = max(int((x1 - x0) / 6), 1)
            out += [_marker_box((x0 + (x1 - x0) * i / n, y0 + (y1 - y0) * i / n), 1.0)
                    for i in range(n + 1)]
    return out


def _slope_boxes(anchor, text, angle, side=1):
    """A rotated label as a chain of small boxes along its baseline, just above the line
    (side 1) or hanging just below it (side -1)."""
    u = (math.cos(angle), math.sin(angle))
    n = (-u[1] * side, u[0] * side)
    steps = max(int(CHAR_PT * len(text) / 7), 1)
    return [_marker_box((anchor[0] + u[0] * (7 * k + 3.5) + n[0] * 5,
                         anchor[1] + u[1] * (7 * k + 3.5) + n[1] * 5), 3.5)
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
    text = " " + ln.label
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


def layout_labels(lines, ridges, points, xlim, ylim, roof_labels, sweep=(), caps=()):
    """Place ceiling, ridge and point labels so that none overlaps another or a marker:
    ceilings first (just above their line, else below it, else slid along it, else pushed
    away), then ridges, then points (around the point, further out with a leader line).
    caps: the launch caps' dashes, obstacles as the markers are."""
    pt = lambda x, y: _to_pt(x, y, xlim, ylim)  # noqa: E731
    placed = _marker_obstacles(points, pt)
    placed += [_marker_box(pt(r.ai, r.flop_per_s)) for r in ridges]
    placed += [_marker_box(pt(x, y), 2.5) for x, y in sweep]
    placed += [cap_box(c, pt) for c in caps]
    soft = _line_boxes(lines, pt)
    # Each step adds the boxes it places to `placed`, so later labels avoid them.
    before = len(placed)
    # A ceiling label next to a kernel's marker leaves that kernel's label no room but
    # across the ceiling label, on a leader (gemm_fp32_2048 under 'fp32 vector 235 GFLOP/s'
    # at the right edge): the room around labelled markers is a line's worth of obstacle
    # to the ceiling labels, so they slide along their line instead when they can.
    room = [_marker_box(pt(p.ai, p.flop_per_s), 4.5 + LINE_PT) for p in points if p.text]
    out_lines = _ceiling_labels(lines, roof_labels, pt, placed, soft + room)
    walls = placed[before:]   # the ceilings' labels: no leader may run through them
    for i, ln in enumerate(out_lines):
        if ln.kind == "memory":
            out_lines[i] = _place_slope_label(ln, lines, roof_labels, pt, xlim, ylim, placed,
                                              soft)
    return (out_lines, _ridge_labels(ridges, roof_labels, pt, placed, soft),
            _point_labels(_merge_coincident(points, pt), pt, placed, soft, walls))


# Above this many points, the unlabelled markers are obstacles as the cells of a grid
# they cover (one box per run of covered cells in a row), not a box each: every label's
# every candidate is costed against every obstacle, so 5 000 markers made the layout of
# 20 labels take seconds. The cells (half a marker) over-cover each marker by under a cell.
MANY_MARKERS = 200
MARKER_CELL_PT = 4.5


def _radius(p) -> float:
    """A point's marker box half-width: 4.5 pt for the usual 8 pt marker, more for a kernel
    drawn larger for its share of the time (chart_parts.share_size), never less."""
    return max(4.5, getattr(p, "size", 8.0) / 2 + 0.5)


def _marker_obstacles(points, pt) -> list[tuple[float, float, float, float]]:
    """The markers' boxes: one each on a small chart; on a crowded one, the labelled
    points' own and the grid cells the others cover."""
    if len(points) <= MANY_MARKERS:
        return [_marker_box(pt(p.ai, p.flop_per_s), _radius(p)) for p in points]
    out = [_marker_box(pt(p.ai, p.flop_per_s), _radius(p)) for p in points if p.text]
    c = MARKER_CELL_PT
    cells: set[tuple[int, int]] = set()
    for p in points:
        if p.text:
            continue
        x, y = pt(p.ai, p.flop_per_s)
        r = _radius(p)
        cells.update((i, j) for i in range(math.floor((x - r) / c), math.floor((x + r) / c) + 1)
                     for j in range(math.floor((y - r) / c), math.floor((y + r) / c) + 1))
    runs: list[list[int]] = []   # [row, first column, last column]
    for i, j in sorted(cells, key=lambda ij: (ij[1], ij[0])):
        if runs and runs[-1][0] == j and runs[-1][2] == i - 1:
            runs[-1][2] = i
        else:
            runs.append([j, i, i])
    return out + [(i0 * c, j * c, (i1 + 1) * c, (j + 1) * c) for j, i0, i1 in runs]


# Steps of one kernel closer than this (in points; a marker's radius) sit on one spot:
# each centre is inside the other's marker.
COINCIDENT_PT = 4.5


def _merge_coincident(points, pt) -> list:
    """One label for the steps of one kernel on one spot (optimisation steps that did not
    move it: GPP's output1 and output2): the first lists every step, the others go
    unlabelled. Apart, their labels crowd the spot and their leaders cross. Different
    kernels keep a label each, even on one spot: a step name ('b=8') joined to another
    kernel's label would read as that kernel's."""
    out = list(points)
    for i, p in enumerate(out):
        if not p.text:
            continue
        here = pt(p.ai, p.flop_per_s)
        for j in range(i + 1, len(out)):
            q = out[j]
            if (q.text and q.kernel == p.kernel
                    and math.dist(here, pt(q.ai, q.flop_per_s)) < COINCIDENT_PT):
                # "output6, output7" (then output7's figures), or one name per line
                short = "\n" not in p.text and len(p.text + q.text.split("\n")[0]) <= 40
                out[i] = p = replace(p, text=p.text + (", " if short else "\n") + q.text)
                out[j] = replace(q, text="")
    return out


def _ceiling_labels(lines, roof_labels, pt, placed, soft) -> list:
    """Compute ceilings' labels (equal ceilings of one roof share one); slopes keep their
    text here and are placed after every ceiling."""
    same: dict[tuple[str, float], list[str]] = {}
    for ln in lines:   # equal ceilings of one roof (A100: fp32 vector = fp64 tensor) share one
        if ln.kind == "compute":
            same.setdefault((ln.roof, ln.ys[0]), []).append(ln.label)
    out_lines = list(lines)
    # Lowest ceiling first, so a crowded stack grows upwards in order.
    for i in sorted(range(len(lines)), key=lambda i: (lines[i].kind != "compute", lines[i].ys[0])):
        ln = lines[i]
        group = same.get((ln.roof, ln.ys[0]), [])
        if ln.kind != "compute" or group[0] != ln.label:
            out_lines[i] = replace(ln, text=ln.label if ln.kind == "memory" else "")
            continue
        # "bf16 tensor, fp16 tensor 312 TFLOP/s": the names, then the one value.
        value = " ".join(group[0].split()[-2:])
        text = " " + ", ".join(g.rsplit(" ", 2)[0] for g in group) + f" {value} "
        first = roof_labels[:1] == (ln.roof,)
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
        offset, ha, va = _place(anchor, text, cands, placed, soft)
        out_lines[i] = replace(ln, text=text, label_xy=xy, label_offset=offset, label_ha=ha,
                               label_va=va)
    return out_lines


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


def _point_labels(points, pt, placed, soft, walls=()) -> list:
    """Point labels one at a time (leaders kept off the ceilings' labels, `walls`); then a
    crowded cluster's labels restacked as one ordered column, and two labels left in
    conflict placed again together, each where that costs less."""
    out, leaders, boxes_at = list(points), [], {}
    cands = _candidates()
    for i, p in enumerate(points):
        if not p.text:
            continue
        boxes_at[i] = len(placed)   # where _place appends this label's box
        offset, ha, va = _place(pt(p.ai, p.flop_per_s), p.text, cands, placed, soft,
                                leaders, walls)
        out[i] = replace(p, label_offset=offset, label_ha=ha, label_va=va)
    # The column first: where it is taken, it leaves no conflicts for the pair repair.
    out = _ordered_column(out, pt, placed, soft, boxes_at, walls)
    out, placed[:] = _repair_pairs(out, pt, placed, soft, boxes_at, walls)
    return out


def _item(pt, i, p):
    return (i, pt(p.ai, p.flop_per_s), p.label_offset, p.label_ha, p.label_va, p.text)


def _leader_of(item):
    _, anchor, offset, *_ = item
    return (anchor, (anchor[0] + offset[0], anchor[1] + offset[1])) if _far(offset) else None


def _in_conflict(a, b, box_a=None, box_b=None) -> bool:
    """Whether a's leader strikes through b's label or crosses b's leader (or b's a's)."""
    la, lb = _leader_of(a), _leader_of(b)
    box_a, box_b = box_a or _box(*a[1:]), box_b or _box(*b[1:])
    return bool((la and _hits(*la, box_b)) or (lb and _hits(*lb, box_a))
                or (la and lb and _crosses(*la, *lb)))


# Pair repair: how many of each label's cheapest spots are tried together.
PAIR_TRIES = 30


def _repair_pairs(out, pt, placed, soft, boxes_at, walls):
    """Two labels in conflict (one's leader through the other's label, or their leaders
    crossing), placed one at a time: the first took the spot the second needed. Place the
    two together instead, the best pair of spots among each one's cheapest, the others
    staying put; kept where it costs less."""
    out, placed = list(out), list(placed)
    idx = sorted(boxes_at)
    # Each label's item and box, kept up to date as pairs move (rebuilt for every pair,
    # they made the repair quadratic in the labels per pair tried).
    items = {k: _item(pt, k, out[k]) for k in idx}
    boxes = {k: _box(*items[k][1:]) for k in idx}
    for a_pos, i in enumerate(idx):
        for j in idx[a_pos + 1:]:
            if not _in_conflict(items[i], items[j], boxes[i], boxes[j]):
                continue
            skip = {boxes_at[i], boxes_at[j]}
            fixed = [b for n, b in enumerate(placed) if n not in skip]
            leaders = [ld for k in idx if k not in (i, j)
                       for ld in [_leader_of(items[k])] if ld]
            scene = _Scene.of(fixed, soft, walls, leaders)
            now = (_arrangement_cost([items[i], items[j]], fixed, soft, walls, leaders, scene)
                   + _penalty(out[i]) + _penalty(out[j]))
            best = (now, None)
            tries = {k: _cheapest(pt, out[k], k, fixed, soft, walls, leaders, scene)
                     for k in (i, j)}
            costs = _pair_costs(tries[i], tries[j], fixed, soft, walls, leaders, scene)
            for ci, row in zip(tries[i], costs, strict=True):
                for cj, cost in zip(tries[j], row, strict=True):
                    if cost < best[0] - 1e-9:
                        best = (cost, (ci[1], cj[1]))
            if best[1] is None:
                continue
            for it in best[1]:
                k, _, o, ha, va, _ = it
                out[k] = replace(out[k], label_offset=o, label_ha=ha, label_va=va)
                placed[boxes_at[k]] = _box(*it[1:])
                items[k] = _item(pt, k, out[k])
                boxes[k] = _box(*items[k][1:])
    return out, placed


def _pair_costs(ti, tj, fixed, soft, walls, leaders, scene) -> list[list[float]]:
    """_arrangement_cost([ci, cj], ...) + both penalties for every ci of ti and cj of tj
    ((penalty, item, parts) each, from _cheapest), as rows per ci: the same sums in the
    same order, ci's (alone) and then cj's beside ci, with cj's terms for ci's box and
    leader taken as arrays for all pairs at once."""
    pre = [_arrangement_cost([it], fixed, soft, walls, leaders, scene, [part])
           for _, it, part in ti]
    geo_i, geo_j = [_geometry(it) for _, it, _ in ti], [_geometry(it) for _, it, _ in tj]
    box_i, box_j = as_array([g[0] for g in geo_i]), as_array([g[0] for g in geo_j])
    a_i, e_i = as_points([g[1] for g in geo_i]), as_points([g[2] for g in geo_i])
    a_j, e_j = as_points([g[1] for g in geo_j]), as_points([g[2] for g in geo_j])
    far_i = np.array([g[3] for g in geo_i])[:, None]
    far_j = np.array([g[3] for g in geo_j])[None, :]
    area = overlap_matrix(box_i, box_j)                       # [i, j], symmetric
    hard = np.array([float(part[1]) for _, _, part in tj])[None, :] + np.where(
        area > 0, 200 + area, 0.0)
    out4 = np.array([part[0] for _, _, part in tj])[None, :]
    term = np.array([8 + 0.15 * part[2] if part[2] > 0 else 0.0 for _, _, part in tj])
    base = out4 + hard + term[None, :]
    crossed = crossings_matrix(a_j, e_j, a_i, e_i).T & far_i     # cj's leader across ci's
    around = ((box_i[:, 0:1] <= a_j[:, 0]) & (a_j[:, 0] <= box_i[:, 2:3])
              & (box_i[:, 1:2] <= a_j[:, 1]) & (a_j[:, 1] <= box_i[:, 3:4]))
    struck = hits_matrix(a_j, e_j, box_i).T & ~around          # cj's leader through ci's box
    through = hits_matrix(a_i, e_i, box_j) & far_i             # ci's leader through cj's box
    parts = [part for _, _, part in tj]
    lead = np.where(far_j,
                    20 * (np.array([p[3] for p in parts])[None, :] + crossed)
                    + LEADER_THROUGH * (np.array([p[4] for p in parts])[None, :] + struck)
                    + LEADER_THROUGH_WALL * np.array([p[5] for p in parts])[None, :], 0.0)
    lead = lead + LEADER_THROUGH * (np.array([p[6] for p in parts])[None, :] + through)
    dist = np.array([0.02 * math.dist(g[1], g[2]) if g[3] else 0.0 for g in geo_j])
    cost = np.array(pre)[:, None] + base
    cost = cost + lead
    cost = cost + dist[None, :]
    cost = cost + np.array([pen for pen, _, _ in ti])[:, None]
    cost = cost + np.array([pen for pen, _, _ in tj])[None, :]
    return cost.tolist()


def _geometry(item):
    """(box, anchor, leader's end, whether it has a leader) of an item."""
    _, anchor, offset, ha, va, text = item
    return (_box(anchor, offset, ha, va, text), anchor,
            (anchor[0] + offset[0], anchor[1] + offset[1]), _far(offset))


def _penalty(p) -> float:
    """The penalty of the spot point p's label sits at (how far it strays)."""
    return next((pen for o, ha, va, pen in _candidates()
                 if (o, ha, va) == (p.label_offset, p.label_ha, p.label_va)), 0.0)


def _cheapest(pt, p, i, fixed, soft, walls, leaders, scene=None):
    """(penalty, item) for point p's PAIR_TRIES cheapest label spots, alone among the
    fixed boxes and leaders."""
    anchor = pt(p.ai, p.flop_per_s)
    scene = scene or _Scene.of(fixed, soft, walls, leaders)
    cands = _candidates()
    items = [(i, anchor, offset, ha, va, p.text) for offset, ha, va, _ in cands]
    scored = []
    for (*_, penalty), item, cost, part in zip(cands, items, *scene.alone(items),
                                               strict=True):
        scored.append((cost + penalty, penalty, item, part))
    scored.sort(key=lambda t: t[0])
    return [(pen, item, part) for _, pen, item, part in scored[:PAIR_TRIES]]


@functools.cache   # the same for every point (a tuple: shared, so never changed)
def _candidates() -> tuple:
    """Where a point's label may go, (offset, ha, va, penalty): around the point, then in
    columns left and right of it, each row a line further up or down: a cluster of points
    at similar AI gets its labels stacked beside it."""
    cands = [((7.0, -8.0), "left", "top", 0.0), ((7.0, 6.0), "left", "bottom", 1.0),
             ((-7.0, -8.0), "right", "top", 2.0), ((-7.0, 6.0), "right", "bottom", 3.0),
             ((0.0, -10.0), "center", "top", 4.0), ((0.0, 8.0), "center", "bottom", 5.0)]
    for j, dx in enumerate((16.0, 34.0, 60.0)):
        for k in range(-24, 25):
            for side, ha in ((1, "left"), (-1, "right")):
                cands.append(((side * dx, k * (LINE_PT + 0.6) - 4.0), ha, "center",
                              12.0 + 15.0 * j + 2.5 * abs(k) + (side < 0)))
    return tuple(cands)


# --- the ordered column: a cluster's labels stacked beside it ---------------------------
# Placed one at a time, the labels of a tight row of points with long names (GPP's eight
# steps, 40 characters each) end up scattered below it, each where the one before left
# room: long leaders that cross each other and strike through the labels between. Placed
# together, as one column beside the cluster, in the order of the points' x (see
# _column_items), no two leaders cross and none passes through a label of the column
# (they all end at its edge).
ROW_GAP = 0.6


def _far(offset) -> bool:
    """Whether a label sits away from its point, so it is drawn with a leader line (the
    same rule as chart_draw's)."""
    return max(abs(offset[0]), abs(offset[1])) > 12


def _item_parts(scene, items) -> list[tuple]:
    """scene.parts of each (index, anchor, offset, ha, va, text) item, all at once."""
    return scene.parts([_box(*it[1:]) for it in items], [it[1] for it in items],
                       [(it[1][0] + it[2][0], it[1][1] + it[2][1]) for it in items])


def _arrangement_cost(items, fixed, soft, walls=(), leaders=(), scene=None,
                      parts=None) -> float:
    """The cost of labels placed together: (index, anchor, offset, ha, va, text) each, scored
    as _place scores one label (overlaps, lines, leaders) against the fixed boxes and
    the ones before it, plus a little per point of leader, so a shorter layout wins.
    scene: _Scene.of(fixed, soft, walls, leaders), when the caller scores many; parts:
    _item_parts(scene, items), when the caller has them. Each item's terms for the items
    before it are taken as arrays, all at once (a column of 60 labels has 1,770 pairs)."""
    scene = scene or _Scene.of(fixed, soft, walls, leaders)
    parts = parts or _item_parts(scene, items)
    n = len(items)
    geo = [_geometry(it) for it in items]
    bx, an, en = (as_array([g[0] for g in geo]), as_points([g[1] for g in geo]),
                  as_points([g[2] for g in geo]))
    far = np.array([g[3] for g in geo], dtype=bool)
    before = np.tri(n, k=-1, dtype=bool)                    # [k, m]: m placed before k
    area = overlap_matrix(bx, bx)
    terms = np.where(before & (area > 0), 200 + area, 0.0)
    crossed = (crossings_matrix(an, en, an, en) & far[None, :] & before).sum(axis=1)
    around = ((bx[None, :, 0] <= an[:, 0:1]) & (an[:, 0:1] <= bx[None, :, 2])
              & (bx[None, :, 1] <= an[:, 1:2]) & (an[:, 1:2] <= bx[None, :, 3]))
    hit = hits_matrix(an, en, bx)                            # [k, m]: k's leader, m's box
    struck = (hit & ~around & before).sum(axis=1)
    through = (hit.T & far[None, :] & before).sum(axis=1)   # earlier leaders through k
    count, row_sums = (terms > 0).sum(axis=1).tolist(), terms.sum(axis=1).tolist()
    cost = 0.0
    for k, (out4, hard, lines, cr, st, wa, th) in enumerate(parts):
        if count[k] + (hard != 0) <= 2:   # one or two terms: the same sum in any order
            hard = hard + row_sums[k] if count[k] else hard
        else:   # Python's order, left to right
            for t in terms[k][terms[k] > 0].tolist():
                hard += t
        cost += out4 + hard + (8 + 0.15 * lines if lines > 0 else 0.0)
        lead = 0.0
        if far[k]:
            lead += 20 * (cr + int(crossed[k]))
            lead += LEADER_THROUGH * (st + int(struck[k]))
            lead += LEADER_THROUGH_WALL * wa
        lead += LEADER_THROUGH * (th + int(through[k]))
        cost += lead
        if far[k]:
            cost += 0.02 * math.dist(geo[k][1], geo[k][2])
    return cost


def _column_items(group, side, below, gap, drop):
    """One candidate column for group, (index, anchor, text) each: labels right-aligned
    left of the cluster (side -1) or left-aligned right of it (side 1), rows from `drop`
    points below (or above) the cluster outwards. Seen from the column's near corner, the
    point at the steepest angle gets the nearest row, and so on outwards: each leader then
    runs outside the ones before it and none cross (by x alone, two points at one x and
    different heights would get crossed leaders)."""
    xs = [a[0] for _, a, _ in group]
    ys = [a[1] for _, a, _ in group]
    edge = min(xs) - gap if side < 0 else max(xs) + gap
    y = min(ys) - drop if below else max(ys) + drop
    up = 1 if below else -1

    def steepness(g):
        return math.atan2(up * (g[1][1] - y), -side * (g[1][0] - edge))

    items = []
    for i, anchor, text in sorted(group, key=steepness, reverse=True):
        h = LINE_PT * (text.count("\n") + 1)
        mid = y - h / 2 if below else y + h / 2
        items.append((i, anchor, (edge - anchor[0], mid - anchor[1]),
                      "right" if side < 0 else "left", "center", text))
        y += -(h + ROW_GAP) if below else h + ROW_GAP
    return items


def _cluster(points, pt, boxes_at) -> list[int]:
    """The labelled points of the crowded cluster: those whose label had to go away from
    them (with a leader), and the labelled points among them, so that the whole cluster
    reads as one ordered list rather than a list with a few labels beside it."""
    far = [i for i in boxes_at if _far(points[i].label_offset)]
    if len(far) < 2:
        return []
    at = [pt(points[i].ai, points[i].flop_per_s) for i in far]
    lo = (min(a[0] for a in at) - 12, min(a[1] for a in at) - 12)
    hi = (max(a[0] for a in at) + 12, max(a[1] for a in at) + 12)
    inside = lambda a: lo[0] <= a[0] <= hi[0] and lo[1] <= a[1] <= hi[1]  # noqa: E731
    return [i for i in boxes_at if inside(pt(points[i].ai, points[i].flop_per_s))]


def _ordered_column(points, pt, placed, soft, boxes_at, walls=()) -> list:
    """Restack a crowded cluster's labels as one ordered column, where that costs less
    than the labels placed one at a time."""
    members = _cluster(points, pt, boxes_at)
    if not members:
        return points
    mine = {boxes_at[i] for i in members}
    fixed = [b for j, b in enumerate(placed) if j not in mine]
    group = [(i, pt(points[i].ai, points[i].flop_per_s), points[i].text) for i in members]
    now = [(i, a, points[i].label_offset, points[i].label_ha, points[i].label_va, t)
           for i, a, t in group]
    scene = _Scene.of(fixed, soft, walls)
    best = (_arrangement_cost(now, fixed, soft, walls, scene=scene), now)
    for side in (-1, 1):
        for below in (True, False):
            for gap in (8.0, 16.0, 30.0, 50.0):
                for drop in (10.0, 16.0, 24.0, 36.0, 50.0, 70.0):
                    items = _column_items(group, side, below, gap, drop)
                    cost = _arrangement_cost(items, fixed, soft, walls, scene=scene)
                    if cost < best[0] - 1e-9:
                        best = (cost, items)
    if best[1] is now:
        return points
    out = list(points)
    for i, _, o, ha, va, _ in best[1]:
        out[i] = replace(out[i], label_offset=o, label_ha=ha, label_va=va)
    for i, a, o, ha, va, t in best[1]:   # the column's boxes replace the ones placed singly
        placed[boxes_at[i]] = _box(a, o, ha, va, t)
    return out


def point_texts(points: list[DrawnPoint], trajectory: bool) -> list[DrawnPoint]:
    """The label each point shows: full (name, AI, FLOP/s, % of roof) for a few points, one
    line each when many; a trajectory's steps as "step i" (or their meta step_label, e.g.
    "b=8") with the name on the first and the figures on the first and last; extra memory
    levels by their level, few points only."""
    primary = {i for i, p in enumerate(points) if p.label != p.level or p.kernel == p.level}
    compact = len(points) > FULL_LABELS
    steps: dict[str, list[int]] = {}
    for i in sorted(primary):
        steps.setdefault(points[i].kernel, []).append(i)
    out = []
    for i, p in enumerate(points):
        if i not in primary:
            out.append(replace(p, text="" if compact else p.label))
            continue
        name = p.label.split("\n", 1)[0]
        idx = steps[p.kernel]
        if trajectory and len(idx) > 1:
            n = idx.index(i) + 1
            step = p.step or f"step {n}"      # "b=8" for a batch sweep
            name = f"{name} · {step}" if n == 1 else step
            if compact or 1 < n < len(idx):
                out.append(replace(p, text=name))
                continue
        if compact:
            pct = f" · {fmt_pct(p.percent_of_roof)}" if p.percent_of_roof is not None else ""
            text = f"{name}{pct}" if p.measured else f"{name} (predicted)"
        else:
            text = "\n".join([name, *p.label.split("\n")[1:]])
        out.append(replace(p, text=text))
    return out


