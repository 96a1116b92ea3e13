"""Roofline charts: compute what to draw as plain data, then draw it with matplotlib.

The shape follows scikit-learn's Display objects (sklearn/inspection/_plot): a pure
function works out every line, ridge and point (`RooflineDisplay.lines/ridges/points`,
which the tests read), and `RooflineDisplay.plot(ax=None)` draws them, importing
matplotlib only then and returning the display with `figure_` and `ax_` set.

Conventions (ARCHITECTURE.md, seed 004): log-log axes; nominal ceilings dashed, measured
ceilings solid; memory-bound kernels blue with a slope glyph, compute-bound orange with a
flat glyph (Okabe-Ito colours; each roof also has its own beads along its lines: see
docs/plot.md "Reading the chart in grey"); a kernel without a measured time is drawn
hollow at its attainable height (predicted, not measured).
"""

from __future__ import annotations

import io
import math
import os
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from ..errors import InputError
from ..files import write_atomic
from ..hardware.thread_rows import per_thread_nominal
from ..model.ceiling import Roof
from ..model.kernel import Kernel
from ..model.level_names import checked_level

# The chart's parts live in modules named for what each works out: chart_parts (its
# values), chart_ceilings (which ceilings), chart_roofs (lines and ridges), chart_limits
# (the axes), chart_points (the kernels' points, labels and arrows), chart_inputs (the
# arguments' checks). This module keeps the chart's public names (roofline_data,
# plot_roofline, save_figure, and the words and rules the HTML report and the CLI read);
# the names below are the ones it uses: import each from its own module.
from .chart_ceilings import mixed_roofs, select_ceilings
from .chart_fonts import chart_fonts
from .chart_inputs import _checked, chart_subject, titled
from .chart_layout_cost import _to_pt
from .chart_limits import _limits, _ridge_ais
from .chart_parts import DrawnPoint, RooflineDisplay, roof_label
from .chart_point_labels import _labelled
from .chart_points import (
    LABELS_SHOWN,
    _above_roof_notes,
    _all_points,
    _drop_small,
    _level_joins,
    _pair_arrows,
    _trajectory_arrows,
    one_kernel_per_file,
    time_shares,
)
from .chart_roofs import (
    _chart_lines,
    _positive_finite,
    _ridges,
    _shown_roofs,
)
from .chart_sweep_note import sweep_over_ceiling
from .chart_words import provenance_label
from .marker_size import POINT_SIZE


def roofline_data(roofs: Sequence[Roof], kernels: Sequence[Kernel] = (), *,
                  level: str | None = None, sweep: Sequence[tuple[float, float]] = (),
                  arrows: Sequence[tuple[Kernel, Kernel]] = (), trajectory: bool = False,
                  title: str | None = None,
                  precisions: Sequence[str] | None = None,
                  sweep_precision: str | None = None,
                  before_roof: Roof | None = None,
                  labels: int | None = None, place_labels: bool = True,
                  size_by: str = "time", min_share: float | None = None,
                  zoom: bool = False) -> RooflineDisplay:
    """Work out the chart without drawing it (pure; matplotlib is not imported). The
    arguments mean what plot_roofline's docstring says (one copy of it), less ax and size,
    plus place_labels: False leaves the labels where chart_parts puts them by default, for
    a drawer that places its own (the HTML report: html_labels); the lines and points are
    the same either way, and placing them is most of the time for thousands of kernels."""
    roofs, kernels = _checked(roofs, kernels, labels, size_by, min_share)
    if level is not None:   # 'dram' -> DRAM as the CLI's --level (review s18 r8 F1)
        level = checked_level(level, "plot_roofline(): level")
    # A thread row's nominal partner (`--on me.json@1t`) comes scaled per core from
    # hardware/resolve; roofs handed in directly are scaled the same way here (18c F17).
    roofs, scaled = per_thread_nominal(roofs)
    judge = roofs[0]
    # each kernel once, by identity (a set of ids: a scan of the list per kernel was
    # quadratic, seconds at 20 000 kernels)
    to_draw = list({id(k): k for k in (*kernels, *(k for pair in arrows for k in pair))}
                   .values())
    befores = [b for b, _ in arrows] if before_roof is not None else []
    shares = time_shares(to_draw)
    # (judged before --min-share: a file's 95 % kernel left alone by it is still 95 %)
    sized = size_by == "time" and bool(shares) and not one_kernel_per_file(to_draw)
    to_draw, dropped = _drop_small(to_draw, shares, min_share, arrows)
    # A "before" kernel measured on the old hardware: 50 TFLOP/s on a T4 is 77 % of its
    # roof, not 5 % of an H100's.
    judges = [before_roof if any(k is b for b in befores) else judge for k in to_draw]
    per_kernel, notes, caps = _all_points(to_draw, judges, level, shares, sized)
    notes[:0] = ([dropped] if dropped else []) + ([scaled] if scaled else [])
    points = [p for pts in per_kernel for p in pts]
    notes.extend(_above_roof_notes(points, to_draw, judges))
    sweep = [(float(x), float(y)) for x, y in sweep]
    kept, hidden, sel_notes = select_ceilings(roofs, to_draw, precisions,
                                              sweep_precision if sweep else None)
    notes.extend(sel_notes)
    shown = _shown_roofs(roofs, kept, judges, to_draw, level)
    # Mixed-precision kernels' weighted ceilings, on the roof that judges each
    mixed = mixed_roofs(list(zip(judges, to_draw, strict=True)))
    ridges = _ridges(roofs, kept, to_draw, level, sweep_precision, mixed)
    xlim, ylim = _limits(shown, _ridge_ais(ridges, shown, mixed, level), points, sweep,
                         [m.value for m in mixed] + [c.flop_per_s for c in caps], zoom)
    good_sweep = [(x, y) for x, y in sweep if _positive_finite(x) and _positive_finite(y)]
    points = _fit_level_sizes(points, xlim, ylim)
    lines = _chart_lines(shown, mixed, level, to_draw, per_kernel, xlim, good_sweep,
                         sweep_precision)
    notes.extend(n for n in [sweep_over_ceiling(lines, [roof_label(roofs[0])])] if n)
    drawn_arrows = _pair_arrows(arrows, level, to_draw, per_kernel)
    if trajectory:
        drawn_arrows += _trajectory_arrows(to_draw, per_kernel, level)
    if title is None:
        title = titled(chart_subject(to_draw), " vs ".join(provenance_label(r) for r in roofs))
    roof_names = tuple(roof_label(r) for r in roofs)
    lines, ridges, points, unlabelled, label_notes = _labelled(
        points, to_draw, trajectory, LABELS_SHOWN if labels is None else labels,
        place_labels, lines, ridges, xlim, ylim, roof_names, good_sweep, caps)
    notes.extend(label_notes)
    return RooflineDisplay(roofs=roofs, lines=tuple(lines), ridges=tuple(ridges),
                           points=tuple(points), arrows=tuple(drawn_arrows), xlim=xlim,
                           ylim=ylim, title=title, notes=tuple(dict.fromkeys(notes)),
                           roof_labels=roof_names, kernels=tuple(to_draw),
                           hidden=tuple(hidden), caps=tuple(caps), unlabelled=unlabelled,
                           joins=tuple(_level_joins(per_kernel)), sized=sized,
                           dropped=dropped)


def plot_roofline(roofs: Roof | Sequence[Roof], kernels: Kernel | Sequence[Kernel] = (), *,
                  level: str | None = None, sweep: Sequence[tuple[float, float]] = (),
                  arrows: Sequence[tuple[Kernel, Kernel]] = (), trajectory: bool = False,
                  title: str | None = None, ax=None,
                  precisions: Sequence[str] | None = None,
                  sweep_precision: str | None = None,
                  before_roof: Roof | None = None,
                  labels: int | None = None, size_by: str = "time",
                  min_share: float | None = None,
                  size: tuple[float, float] | None = None,
                  zoom: bool = False) -> RooflineDisplay:
    """Draw roofs (the first judges the kernels) and kernels on log-log axes: a Roof or
    a list of them, a Kernel or a list (the README's `plot_roofline(roof, k)` type-checks:
    rooflab ships py.typed, review 19b N2).

    level: draw only this memory level's points (default: every level a kernel has bytes
    for, one marker per level — the hierarchical roofline); "L1" labels each point with
    its cache-aware (CARM) % of roof, the lowest roof above it (model/level_carm), as
    `rooflab report --level L1` gives it.
    sweep: measured (AI, FLOP/s) points of an intensity sweep, drawn as small grey dots;
    sweep_precision (e.g. "fp64", the CPU probe's) marks the ridge they should bend at;
    with points in sweep, its ceiling is drawn even where `precisions=None` thins a roof.
    arrows: (before, after) kernel pairs, drawn as arrows (what-ifs, comparisons).
    trajectory: join kernels with the same name in the order given (optimisation steps).
    precisions: the compute ceilings to draw, by precision ("fp16") or label ("fp16
    tensor"), or "all"; None draws every ceiling, except that a roof with more than
    MAX_CEILINGS gets the kernels' ceilings plus its top float one (the notes say which
    were left out). Ridges follow the ceilings drawn.
    before_roof: the roof the arrows' starting kernels ran on, when it is not the first
    (a move to other hardware): their colour and % of roof are judged by it.
    labels: how many kernels get a label, the longest first (default LABELS_SHOWN, 20; 0:
    every one); every point is drawn, and the notes say how many are unlabelled.
    size_by: "time" (default: marker area proportional to the kernel's share of the timed
    total, SIZE_MIN..SIZE_MAX points across, chart_parts.share_size) or "none" (every
    marker POINT_SIZE).
    min_share: leave out kernels under this fraction of the timed total (0.01 = 1 %); the
    arrows' kernels and untimed ones are kept, and the notes say how many went.
    size: (width, height) in inches of the written chart (default 9 x 6; chart_layout_size:
    a smaller one is scaled with its text, which stays at 5.25 pt or more).
    zoom: where the points fill under ZOOM_BELOW of the axes' decades on both axes, limits
    hugging the points, every ridge and every compute ceiling (half a decade each side)
    instead of the whole roof around them.

    >>> display = plot_roofline([roof], kernels)   # doctest: +SKIP
    >>> save_figure(display, "chart.png")          # doctest: +SKIP
    """
    display = roofline_data(roofs, kernels, level=level, sweep=sweep, arrows=arrows,
                            trajectory=trajectory, title=title, precisions=precisions,
                            sweep_precision=sweep_precision, before_roof=before_roof,
                            labels=labels, size_by=size_by, min_share=min_share,
                            zoom=zoom)
    with chart_fonts(display) as caught:   # CJK names drawn with a CJK font (chart_fonts)
        display.plot(ax=ax, size=size)
    _layout_warnings(caught)   # (missing glyphs are said when the chart is written)
    return display


SUFFIXES = (".png", ".svg")


def figure_bytes(display: RooflineDisplay, fmt: str, *, description: str | None = None,
                 **savefig_kw) -> bytes:
    """The chart rendered as PNG or SVG bytes (drawn first if needed); savefig_kw go to
    matplotlib's Figure.savefig over the defaults (dpi 150, no date). A chart drawn at a
    size (plot(size=...)) is written at that size: dpi is pixels per inch of it.
    description: the file's description where the caller has it (the HTML report's alt
    text, built from its own diagnoses), else chart_description's."""
    buf = io.BytesIO()
    # No date, and the chart's own title (not "Matplotlib v3.x") in the file's metadata,
    # so the same chart gives the same file and a viewer or screen reader names it.
    title = " ".join(getattr(display, "title", "").split())
    metadata = ({"Date": None, "Title": title} if fmt == "svg"
                else {"Software": None, "Title": title})
    # and the HTML report's alt text as its description (chart_description, s23 r6 F11)
    from .chart_description import chart_description, svg_with_desc

    if description is None:
        description = chart_description(display)
    if description:
        metadata["Description"] = description
    kw = {"dpi": 150, "metadata": metadata, **savefig_kw, "format": fmt}
    # drawn at a design size and scaled to the size asked (chart_layout_size): a PNG of W
    # inches at D dpi is W x D pixels whatever the design's size
    kw["dpi"] = kw["dpi"] * getattr(display, "scale_", 1.0)
    import contextlib

    import matplotlib

    from .chart_layout_size import without_outlines

    # SVG text as <text> in the document's fonts, not one path per glyph: searchable,
    # editable, read by screen readers, and half the size (review 18c F13); the SVG's
    # marker and clip-path ids salted with a fixed word, not a fresh uuid, so the same
    # chart is the same bytes (an .svg or an .html report kept in git; s21 r7 F10)
    with chart_fonts(display) as caught:
        if display.figure_ is None:
            display.plot()
        with (without_outlines(display.figure_) if fmt == "svg" else contextlib.nullcontext()), \
                matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "rooflab"}):
            display.figure_.savefig(buf, **kw)
    _layout_warnings(caught, display if fmt != "svg" else None)
    data = buf.getvalue()
    size = getattr(display, "size_", None)   # a SweepDisplay has none
    if fmt == "svg" and size is not None:
        from .chart_layout_size import svg_at_size

        data = svg_at_size(data, size)
    return svg_with_desc(data, description) if fmt == "svg" else data


def _layout_warnings(caught, glyphs_of: RooflineDisplay | None = None) -> None:
    """matplotlib's warnings while drawing or writing, passed on; "constrained_layout not
    applied" (the texts left the axes no room: the chart is written without the layout) as
    rooflab's own words, the one sign that the figure came out squeezed; its per-character
    "Glyph ... missing" ones as one MissingGlyphsWarning for the chart glyphs_of (a PNG's),
    none where it is None (an SVG's text is drawn by its viewer; s22 r3 F4)."""
    import warnings

    from ..errors import user_stacklevel
    from .chart_fonts import MissingGlyphsWarning, glyph_warning, missing_glyphs

    missing: dict[str, str] = {}
    for w in caught:
        text = str(w.message)
        glyph = glyph_warning(text)
        if glyph is not None:
            missing.setdefault(*glyph)
        elif "constrained_layout not applied" in text:
            warnings.warn("rooflab: the chart's titles, axis labels or legend left no room "
                          "for the axes, so matplotlib drew it without its layout (texts "
                          "may overlap the axes); a shorter --title or a larger --size "
                          "helps", UserWarning, stacklevel=3)
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    if missing and glyphs_of is not None:
        fonts = ", ".join(dict.fromkeys(missing.values()))
        warnings.warn(missing_glyphs(glyphs_of, set(missing), fonts), MissingGlyphsWarning,
                      stacklevel=user_stacklevel())


def save_figure(display: RooflineDisplay, path: str | os.PathLike, **savefig_kw) -> Path:
    """Write the chart to .png or .svg (by suffix), atomically; savefig_kw as figure_bytes."""
    suffix = Path(path).suffix.lower()
    if suffix not in SUFFIXES:
        got = suffix or "no suffix"
        raise InputError(f"chart file '{path}' must end in .png or .svg; got '{got}'")
    return write_atomic(path, figure_bytes(display, suffix[1:], **savefig_kw))


def _fit_level_sizes(points: list[DrawnPoint], xlim, ylim) -> list[DrawnPoint]:
    """Each kernel's level markers no larger than the distance (points, on the modelled
    axes) between its two closest levels' markers, never under POINT_SIZE: a marker sized
    by its time share covers its neighbour. Review s18 r5 F10: one Nsight Compute kernel
    (100 % of the time: 20 pt markers) had its L2 square (AI 4.05) half under its DRAM
    circle (AI 5.03), 7 pt apart."""
    at = {id(p): _to_pt(p.ai, p.flop_per_s, xlim, ylim) for p in points}
    by_kernel: dict[int, list[DrawnPoint]] = {}
    for p in points:
        by_kernel.setdefault(p.kernel_index, []).append(p)
    # one cap for all of a kernel's markers: their size is its time share, one figure
    cap = {i: max(POINT_SIZE, min((math.dist(at[id(p)], at[id(q)]) for p in pts for q in pts
                                   if p.level != q.level), default=math.inf))
           for i, pts in by_kernel.items()}
    return [replace(p, size=cap[p.kernel_index]) if p.size > cap[p.kernel_index] else p
            for p in points]


