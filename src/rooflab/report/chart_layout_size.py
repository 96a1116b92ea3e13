"""A chart's size on the page: the figure it is drawn at, and how that is scaled.

The label layout (chart_layout), the title's and footnotes' wrapping (chart_draw) are
worked out for the default 9 x 6 in figure; a chart asked for smaller is drawn at a
design size of at least 9 x 6 in with that layout and scaled down as a whole, text
included, so nothing moves relative to anything else and nothing is cut. Its text then
prints smaller: 7-pt labels at 7 x scale pt (printed_pt), 5.25 pt at 7 x 4.5 in (the
"page" preset). A legend that does not fit inside the axes widens the design first
(fit_legend), so the scale is smaller still and the chart shorter than asked: the CLI
judges the drawn chart's scale (printed_pt), and below LEGIBLE_PT it warns (3.5 in wide:
2.7 pt, or 2.1 pt with the legend outside): a layout for small figures (fewer, larger
labels) would need the layout's model to know the size.
"""

from __future__ import annotations

import functools
import re
from contextlib import contextmanager

from ..errors import InputError

DESIGN_IN = (9.0, 6.0)   # the figure chart_draw draws and chart_layout models
LABEL_PT = 7.0           # chart_draw's label text at the design size
# the smallest text a printed figure is read at (journals ask for 5-7 pt at print size)
LEGIBLE_PT = 5.0
# Named sizes, (width, height) in inches: a full-width figure of a paper and a 16:9
# slide. (No one-column preset: 3.5 in would print the labels at 2.7 pt, see above.)
PRESETS = {"page": (7.0, 4.5), "slide": (10.0, 5.6)}
SIZE_RANGE = (1.0, 50.0)   # inches, each side
DPI_RANGE = (10.0, 2400.0)


def scale_for(size: tuple[float, float]) -> float:
    """The factor the design is scaled by to print at `size`: the one that fits it, never
    enlarging (a bigger chart gets a bigger design, at full text size)."""
    w, h = size
    return min(1.0, w / DESIGN_IN[0], h / DESIGN_IN[1])


def printed_pt(scale: float) -> float:
    """The size the labels print at on a chart drawn at `scale` (RooflineDisplay.scale_,
    after fit_legend: the asked width over the design's, a legend outside included)."""
    return LABEL_PT * scale


def design_size(size: tuple[float, float]) -> tuple[tuple[float, float], float]:
    """((width, height) in inches to draw at, scale) for a chart printed at `size`."""
    s = scale_for(size)
    return (size[0] / s, size[1] / s), s


def design_axes(size: tuple[float, float]):
    """(axes, scale): a new figure at the design size for `size`, as chart_draw makes its
    own (a bare Figure, constrained layout)."""
    from matplotlib.figure import Figure

    (w, h), s = design_size(size)
    fig = Figure(figsize=(w, h), layout="constrained")
    return fig.add_subplot(), s


# the gap chart_draw leaves between the axes and a legend outside them (LEGEND_GAP_PT)
LEGEND_GAP_PT = 6.0


def fit_legend(ax, width_in: float) -> float:
    """Widen a design figure for a legend drawn outside its axes (no room inside), as
    chart_draw widens its own figure, so the axes keep the size the labels were laid out
    for; returns the scale that prints the figure `width_in` wide (its height follows)."""
    fig = ax.figure
    legend = ax.get_legend()
    if legend is not None:
        renderer = figure_renderer(fig)
        box, axes = legend.get_window_extent(renderer), ax.get_window_extent(renderer)
        if box.x0 >= axes.x1 - 1:
            w, h = fig.get_size_inches()
            fig.set_size_inches(w + box.width / fig.dpi + LEGEND_GAP_PT / 72, h)
    return width_in / fig.get_size_inches()[0]


# How far short of the layout's model (chart_layout_cost.AXES_PT) the axes may be before
# the figure is heightened: the tick labels' width moves them by a point or two.
AXES_SLACK_PT = 3.0


def fit_axes_height(fig, ax) -> float:
    """Heighten a figure of our own whose axes the text under them left shorter than the
    label layout's model (chart_layout_cost.AXES_PT), so the axes keep the height the labels
    were laid out for; returns the inches added. Run before anything is drawn that needs
    the axes' aspect (the slope labels' angle): its first pass is chart_draw's settling
    of the layout, so the caller runs none of its own (review s22 h2 F2).
    Review s22 r6 F6: four footnote lines under the x axis (unlabelled kernels, ops without
    FLOP, a probe under load) left the axes 315 pt tall, not 378: labels laid out a line
    apart printed over each other ("gemm_fp32_2048 · 11% of roof" on "conv2d_fp32 · 2% of
    roof"), and ones laid out clear of a ceiling's label sat on it."""
    from .chart_layout_cost import AXES_PT

    added = 0.0
    for _ in range(3):   # the layout engine may give the title and footnote a little more
        settle(fig)
        short = AXES_PT[1] - ax.get_position().height * fig.get_size_inches()[1] * 72
        if short <= AXES_SLACK_PT:
            break
        w, h = fig.get_size_inches()
        fig.set_size_inches(w, h + short / 72)
        added += short / 72
    return added


def settle(fig) -> None:
    """Run the figure's layout engine now (the axes' box depends on it)."""
    engine = fig.get_layout_engine()
    if engine is not None:
        import warnings

        with warnings.catch_warnings():   # as chart.figure_bytes: matplotlib copes
            warnings.filterwarnings("ignore", message="constrained_layout not applied")
            engine.execute(fig)


def figure_renderer(fig):
    """The figure's renderer (a bare Figure has an Agg one made for it, as savefig does)."""
    get = getattr(fig.canvas, "get_renderer", None)
    if get is None:
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        get = FigureCanvasAgg(fig).get_renderer
    return get()


# A label's backing over a roof line: a faint wash plus a white outline around each
# glyph. The white box chart_draw gives it (alpha 0.65) turned a dark roof line light grey
# for the label's length, which reads as another (nominal, grey) ceiling (review 18c
# F18); under this wash the line keeps its colour and the outline still keeps it from
# striking through the digits.
BACKING_ALPHA = 0.3
OUTLINE_PT = 2.0


def keep_axes(ax, start: int = 0) -> None:
    """Keep the axes at the size the labels were laid out for: texts drawn on the axes
    (point, ceiling, ridge labels) take no part in constrained layout. Otherwise one label
    running past the axes (a 190-character kernel name) made the layout shrink the axes
    until it fitted: to a 30-px strip (review 18c F1). The tick labels, axis labels,
    title and legend keep their room. Labels with a backing get the light one
    (BACKING_ALPHA, OUTLINE_PT). start: the first of ax.texts the chart drew."""
    outline = _outline()
    for t in ax.texts[start:]:
        t.set_in_layout(False)
        box = t.get_bbox_patch()
        if box is not None and t.get_text().strip():
            box.set_alpha(BACKING_ALPHA)
            t.set_path_effects(outline)


def parse_size(text: str) -> tuple[float, float]:
    """'W,H' in inches (e.g. '7,4.5'), or a preset name (PRESETS), for `plot --size`."""
    spec = text.strip().lower()
    if spec in PRESETS:
        return PRESETS[spec]
    m = re.fullmatch(r"\s*([0-9.]+)\s*[,x]\s*([0-9.]+)\s*(in)?\s*", spec)
    names = ", ".join(PRESETS)
    if m is None:
        raise InputError(f"--size {text!r}: give WIDTH,HEIGHT in inches (e.g. --size 7,4.5)"
                         f" or one of {names}")
    try:
        w, h = float(m.group(1)), float(m.group(2))
    except ValueError:
        raise InputError(f"--size {text!r}: {m.group(1)!r} or {m.group(2)!r} is not a "
                         f"number; give WIDTH,HEIGHT in inches (e.g. --size 7,4.5)") from None
    lo, hi = SIZE_RANGE
    if not (lo <= w <= hi and lo <= h <= hi):
        raise InputError(f"--size {text!r}: each side must be {lo:g} to {hi:g} inches")
    return w, h


def parse_dpi(value: float | None) -> float | None:
    """`plot --dpi`: pixels per inch of a PNG (SVG is vector: its size is --size)."""
    if value is None:
        return None
    lo, hi = DPI_RANGE
    if not lo <= value <= hi:
        raise InputError(f"--dpi {value:g}: give {lo:g} to {hi:g} pixels per inch "
                         f"(150 is the default, 300 for print)")
    return float(value)


def svg_at_size(svg: bytes, size: tuple[float, float]) -> bytes:
    """An SVG drawn at the design size, declared `size` (inches) on the page: its width
    and height in pt, its viewBox (the design's coordinates) unchanged, so it scales."""
    w, h = (f"{72 * v:.2f}pt" for v in size)
    head, sep, rest = svg.partition(b"<svg ")
    tag, close, body = rest.partition(b">")
    tag = re.sub(rb'width="[^"]*"', f'width="{w}"'.encode(), tag, count=1)
    tag = re.sub(rb'height="[^"]*"', f'height="{h}"'.encode(), tag, count=1)
    return head + sep + tag + close + body


@functools.cache   # one list, so without_outlines knows the labels it was given to
def _outline() -> list:
    from matplotlib import patheffects

    return [patheffects.withStroke(linewidth=OUTLINE_PT, foreground="white")]


@contextmanager
def without_outlines(fig):
    """The labels without their glyph outlines (keep_axes) while an SVG is written: a
    text with a path effect is written as paths, one per glyph, and an SVG keeps its text
    as <text> (searchable, editable, read aloud); the faint backing stays."""
    held = [(t, t.get_path_effects()) for ax in fig.axes for t in ax.texts
            if t.get_path_effects() is _outline()]
    for t, _ in held:
        t.set_path_effects([])
    try:
        yield
    finally:
        for t, effects in held:
            t.set_path_effects(effects)
