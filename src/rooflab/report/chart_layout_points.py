"""Where the kernels' labels go: around their point, in columns beside it with a leader,
a crowded cluster's as one ordered column, two in conflict placed again together.

Part of the chart's label layout (chart_layout); no matplotlib here.
"""

from __future__ import annotations

import functools
import math
from dataclasses import replace

import numpy as np

from .boxes import (
    as_array,
    as_points,
    crossings_matrix,
    hits_matrix,
    level_with_nearer,
    overlap_area,
    overlap_matrix,
)
from .chart_layout_cost import (
    LEADER_THROUGH,
    LEADER_THROUGH_WALL,
    LINE_PT,
    _arrangement_cost,
    _box,
    _crosses,
    _geometry,
    _hits,
    _marker_box,
    _place,
    _Scene,
    has_leader,
)

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
                out[i] = p = replace(p, text=_merged_text(p.text, q.text))
                out[j] = replace(q, text="")
    return out


def _merged_text(first: str, other: str) -> str:
    """Two coincident steps' labels as one: "output6, output7" (then output7's figures);
    a step without figures joined to the name line of one with them ("sigma_gpp_gpu
    (steps) · output, output4", then output's figures: appended under the figures,
    "output4" read as an orphan line, review s18 r5 F7); else one name per line."""
    head, _, rest = first.partition("\n")
    other_head, _, other_rest = other.partition("\n")
    if not rest and len(first + other_head) <= 40:
        return f"{first}, {other}"
    if rest and not other_rest:
        joined = f"{head}, {other}" if len(head + other) <= 46 else f"{head}\n{other}"
        return f"{joined}\n{rest}"
    return f"{first}\n{other}"


def _point_labels(points, pt, placed, soft, walls=()) -> list:
    """Point labels one at a time (leaders kept off the ceilings' labels, `walls`); then a
    crowded cluster's labels restacked as one ordered column, two labels left in conflict
    placed again together, and any still in conflict placed again with their neighbours
    (chart_layout_groups), each where that costs less."""
    out, leaders, boxes_at = list(points), [], {}
    cands = _candidates()
    spots = [pt(q.ai, q.flop_per_s) for q in points]
    xy = np.array(spots, dtype=float).reshape(-1, 2)
    for i, p in enumerate(points):
        if not p.text:
            continue
        boxes_at[i] = len(placed)   # where _place appends this label's box
        d = np.hypot(xy[:, 0] - xy[i, 0], xy[:, 1] - xy[i, 1])
        near = [spots[j] for j in np.nonzero((d >= COINCIDENT_PT) & (d <= NEAR_PT))[0]]
        offset, ha, va = _place(spots[i], p.text, _own_side(cands, spots[i], near, p.text),
                                placed, soft, leaders, walls)
        out[i] = replace(p, label_offset=offset, label_ha=ha, label_va=va)
    # The column first: where it is taken, it leaves no conflicts for the pair repair.
    out = _ordered_column(out, pt, placed, soft, boxes_at, walls)
    # (imported here: chart_layout_pairs and chart_layout_groups build on this module's
    # helpers)
    from .chart_layout_groups import repair_groups
    from .chart_layout_pairs import repair_pairs
    out, placed[:] = repair_pairs(out, pt, placed, soft, boxes_at, walls)
    out, placed[:] = repair_groups(out, pt, placed, soft, boxes_at, walls)
    return _drop_overprinted(out, pt, walls)


# A label beside its point (no leader), level with another kernel's marker and nearer it
# than its own, reads as that kernel's (review s18 r5 F3: tinyllama's launch-bound
# v_proj, 210 GFLOP/s, was labelled level with the 320 GFLOP/s marker of q/o/gate_proj,
# 11 pt above it); such a spot costs more than the first ring of spots on a leader
# (12-13), so a leader says whose label it is.
NEARER_OTHER = 30.0
# Markers further than this (points) from a point cannot be nearer its label's near spots.
NEAR_PT = 60.0


def _own_side(cands, here, near, text) -> tuple:
    """cands with NEARER_OTHER added to each spot without a leader whose box is level
    with one of the other points' markers `near` (none on the point's own spot, `here`)
    and nearer it than its own: text is read along its line, towards the marker beside
    it. (A label under another marker, as gemm_fp32_2048's between its roofs on the zoo
    chart, is left alone: the layout tests hold it there.)"""
    if not near:
        return cands
    out = []
    for offset, ha, va, pen in cands:
        if not has_leader(offset):
            box = _box(here, offset, ha, va, text)
            if level_with_nearer(box, here, near):
                pen += NEARER_OTHER
        out.append((offset, ha, va, pen))
    return tuple(out)


def _drop_overprinted(points, pt, walls=()) -> list:
    """Text over text is never drawn: where two labels' boxes still overlap after the
    placement and the repairs, the label of the kernel with the smaller share of the time
    goes (its point stays; the chart's footnote counts it among those without a label).
    Review 19c N6: along a crowded x axis, `k160_elementwise · fp32 · 0.48% of roof`
    printed over `k24_elementwise · fp64 · 21% of roof`. The cost (_cost) only made it
    dear, and with no free spot left the cheapest spot was one on another label.
    walls: the ceilings' labels, placed first, kept over any point's (review s22 r6 F6:
    `gemm_fp32_1024 · 7% of roof` printed on `fp64 vector 3.73 GFLOP/s`)."""
    order = sorted((i for i, p in enumerate(points) if p.text),
                   key=lambda i: (-(points[i].share or 0.0), i))
    out, kept = list(points), list(walls)
    for i in order:
        box = _box(*_item(pt, i, points[i])[1:])
        if any(overlap_area(box, k) > 0 for k in kept):
            out[i] = replace(points[i], text="")
        else:
            kept.append(box)
    return out


def _item(pt, i, p):
    return (i, pt(p.ai, p.flop_per_s), p.label_offset, p.label_ha, p.label_va, p.text)


def _move_label(it, pt, out, placed, items, boxes, boxes_at) -> None:
    """Put label `it` (an item at a chosen spot) in place: its point's offset and alignment,
    its placed box, and the item and box the repairs score it by (one home for the pair and
    group repairs)."""
    k, _, o, ha, va, _ = it
    out[k] = replace(out[k], label_offset=o, label_ha=ha, label_va=va)
    placed[boxes_at[k]] = _box(*it[1:])
    items[k] = _item(pt, k, out[k])
    boxes[k] = _box(*items[k][1:])


def _leader_of(item):
    _, anchor, offset, *_ = item
    return (anchor, (anchor[0] + offset[0], anchor[1] + offset[1])) if has_leader(offset) else None


def _in_conflict(a, b, box_a=None, box_b=None) -> bool:
    """Whether a's leader strikes through b's label or crosses b's leader (or b's a's)."""
    la, lb = _leader_of(a), _leader_of(b)
    box_a, box_b = box_a or _box(*a[1:]), box_b or _box(*b[1:])
    return bool((la and _hits(*la, box_b)) or (lb and _hits(*lb, box_a))
                or (la and lb and _crosses(*la, *lb)))


# Pair repair: how many of each label's cheapest spots are tried together.
PAIR_TRIES = 30


def _pair_costs(ti, tj, fixed, soft, walls, leaders, scene, pre=None) -> list[list[float]]:
    """_arrangement_cost([ci, cj], ...) + both penalties for every ci of ti and cj of tj
    ((penalty, item, parts) each, from _cheapest), as rows per ci: the same sums in the
    same order, ci's (alone) and then cj's beside ci, with cj's terms for ci's box and
    leader taken as arrays for all pairs at once. pre: each ci's cost alone, where the
    caller has it (_Scene.alone's, the same float as _arrangement_cost([ci]))."""
    if pre is None:
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


def _penalty(p) -> float:
    """The penalty of the spot point p's label sits at (how far it strays)."""
    return next((pen for o, ha, va, pen in _candidates()
                 if (o, ha, va) == (p.label_offset, p.label_ha, p.label_va)), 0.0)


def _cheapest(pt, p, i, fixed, soft, walls, leaders, scene=None):
    """(penalty, item) for point p's PAIR_TRIES cheapest label spots, alone among the
    fixed boxes and leaders: the definition, one point at a time. The layout uses
    chart_layout_pairs._Pairs, which scores every point at once; tests hold it to this
    (test_layout_speed_pairs). (Used by tests as an oracle.)"""
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
    far = [i for i in boxes_at if has_leader(points[i].label_offset)]
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
