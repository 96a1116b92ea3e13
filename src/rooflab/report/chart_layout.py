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

from .chart_layout_cost import LINE_PT, _line_boxes, _marker_box, _to_pt
from .chart_layout_points import _marker_obstacles, _merge_coincident, _point_labels
from .chart_layout_roofs import _ceiling_labels, _place_slope_label, _ridge_labels, cap_box


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
