"""A roofline chart's legend: its entries (one per roof, side, size, level, cap, ...) and
where it goes, the first corner where it covers no text and no marker (chart_draw)."""

from __future__ import annotations

from .chart_layout_size import figure_renderer
from .chart_marks import (
    _LINESTYLES,
    _glyph_marker,
    _lid_marker,
    _roof_color,
    _side,
    above_ring_styles,
    glyph_color,
    mixed_style,
    roof_marker,
)
from .chart_parts import (
    CAP_LEGEND,
    JOIN_COLOR,
    JOIN_LEGEND,
    LEVEL_MARKERS,
    SIDE_GLYPHS,
    SWEEP_COLOR,
    RooflineDisplay,
    roof_label,
    side_color,
)
from .chart_precisions import precision_ceilings
from .marker_size import POINT_SIZE, SIZE_LEGEND, share_size

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


def _legend_obstacles(ax, d: RooflineDisplay, renderer):
    """(x0, y0, x1, y1) boxes in display pixels the legend must not cover, an (n, 4) array:
    every text on the axes as drawn and every marker, its drawn diameter across."""
    import numpy as np

    px = ax.figure.dpi / 72
    texts = [box for t in ax.texts if t.get_visible() and t.get_text().strip()
             for box in _text_boxes(t, renderer, px)]
    marks = [(p.ai, p.flop_per_s, p.size / 2) for p in d.points]
    marks += [(r.ai, r.flop_per_s, 2.5) for r in d.ridges]
    marks += [(x, y, 1.75) for ln in d.lines if ln.kind == "sweep"
              for x, y in zip(ln.xs, ln.ys, strict=True)]
    # every marker through the axes' transform at once, in arrays: a call and a tuple per
    # marker were ~0.35 s of 20 000 kernels' plot (benchmarks/RESULTS.md session 38)
    xyr = np.array(marks, dtype=float).reshape(-1, 3)
    centre = ax.transData.transform(xyr[:, :2]) if len(xyr) else xyr[:, :2]
    half = (xyr[:, 2] * px)[:, None]
    return np.vstack([np.array(texts, dtype=float).reshape(-1, 4),
                      np.hstack([centre - half, centre + half])])


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
    import numpy as np

    x0, y0, x1, y1 = box.extents
    a, b, c, e = np.asarray(blocked, dtype=float).reshape(-1, 4).T
    return bool(((a < x1) & (c > x0) & (b < y1) & (e > y0)).any())


ARROW_LEGEND = "before \u2192 after"
STEPS_LEGEND = "optimisation steps, in order (each step's arrow to the next)"


def _clock_rows(d: RooflineDisplay, Line2D) -> list[tuple[object, str]]:
    """The clock each roof's peaks hold at, where it knows one (chart_clock, s22 r6 F4):
    a text row under the roofs, named by roof where the chart has several."""
    from .chart_clock import roof_clock

    clocks = [(label, roof_clock(roof, d.kernels))
              for roof, label in zip(d.roofs, d.roof_labels, strict=False)]
    clocks = [(label, clock) for label, clock in clocks if clock]
    if len({clock for _, clock in clocks}) == 1 and len(clocks) == len(d.roofs):
        # every roof at one clock (a CPU probe's measured roof and the nominal derived at
        # its clock): one row, not the same words under each roof's long name (s33 I)
        return [(Line2D([], [], ls="none"), ("both roofs: " if len(clocks) == 2 else
                                             "every roof: " if len(clocks) > 2 else "")
                 + clocks[0][1])]
    return [(Line2D([], [], ls="none"), f"{label}: {clock}" if len(d.roofs) > 1 else clock)
            for label, clock in clocks]


# A legend entry longer than this many characters is folded onto more lines: the roofs'
# names with their provenance ran to 115 characters at 7 pt, and the legend, set right of
# the axes where no corner inside was free, took half the PNG's width (review s33 I).
LEGEND_WRAP = 64


def legend_text(words: str, width: int = LEGEND_WRAP) -> str:
    """An entry's words folded at spaces onto lines of at most `width` characters (a word
    longer than that keeps its own line whole)."""
    import textwrap

    return "\n".join(textwrap.wrap(words, width, break_long_words=False,
                                    break_on_hyphens=False)) or words


def _legend(d: RooflineDisplay, Line2D) -> list[tuple[object, str]]:
    """(handle, text) pairs; a side's handle is a tuple (its marker with its glyph)."""
    from .chart_words import (
        ABOVE_LEGEND,
        REAL_TRAFFIC_LEGEND,
        REAL_TRAFFIC_STYLE,
        above_roof,
        provenance_label,
        size_legend,
    )
    handles: list[tuple[object, str]] = []
    for label in d.roof_labels:
        # the real-traffic slope has its own style and entry (below), not the roof's; so
        # have a no-FMA ceiling and a weighted roof, dashed in a kernel's colour (s23 r6
        # F1: a measured roof's key read dash-dot "(solid measured, dashed nominal)")
        styles = {ln.style for ln in d.lines if ln.roof == label
                  and ln.kind in ("compute", "memory") and ln.style != REAL_TRAFFIC_STYLE}
        ls = ("-" if styles == {"solid"} else ":" if styles == {"dotted"}
              else "--" if "solid" not in styles else "-.")
        note = "" if len(styles) == 1 else " (solid measured, dashed nominal)"
        color = _roof_color(d, label)
        # named with its ceilings' provenance as the profile states it (18c F10)
        words = next((provenance_label(r) for r in d.roofs if roof_label(r) == label), label)
        handles.append((Line2D([], [], color=color, ls=ls, marker=roof_marker(d, label) or None,
                               ms=4.5, mew=1.0, mec=color, mfc="white"), words + note))
    handles += _clock_rows(d, Line2D)
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
    elif sizes:   # one timed kernel per file: alike, and why (chart_words.SIZES_ALIKE)
        handles.append((Line2D([], [], ls="none", marker="o", ms=POINT_SIZE, mfc="none",
                               mec="0.3", mew=0.8), sizes))
    # the arrows' own entries (review s18 r5 F7: a trajectory's dashed step arrows ran
    # along the grey level joins with nothing saying which line was which)
    for kind, ls, words in (("arrow", "-", ARROW_LEGEND), ("trajectory", "--", STEPS_LEGEND)):
        if any(a.kind == kind for a in d.arrows):
            handles.append((Line2D([], [], color="0.35", lw=1.2, ls=ls, marker=">", ms=4.5,
                                   markevery=[-1]), words))
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
                        f"{len(d.hidden)} compute ceiling(s) not drawn "
                        f"(rooflab plot --precision all)"))
    for ln in d.lines:
        if ln.kind == "sweep":
            handles.append((Line2D([], [], marker="o", ms=3, lw=0.8, color=SWEEP_COLOR),
                            ln.label))
        elif ln.kind in ("mixed", "nofma"):   # each its own dash, as drawn (F12)
            ls, color = mixed_style(ln)
            handles.append((Line2D([], [], ls=ls, lw=1.0, color=color), ln.label))
    return handles
