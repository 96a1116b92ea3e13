"""The pieces a roofline chart is made of, as plain values: lines, ridges, points, arrows
and the RooflineDisplay that holds them, with the colours, markers and labels they share.

chart.py works out these values, chart_layout.py places their labels, chart_draw.py draws
them; all three import them from here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from ..model.ceiling import Ceiling, Roof
from ..model.kernel import Kernel
from ..units import fmt_seconds, si
from .chart_rc import quiet_config_dir

# the marker sizes live in marker_size, which imports no chart module: the CLI reads
# SIZE_BY there without loading matplotlib (review s24 h2 F1)
from .marker_size import POINT_SIZE

# Before any chart module imports matplotlib (each imports this one first): no "mkdir -p
# failed" lines on stderr where HOME is not writable (chart_rc, review s23 r2 F5)
quiet_config_dir()

# Colours: Okabe & Ito's colour-blind-safe palette (Okabe M., Ito K. 2008, "Color Universal
# Design: how to make figures and presentations that are friendly to colorblind people",
# jfly.uni-koeln.de/color). No meaning rests on colour alone (docs/plot.md, "Reading the
# chart in grey"): the side of the ridge is also the glyph inside a point (SIDE_GLYPHS),
# a roof is also its beads along its lines (ROOF_MARKERS), a slope is also its label.
MEMORY_BOUND_COLOR = "#0072B2"   # Okabe-Ito blue: left of the ridge (dark in grey)
COMPUTE_BOUND_COLOR = "#E69F00"  # Okabe-Ito orange: right of the ridge (light in grey)
SWEEP_COLOR = "#9a9a9a"
# One colour per roof, in the order given: the first (the one kernels are judged by) darkest,
# the second a mid grey (the two tell apart in grey and in any colour vision); then
# Okabe-Ito bluish green, reddish purple, vermillion, sky blue (its blue and orange are the
# sides' and its yellow is too pale for a line on white).
ROOF_COLORS = ("#333333", "#8c8c8c", "#009E73", "#CC79A7", "#D55E00", "#56B4E9")
# Beads along a roof's lines (and in its legend entry), one kind per roof in the same order,
# so roofs tell apart without colour; line style stays for provenance (measured solid,
# nominal dashed). Unfilled, small: not to be taken for kernels.
ROOF_MARKERS = ("", "x", "o", "s", "+", "^")
# A kernel's side of the ridge, besides its colour: a glyph drawn inside its marker (the
# marker's shape is its memory level), the segment of the roof it sits under: a short
# slope for memory-bound, a flat bar for compute-bound. The legend shows both.
SIDE_GLYPHS = {"memory": "slope", "compute": "flat"}
LEVEL_MARKERS = {"L1": "^", "L2": "s", "L3": "D", "DRAM": "o", "PCIe": "P", "NVLink": "X",
                 "network": "*", "loopback": "h"}
# The interactive chart colours by memory level (its legend toggles levels), Okabe-Ito as
# above; a level is also its marker shape (LEVEL_MARKERS) and its slope is named on the
# line, so nothing rests on colour alone. Flat roofs are one colour, named on the chart.
LEVEL_COLORS = {"L1": "#009E73", "L2": "#CC79A7", "L3": "#56B4E9", "DRAM": "#0072B2"}
OTHER_LEVEL_COLOR = "#555"
COMPUTE_COLOR = "#D55E00"   # vermillion: darker than the orange, so its names read on white
# Line.style as plotly names it (the interactive chart draws the same lines)
PLOTLY_DASH = {"solid": "solid", "dashed": "dash", "dotted": "dot"}

# The thin line through one kernel's points at its memory levels (Advisor's integrated
# roofline joins a loop's L1/L2/L3/DRAM dots): which triangle belongs to which circle.
JOIN_COLOR = "#a0a0a0"
JOIN_LEGEND = "one kernel's levels"


def ceiling_style(c: Ceiling) -> str:
    """A ceiling's line style, in every chart: measured solid, anything else (nominal,
    derived) dashed, so a roof of STREAM bandwidth and datasheet peaks mixes the two."""
    return "solid" if c.provenance == "measured" else "dashed"


def level_color(level: str) -> str:
    return LEVEL_COLORS.get(level, OTHER_LEVEL_COLOR)


@dataclass(frozen=True)
class Line:
    """A drawn line. style: solid (measured), dashed (nominal), or dotted (sweep)."""

    label: str
    xs: tuple[float, ...]
    ys: tuple[float, ...]
    style: str
    kind: str              # compute | memory | sweep | mixed (a mixed kernel's weighted roof)
    roof: str = ""
    color: str = ""
    # Where the label goes (laid out by roofline_data so labels do not collide): the text
    # ("" = unlabelled, e.g. a ceiling equal to another of its roof that carries both
    # names), its anchor in data coordinates, an offset in points, and its alignment.
    text: str = ""
    label_xy: tuple[float, float] | None = None
    label_offset: tuple[float, float] = (0.0, 0.0)
    label_ha: str = "left"
    label_va: str = "bottom"
    # What the line draws, for a chart that shows more than its label (the HTML report's
    # legend and hover): the roof's ceiling (None: a sweep), the memory level of a slope
    # (a weighted roof's: the level its ridge is taken on) and the hover text.
    ceiling: Ceiling | None = None
    level: str = ""
    hover: str = ""


@dataclass(frozen=True)
class Ridge:
    """A marked ridge point AI* = P / B."""

    label: str
    ai: float
    flop_per_s: float
    roof: str = ""
    compute: str = ""
    level: str = ""
    label_offset: tuple[float, float] = (4.0, -11.0)   # points, from the ridge
    label_ha: str = "left"
    label_va: str = "baseline"


@dataclass(frozen=True)
class DrawnPoint:
    """A kernel at one memory level; flop_per_s is its achieved rate, or when untimed its
    predicted one: the roof's attainable rate, or the launch-bound rate FLOP / (calls x
    launch floor) where its launches take longer than its work (chart_points._kernel_points)."""

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
    text: str = ""                 # the label as drawn ("" = none; label keeps the full one)
    label_offset: tuple[float, float] = (7.0, -8.0)    # points, from the point
    label_ha: str = "left"
    label_va: str = "top"
    step: str = ""                 # a trajectory step's own name (meta step_label: "b=8")
    side: str = ""                 # memory | compute: left or right of its ridge
    kernel_index: int = -1         # its kernel's position in RooflineDisplay.kernels
    size: float = POINT_SIZE       # marker diameter, points (share_size of its time share)
    share: float | None = None     # its kernel's share of the timed total (None: untimed)


@dataclass(frozen=True)
class Arrow:
    """From one point to another: a before -> after pair, or one step of a trajectory."""

    label: str
    start: tuple[float, float]
    end: tuple[float, float]
    kind: str = "arrow"    # arrow | trajectory


# The launch cap (seed 000 §6.2 and §7: a kernel bound by launch latency sits far below
# the roof, and more AI does not lift it): `calls` launches cannot take less than calls x
# the roof's launch/dispatch floor t0, so FLOP / (calls x t0) is a ceiling on that
# kernel's FLOP/s at any AI. It is drawn only where it matters, at most CAP_SHOWN x the
# roof at the kernel's AI (the overhead floor at least half the work floor): on a large
# kernel it sits decades above the roof and would only clutter the chart.
CAP_SHOWN = 2.0
CAP_TOLERANCE = 1e-9   # relative: rounding does not decide the rule's edge
# Drawn as a short dash centred on the kernel's AI, this many decades either side, with a
# tick of CAP_TICK_PT points down at each end, so it reads as a lid over the point.
CAP_HALF_DECADES = 0.12
CAP_TICK_PT = 3.0
CAP_LEGEND = "launch cap: FLOP / (calls × launch floor)"


@dataclass(frozen=True)
class LaunchCap:
    """A kernel's launch cap: flop_per_s = flop / (calls x overhead_s), drawn as a dash at
    that height over its point at `level` (AI `ai`), in the point's colour."""

    kernel: str
    level: str
    ai: float
    flop_per_s: float
    calls: int
    overhead_s: float
    flop: float
    color: str = ""

    @property
    def xs(self) -> tuple[float, float]:
        """The dash's ends: CAP_HALF_DECADES either side of the kernel's AI."""
        f = 10 ** CAP_HALF_DECADES
        return self.ai / f, self.ai * f

    def words(self) -> str:
        """'launch cap 100 GFLOP/s = 1 MFLOP / (10 calls × 1 us)'."""
        return (f"launch cap {si(self.flop_per_s, 'FLOP/s')} = {si(self.flop, 'FLOP')} / "
                f"({self.calls} call{'s' if self.calls != 1 else ''} × "
                f"{fmt_seconds(self.overhead_s)})")


def launch_cap(kernel: str, level: str, ai: float, flop: float, calls: int,
               overhead_s: float | None, attainable_flop_per_s: float,
               color: str = "", seconds: float | None = None,
               gpu_side: bool = False) -> LaunchCap | None:
    """The launch cap of a kernel's point, or None where it is not drawn: no launch floor
    on the roof (a catalog roof without one), nothing to place on log axes (no FLOP, no
    calls, a zero floor), a cap above CAP_SHOWN x the roof at the point's AI, or a measured
    time (`seconds`) below calls x the floor: that time holds no launches (a profiler's
    GPU-side duration; sanity_ceilings.applicable_launch_s), so no cap binds it; nor one
    that is GPU-side at any length (gpu_side: Point.gpu_side, the same rule: 200 ncu
    launches of 5.1 us drew "launch cap 200 GFLOP/s" over a memory-bound point, review s21
    x2 F5). Pure."""
    if overhead_s is None or not overhead_s > 0 or calls <= 0 or gpu_side:
        return None
    if seconds is not None and seconds < calls * overhead_s:
        return None
    if not (0 < flop < math.inf and 0 < ai < math.inf and attainable_flop_per_s > 0):
        return None
    cap = flop / (calls * overhead_s)
    # "at most": 2e6 / (10 x 1e-6) is 2.00000000000003e11 in floats, 2x a 1e11 roof exactly
    if cap > CAP_SHOWN * attainable_flop_per_s * (1 + CAP_TOLERANCE):
        return None
    return LaunchCap(kernel=kernel, level=level, ai=ai, flop_per_s=cap, calls=calls,
                     overhead_s=overhead_s, flop=flop, color=color)


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
    hidden: tuple[str, ...] = ()       # compute ceilings left out, as "roof: label"
    caps: tuple[LaunchCap, ...] = ()   # launch caps, where they matter (CAP_SHOWN)
    unlabelled: int = 0   # kernels drawn without a label (chart.LABELS_SHOWN, labels=)
    # the thin grey lines through each kernel's per-level points (kind "levels"), under them
    joins: tuple[Line, ...] = ()
    sized: bool = False   # marker areas say the kernels' shares of the time (share_size)
    dropped: str = ""     # min_share's note: how many kernels are left out, else ""
    figure_: object = field(default=None, repr=False)
    ax_: object = field(default=None, repr=False)
    # the size asked for (inches) and the factor the drawn figure is scaled by to reach
    # it (chart_layout_size.design_size); None, 1.0: the design size as drawn
    size_: tuple[float, float] | None = field(default=None, repr=False)
    scale_: float = field(default=1.0, repr=False)
    # whether .plot() drew into an axes the caller gave (ax=), not a figure of its own
    callers_axes_: bool = field(default=False, repr=False)

    def plot(self, ax=None, size: tuple[float, float] | None = None) -> RooflineDisplay:
        """Draw on `ax` (a new figure when None); returns self with figure_ and ax_ set.
        size: (width, height) in inches of the written chart, for a new figure
        (chart_layout_size: drawn at a design size of at least 9 x 6 in and scaled, text too)."""
        from .chart_rc import pinned_rc

        with pinned_rc():   # matplotlib's defaults, not the user's matplotlibrc (chart_rc)
            return self._plot(ax, size)

    def _plot(self, ax, size: tuple[float, float] | None) -> RooflineDisplay:
        from .chart_draw import draw  # matplotlib is imported only here
        from .chart_layout_size import design_axes, fit_legend, keep_axes

        self.size_, self.scale_ = None, 1.0
        self.callers_axes_ = ax is not None
        design = ax is None and size is not None
        if design:
            ax, _ = design_axes(size)
        before = len(ax.texts) if ax is not None else 0   # a caller's own texts stay as they are
        self.figure_, self.ax_ = draw(self, ax)
        keep_axes(self.ax_, before)
        if design:   # a legend outside widens the figure; the width asked is kept
            self.scale_ = fit_legend(self.ax_, float(size[0]))
            w, h = self.figure_.get_size_inches()
            self.size_ = (float(size[0]), float(h * self.scale_))
        return self

    def savefig(self, path, **kwargs) -> Path:
        """Write the chart to `path`, .png or .svg by its suffix, atomically (drawn first if
        needed); `kwargs` go to matplotlib's Figure.savefig (dpi=300, ...). Returns the
        path. Other formats: `.plot().figure_.savefig(path)`, matplotlib's own."""
        from ..errors import InputError
        from .chart import SUFFIXES, save_figure

        suffix = Path(path).suffix.lower()
        if suffix not in SUFFIXES:
            raise InputError(f"savefig('{path}'): rooflab writes .png or .svg (got "
                             f"'{suffix or 'no suffix'}'); for another format matplotlib "
                             f"writes, use .plot().figure_.savefig('{path}')")
        return save_figure(self, path, **kwargs)

    def __repr__(self) -> str:
        # the dataclass repr printed every Ceiling of every roof: kilobytes for one chart
        def n(count: int, what: str) -> str:
            return f"{count} {what}{'' if count == 1 else 's'}"

        return (f"RooflineDisplay({n(len(self.roofs), 'roof')}, "
                f"{n(len(self.kernels), 'kernel')}, {n(len(self.points), 'point')}; "
                f".plot(), .savefig(path))")

    def _repr_png_(self) -> bytes | None:  # Jupyter shows the chart inline
        # drawn into the caller's axes (ax=): their figure is theirs to show, and pyplot's
        # inline backend shows it; an image here too showed the chart twice (review 18b D),
        # so IPython falls back to the text repr, as seaborn's axes-level functions do
        if self.callers_axes_:
            return None
        from .chart import figure_bytes

        return figure_bytes(self, "png")


def side_color(side: str) -> str:
    return MEMORY_BOUND_COLOR if side == "memory" else COMPUTE_BOUND_COLOR


def relative_luminance(color: str) -> float:
    """WCAG 2 relative luminance of '#rrggbb' (0 black .. 1 white): how light it prints in
    grey."""
    def lin(c: float) -> float:
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    h = color.lstrip("#")
    r, g, b = (int(h[i:i + 2], 16) / 255 for i in (0, 2, 4))
    return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b)


def roof_label(roof: Roof) -> str:
    from ..model.dies import kind_words  # one die of a package: derived (s34 G)

    kind = kind_words(roof)
    if kind in roof.name:
        return roof.name
    if roof.name.endswith(")"):   # "RTX 4060 (profiler peaks, derived)", not ") (derived)"
        return f"{roof.name[:-1]}, {kind})"
    return f"{roof.name} ({kind})"



def kernel_who(k) -> str:
    """A kernel as a ceiling of its own names it in the legend: with its step where its name
    does not say it ('sigma_gpp_gpu (steps) [output1]': a trajectory's kernels share one
    name, and the no-FMA ceiling of one step read as every step's; s33 C)."""
    step = (k.meta or {}).get("step")
    return f"{k.name} [{step}]" if step and f"[{step}]" not in k.name else k.name
