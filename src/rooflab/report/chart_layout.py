"""Where a roofline chart's labels go: a deterministic layout in a model of the figure.

chart.py works out what to draw; this module places the ceiling, slope, ridge and point
labels so that none overlap, as plain data the tests can check (no matplotlib here).
Its parts, each a module: chart_layout_cost (the model of the figure and what a spot
costs), chart_layout_roofs (ceiling, slope and ridge labels), chart_layout_points (the
kernels' labels), chart_layout_pairs (two labels in conflict placed again together),
chart_layout_groups (labels still in conflict, placed again with their neighbours),
chart_layout_texts (what the kernels' labels say; the names shortened by label_names);
import their names from them. chart_layout_size keeps a drawn chart at
the size the layout assumes (and scales it to the size asked).
"""

from __future__ import annotations

import math
from dataclasses import replace

from .chart_layout_cost import AXES_PT, LINE_PT, _line_boxes, _marker_box, _to_pt
from .chart_layout_points import _marker_obstacles, _merge_coincident, _point_labels
from .chart_layout_roofs import _ceiling_labels, _place_slope_label, _ridge_labels, cap_box

# Slopes of one roof closer than this (points, up the axes) print as one thick line (the
# bench chart's L1 8.99, DRAM 8.82 and L3 8.4 GB/s: 2 pt apart): one label names them all,
# as equal ceilings share one (review s22 h2 F3: "L1* 8.99 GB/s" and "L3* 8.4 GB/s" were
# written over each other, each struck by the other lines: no spot along one is clear).
SAME_SLOPE_PT = 3.0
# label_va of a slope named in another's label: chart_draw writes no label on it
NO_LABEL = "none"


def shared_slopes(lines, ylim) -> dict[int, list[int]]:
    """{index of a memory line: the indices its label names, fastest first} for slopes of
    one roof within SAME_SLOPE_PT of each other (chained); the others of a group map to
    []. Slopes on log-log axes are parallel: their distance is their bandwidths' ratio."""
    per_decade = AXES_PT[1] / math.log10(ylim[1] / ylim[0])
    bw = {i: ln.ys[0] / ln.xs[0] for i, ln in enumerate(lines)
          if ln.kind == "memory" and ln.xs[0] > 0 and ln.ys[0] > 0}
    out: dict[int, list[int]] = {}
    for roof in dict.fromkeys(lines[i].roof for i in bw):
        order = sorted((i for i in bw if lines[i].roof == roof), key=lambda i: -bw[i])
        groups = [[order[0]]] if order else []
        for i in order[1:]:
            if math.log10(bw[groups[-1][-1]] / bw[i]) * per_decade <= SAME_SLOPE_PT:
                groups[-1].append(i)
            else:
                groups.append([i])
        for g in groups:
            if len(g) > 1:
                out.update({i: [] for i in g[1:]})
                out[g[0]] = g
    return out


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
    shared = shared_slopes(out_lines, ylim)
    for i, ln in enumerate(out_lines):
        if ln.kind != "memory":
            continue
        if i in shared and not shared[i]:   # named in the label of a slope it prints on
            out_lines[i] = replace(ln, text="", label_xy=None, label_va=NO_LABEL)
            continue
        text = ", ".join(out_lines[j].label for j in shared.get(i, [i]))
        done = _place_slope_label(replace(ln, label=text), lines, roof_labels, pt, xlim,
                                  ylim, placed, soft)
        out_lines[i] = replace(done, label=ln.label, text=text)
    return (out_lines, _ridge_labels(ridges, roof_labels, pt, placed, soft),
            _point_labels(_merge_coincident(points, pt), pt, placed, soft, walls))
