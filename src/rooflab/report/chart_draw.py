"""Drawing a RooflineDisplay with matplotlib: the only part of the charts that imports it.

chart.py works out what to draw as plain data; this module turns that data into artists.
"""

from __future__ import annotations

import math
import textwrap

from ..units import fmt_ai, si
from .chart_layout import AXES_PT, _to_pt
from .chart_layout_size import figure_renderer
from .chart_parts import (
    CAP_LEGEND,
    CAP_TICK_PT,
    COMPUTE_BOUND_COLOR,
    JOIN_COLOR,
    JOIN_LEGEND,
    LEVEL_MARKERS,
    MEMORY_BOUND_COLOR,
    POINT_SIZE,
    ROOF_COLORS,
    ROOF_MARKERS,
    SIDE_GLYPHS,
    SIZE_LEGEND,
    SIZE_MAX,
    SWEEP_COLOR,
    LaunchCap,
    Line,
    RooflineDisplay,
    relative_luminance,
    roof_label,
    share_size,
    side_color,
)

# dashdotdot: the real-traffic DRAM ceiling (chart.REAL_TRAFFIC_STYLE), unlike any other
_LINESTYLES = {"solid": "-", "dashed": "--", "dotted": ":",
               "dashdotdot": (0, (6, 2, 1.5, 2, 1.5, 2))}
# Ceiling, ridge and point labels sit on a light backing: where no spot is free of lines
# (two roofs with close peaks, a slope through a crowded corner), the line passing behind
# a label is faded there instead of striking the text through. A ceiling label is 1 pt
# off its own line, so its backing has no padding (it must not cut into that line); a
# slope label sits on its own line and has none.
LABEL_BOX = {"boxstyle": "square,pad=0.15", "facecolor": "white", "edgecolor": "none",
             "alpha": 0.65}
CEILING_BOX = {**LABEL_BOX, "boxstyle": "square,pad=0"}


def _side(p) -> str:
    """A point's side; one built by hand with only a colour gets the side of its colour."""
    return p.side or {MEMORY_BOUND_COLOR: "memory", COMPUTE_BOUND_COLOR: "compute"}.get(
        p.color, "")


def _glyph_marker(name: str):
    """The matplotlib marker of a side glyph: a short rising slope, or a flat bar."""
    from matplotlib.path import Path

    if name == "slope":
        return Path([(-1.0, -1.0), (1.0, 1.0)], [Path.MOVETO, Path.LINETO])
    return Path([(-1.0, 0.0), (1.0, 0.0)], [Path.MOVETO, Path.LINETO])


def leader_start(ha: str, va: str) -> tuple[float, float]:
    """Where on its label a leader line starts, as a fraction of the label's box: the
    aligned edge (the layout's anchor + offset), which faces the point. matplotlib's
    default, the box's centre, sends a steep leader out through the label's bottom or top
    edge and across the labels stacked under it, which the layout did not plan for."""
    return ({"left": 0.0, "right": 1.0}.get(ha, 0.5),
            {"bottom": 0.0, "top": 1.0}.get(va, 0.5))


def glyph_color(fill: str, measured: bool) -> str:
    """The glyph's colour: the side's colour inside a hollow (predicted) marker, else black
    on a light fill and white on a dark one, so it shows in grey."""
    if not measured:
        return fill
    return "black" if relative_luminance(fill) > 0.18 else "white"


# The side glyph inside a marker, as a fraction of the marker's diameter (4.5 pt in 8 pt).
GLYPH_FRACTION = 4.5 / POINT_SIZE


def _size_z(size: float) -> float:
    """A small marker above a large one (a 0.1 % kernel is not hidden under the 90 % one),
    within 0.2 of the point's layer (its glyph is 0.01 above its own marker)."""
    return (SIZE_MAX - min(size, SIZE_MAX)) / 100


def _draw_point(ax, marker, color: str, measured: bool, side: str, zorder: float,
                size: float = POINT_SIZE) -> None:
    zorder += _size_z(size)
    ax.plot([marker[0]], [marker[1]], ls="none", marker=marker[2], ms=size, mec=color if
            not measured else "0.15", mfc=color if measured else "none",
            mew=1.5 if not measured else 0.8, zorder=zorder)
    if side in SIDE_GLYPHS:
        # A collection, not a line: ax.lines keeps one Line2D per point.
        ax.scatter([marker[0]], [marker[1]], marker=_glyph_marker(SIDE_GLYPHS[side]),
                   s=(GLYPH_FRACTION * size) ** 2, linewidths=1.6 if size >= 6 else 1.0,
                   facecolors="none", edgecolors=glyph_color(color, measured),
                   zorder=zorder + 0.01, gid=f"side-glyph:{side}")


# A crowded chart's unlabelled markers are drawn in sizes this many points apart (the
# display keeps each exact size): one marker artist per size, stamped, not one path each.
SIZE_STEP = 0.5
# Above this many points, the unlabelled ones are drawn as one artist per look (marker,
# colour, side) instead of one each: 5 000 points as 10 000 artists took 10 s to draw.
BATCH_POINTS = 200


def _draw_points_batched(ax, points) -> None:
    """The unlabelled points, grouped by how they look, their size to the nearest
    SIZE_STEP pt (one artist per look and size: a marker stamped once, as before sizes),
    the largest first so the small ones stay on top; the labelled ones are drawn one by
    one on top, as on a small chart."""
    groups: dict[tuple, list] = {}
    for p in sorted((p for p in points if not p.text), key=lambda p: -p.size):
        size = round(p.size / SIZE_STEP) * SIZE_STEP
        key = (p.marker, p.color, p.measured, _side(p), 5.5 if p.label != p.level else 5,
               size)
        groups.setdefault(key, []).append((p.ai, p.flop_per_s))
    for (marker, color, measured, side, zorder, size), xy in groups.items():
        xs, ys = [x for x, _ in xy], [y for _, y in xy]
        zorder += _size_z(size)
        ax.plot(xs, ys, ls="none", marker=marker, ms=size,
                mec=color if not measured else "0.15", mfc=color if measured else "none",
                mew=1.5 if not measured else 0.8, zorder=zorder, gid="kernel-points")
        if side in SIDE_GLYPHS:
            ax.scatter(xs, ys, marker=_glyph_marker(SIDE_GLYPHS[side]),
                       s=(GLYPH_FRACTION * size) ** 2, linewidths=1.6 if size >= 6 else 1.0,
                       facecolors="none", edgecolors=glyph_color(color, measured),
                       zorder=zorder + 0.01, gid=f"side-glyph:{side}")


def _draw_joins(ax, d: RooflineDisplay) -> None:
    """The thin grey lines through each kernel's per-level points, one collection for all
    (thousands of kernels), under the markers and over the roofs."""
    if not d.joins:
        return
    from matplotlib.collections import LineCollection

    ax.add_collection(LineCollection(
        [list(zip(j.xs, j.ys, strict=True)) for j in d.joins], colors=JOIN_COLOR,
        linewidths=0.8, zorder=4, gid="level-joins"), autolim=False)


def _lid_marker():
    """The legend's launch cap: a dash with a tick down at each end, as drawn."""
    from matplotlib.path import Path

    return Path([(-1.0, -0.6), (-1.0, 0.0), (1.0, 0.0), (1.0, -0.6)],
                [Path.MOVETO, Path.LINETO, Path.LINETO, Path.LINETO])


def _draw_cap(ax, cap: LaunchCap, ylim: tuple[float, float]) -> None:
    """A launch cap: a thin dash at its height over its point, in the point's colour, each
    end ticked CAP_TICK_PT down (on the layout's model axes, as chart_layout.cap_box)."""
    drop = 10 ** (-CAP_TICK_PT / AXES_PT[1] * math.log10(ylim[1] / ylim[0]))
    (x0, x1), y = cap.xs, cap.flop_per_s
    ax.plot([x0, x0, x1, x1], [y * drop, y, y, y * drop], "-", color=cap.color or "0.3",
            lw=1.1, solid_joinstyle="miter", zorder=4.5, gid=f"launch-cap:{cap.kernel}")


# A point above its roof (chart.above_roof) gets a ring in Okabe-Ito vermillion, the red
# of the palette, this many points wider than its marker, and a legend entry: 1202 % of
# roof printed as a plain label read as a result, not as a roof or a count gone wrong.
ABOVE_COLOR = "#D55E00"
ABOVE_RING_PT = 6.0
# The ring is vermillion edged in black: drawn over a black ring ABOVE_EDGE_PT wider, so
# a thin black line runs either side of it. Vermillion alone barely showed against an
# orange (compute-side, Okabe-Ito #E69F00) point; black reads against orange, blue and
# white alike, and the vermillion keeps it the palette's warning colour.
ABOVE_EDGE_COLOR = "black"
ABOVE_RING_MEW, ABOVE_EDGE_PT = 1.4, 1.4


def above_ring_styles(size: float) -> list[dict]:
    """The marker keywords of the two rings round a point of marker size `size` drawn
    above its roof, in drawing order: the black edge, then the vermillion over it."""
    ring = {"ls": "none", "marker": "o", "ms": size + ABOVE_RING_PT, "mfc": "none"}
    return [{**ring, "mec": ABOVE_EDGE_COLOR, "mew": ABOVE_RING_MEW + ABOVE_EDGE_PT},
            {**ring, "mec": ABOVE_COLOR, "mew": ABOVE_RING_MEW}]


def _draw_above_rings(ax, d: RooflineDisplay) -> None:
    from .chart import above_roof

    for p in d.points:
        if above_roof(p):
            edge, ring = above_ring_styles(p.size)
            ax.plot([p.ai], [p.flop_per_s], **edge, zorder=5.85,
                    gid=f"above-roof-edge:{p.kernel}")
            ax.plot([p.ai], [p.flop_per_s], **ring, zorder=5.9, gid=f"above-roof:{p.kernel}")


def _minor_formatter(words):
    """matplotlib's minor log-tick labels (the same ticks labelled), each as words(value)."""
    from matplotlib.ticker import LogFormatterSciNotation

    class Minor(LogFormatterSciNotation):
        def __call__(self, x, pos=None):
            return words(x) if super().__call__(x, pos) else ""

    return Minor(labelOnlyBase=False)


def draw(d: RooflineDisplay, ax):
    """Draw a RooflineDisplay's data on `ax` (a new Figure when None); returns (fig, ax)."""
    from matplotlib.lines import Line2D
    from matplotlib.ticker import FuncFormatter

    own_figure = ax is None   # a figure of our own may be widened for an outside legend
    if ax is None:
        # A bare Figure (no pyplot): no global state, no GUI backend; savefig renders with Agg.
        from matplotlib.figure import Figure

        fig = Figure(figsize=(9.0, 6.0), layout="constrained")
        ax = fig.add_subplot()
    else:
        fig = ax.figure
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(*d.xlim)
    ax.set_ylim(*d.ylim)
    # A crowded chart labels only its longest kernels (chart.LABELS_SHOWN): said under
    # the axis, so a reader does not take an unlabelled point for a stray one.
    shown = len({p.kernel for p in d.points if p.text})
    from .chart import caveats, memory_ops

    # ops without FLOP have no point: named here with their bytes/s (chart.memory_ops)
    ops = memory_ops(d)
    # a roof its probe calls unreliable says so on the image, not on stderr only (18c F5)
    care = caveats(d)
    ax.set_xlabel("arithmetic intensity (FLOP/byte)" + (
        f"\nlabelled: the {shown} longest kernels; {d.unlabelled} more drawn without a "
        f"label" if d.unlabelled else "") + (f"\n{_short_dropped(d.dropped)}"
                                             if d.dropped else "")
        + (f"\n{textwrap.fill(ops, 95, break_long_words=False)}" if ops else "")
        + (f"\n{textwrap.fill(care, 95, break_long_words=False)}" if care else ""))
    ax.set_ylabel("performance (FLOP/s)")
    # Several roofs make a long title ("A vs B vs C"); at 10 pt about 100 characters fit
    # the 9-inch figure, so longer ones wrap instead of running off its edge.
    title = textwrap.fill(d.title, 95, break_long_words=False) if len(d.title) > 95 else d.title
    ax.set_title(title, fontsize=10 if len(d.title) > 70 else None)
    # The tick labels ("100 GFLOP/s") set the left margin: format them before the layout
    # settles, or the axes narrow afterwards and every slope label is drawn ~2 degrees off
    # its line, into it.
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: si(v, "FLOP/s")))
    # A chart zoomed to its points (chart._zoomed) can span under two decades, where
    # matplotlib labels some minor ticks too, as "4 x 10^11": in the majors' words instead.
    ax.yaxis.set_minor_formatter(_minor_formatter(lambda v: si(v, "FLOP/s")))
    ax.xaxis.set_minor_formatter(_minor_formatter(lambda v: f"{v:g}"))
    engine = fig.get_layout_engine()
    if engine is not None:  # settle the axes box first: slope labels need its aspect
        import warnings

        with warnings.catch_warnings():   # as chart.figure_bytes: matplotlib copes
            warnings.filterwarnings("ignore", message="constrained_layout not applied")
            engine.execute(fig)
    # Label positions come laid out from chart.layout_labels (no two overlap); a ceiling
    # equal to another of its roof has no text of its own (the other names both).
    for line in d.lines:
        _draw_line(ax, line, d)
    for r in d.ridges:
        ax.plot([r.ai], [r.flop_per_s], marker="D", ms=5, color=_roof_color(d, r.roof), zorder=4)
        ax.annotate(f"AI*={fmt_ai(r.ai)}", (r.ai, r.flop_per_s), textcoords="offset points",
                    xytext=r.label_offset, ha=r.label_ha, va=r.label_va,
                    fontsize=7, color=_roof_color(d, r.roof), bbox=LABEL_BOX, zorder=4)
    if d.ridges:
        ax.axvline(d.ridges[0].ai, color="0.75", lw=1, ls=":", zorder=1)
    for a in d.arrows:
        style = "-|>" if a.kind == "arrow" else "->"
        # Clear of the markers (radius 4 pt) when there is room; a short arrow (two points
        # close together) keeps its length and is drawn over them instead of vanishing.
        (x0, y0), (x1, y1) = (_to_pt(*a.start, d.xlim, d.ylim), _to_pt(*a.end, d.xlim, d.ylim))
        shrink = min(5.0, math.hypot(x1 - x0, y1 - y0) / 4)
        ax.annotate("", xy=a.end, xytext=a.start, zorder=3 if shrink >= 5.0 else 6,
                    arrowprops={"arrowstyle": style, "color": "0.35", "lw": 1.2,
                                "shrinkA": shrink, "shrinkB": shrink,
                                "ls": "-" if a.kind == "arrow" else "--"})
    for cap in d.caps:   # under the points (zorder 5), over the roof lines
        _draw_cap(ax, cap, d.ylim)
    _draw_above_rings(ax, d)
    _draw_joins(ax, d)
    many = len(d.points) > BATCH_POINTS
    if many:
        _draw_points_batched(ax, d.points)
    for p in d.points:
        if many and not p.text:
            continue
        # The labelled point (the kernel's primary level, DRAM) on top: at AI 0.125 DRAM and
        # 0.124 L2 the L2 square hid the DRAM circle, and with it the memory-bound colour.
        # Its side of the ridge is its colour and the glyph inside (slope / flat bar).
        _draw_point(ax, (p.ai, p.flop_per_s, p.marker), p.color, p.measured, _side(p),
                    5.5 if p.label != p.level else 5, p.size)
        if not p.text:
            continue
        # Placed clear of the other labels; one moved away from its point gets a leader.
        far = max(abs(p.label_offset[0]), abs(p.label_offset[1])) > 12
        ax.annotate(p.text, (p.ai, p.flop_per_s), textcoords="offset points",
                    xytext=p.label_offset, ha=p.label_ha, va=p.label_va, fontsize=7,
                    color="0.15", zorder=6, bbox=LABEL_BOX,
                    arrowprops={"arrowstyle": "-", "color": "0.6", "lw": 0.6,
                                "shrinkA": 0, "shrinkB": 4,
                                "relpos": leader_start(p.label_ha, p.label_va)}
                    if far else None)
    ax.grid(True, which="both", alpha=0.2)
    from matplotlib.legend_handler import HandlerTuple

    handles = _legend(d, Line2D)
    place_legend(ax, d, {"handles": [h for h, _ in handles],
                         "labels": [t for _, t in handles], "fontsize": 7,
                         "handler_map": {tuple: HandlerTuple(ndivide=1)}},
                 own_figure=own_figure)
    return fig, ax


# Where the legend may go, in this order: the lower right first (on a roofline usually
# the emptiest corner: under the flat roofs, right of the slopes), then the other corners
# and edges. matplotlib's loc="best" weighs only the data (lines, markers), not the texts:
# it covered ceiling labels and kernel labels at the lower right.
LEGEND_PLACES = ("lower right", "upper left", "lower left", "center right", "lower center",
                 "center left", "upper right", "upper center")
# Outside the axes, when no place inside is free: right of them, the figure widened by
# the legend's width so the axes keep the size the label layout assumed (chart_layout).
LEGEND_GAP_PT = 6.0


def place_legend(ax, d: RooflineDisplay, kw: dict, own_figure: bool = True):
    """The legend at the first of LEGEND_PLACES where it covers no text (ceiling, slope,
    ridge and kernel labels) and no marker (kernels, ridges, sweep points), measured with
    the renderer; else outside the axes, at their upper right (the figure widened by its
    width when draw() made the figure). Returns the Legend."""
    renderer = figure_renderer(ax.figure)
    blocked = _legend_obstacles(ax, d, renderer)
    for loc in LEGEND_PLACES:
        legend = ax.legend(loc=loc, **kw)
        if not _covers(legend.get_window_extent(renderer), blocked):
            return legend
    legend = ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), borderaxespad=0.0,
                       **kw)
    legend.set_bbox_to_anchor((1.0 + LEGEND_GAP_PT / 72 / _axes_width_in(ax), 1.0),
                              transform=ax.transAxes)
    if own_figure:
        w, h = ax.figure.get_size_inches()
        grow = legend.get_window_extent(renderer).width / ax.figure.dpi + LEGEND_GAP_PT / 72
        ax.figure.set_size_inches(w + grow, h)
    return legend


def _axes_width_in(ax) -> float:
    return ax.get_position().width * ax.figure.get_size_inches()[0]


def _legend_obstacles(ax, d: RooflineDisplay, renderer) -> list[tuple[float, ...]]:
    """(x0, y0, x1, y1) boxes in display pixels the legend must not cover: every text on
    the axes as drawn and every marker, its drawn diameter across."""
    px = ax.figure.dpi / 72
    boxes = [box for t in ax.texts if t.get_visible() and t.get_text().strip()
             for box in _text_boxes(t, renderer, px)]
    marks = [(p.ai, p.flop_per_s, p.size / 2) for p in d.points]
    marks += [(r.ai, r.flop_per_s, 2.5) for r in d.ridges]
    marks += [(x, y, 1.75) for ln in d.lines if ln.kind == "sweep"
              for x, y in zip(ln.xs, ln.ys, strict=True)]
    for x, y, r in marks:
        cx, cy = ax.transData.transform((x, y))
        boxes.append((cx - r * px, cy - r * px, cx + r * px, cy + r * px))
    return boxes


# A slope label's upright box is mostly empty (its text runs along the box's diagonal):
# it is covered by this many boxes along that diagonal instead, each padded by half a line.
SLOPE_PIECES = 8


def _text_boxes(text, renderer, px: float) -> list[tuple[float, ...]]:
    """The boxes a drawn text covers: its box; a rotated one's, pieces along its diagonal
    (rising for an angle under 90 degrees, else falling), so a corner the slope label
    does not reach stays free for the legend."""
    b = text.get_window_extent(renderer)
    angle = text.get_rotation() % 180
    if angle < 1 or abs(angle - 90) < 1:
        return [tuple(b.extents)]
    pad = text.get_fontsize() * px * 0.6
    out = []
    for k in range(SLOPE_PIECES):
        xa, xb = (b.x0 + b.width * i / SLOPE_PIECES for i in (k, k + 1))
        ya, yb = (b.y0 + b.height * i / SLOPE_PIECES for i in (k, k + 1))
        if angle > 90:
            ya, yb = b.y1 - (yb - b.y0), b.y1 - (ya - b.y0)
        out.append((xa - pad, ya - pad, xb + pad, yb + pad))
    return out


def _covers(box, blocked) -> bool:
    """Whether a legend's box overlaps any of the blocked boxes."""
    x0, y0, x1, y1 = box.extents
    return any(a < x1 and c > x0 and b < y1 and e > y0 for a, b, c, e in blocked)


def _short_dropped(note: str) -> str:
    """The min_share note under the axis, without its how-to (the terminal gives that)."""
    return note.split(";")[0] + (")" if "(" in note.split(";")[0] else "")


def _roof_index(d: RooflineDisplay, label: str) -> int:
    return d.roof_labels.index(label) if label in d.roof_labels else 0


def _roof_color(d: RooflineDisplay, label: str) -> str:
    return ROOF_COLORS[_roof_index(d, label) % len(ROOF_COLORS)]


def roof_marker(d: RooflineDisplay, label: str) -> str:
    """The beads along a roof's lines: none on the first, one kind per roof after it."""
    return ROOF_MARKERS[_roof_index(d, label) % len(ROOF_MARKERS)]


def _beads(ax, line: Line, d: RooflineDisplay, marker: str) -> None:
    """Markers spaced evenly (on the log axes) along a roof line, about one per 8 % of the
    axes, none at the ends (where lines meet and labels sit)."""
    (x0, x1), (y0, y1) = d.xlim, d.ylim
    lx = [math.log10(v) for v in line.xs]
    ly = [math.log10(v) for v in line.ys]
    length = math.hypot((lx[-1] - lx[0]) / math.log10(x1 / x0),
                        (ly[-1] - ly[0]) / math.log10(y1 / y0))
    n = max(1, int(length / 0.08))
    ts = [(k + 0.5) / n for k in range(n)]
    xs = [10 ** (lx[0] + t * (lx[-1] - lx[0])) for t in ts]
    ys = [10 ** (ly[0] + t * (ly[-1] - ly[0])) for t in ts]
    ax.plot(xs, ys, ls="none", marker=marker, ms=4.5, mew=1.0, mec=line.color, mfc="white",
            zorder=2.1, gid=f"roof-beads:{line.roof}")


def _draw_line(ax, line: Line, d: RooflineDisplay) -> None:
    if line.kind == "sweep":
        # Measured points, not a ceiling: markers joined by a thin line, above the roof lines.
        ax.plot(line.xs, line.ys, "-o", ms=3.5, lw=0.8, color=line.color, zorder=3)
        return
    if line.kind == "mixed":
        # A mixed-precision kernel's weighted ceiling: thin, dashed, in its kernel's colour,
        # named in the legend (not on the line: it is short and sits among the ceilings).
        ax.plot(line.xs, line.ys, "--", color=line.color, lw=1.0, zorder=2.5,
                gid=f"mixed-roof:{line.label}")
        return
    solid = line.style == "solid"
    # dotted: a best-achieved roof (chart.ENVELOPE_STYLE), thin and light, no machine's
    ax.plot(line.xs, line.ys, ls=_LINESTYLES[line.style], color=line.color,
            lw=2.2 if solid else 1.1 if line.style == "dotted" else 1.4,
            alpha=0.7 if line.style == "dotted" else 1.0, zorder=2,
            gid=f"roof-line:{line.roof}")
    marker = roof_marker(d, line.roof)
    if marker:   # a second, third ... roof: beads along its lines, as in the legend
        _beads(ax, line, d, marker)
    if line.kind == "compute":
        if line.text and line.label_xy is not None:
            ax.annotate(line.text, line.label_xy, textcoords="offset points",
                        xytext=line.label_offset, ha=line.label_ha, va=line.label_va,
                        fontsize=7, color=line.color, bbox=CEILING_BOX, zorder=3)
        return
    text = line.text or line.label
    # Slope label: on log-log axes every slope has the same on-screen angle.
    (x0, x1), (y0, y1) = d.xlim, d.ylim
    w, h = ax.figure.get_size_inches() * ax.get_position().size
    angle = math.degrees(math.atan2(h / math.log10(y1 / y0), w / math.log10(x1 / x0)))
    # Where along the slope: laid out by chart.layout_labels, clear of points and labels.
    # Above the line (va bottom), or hanging below it (va top) where a near-equal slope
    # runs just above.
    x, y = line.label_xy or (line.xs[0] * 3.0, line.ys[0] * 3.0)
    va = line.label_va if line.label_va in ("bottom", "top") else "bottom"
    # 3 pt off the line, across it (as chart_layout._slope_boxes models it): the dashes
    # run beside the text, not through its lower edge
    side = 3.0 if va == "bottom" else -3.0
    off = (-side * math.sin(math.radians(angle)), side * math.cos(math.radians(angle)))
    ax.annotate(" " + text, (x, y), xytext=off, textcoords="offset points", rotation=angle,
                rotation_mode="anchor", ha="left", va=va, fontsize=7, color=line.color,
                zorder=3)


def _legend(d: RooflineDisplay, Line2D) -> list[tuple[object, str]]:
    """(handle, text) pairs; a side's handle is a tuple (its marker with its glyph)."""
    from .chart import (
        ABOVE_LEGEND,
        REAL_TRAFFIC_LEGEND,
        REAL_TRAFFIC_STYLE,
        above_roof,
        precision_ceilings,
        provenance_label,
        size_legend,
    )
    handles: list[tuple[object, str]] = []
    for label in d.roof_labels:
        # the real-traffic slope has its own style and entry (below), not the roof's
        styles = {ln.style for ln in d.lines if ln.roof == label
                  and ln.style != REAL_TRAFFIC_STYLE}
        ls = ("-" if styles == {"solid"} else ":" if styles == {"dotted"}
              else "--" if "solid" not in styles else "-.")
        note = "" if len(styles) == 1 else " (solid measured, dashed nominal)"
        color = _roof_color(d, label)
        # named with its ceilings' provenance as the profile states it (18c F10)
        words = next((provenance_label(r) for r in d.roofs if roof_label(r) == label), label)
        handles.append((Line2D([], [], color=color, ls=ls, marker=roof_marker(d, label) or None,
                               ms=4.5, mew=1.0, mec=color, mfc="white"), words + note))
    real = [ln for ln in d.lines if ln.style == REAL_TRAFFIC_STYLE]
    for ln in real:   # one per roof that draws it; named by roof only where two do
        who = f" ({ln.roof})" if len(real) > 1 else ""
        handles.append((Line2D([], [], color=ln.color, lw=1.4,
                               ls=_LINESTYLES[REAL_TRAFFIC_STYLE]), REAL_TRAFFIC_LEGEND + who))
    for side, what in (("memory", "memory-bound side"), ("compute", "compute-bound side")):
        if any(_side(p) == side for p in d.points):
            color = side_color(side)
            handles.append(((Line2D([], [], ls="none", marker="o", ms=8, mfc=color, mec="0.15",
                                    mew=0.8),
                             Line2D([], [], ls="none", marker=_glyph_marker(SIDE_GLYPHS[side]),
                                    ms=4.5, mew=1.6, color=glyph_color(color, True),
                                    gid=f"side-glyph:{side}")), what))
    sizes = size_legend(d) if any(p.share is not None for p in d.points) else ""
    if sizes == SIZE_LEGEND:
        # three grey rings, one in another, at the sizes of 4 %, 25 % and 100 % of the time (the
        # smallest is also the clamp: every share under 4 % is drawn that size)
        handles.append((tuple(Line2D([], [], ls="none", marker="o", ms=share_size(f),
                                     mfc="none", mec="0.3", mew=0.8)
                              for f in (1.0, 0.25, 0.04)),
                        f"{SIZE_LEGEND} (area; 4 %, 25 %, 100 %)"))
    elif sizes:   # one timed kernel per file: alike, and why (chart.SIZES_ALIKE)
        handles.append((Line2D([], [], ls="none", marker="o", ms=POINT_SIZE, mfc="none",
                               mec="0.3", mew=0.8), sizes))
    if d.joins:
        handles.append((Line2D([], [], color=JOIN_COLOR, lw=0.8, marker="o", ms=3,
                               mfc="0.5", mec="0.5"), JOIN_LEGEND))
    if any(above_roof(p) for p in d.points):
        handles.append((tuple(Line2D([], [], **kw) for kw in above_ring_styles(POINT_SIZE)),
                        ABOVE_LEGEND))
    if any(not p.measured for p in d.points):
        handles.append((Line2D([], [], ls="none", marker="o", mfc="none", mec="0.3"),
                        "predicted (no measured time)"))
    levels = list(dict.fromkeys(p.level for p in d.points))
    if len(levels) > 1:
        handles += [(Line2D([], [], ls="none", marker=LEVEL_MARKERS.get(lv, "o"), color="0.3"),
                     f"bytes at {lv}") for lv in levels]
    if d.caps:
        handles.append((Line2D([], [], ls="none", marker=_lid_marker(), ms=9, mew=1.1,
                               mec="0.3", mfc="none", gid="launch-cap"), CAP_LEGEND))
    for words in precision_ceilings(d):   # which flat roof holds which dot (18c F7)
        handles.append((Line2D([], [], ls="none"), words))
    if d.hidden:   # the reader must know the chart shows a selection (notes list them)
        handles.append((Line2D([], [], ls="none"),
                        f"{len(d.hidden)} compute ceiling(s) not drawn (--precision all)"))
    for ln in d.lines:
        if ln.kind == "sweep":
            handles.append((Line2D([], [], marker="o", ms=3, lw=0.8, color=SWEEP_COLOR),
                            ln.label))
        elif ln.kind == "mixed":
            handles.append((Line2D([], [], ls="--", lw=1.0, color=ln.color), ln.label))
    return handles
