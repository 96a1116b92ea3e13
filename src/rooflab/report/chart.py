"""Roofline charts: compute what to draw as plain data, then draw it with matplotlib.

The shape follows scikit-learn's Display objects (sklearn/inspection/_plot): a pure
function works out every line, ridge and point (`RooflineDisplay.lines/ridges/points`,
which the tests read), and `RooflineDisplay.plot(ax=None)` draws them, importing
matplotlib only then and returning the display with `figure_` and `ax_` set.

Conventions (ARCHITECTURE.md, seed 004): log-log axes; nominal ceilings dashed, measured
ceilings solid; memory-bound kernels indigo, compute-bound amber; a kernel without a
measured time is drawn hollow at its attainable height (predicted, not measured).
"""

from __future__ import annotations

import io
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InputError
from ..files import write_atomic
from ..model.analysis import analyze
from ..model.ceiling import Ceiling, Roof
from ..model.kernel import Kernel
from ..units import fmt_ai, si

MEMORY_BOUND_COLOR = "#2b53d8"   # indigo: left of the ridge (seed 004's colour convention)
COMPUTE_BOUND_COLOR = "#b26a12"  # amber: right of the ridge
SWEEP_COLOR = "#9a9a9a"
# One colour per roof, in the order given: the first (the one kernels are judged by) darkest.
ROOF_COLORS = ("#333333", "#8c8c8c", "#1b8a6b", "#8e3fb0", "#c0392b", "#5f7f1f", "#0f6e8c")
LEVEL_MARKERS = {"L1": "^", "L2": "s", "L3": "D", "DRAM": "o", "PCIe": "P", "NVLink": "X",
                 "network": "*", "loopback": "h"}
SUFFIXES = (".png", ".svg")


@dataclass(frozen=True)
class Line:
    """A drawn line. style: solid (measured), dashed (nominal), or dotted (sweep)."""

    label: str
    xs: tuple[float, ...]
    ys: tuple[float, ...]
    style: str
    kind: str              # compute | memory | sweep
    roof: str = ""
    color: str = ""


@dataclass(frozen=True)
class Ridge:
    """A marked ridge point AI* = P / B."""

    label: str
    ai: float
    flop_per_s: float
    roof: str = ""
    compute: str = ""
    level: str = ""


@dataclass(frozen=True)
class DrawnPoint:
    """A kernel at one memory level; flop_per_s is achieved, or attainable when predicted."""

    kernel: str
    level: str
    ai: float
    flop_per_s: float
    color: str
    measured: bool = True
    marker: str = "o"
    label: str = ""
    bound: str = ""
    percent_of_roof: float | None = None


@dataclass(frozen=True)
class Arrow:
    """From one point to another: a before -> after pair, or one step of a trajectory."""

    label: str
    start: tuple[float, float]
    end: tuple[float, float]
    kind: str = "arrow"    # arrow | trajectory


@dataclass
class RooflineDisplay:
    """Everything a roofline chart shows, as data; `plot()` draws it."""

    roofs: tuple[Roof, ...]
    lines: tuple[Line, ...]
    ridges: tuple[Ridge, ...]
    points: tuple[DrawnPoint, ...]
    arrows: tuple[Arrow, ...] = ()
    xlim: tuple[float, float] = (0.01, 1e4)
    ylim: tuple[float, float] = (1e9, 1e15)
    title: str = ""
    notes: tuple[str, ...] = ()
    roof_labels: tuple[str, ...] = ()
    kernels: tuple[Kernel, ...] = ()   # every kernel drawn, arrows' included, in order
    figure_: object = field(default=None, repr=False)
    ax_: object = field(default=None, repr=False)

    def plot(self, ax=None) -> RooflineDisplay:
        """Draw on `ax` (a new figure when None); returns self with figure_ and ax_ set."""
        self.figure_, self.ax_ = _draw(self, ax)
        return self

    def _repr_png_(self) -> bytes:  # Jupyter shows the chart inline
        return figure_bytes(self, "png")


def roof_label(roof: Roof) -> str:
    return roof.name if roof.kind in roof.name else f"{roof.name} ({roof.kind})"


def _style(c: Ceiling) -> str:
    return "solid" if c.provenance == "measured" else "dashed"


def _reference_level(roof: Roof, level: str | None) -> str | None:
    """The level ridges are marked against: the chosen one, DRAM, else the slowest."""
    levels = roof.levels
    if level in levels:
        return level
    if "DRAM" in levels:
        return "DRAM"
    return min(roof.memory, key=lambda c: c.value).level if roof.memory else None


def _positive_finite(x: float | None) -> bool:
    return x is not None and 0 < x < math.inf


def _ridges(roofs: Sequence[Roof], kernels: Sequence[Kernel], level: str | None) -> list[Ridge]:
    out: list[Ridge] = []
    for roof in roofs:
        ref = _reference_level(roof, level)
        if ref is None or not roof.compute:
            continue
        mem = roof.bandwidth(ref)
        # The kernels' own ceilings first: the first ridge is the one that judges them.
        ceilings = [roof.compute_for(k.precision, k.unit)[0] for k in kernels] + [roof.top_compute]
        for c in dict.fromkeys(ceilings):
            ai = c.value / mem.value
            label = f"{c.label} / {ref}: AI* = {fmt_ai(ai)}"
            out.append(Ridge(label=label, ai=ai, flop_per_s=c.value, roof=roof_label(roof),
                             compute=c.label, level=ref))
    return out


def _point_label(name: str, ai: float, y: float, pct: float | None, measured: bool) -> str:
    if not measured:
        return f"{name}\nAI {fmt_ai(ai)} · predicted {si(y, 'FLOP/s')}"
    pct_text = f"\n{pct:.0f}% of roof" if pct is not None else ""
    return f"{name}\nAI {fmt_ai(ai)} · {si(y, 'FLOP/s')}{pct_text}"


def kernel_points(roof: Roof, kernel: Kernel, level: str | None = None
                  ) -> tuple[list[DrawnPoint], list[str]]:
    """The points one kernel puts on the chart: one per memory level (or just `level`)."""
    notes: list[str] = []
    if level is not None and level not in kernel.bytes:
        return [], [f"{kernel.name}: no bytes at {level}; not drawn"]
    analysis = analyze(roof, [kernel], levels=[level] if level else None)
    notes.extend(analysis.notes)
    primary = {(p.kernel, p.level) for p in analysis.primary()}
    several = len(analysis.points) > 1
    out: list[DrawnPoint] = []
    for p in analysis.points:
        measured = p.achieved_flop_per_s is not None
        y = p.achieved_flop_per_s if measured else p.attainable_flop_per_s
        if not (_positive_finite(p.ai) and _positive_finite(y)):
            notes.append(f"{kernel.name} at {p.level}: AI {p.ai:g} cannot sit on log axes "
                         f"(zero FLOP or zero bytes); not drawn")
            continue
        if (p.kernel, p.level) in primary:
            name = f"{kernel.name} [{p.level}]" if several else kernel.name
            label = _point_label(name, p.ai, y, p.percent_of_roof, measured)
        else:
            label = p.level
        color = MEMORY_BOUND_COLOR if p.ai < p.ridge else COMPUTE_BOUND_COLOR
        out.append(DrawnPoint(kernel=kernel.name, level=p.level, ai=p.ai, flop_per_s=y,
                              color=color, measured=measured,
                              marker=LEVEL_MARKERS.get(p.level, "o"), label=label,
                              bound=p.bound, percent_of_roof=p.percent_of_roof))
    return out, notes


def _pick(points: list[DrawnPoint], level: str | None) -> DrawnPoint | None:
    """The point an arrow or a trajectory goes through: the chosen level, DRAM, else first."""
    for want in (level, "DRAM"):
        for p in points:
            if p.level == want:
                return p
    return points[0] if points else None


def _limits(roofs, ridge_ais, points, sweep):
    xs = [p.ai for p in points] + [x for x, _ in sweep] + ridge_ais
    ceilings = [c.value for r in roofs for c in r.compute]
    ys = [p.flop_per_s for p in points] + [y for _, y in sweep] + ceilings
    xs = [x for x in xs if _positive_finite(x)] or [0.1, 100.0]
    ys = [y for y in ys if _positive_finite(y)] or [1e9, 1e12]
    # Margins: a factor 4 beyond the data, and at least two decades of slope left of the
    # lowest ridge and one decade of flat roof right of the highest, so both parts show.
    ridges = [x for x in ridge_ais if _positive_finite(x)] or xs
    x_lo = min(min(xs) / 4, min(ridges) / 100)
    x_hi = max(max(xs) * 4, max(ridges) * 10)
    bws = [c.value for r in roofs for c in r.memory]
    slope_lo = [b * x_lo for b in bws]
    y_lo = min([min(ys) / 4, *slope_lo])   # the slopes start at the bottom-left corner
    y_hi = max(ys) * 4
    return (x_lo, x_hi), (y_lo, y_hi)


def _roof_lines(roof: Roof, color: str, xlim: tuple[float, float]) -> list[Line]:
    x_lo, x_hi = xlim
    label = roof_label(roof)
    lines = []
    fastest = max((c.value for c in roof.memory), default=None)
    top = roof.top_compute.value if roof.compute else None
    # Slopes run from the left edge to where they meet the top compute ceiling; compute
    # ceilings run from the fastest slope to the right edge, so every ceiling is visible.
    for m in roof.memory:
        x_end = top / m.value if top else x_hi
        lines.append(Line(label=f"{m.level} {si(m.value, 'B/s')}", xs=(x_lo, x_end),
                          ys=(m.value * x_lo, m.value * x_end), style=_style(m),
                          kind="memory", roof=label, color=color))
    for c in roof.compute:
        x_start = c.value / fastest if fastest else x_lo
        lines.append(Line(label=f"{c.label} {si(c.value, 'FLOP/s')}", xs=(x_start, x_hi),
                          ys=(c.value, c.value), style=_style(c), kind="compute",
                          roof=label, color=color))
    return lines


def roofline_data(roofs: Sequence[Roof], kernels: Sequence[Kernel] = (), *,
                  level: str | None = None, sweep: Sequence[tuple[float, float]] = (),
                  arrows: Sequence[tuple[Kernel, Kernel]] = (), trajectory: bool = False,
                  title: str | None = None) -> RooflineDisplay:
    """Work out the chart without drawing it (pure; matplotlib is not imported)."""
    roofs = tuple(roofs)
    if not roofs:
        raise InputError("a roofline chart needs at least one roof; pass --on HARDWARE|PROFILE")
    judge = roofs[0]
    to_draw: list[Kernel] = []
    for k in list(kernels) + [k for pair in arrows for k in pair]:
        if not any(k is d for d in to_draw):
            to_draw.append(k)
    notes: list[str] = []
    per_kernel: list[list[DrawnPoint]] = []
    for k in to_draw:
        pts, kn = kernel_points(judge, k, level)
        per_kernel.append(pts)
        notes.extend(kn)
    points = [p for pts in per_kernel for p in pts]
    ridges = _ridges(roofs, to_draw, level)
    ridge_ais = [r.ai for r in ridges] + [c.value / m.value for r in roofs for c in r.compute
                                          for m in r.memory]
    sweep = [(float(x), float(y)) for x, y in sweep]
    xlim, ylim = _limits(roofs, ridge_ais, points, sweep)
    lines: list[Line] = []
    for i, roof in enumerate(roofs):
        lines.extend(_roof_lines(roof, ROOF_COLORS[i % len(ROOF_COLORS)], xlim))
    good_sweep = [(x, y) for x, y in sweep if _positive_finite(x) and _positive_finite(y)]
    if good_sweep:
        lines.append(Line(label="intensity sweep (measured)", xs=tuple(x for x, _ in good_sweep),
                          ys=tuple(y for _, y in good_sweep), style="dotted", kind="sweep",
                          color=SWEEP_COLOR))
    drawn_arrows = _pair_arrows(arrows, level, to_draw, per_kernel)
    if trajectory:
        drawn_arrows += _trajectory_arrows(to_draw, per_kernel, level)
    if title is None:
        title = "Roofline: " + " vs ".join(roof_label(r) for r in roofs)
    return RooflineDisplay(roofs=roofs, lines=tuple(lines), ridges=tuple(ridges),
                           points=tuple(points), arrows=tuple(drawn_arrows), xlim=xlim,
                           ylim=ylim, title=title, notes=tuple(dict.fromkeys(notes)),
                           roof_labels=tuple(roof_label(r) for r in roofs),
                           kernels=tuple(to_draw))


def _pair_arrows(arrows, level, to_draw, per_kernel) -> list[Arrow]:
    out = []
    for before, after in arrows:
        a = _pick(per_kernel[_index(to_draw, before)], level)
        b = _pick(per_kernel[_index(to_draw, after)], a.level if a else level)
        if a is None or b is None:
            continue
        label = before.name if before.name == after.name else f"{before.name} → {after.name}"
        out.append(Arrow(label=label, start=(a.ai, a.flop_per_s), end=(b.ai, b.flop_per_s)))
    return out


def _index(seq: list[Kernel], k: Kernel) -> int:
    return next(i for i, d in enumerate(seq) if d is k)


def _trajectory_arrows(to_draw, per_kernel, level) -> list[Arrow]:
    """Join the kernels that share a name, in the order given (e.g. optimisation steps)."""
    last: dict[str, DrawnPoint] = {}
    out = []
    for k, pts in zip(to_draw, per_kernel, strict=True):
        p = _pick(pts, last[k.name].level if k.name in last else level)
        if p is None:
            continue
        prev = last.get(k.name)
        if prev is not None:
            out.append(Arrow(label=k.name, start=(prev.ai, prev.flop_per_s),
                             end=(p.ai, p.flop_per_s), kind="trajectory"))
        last[k.name] = p
    return out


def plot_roofline(roofs: Sequence[Roof], kernels: Sequence[Kernel] = (), *,
                  level: str | None = None, sweep: Sequence[tuple[float, float]] = (),
                  arrows: Sequence[tuple[Kernel, Kernel]] = (), trajectory: bool = False,
                  title: str | None = None, ax=None) -> RooflineDisplay:
    """Draw roofs (the first judges the kernels) and kernels on log-log axes.

    level: draw only this memory level's points (default: every level a kernel has bytes
    for, one marker per level — the hierarchical roofline).
    sweep: measured (AI, FLOP/s) points of an intensity sweep, drawn as small grey dots.
    arrows: (before, after) kernel pairs, drawn as arrows (what-ifs, comparisons).
    trajectory: join kernels with the same name in the order given (optimisation steps).

    >>> display = plot_roofline([roof], kernels)   # doctest: +SKIP
    >>> save_figure(display, "chart.png")          # doctest: +SKIP
    """
    display = roofline_data(roofs, kernels, level=level, sweep=sweep, arrows=arrows,
                            trajectory=trajectory, title=title)
    return display.plot(ax=ax)


def figure_bytes(display: RooflineDisplay, fmt: str) -> bytes:
    """The chart rendered as PNG or SVG bytes (drawn first if needed)."""
    if display.figure_ is None:
        display.plot()
    buf = io.BytesIO()
    # No date in SVG metadata, so the same chart gives the same file.
    metadata = {"Date": None} if fmt == "svg" else {"Software": None}
    display.figure_.savefig(buf, format=fmt, dpi=150, metadata=metadata)
    return buf.getvalue()


def save_figure(display: RooflineDisplay, path: str | os.PathLike) -> Path:
    """Write the chart to .png or .svg (by suffix), atomically."""
    suffix = Path(path).suffix.lower()
    if suffix not in SUFFIXES:
        got = suffix or "no suffix"
        raise InputError(f"chart file '{path}' must end in .png or .svg; got '{got}'")
    return write_atomic(path, figure_bytes(display, suffix[1:]))


# --- drawing (the only part that imports matplotlib) ---------------------------------------
_LINESTYLES = {"solid": "-", "dashed": "--", "dotted": ":"}


def _draw(d: RooflineDisplay, ax):
    from matplotlib.lines import Line2D
    from matplotlib.ticker import FuncFormatter

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
    ax.set_xlabel("arithmetic intensity (FLOP/byte)")
    ax.set_ylabel("performance (FLOP/s)")
    ax.set_title(d.title)
    engine = fig.get_layout_engine()
    if engine is not None:  # settle the axes box first: slope labels need its aspect
        engine.execute(fig)
    # Equal ceilings of one roof (A100: fp32 vector = fp64 tensor) share one label.
    same: dict[tuple[str, float], list[str]] = {}
    for line in d.lines:
        if line.kind == "compute":
            same.setdefault((line.roof, line.ys[0]), []).append(line.label)
    for line in d.lines:
        group = same.get((line.roof, line.ys[0]), [line.label]) if line.kind == "compute" else []
        if group and group[0] != line.label:
            ax.plot(line.xs, line.ys, _LINESTYLES[line.style], color=line.color,
                    lw=2.2 if line.style == "solid" else 1.4, zorder=2)
            continue
        _draw_line(ax, line, d, "; ".join(group) if group else line.label)
    for r in d.ridges:
        first = d.roof_labels[:1] == (r.roof,)
        ax.plot([r.ai], [r.flop_per_s], marker="D", ms=5, color=_roof_color(d, r.roof), zorder=4)
        ax.annotate(f"AI*={fmt_ai(r.ai)}", (r.ai, r.flop_per_s), textcoords="offset points",
                    xytext=(4, -11) if first else (-4, 5), ha="left" if first else "right",
                    fontsize=7, color=_roof_color(d, r.roof))
    if d.ridges:
        ax.axvline(d.ridges[0].ai, color="0.75", lw=1, ls=":", zorder=1)
    for a in d.arrows:
        style = "-|>" if a.kind == "arrow" else "->"
        ax.annotate("", xy=a.end, xytext=a.start, zorder=3,
                    arrowprops={"arrowstyle": style, "color": "0.35", "lw": 1.2,
                                "shrinkA": 5, "shrinkB": 5,
                                "ls": "-" if a.kind == "arrow" else "--"})
    for p in d.points:
        ax.plot([p.ai], [p.flop_per_s], ls="none", marker=p.marker, ms=8, mec=p.color,
                mfc=p.color if p.measured else "none", mew=1.5, zorder=5)
        # Below-right: inside the roof, away from the ceiling labels drawn above the lines.
        # Near the right edge the label goes left of the point, so it is not cut off.
        right = math.log(p.ai / d.xlim[0]) > 0.8 * math.log(d.xlim[1] / d.xlim[0])
        ax.annotate(p.label, (p.ai, p.flop_per_s), textcoords="offset points",
                    xytext=(-7 if right else 7, -8), ha="right" if right else "left",
                    va="top", fontsize=7, color="0.15")
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: si(v, "FLOP/s")))
    ax.grid(True, which="both", alpha=0.2)
    ax.legend(handles=_legend(d, Line2D), loc="lower right", fontsize=7)
    return fig, ax


def _roof_color(d: RooflineDisplay, label: str) -> str:
    i = d.roof_labels.index(label) if label in d.roof_labels else 0
    return ROOF_COLORS[i % len(ROOF_COLORS)]


def _draw_line(ax, line: Line, d: RooflineDisplay, text: str) -> None:
    if line.kind == "sweep":
        ax.plot(line.xs, line.ys, "-o", ms=3, lw=0.8, color=line.color, zorder=2)
        return
    solid = line.style == "solid"
    ax.plot(line.xs, line.ys, _LINESTYLES[line.style], color=line.color,
            lw=2.2 if solid else 1.4, zorder=2)
    first = d.roof_labels[:1] == (line.roof,)
    if line.kind == "compute":
        # The judging roof labels its ceilings at the right edge, the others at their left
        # end, so two roofs with similar peaks do not print on top of each other.
        x, ha = (line.xs[1], "right") if first else (line.xs[0] * 1.15, "left")
        ax.text(x, line.ys[1], f" {text} ", ha=ha, va="bottom", fontsize=7,
                color=line.color)
        return
    # Slope label: on log-log axes every slope has the same on-screen angle.
    (x0, x1), (y0, y1) = d.xlim, d.ylim
    w, h = ax.figure.get_size_inches() * ax.get_position().size
    angle = math.degrees(math.atan2(h / math.log10(y1 / y0), w / math.log10(x1 / x0)))
    # Each roof's label a little further along, so two roofs' labels do not overlap.
    shift = 3.0 * 4.0 ** (d.roof_labels.index(line.roof) if line.roof in d.roof_labels else 0)
    ax.text(line.xs[0] * shift, line.ys[0] * shift, " " + text, rotation=angle,
            rotation_mode="anchor", ha="left", va="bottom", fontsize=7, color=line.color)


def _legend(d: RooflineDisplay, Line2D) -> list:
    handles = []
    for label in d.roof_labels:
        styles = {ln.style for ln in d.lines if ln.roof == label}
        ls = "-" if styles == {"solid"} else "--" if "solid" not in styles else "-."
        note = "" if len(styles) == 1 else " (solid measured, dashed nominal)"
        handles.append(Line2D([], [], color=_roof_color(d, label), ls=ls, label=label + note))
    if any(p.color == MEMORY_BOUND_COLOR for p in d.points):
        handles.append(Line2D([], [], ls="none", marker="o", color=MEMORY_BOUND_COLOR,
                              label="memory-bound side"))
    if any(p.color == COMPUTE_BOUND_COLOR for p in d.points):
        handles.append(Line2D([], [], ls="none", marker="o", color=COMPUTE_BOUND_COLOR,
                              label="compute-bound side"))
    if any(not p.measured for p in d.points):
        handles.append(Line2D([], [], ls="none", marker="o", mfc="none", mec="0.3",
                              label="predicted (no measured time)"))
    levels = list(dict.fromkeys(p.level for p in d.points))
    if len(levels) > 1:
        handles += [Line2D([], [], ls="none", marker=LEVEL_MARKERS.get(lv, "o"), color="0.3",
                           label=f"bytes at {lv}") for lv in levels]
    if any(ln.kind == "sweep" for ln in d.lines):
        handles.append(Line2D([], [], marker="o", ms=3, lw=0.8, color=SWEEP_COLOR,
                              label="intensity sweep (measured)"))
    return handles
