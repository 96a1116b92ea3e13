"""Drawing a RooflineDisplay with matplotlib: with chart_marks (how marks look),
chart_legend (the legend) and chart.figure_bytes (writing it), the only part of the charts
that imports it.

chart.py works out what to draw as plain data; this module turns that data into artists.
"""

from __future__ import annotations

import math
import textwrap

from ..units import fmt_ai, si
from .chart_beads import clear_beads
from .chart_layout import _to_pt
from .chart_layout_cost import AXES_PT, has_leader

# How the marks look (chart_marks) and the legend (chart_legend) live in their own
# modules.
from .chart_legend import _legend, legend_text, place_legend
from .chart_marks import (
    _LINESTYLES,
    CEILING_BOX,
    GLYPH_FRACTION,
    LABEL_BOX,
    _glyph_marker,
    _roof_color,
    _side,
    above_ring_styles,
    arrow_fit,
    beaded,
    glyph_color,
    literal,
    mixed_style,
    roof_marker,
    text_color,
)
from .chart_parts import CAP_TICK_PT, JOIN_COLOR, SIDE_GLYPHS, LaunchCap, Line, RooflineDisplay
from .marker_size import POINT_SIZE, SIZE_MAX


def leader_start(ha: str, va: str) -> tuple[float, float]:
    """Where on its label a leader line starts, as a fraction of the label's box: the
    aligned edge (the layout's anchor + offset), which faces the point. matplotlib's
    default, the box's centre, sends a steep leader out through the label's bottom or top
    edge and across the labels stacked under it, which the layout did not plan for."""
    return ({"left": 0.0, "right": 1.0}.get(ha, 0.5),
            {"bottom": 0.0, "top": 1.0}.get(va, 0.5))


# The kernels' markers in layers (zorder): the unlabelled ones, then the labelled ones
# (the longest kernels) over them all, each kernel's primary level (DRAM) PRIMARY_DZ over
# its other levels, and within a layer a smaller marker over a larger one. Review s22 r6
# F1: the smaller-on-top rule alone put a 10 000-kernel cloud's 4-pt batch over the
# 12-pt marker of the kernel holding 38 % of the time: not one pixel of it was drawn.
UNLABELLED_Z = 5.0
LABELLED_Z = 5.3
PRIMARY_DZ = 0.1
# A glyph just over its own marker and under the next marker size's (0.5 pt apart:
# _size_z 0.00125): a batch of the next size covers this batch's glyphs too.
GLYPH_DZ = 0.0001
# In a crowded chart's batches, markers under this size get no side glyph: one batch is
# one artist, so every glyph of it lies over every marker of it, and a dense cloud of
# 4-pt blue markers printed as white slashes round a white hole (s22 r6 F1). A glyph
# 2 pt across says little there; the colour says the side, as the labelled points'
# glyphs and the legend's do.
BATCH_GLYPH_MIN = 6.0


def _size_z(size: float) -> float:
    """A small marker above a large one (a 0.1 % kernel is not hidden under the 90 % one),
    within 0.04 of its layer: under PRIMARY_DZ."""
    return (SIZE_MAX - min(size, SIZE_MAX)) / 400


def point_z(labelled: bool, primary: bool) -> float:
    """The layer of a kernel's marker (before its size's share): see UNLABELLED_Z."""
    return (LABELLED_Z if labelled else UNLABELLED_Z) + (PRIMARY_DZ if primary else 0.0)


def _draw_markers(ax, xs, ys, marker, color: str, measured: bool, side: str,
                  zorder: float, size: float, gid: str | None = None,
                  glyph: bool = True) -> None:
    """Markers at (xs, ys) of one look: filled (measured) or hollow (predicted), their
    side's glyph inside (unless glyph is False); one artist for all, the one rule for a
    point drawn alone and a crowded chart's batches."""
    zorder += _size_z(size)
    ax.plot(xs, ys, ls="none", marker=marker, ms=size, mec=color if not measured else "0.15",
            mfc=color if measured else "none", mew=1.5 if not measured else 0.8,
            zorder=zorder, gid=gid)
    if side in SIDE_GLYPHS and glyph:
        # A collection, not a line: ax.lines keeps one Line2D per point.
        ax.scatter(xs, ys, marker=_glyph_marker(SIDE_GLYPHS[side]),
                   s=(GLYPH_FRACTION * size) ** 2, linewidths=1.6 if size >= 6 else 1.0,
                   facecolors="none", edgecolors=glyph_color(color, measured),
                   zorder=zorder + GLYPH_DZ, gid=f"side-glyph:{side}")


def _draw_point(ax, marker, color: str, measured: bool, side: str, zorder: float,
                size: float = POINT_SIZE) -> None:
    _draw_markers(ax, [marker[0]], [marker[1]], marker[2], color, measured, side, zorder,
                  size)


# A crowded chart's unlabelled markers are drawn in sizes this many points apart (the
# display keeps each exact size): one marker artist per size, stamped, not one path each.
SIZE_STEP = 0.5
# Above this many points, the unlabelled ones are drawn as one artist per look (marker,
# colour, side) instead of one each: 5 000 points as 10 000 artists took 10 s to draw.
BATCH_POINTS = 200


def _who(p) -> tuple[int, str]:
    """A point's kernel (its index, and its name for a point built by hand, index -1)."""
    return p.kernel_index, p.kernel


def _draw_points_batched(ax, points, labelled: set[tuple[int, str]]) -> None:
    """The unlabelled kernels' points, grouped by how they look, their size to the nearest
    SIZE_STEP pt (one artist per look and size: a marker stamped once, as before sizes),
    the largest first so the small ones stay on top; the labelled kernels' points are
    drawn one by one over them all, as on a small chart."""
    groups: dict[tuple, list] = {}
    for p in sorted((p for p in points if _who(p) not in labelled),
                    key=lambda p: -p.size):
        size = round(p.size / SIZE_STEP) * SIZE_STEP
        key = (p.marker, p.color, p.measured, _side(p),
               point_z(False, p.label != p.level), size)
        groups.setdefault(key, []).append((p.ai, p.flop_per_s))
    for (marker, color, measured, side, zorder, size), xy in groups.items():
        _draw_markers(ax, [x for x, _ in xy], [y for _, y in xy], marker, color, measured,
                      side, zorder, size, gid="kernel-points", glyph=size >= BATCH_GLYPH_MIN)


def _draw_joins(ax, d: RooflineDisplay) -> None:
    """The thin grey lines through each kernel's per-level points, one collection for all
    (thousands of kernels), under the markers and over the roofs."""
    if not d.joins:
        return
    from matplotlib.collections import LineCollection

    ax.add_collection(LineCollection(
        [list(zip(j.xs, j.ys, strict=True)) for j in d.joins], colors=JOIN_COLOR,
        linewidths=0.8, zorder=4, gid="level-joins"), autolim=False)


def _draw_cap(ax, cap: LaunchCap, ylim: tuple[float, float]) -> None:
    """A launch cap: a thin dash at its height over its point, in the point's colour, each
    end ticked CAP_TICK_PT down (on the layout's model axes, as chart_layout.cap_box)."""
    drop = 10 ** (-CAP_TICK_PT / AXES_PT[1] * math.log10(ylim[1] / ylim[0]))
    (x0, x1), y = cap.xs, cap.flop_per_s
    ax.plot([x0, x0, x1, x1], [y * drop, y, y, y * drop], "-", color=cap.color or "0.3",
            lw=1.1, solid_joinstyle="miter", zorder=4.5, gid=f"launch-cap:{cap.kernel}")


def _draw_above_rings(ax, d: RooflineDisplay) -> None:
    from .chart_words import above_roof

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
    own_figure = ax is None   # a figure of our own may be widened for an outside legend
    fig, ax = _new_axes(d, ax)
    # every text from a name is drawn literally (chart_marks.literal: `$` is not mathtext)
    ax.set_xlabel(literal(_axis_words(d)))
    ax.set_ylabel("performance (FLOP/s)")
    # Several roofs make a long title ("A vs B vs C"); at 10 pt about 100 characters fit
    # the 9-inch figure, so longer ones wrap instead of running off its edge.
    title = textwrap.fill(d.title, 95, break_long_words=False) if len(d.title) > 95 else d.title
    ax.set_title(literal(title), fontsize=10 if len(d.title) > 70 else None)
    _format_ticks(ax)
    # Settle the axes box before the slope labels take its aspect. A figure of our own is
    # also heightened where footnote lines squeeze the axes below the layout's modelled
    # height (review s22 r6 F6); fit_axes_height's first pass is the settling, so the
    # layout (on 10k kernels ~2 s a pass) runs once, not twice (review s22 h2 F2).
    if own_figure:
        from .chart_layout_size import fit_axes_height
        fit_axes_height(fig, ax)
    else:
        _settle_layout(fig)
    # Label positions come laid out from chart_layout.layout_labels (no two overlap); a
    # ceiling equal to another of its roof has no text of its own (the other names both).
    for line in d.lines:
        _draw_line(ax, line, d)
    _draw_ridges(ax, d)
    _draw_arrows(ax, d)
    for cap in d.caps:   # under the points (zorder 5), over the roof lines
        _draw_cap(ax, cap, d.ylim)
    _draw_above_rings(ax, d)
    _draw_joins(ax, d)
    _draw_kernel_points(ax, d)
    clear_beads(ax)   # no roof bead inside a label (chart_beads, s23 r6 F10)
    ax.grid(True, which="both", alpha=0.2)
    _draw_legend(ax, d, own_figure)
    return fig, ax


def _new_axes(d: RooflineDisplay, ax):
    """(fig, ax): `ax`, or a new Figure's axes when None, log-log over the display's limits."""
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
    return fig, ax


def _axis_words(d: RooflineDisplay) -> str:
    """The x axis's label, with what the chart leaves unsaid on it under it: the kernels
    drawn without a label, those left out, ops without FLOP, roofs to read with care."""
    # A crowded chart labels only its longest kernels (chart.LABELS_SHOWN): said under
    # the axis, so a reader does not take an unlabelled point for a stray one.
    from .axis_words import axis_title
    from .chart_layout_texts import labelled_counts
    from .chart_words import caveats, memory_ops

    longest, above = labelled_counts(d.points, d.kernels)
    # (only where some are: the usual footnote reads as before)
    ringed = f" and {above} above their roof" if above else ""
    # ops without FLOP have no point: named here with their bytes/s (chart_words.memory_ops)
    ops = memory_ops(d)
    # a roof its probe calls unreliable says so on the image, not on stderr only (18c F5)
    care = caveats(d)
    # which bytes the intensity counts (s22 r6 F3; the HTML's words: axis_words)
    return (axis_title(d) + (
        f"\nlabelled: the {longest} longest kernels{ringed}; {d.unlabelled} more drawn "
        f"without a label" if d.unlabelled else "") + (f"\n{_short_dropped(d.dropped)}"
                                             if d.dropped else "")
        + (f"\n{textwrap.fill(ops, 95, break_long_words=False)}" if ops else "")
        + (f"\n{textwrap.fill(care, 95, break_long_words=False)}" if care else ""))


def _format_ticks(ax) -> None:
    """The y ticks in FLOP/s words, the minor ticks of both axes as their majors."""
    from matplotlib.ticker import FuncFormatter

    # The tick labels ("100 GFLOP/s") set the left margin: format them before the layout
    # settles, or the axes narrow afterwards and every slope label is drawn ~2 degrees off
    # its line, into it.
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: si(v, "FLOP/s")))
    # A chart zoomed to its points (chart_limits._zoomed) can span under two decades, where
    # matplotlib labels some minor ticks too, as "4 x 10^11": in the majors' words instead.
    ax.yaxis.set_minor_formatter(_minor_formatter(lambda v: si(v, "FLOP/s")))
    ax.xaxis.set_minor_formatter(_minor_formatter(lambda v: f"{v:g}"))


def _settle_layout(fig) -> None:
    """Run the figure's layout engine now: the slope labels need the axes box's aspect."""
    from .chart_layout_size import settle

    settle(fig)


def _draw_ridges(ax, d: RooflineDisplay) -> None:
    """Each ridge's diamond and its AI*= label; a dotted vertical at the first ridge. A
    later roof's ridge is its bead, larger and bolder than along its lines (s23 r6 F3: two
    roofs' ridges were one grey diamond); its label is in the colour's text shade (F2)."""
    for r in d.ridges:
        color, bead = _roof_color(d, r.roof), roof_marker(d, r.roof)
        ax.plot([r.ai], [r.flop_per_s], marker=bead or "D", ms=6 if bead else 5, mew=1.6,
                color=color, mfc="white" if bead else color, zorder=4,
                gid=f"ridge-bead:{r.roof}" if bead else f"ridge:{r.roof}")
        ax.annotate(f"AI*={fmt_ai(r.ai)}", (r.ai, r.flop_per_s), textcoords="offset points",
                    xytext=r.label_offset, ha=r.label_ha, va=r.label_va,
                    fontsize=7, color=text_color(color), bbox=LABEL_BOX, zorder=4)
    if d.ridges:
        ax.axvline(d.ridges[0].ai, color="0.75", lw=1, ls=":", zorder=1)


def _draw_arrows(ax, d: RooflineDisplay) -> None:
    """The what-if arrows (solid) and steps (dashed) between points."""
    for a in d.arrows:
        style = "-|>" if a.kind == "arrow" else "->"
        # From the edge of one marker to the edge of the other, its head fitted to the gap
        # (chart_marks.arrow_fit: a short arrow's head covered its "before" marker)
        fit = arrow_fit(_to_pt(*a.start, d.xlim, d.ylim), _to_pt(*a.end, d.xlim, d.ylim),
                        _marker_radius(d, a.start), _marker_radius(d, a.end))
        ax.annotate("", xy=a.end, xytext=a.start, zorder=fit.zorder,
                    arrowprops={"arrowstyle": style, "color": "0.35", "lw": 1.2,
                                "shrinkA": fit.shrink_a, "shrinkB": fit.shrink_b,
                                "mutation_scale": fit.scale,
                                "ls": "-" if a.kind == "arrow" else "--"})


def _marker_radius(d: RooflineDisplay, xy: tuple[float, float]) -> float:
    """The radius (points) of the largest marker drawn at xy (POINT_SIZE's for none),
    and a point for its edge line: 5 pt for an 8 pt marker, as the arrows kept before."""
    sizes = [p.size for p in d.points if (p.ai, p.flop_per_s) == xy]
    return max(sizes, default=POINT_SIZE) / 2 + 1.0


def _draw_kernel_points(ax, d: RooflineDisplay) -> None:
    """The kernels' markers (a crowded chart's unlabelled ones batched) and their labels,
    each moved away from its point with a leader line (chart_layout_cost.has_leader)."""
    many = len(d.points) > BATCH_POINTS
    labelled = {_who(p) for p in d.points if p.text}
    if many:
        _draw_points_batched(ax, d.points, labelled)
    for p in d.points:
        if many and _who(p) not in labelled:
            continue
        # The labelled point (the kernel's primary level, DRAM) on top: at AI 0.125 DRAM and
        # 0.124 L2 the L2 square hid the DRAM circle, and with it the memory-bound colour.
        # Its side of the ridge is its colour and the glyph inside (slope / flat bar).
        _draw_point(ax, (p.ai, p.flop_per_s, p.marker), p.color, p.measured, _side(p),
                    point_z(_who(p) in labelled, p.label != p.level), p.size)
        if not p.text:
            continue
        # Placed clear of the other labels; one moved away from its point gets a leader,
        # by the rule the layout costs it with.
        ax.annotate(literal(p.text), (p.ai, p.flop_per_s), textcoords="offset points",
                    xytext=p.label_offset, ha=p.label_ha, va=p.label_va, fontsize=7,
                    color="0.15", zorder=6, bbox=LABEL_BOX,
                    arrowprops={"arrowstyle": "-", "color": "0.6", "lw": 0.6,
                                "shrinkA": 0, "shrinkB": 4,
                                "relpos": leader_start(p.label_ha, p.label_va)}
                    if has_leader(p.label_offset) else None)


def _draw_legend(ax, d: RooflineDisplay, own_figure: bool) -> None:
    """The legend (chart_legend), placed where it hides least (place_legend)."""
    from matplotlib.legend_handler import HandlerTuple
    from matplotlib.lines import Line2D

    handles = _legend(d, Line2D)
    place_legend(ax, d, {"handles": [h for h, _ in handles],
                         "labels": [literal(legend_text(t)) for _, t in handles],
                         "fontsize": 7,
                         "handler_map": {tuple: HandlerTuple(ndivide=1)}},
                 own_figure=own_figure)


def _short_dropped(note: str) -> str:
    """The min_share note under the axis, without its how-to (the terminal gives that)."""
    return note.split(";")[0] + (")" if "(" in note.split(";")[0] else "")


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
    if line.kind in ("mixed", "nofma"):   # nofma: the longest kernel's (chart_nofma)
        # A mixed-precision kernel's weighted ceiling or a no-FMA one: thin, in its
        # kernel's colour's dark shade, each its own dash (chart_marks.mixed_style), named
        # in the legend (not on the line: it is short and sits among the ceilings).
        ls, color = mixed_style(line)
        ax.plot(line.xs, line.ys, ls=ls, color=color, lw=1.0, zorder=2.5,
                gid=f"mixed-roof:{line.label}")
        return
    solid = line.style == "solid"
    # dotted: a best-achieved roof (chart_roofs.ENVELOPE_STYLE), thin and light, no machine's
    ax.plot(line.xs, line.ys, ls=_LINESTYLES[line.style], color=line.color,
            lw=2.2 if solid else 1.1 if line.style == "dotted" else 1.4,
            alpha=0.7 if line.style == "dotted" else 1.0, zorder=2,
            gid=f"roof-line:{line.roof}")
    marker = roof_marker(d, line.roof)
    if marker:   # a second, third ... roof: beads along its lines, as in the legend
        _beads(ax, line, d, marker)
    if line.kind == "compute":
        if line.text and line.label_xy is not None:
            # (a later roof's starts with its bead, F3), in its text shade (F2)
            ax.annotate(literal(line.text), line.label_xy,
                        textcoords="offset points", xytext=line.label_offset,
                        ha=line.label_ha, va=line.label_va, fontsize=7,
                        color=text_color(line.color), bbox=CEILING_BOX, zorder=3)
        return
    if line.label_va == "none":   # named in a slope it prints on (chart_layout.NO_LABEL)
        return
    text = line.text or line.label
    # Slope label: on log-log axes every slope has the same on-screen angle.
    (x0, x1), (y0, y1) = d.xlim, d.ylim
    w, h = ax.figure.get_size_inches() * ax.get_position().size
    angle = math.degrees(math.atan2(h / math.log10(y1 / y0), w / math.log10(x1 / x0)))
    # Where along the slope: laid out by chart_layout.layout_labels, clear of points and
    # labels.
    # Above the line (va bottom), or hanging below it (va top) where a near-equal slope
    # runs just above.
    x, y = line.label_xy or (line.xs[0] * 3.0, line.ys[0] * 3.0)
    va = line.label_va if line.label_va in ("bottom", "top") else "bottom"
    # 3 pt off the line, across it (as chart_layout_roofs._slope_boxes models it): the dashes
    # run beside the text, not through its lower edge
    side = 3.0 if va == "bottom" else -3.0
    off = (-side * math.sin(math.radians(angle)), side * math.cos(math.radians(angle)))
    ax.annotate(literal(beaded(d.roof_labels, line.roof, " " + text)), (x, y), xytext=off,
                textcoords="offset points", rotation=angle, rotation_mode="anchor",
                ha="left", va=va, fontsize=7, color=text_color(line.color), zorder=3)
