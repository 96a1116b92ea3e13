"""Bandwidth against working-set size (ERT's graph2/3, likwid-bench's -w staircase): the
sweep a probe keeps in its extras, as a table (`rooflab specs show me.json --sweep`) and a
chart (`--sweep -o ws.png`).

`sweep_table(profile_dict)` returns plain data; `SweepDisplay.plot()` draws it with
matplotlib imported there (the sklearn display pattern the roofline chart follows).
It reads both probes' shapes: the CPU probe's extras.bandwidth_sweep (per-thread working
sets, best and median per point, plateaus as a list) and the GPU probe's
extras.gpu.sweep.main (device working sets, the median per point, plateaus by name).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..errors import InputError
from ..units import fmt_bytes_binary as _fmt
from ..units import fmt_fraction
from .chart_marks import literal, text_color
from .chart_parts import LEVEL_COLORS, OTHER_LEVEL_COLOR


@dataclass(frozen=True)
class SweepRow:
    """One working set: bytes on the x axis (per thread on a CPU), rates in B/s."""

    ws_bytes: float
    ws_bytes_total: float
    best: float
    median: float
    spread: float | None      # (max - min) / median of the samples
    level: str | None         # the plateau window it fell in
    chosen: bool              # the point the level's ceiling was read at
    samples: int
    # False: the probe could not calibrate the point (every call waited for a CPU): its
    # rate is not a reading of the memory level (review 18c F20)
    calibrated: bool = True


@dataclass(frozen=True)
class Window:
    """A plateau: the working sets a level was read from, and its B/s."""

    level: str
    first: float
    last: float
    bytes_per_s: float
    chosen: float | None = None   # working set of the ceiling's point (CPU)


@dataclass(frozen=True)
class Marker:
    """A reported cache size on the x axis, and what it is."""

    name: str
    bytes_: float
    text: str


@dataclass(frozen=True)
class SweepTable:
    source: str                # where in the profile it came from
    axis: str                  # "per thread" or "device total"
    kernel: str
    threads: int | None
    rows: tuple[SweepRow, ...]
    windows: tuple[Window, ...]
    markers: tuple[Marker, ...]
    notes: tuple[str, ...] = field(default=())
    machine: str = ""          # the profile's host (or roof) name, for titles


def _spread(samples: Sequence[float], median: float) -> float | None:
    return (max(samples) - min(samples)) / median if len(samples) >= 2 and median else None


def _level_at(ws: float, windows: Sequence[Window]) -> str | None:
    return next((w.level for w in windows if w.first <= ws <= w.last), None)


def _cpu_markers(host: Mapping, reported: Mapping, threads: int) -> tuple[Marker, ...]:
    """Cache sizes per thread, as the probe divided them: L1d/L2 per core over the probe
    threads sharing one (sysfs shared_cpu_list), L3 x instances over all threads."""
    caches = host.get("caches") or {}
    out = []
    for name, key, share in (("L1d", "l1d", "l1d_sharing"), ("L2", "l2", "l2_sharing")):
        size = caches.get(key) or reported.get(name)
        if size:
            k = max(1, min(int(caches.get(share) or 1), threads))
            per = f" / {k} SMT threads" if k > 1 else ""
            out.append(Marker(name, size / k, f"{name} {_fmt(size)} per core{per}"))
    l3 = caches.get("l3") or reported.get("L3")
    if l3:
        inst = max(1, int(caches.get("l3_instances") or 1))
        total = l3 * inst
        out.append(Marker("L3", total / max(1, threads),
                          f"L3 {_fmt(total)} shared by {threads} thread"
                          f"{'s' if threads != 1 else ''}"))
    return tuple(out)


def _cpu_table(sweep: Mapping, host: Mapping) -> SweepTable:
    threads = int(sweep.get("threads") or 1)
    windows = tuple(Window(p["level"], float(p["first_bytes_per_thread"]),
                           float(p["last_bytes_per_thread"]), float(p["bytes_per_s"]),
                           p.get("chosen_bytes_per_thread"))
                    for p in sweep.get("plateaus") or ())
    chosen = {w.chosen for w in windows if w.chosen is not None}
    rows = []
    for p in sweep.get("points") or ():
        ws, samples = float(p["ws_bytes_per_thread"]), list(p.get("samples") or ())
        best = float(p["bytes_per_s"])
        median = float(p.get("median_bytes_per_s") or statistics.median(samples or [best]))
        spread = p.get("spread")
        rows.append(SweepRow(ws, float(p.get("ws_bytes_total") or ws * threads), best, median,
                             spread if spread is not None else _spread(samples, median),
                             _level_at(ws, windows), ws in chosen, len(samples),
                             p.get("calibrated") is not False))
    return SweepTable("extras.bandwidth_sweep", "per thread", str(sweep.get("kernel", "triad")),
                      threads, tuple(rows), windows,
                      _cpu_markers(host, sweep.get("reported_caches") or {}, threads),
                      tuple(sweep.get("notes") or ()))


def _gpu_table(sweep: Mapping, host: Mapping) -> SweepTable:
    """The GPU probe keeps each point's median as bytes_per_s and its samples: best =
    the largest sample. Its ceilings are plateau medians, so no point is 'chosen'."""
    windows = tuple(Window(name, float(p["first_bytes"]), float(p["last_bytes"]),
                           float(p["bytes_per_s"]))
                    for name, p in (sweep.get("plateaus") or {}).items())
    rows = []
    for p in sweep.get("points") or ():
        ws, samples = float(p["working_set_bytes"]), [float(v) for v in p.get("samples") or ()]
        median = float(p["bytes_per_s"])
        rows.append(SweepRow(ws, ws, max(samples) if samples else median, median,
                             _spread(samples, median), _level_at(ws, windows), False,
                             len(samples), p.get("calibrated") is not False))
    caches = host.get("caches") or {}
    markers = tuple(Marker(k, float(v), f"{k} {_fmt(float(v))}")
                    for k, v in sorted(caches.items(), key=lambda kv: kv[1])
                    if isinstance(v, (int, float)) and v > 0)
    return SweepTable("extras.gpu.sweep.main", "device total", "read", None, tuple(rows),
                      windows, markers)


def sweep_table(profile: Mapping[str, Any], where: str = "profile") -> SweepTable:
    """The working-set sweep of a probed profile (dict), or an InputError saying why not."""
    extras = profile.get("extras") or {}
    host = profile.get("host") or {}
    machine = str(host.get("name") or (profile.get("measured") or {}).get("name") or "")
    if isinstance(extras.get("bandwidth_sweep"), Mapping) and \
            extras["bandwidth_sweep"].get("points"):
        return replace(_cpu_table(extras["bandwidth_sweep"], host), machine=machine)
    gpu = ((extras.get("gpu") or {}).get("sweep") or {}).get("main")
    if isinstance(gpu, Mapping) and gpu.get("points"):
        return replace(_gpu_table(gpu, host), machine=machine)
    raise InputError(f"{where}: no working-set sweep in this profile (extras.bandwidth_sweep "
                     f"from `rooflab probe`, or extras.gpu.sweep from `rooflab probe --device "
                     f"cuda`); a catalog entry or a hand-written roof has none")


def _gbps(v: float) -> str:
    """GB/s with 3 significant digits, never in exponent form (a GPU's 9000 GB/s)."""
    x = v / 1e9
    return f"{x:.0f}" if x >= 1000 else f"{x:.3g}"


def _same_size(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9)


def table_rows(t: SweepTable) -> list[list[str]]:
    """Rows for the terminal: one per point, and a marker row where the working set first
    passes a reported cache size ('1 MiB ... <- L2 size'). A point at a cache's size is
    still inside it (bench's level_of: ws <= capacity), and the marker goes on that
    point's row ('2 MiB ... L2 * <- L2 size'), not on a second '2 MiB' row after it
    (review s33 I: the L2 marker row came after the 2 MiB point of a 2 MiB L2)."""
    out: list[list[str]] = []
    pending = sorted(t.markers, key=lambda m: m.bytes_)
    def marker(m: Marker) -> list[str]:
        return [_fmt(m.bytes_), "", "", "", "", f"<- {m.name} size"]

    for r in t.rows:
        while pending and pending[0].bytes_ < r.ws_bytes \
                and not _same_size(pending[0].bytes_, r.ws_bytes):
            out.append(marker(pending.pop(0)))
        at = []
        while pending and _same_size(pending[0].bytes_, r.ws_bytes):
            at.append(pending.pop(0).name)
        spread = fmt_fraction(r.spread)    # None: '-'
        level = (r.level or "") + (" *" if r.chosen else "") + (
            "" if r.calibrated else f" {UNCALIBRATED_MARK}")
        if at:
            level = f"{level} <- {', '.join(at)} size".lstrip()
        out.append([_fmt(r.ws_bytes), _fmt(r.ws_bytes_total), _gbps(r.best),
                    _gbps(r.median), spread, level])
    out += [marker(m) for m in pending]
    # a device's working set is its total: no second column
    return out if t.axis == "per thread" else [row[:1] + row[2:] for row in out]


def marker_line(t: SweepTable) -> str:
    """The cache sizes the marker rows stand for, on one line under the table."""
    where = "per thread" if t.axis == "per thread" else "on the device"
    return (f"cache sizes ({where}): " +
            "; ".join(m.text if _fmt(m.bytes_) in m.text else f"{m.text}: {_fmt(m.bytes_)}"
                      for m in t.markers))


def table_headers(t: SweepTable) -> list[str]:
    tail = ["best GB/s", "median GB/s", "spread", "plateau"]
    if t.axis == "per thread":
        return ["working set / thread", "total", *tail]
    return ["working set", *tail]


def sweep_to_json(t: SweepTable) -> dict:
    """The table for --json: every point, the plateau windows and the cache markers."""
    return {
        "source": t.source, "axis": t.axis, "kernel": t.kernel, "threads": t.threads,
        "points": [{"ws_bytes": r.ws_bytes, "ws_bytes_total": r.ws_bytes_total,
                    "best_bytes_per_s": r.best, "median_bytes_per_s": r.median,
                    "spread": r.spread, "plateau": r.level, "chosen": r.chosen,
                    "samples": r.samples, "calibrated": r.calibrated} for r in t.rows],
        "plateaus": [{"level": w.level, "first_bytes": w.first, "last_bytes": w.last,
                      "bytes_per_s": w.bytes_per_s, "chosen_bytes": w.chosen}
                     for w in t.windows],
        "caches": [{"name": m.name, "bytes": m.bytes_, "what": m.text} for m in t.markers],
        "notes": list(t.notes),
    }


# beside a point the probe could not calibrate, as the probe's own table marks a warning
UNCALIBRATED_MARK = "! uncalibrated"


def size_label(b: float) -> str:
    """An x tick: 4 KiB, 1 MiB, 2 GiB (likwid-bench's and ERT's units), not 2^n bytes."""
    return _fmt(b)


def chart_title(t: SweepTable, title: str = "") -> str:
    """The machine, then what is drawn (docs/plot.md: every chart's title names the
    machine, not the file it came from)."""
    return title or f"{t.machine or 'probed machine'}: {t.kernel} bandwidth vs working set"


# The plateau windows in the levels' Okabe-Ito colours (chart_parts.LEVEL_COLORS, as the
# HTML chart's), each with its level's name written in it (review s23 r6 F4: tab:green,
# olive, orange and red at 12 % were one faint wash in grey and under deuteranopia, told
# apart by the legend's swatches alone).
WINDOW_COLORS = LEVEL_COLORS
WINDOW_ALPHA = 0.15


@dataclass
class SweepDisplay:
    """Draws a SweepTable: x = log2 bytes, y = GB/s; best and median lines, shaded plateau
    windows, dashed verticals at the cache sizes, the ceiling's point as a dot."""

    table: SweepTable
    title: str = ""
    figure_: Any = None
    ax_: Any = None
    lines_: dict = field(default_factory=dict)
    scale_: float = 1.0   # chart.figure_bytes scales dpi by it: drawn at its own size

    def plot(self, ax=None) -> SweepDisplay:
        from .chart_rc import pinned_rc

        with pinned_rc():   # matplotlib's defaults, not the user's matplotlibrc (chart_rc)
            return self._plot(ax)

    def _plot(self, ax) -> SweepDisplay:
        if ax is None:
            from matplotlib.figure import Figure  # no pyplot: no GUI backend, no globals

            fig = Figure(figsize=(9.0, 5.5), layout="constrained")
            ax = fig.add_subplot()
        t = self.table
        # an uncalibrated point is no reading (a ~0 GB/s wait for a CPU): left out of the
        # lines, drawn hollow and grey at its median so the gap is explained (18c F20)
        good = [r for r in t.rows if r.calibrated]
        bad = [r for r in t.rows if not r.calibrated]
        xs = [r.ws_bytes for r in good]
        self.lines_["best"] = ax.plot(xs, [r.best / 1e9 for r in good], "o-",
                                      color="tab:blue", label="best sample")[0]
        self.lines_["median"] = ax.plot(xs, [r.median / 1e9 for r in good], "s--",
                                        color="tab:gray", markersize=3, label="median")[0]
        if bad:
            self.lines_["uncalibrated"] = ax.plot(
                [r.ws_bytes for r in bad], [r.median / 1e9 for r in bad], "o", ms=7,
                mfc="none", mec="0.55", clip_on=False,
                label="disturbed (uncalibrated: not a reading)")[0]
        top = max((r.best for r in good), default=0.0)
        for w in t.windows:
            color = WINDOW_COLORS.get(w.level, OTHER_LEVEL_COLOR)
            ax.axvspan(w.first, w.last, alpha=WINDOW_ALPHA, color=color,
                       label=f"{w.level} plateau", gid=f"plateau:{w.level}")
            # its name at the band's middle on the log axis, in the half of the chart its
            # plateau leaves free: at the foot for a high plateau (at the top, the highest
            # one's name sat on the best-sample line: review s23 h2 F8), else at the top,
            # under the cache markers' names (3 pt in, 12 pt down)
            high = w.bytes_per_s > 0.5 * top
            ax.annotate(literal(w.level), ((w.first * w.last) ** 0.5, 0 if high else 1),
                        xycoords=("data", "axes fraction"), xytext=(0, 4 if high else -16),
                        textcoords="offset points", ha="center",
                        va="bottom" if high else "top", fontsize=8,
                        fontweight="bold", color=text_color(color), gid=f"plateau-name:{w.level}")
        chosen = [r for r in t.rows if r.chosen]
        if chosen:
            self.lines_["chosen"] = ax.plot([r.ws_bytes for r in chosen],
                                            [r.best / 1e9 for r in chosen], "o", ms=10,
                                            mfc="none", mec="black", mew=1.5,
                                            label="ceiling's point")[0]
        for m in t.markers:
            ax.axvline(m.bytes_, ls="--", lw=1, color="0.35")
            ax.annotate(literal(m.name), (m.bytes_, 1), xycoords=("data", "axes fraction"),
                        xytext=(3, -12), textcoords="offset points", fontsize=8)
        from matplotlib.ticker import FuncFormatter, LogLocator

        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_locator(LogLocator(base=2, numticks=12))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda b, _: size_label(b)))
        ax.set_xlabel(f"working set ({t.axis})")
        ax.set_ylabel("bandwidth, GB/s")
        ax.set_ylim(bottom=0)
        self.title = chart_title(t, self.title)   # also the file's metadata title
        ax.set_title(literal(self.title))   # a CPU's name from a file: `$` literal
        # where it hides least (the upper right hid the L3 marker's name, s23 r6 F4)
        ax.legend(fontsize=8, loc="best")
        self.figure_, self.ax_ = ax.figure, ax
        return self


def plot_sweep(t: SweepTable, title: str = "", ax=None) -> SweepDisplay:
    return SweepDisplay(t, title).plot(ax)

