"""What the chart's reuse of the report's analysis and its once-per-ceiling datasheet note
save (session 36, helper E).

`rooflab report FILE -o x.html` analysed every kernel twice (the report, then the page's
chart: report/chart_batch._batched) and the chart worded the datasheet note once per
kernel (the same text for every kernel of one work ceiling). Now the chart reuses the
report's analyze(roof, kernels) (chart_batch.remember_analysis) and words the note once per
ceiling (chart_batch._sheet_notes). The reference is the old way, in the same run: the
same call with remember_analysis a no-op and the note worded per kernel. Kernels as
scale_speed.py makes them (seeded, spread over the NVIDIA T4 roof). CPU seconds, best of
--repeat, each call in a fresh process (imports not counted); the pages are checked to
be the same.

`--against labels` (session 36, helper K) times the page against the names' old placement
instead: every spot of a slope's, ceiling's or kernel's name tested against every marker
box (the all-pairs scan), where the names now read only the boxes a grid files near them
(report/box_grid.py) and test a slope's name against those at once (numpy, the same floats).
The reference is the scan: a "grid" whose every query answers with every box, a slope's
name tested one box at a time as before (_conflicts_all_pairs); the `place` columns are
the CPU seconds of the three placements alone (place_ceiling_names, place_names,
place_slope_names).

`--against traces` (session 36, helper P) times the page against its traces handed to
plotly as go.Scatter objects: the points of each level (html_figure._points_trace) and
each launch cap (html_marks.cap_traces) were go.Scatter, which Figure.add_trace rebuilt
and checked again from their properties; now they are the properties, checked once. The
reference builds the go.Scatter from the same properties, as before (_as_scatter).
`--against heap` (helper P) times it against the page built with the cyclic collector
walking every object alive as it starts (report/html._long_lived, gc.freeze, made a no-op);
`--against p` against both of helper P's old ways.

    python benchmarks/report_chart_speed.py [--kernels 5000,20000] [--repeat 2]
        [--against analysis|labels|traces|heap|p] [--on T4]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import platform
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


@contextlib.contextmanager
def old_way(against: str = "analysis"):
    """The chart analysing for itself and wording the datasheet note per kernel, or
    (against "labels") the names placed by the all-pairs scan, or (against "traces") the
    points' and caps' traces built as go.Scatter (against "heap": the collector walking
    the whole heap; "p": both)."""
    if against == "labels":
        with all_pairs():
            yield
        return
    if against in ("traces", "heap", "p"):
        import rooflab.report.html as rh

        saved = rh._long_lived
        if against != "traces":
            rh._long_lived = contextlib.nullcontext
        try:
            with scatter_objects() if against != "heap" else contextlib.nullcontext():
                yield
        finally:
            rh._long_lived = saved
        return
    import rooflab.report.chart_batch as cb
    from rooflab.model.datasheet_note import datasheet_note

    saved = cb.remember_analysis, cb._sheet_notes
    cb.remember_analysis = lambda *a: None
    cb._sheet_notes = lambda roof: (lambda k: datasheet_note(roof, [k]))
    try:
        yield
    finally:
        cb.remember_analysis, cb._sheet_notes = saved
        cb._LAST.clear()


class _EveryBox:
    """The all-pairs scan as a BoxGrid: every query answers with every box."""

    def __init__(self, boxes) -> None:
        self.boxes = tuple(boxes)

    def near(self, box) -> range:
        return range(len(self.boxes))

    def nearby(self, box) -> tuple:
        return self.boxes

def _conflicts_all_pairs(poly, center, angle, w, h, axes, obstacles, segments, placed) -> int:
    """html_slope_names._conflicts before session 36: the turned name against each box
    across its upright bounds, one polygons_overlap call each, of all the boxes."""
    from rooflab.report import boxes
    from rooflab.report.html_label_model import LINE_MARGIN_PX, union

    n = 0 if all(-0.5 <= x <= axes.size[0] + 0.5 and -0.5 <= y <= axes.size[1] + 0.5
                 for x, y in poly) else 100
    reach = union((x, y, x, y) for x, y in poly)
    n += sum(boxes.polygons_overlap(poly, boxes.corners(b), 0.5) for b in obstacles.boxes
             if boxes.overlaps(b, reach))
    n += sum(boxes.polygons_overlap(poly, other, 0.5) for other in placed)
    m = LINE_MARGIN_PX
    frame = (-w / 2 - m, -h / 2 - m, w / 2 + m, h / 2 + m)
    n += sum(boxes.hits(boxes.local(a, center, angle), boxes.local(b, center, angle), frame)
             for a, b in segments)
    return n



@contextlib.contextmanager
def all_pairs():
    """The names placed as before session 36: each spot against every box."""
    import rooflab.report.html_ceiling_names as hc
    import rooflab.report.html_labels as hl
    import rooflab.report.html_slope_names as hs

    saved = [(m, m.box_grid) for m in (hc, hl, hs)]
    conflicts = hs._conflicts
    for m, _ in saved:
        m.box_grid = _EveryBox
    hs._conflicts = _conflicts_all_pairs
    try:
        yield
    finally:
        for m, grid in saved:
            m.box_grid = grid
        hs._conflicts = conflicts


def _as_scatter(props: dict):
    """The go.Scatter the page built before session 36 from these trace properties."""
    import plotly.graph_objects as go

    return go.Scatter(**{k: v for k, v in props.items() if k != "type"})


@contextlib.contextmanager
def scatter_objects():
    """The points' and launch caps' traces built as go.Scatter (checked twice) as before."""
    import rooflab.report.html_figure as hf

    points, caps = hf._points_trace, hf.cap_traces
    hf._points_trace = lambda *a, **k: _as_scatter(points(*a, **k))
    hf.cap_traces = lambda *a, **k: [_as_scatter(t) for t in caps(*a, **k)]
    try:
        yield
    finally:
        hf._points_trace, hf.cap_traces = points, caps


@contextlib.contextmanager
def placing_timed(spent: list):
    """Adds the CPU seconds of each name placement the page makes to spent[0]."""
    import rooflab.report.html_figure as hf
    import rooflab.report.html_roofs as hr

    def timed(f):
        def run(*a, **k):
            t0 = time.process_time()
            try:
                return f(*a, **k)
            finally:
                spent[0] += time.process_time() - t0
        return run
    names = [(hr, "place_ceiling_names"), (hr, "place_slope_names"), (hf, "place_names")]
    saved = [(m, n, getattr(m, n)) for m, n in names]
    for m, n, f in saved:
        setattr(m, n, timed(f))
    try:
        yield
    finally:
        for m, n, f in saved:
            setattr(m, n, f)


def child(old: bool, path: str, out: str, against: str = "analysis", on: str = "T4") -> None:
    """Prints the seconds of `rooflab report PATH --on ON -o OUT` (the old way if `old`)
    and those of its names' placement."""
    from rooflab.cli.main import main

    spent = [0.0]
    with old_way(against) if old else contextlib.nullcontext(), placing_timed(spent):
        t0 = time.process_time()   # CPU: the host is shared (one thread)
        with contextlib.redirect_stdout(io.StringIO()), \
                contextlib.redirect_stderr(io.StringIO()):
            rc = main(["report", path, "--on", on, "-o", out])
        took = time.process_time() - t0
    assert rc == 0, rc
    print(took, spent[0])


def page(path: str, out: str, old: bool = False, against: str = "analysis",
         on: str = "T4") -> tuple[float, float]:
    """Seconds of the report in a fresh process (each run's heap its own, as a user's
    call; a second 20 000-kernel analysis held in one process slows the garbage
    collector), imports not counted, and of its names' placement."""
    code = (f"import sys; sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r}); "
            f"import report_chart_speed as r; "
            f"r.child({old}, {path!r}, {out!r}, {against!r}, {on!r})")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    took, placing = done.stdout.split()[-2:]
    return float(took), float(placing)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kernels", default="5000,20000")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--against", choices=("analysis", "labels", "traces", "heap", "p"),
                    default="analysis",
                    help="the old way: the chart's own analysis (helper E), the names' "
                         "all-pairs placement (helper K), the traces as go.Scatter, the "
                         "collector walking the whole heap, or both (helper P)")
    ap.add_argument("--on", default="T4", help="the roof (catalog name)")
    a = ap.parse_args(argv)
    from scale_speed import _kernel_file

    from rooflab.hardware.catalog import lookup_roof

    roof = lookup_roof(a.on)
    print(f"# {platform.node()} {platform.machine()}, Python {sys.version.split()[0]}, "
          f"CPU s, best of {a.repeat}, {a.on}, old way: {a.against}")
    print(f"{'kernels':>8} {'now':>7} {'old way':>8} {'ratio':>6} {'place':>7} "
          f"{'old place':>9} {'ratio':>6}")
    for n in (int(x) for x in a.kernels.split(",") if x):
        with tempfile.TemporaryDirectory() as tmp:
            path = _kernel_file(tmp, n, roof)
            new_page, old_page = os.path.join(tmp, "x.html"), os.path.join(tmp, "y.html")
            now, old = [], []
            for _ in range(a.repeat):            # interleaved: both see the same load
                now.append(page(path, new_page, False, a.against, a.on))
                old.append(page(path, old_page, True, a.against, a.on))
            with open(new_page) as f, open(old_page) as g:
                same = f.read().replace("x.html", "y.html") == g.read()
        t_now, t_old = min(t for t, _ in now), min(t for t, _ in old)
        p_now, p_old = min(p for _, p in now), min(p for _, p in old)
        print(f"{n:8d} {t_now:7.2f} {t_old:8.2f} {t_now / t_old:6.2f} {p_now:7.2f} "
              f"{p_old:9.2f} {p_now / max(p_old, 1e-9):6.2f}"
              f"{'' if same else '  PAGES DIFFER'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
