"""The HTML chart's names read only the boxes a grid files near them (report/box_grid.py),
and land exactly where the all-pairs scan put them (session 36, helper K)."""

from __future__ import annotations

import contextlib
import math
import random

import pytest
from benchmark_script import load_benchmark

from rooflab.report import boxes as box_ops
from rooflab.report.html_ceiling_names import Flat, place_ceiling_names
from rooflab.report.html_labels import Axes, Candidate, marker_box, place_names
from rooflab.report.html_slope_names import Slope, place_slope_names

# The brute-force reference is the benchmark's own (benchmarks/report_chart_speed.py): a
# "grid" whose every query answers with every box, and the slopes' names tested one box at
# a time (_conflicts_all_pairs), as before session 36; one copy for both.
_REFERENCE = load_benchmark("report_chart_speed")
_EveryBox = _REFERENCE._EveryBox
_conflicts_all_pairs = _REFERENCE._conflicts_all_pairs


@contextlib.contextmanager
def _all_pairs(monkeypatch):
    import rooflab.report.html_ceiling_names as hc
    import rooflab.report.html_labels as hl
    import rooflab.report.html_slope_names as hs

    with monkeypatch.context() as m:
        for mod in (hc, hl, hs):
            m.setattr(mod, "box_grid", _EveryBox)
        m.setattr(hs, "_conflicts", _conflicts_all_pairs)
        yield


def _layout(rng: random.Random):
    """A random plot: axes, markers clustered round a few spots (as kernels of one kind
    gather), some huge or off-plot boxes, slopes, flat roofs and candidates."""
    axes = Axes((rng.uniform(-3, 0), rng.uniform(2, 4)), (rng.uniform(8, 10), rng.uniform(13, 15)))
    centres = [(rng.uniform(-20, 620), rng.uniform(-20, 460)) for _ in range(rng.randint(1, 6))]
    markers = []
    for _ in range(rng.randint(0, 900)):
        cx, cy = rng.choice(centres)
        markers.append(marker_box((rng.gauss(cx, 40), rng.gauss(cy, 40)),
                                  rng.choice((5.5, 5.5, 9.0))))
    markers += [(-1e6, 10.0, 1e6, 12.0), (700.0, 500.0, 900.0, 520.0), (5.0, 5.0, 5.0, 5.0)]
    rng.shuffle(markers)
    (x0, x1), (y0, y1) = axes.x_range, axes.y_range
    slopes = [Slope(i, 10 ** rng.uniform(y0 - x0 - 1, y1 - x0), 10 ** x0, 10 ** x1,
                    rng.choice(("DRAM 320 GB/s", "L2 1.2 TB/s", "HBM")), rng.random())
              for i in range(rng.randint(1, 3))]
    flats = [Flat(i, 10 ** rng.uniform(y0 + 0.5, y1), 10 ** rng.uniform(x0, x1 - 1), 10 ** x1,
                  rng.choice(("fp32 8.1 TFLOP/s", "fp16 tensor 65 TFLOP/s")),
                  rng.choice(("left", "right")))
             for i in range(rng.randint(1, 3))]
    cands = [Candidate(i, 10 ** rng.uniform(x0, x1), 10 ** rng.uniform(y0, y1),
                       rng.choice(("gemm", "softmax_fwd", "k")), rng.choice((1.0, 2.0, 3.0)))
             for i in range(rng.randint(1, 30))]
    lines = [(s.key, [(s.x0, s.bandwidth * s.x0), (s.x1, s.bandwidth * s.x1)]) for s in slopes]
    return axes, markers, slopes, flats, cands, lines


def _placed(axes, markers, slopes, flats, cands, lines):
    leaders: dict = {}
    return (place_slope_names(slopes, axes, markers, lines),
            place_ceiling_names(flats, axes, markers, lines),
            place_names(cands, axes, markers, limit=12, leaders=leaders), leaders)


@pytest.mark.parametrize("seed", range(12))
def test_names_land_where_the_all_pairs_scan_put_them(seed, monkeypatch):
    """Random layouts (up to 900 clustered markers, a box 2e6 px wide, one off the plot,
    one of zero size; ties between equal-weight kernels): every slope's, ceiling's and
    kernel's name at the same spot (==: same floats, same textposition) as with each spot
    tested against every box. The grid only skips boxes in no cell near a spot, and a box
    sharing more than a touch with a spot shares a cell with it."""
    layout = _layout(random.Random(seed))
    fast = _placed(*layout)
    with _all_pairs(monkeypatch):
        slow = _placed(*layout)
    assert fast == slow
    assert fast[0] and fast[1]        # slopes and ceilings named: the test compared names


def test_a_grid_answer_holds_every_box_that_overlaps():
    """2 000 random boxes (some inverted, one NaN, one infinite, some far past the folded
    cells at 4096 x 16 px) against 500 random queries: every box that overlaps a query
    (boxes.overlaps, tol 0 and 0.5) is in grid.near(query); the answer is ascending."""
    from rooflab.report.box_grid import box_grid

    rng = random.Random(7)

    def box(scale):
        x, y = rng.uniform(-scale, scale), rng.uniform(-scale, scale)
        return (x, y, x + rng.uniform(-2, 60), y + rng.uniform(-2, 40))

    bs = [box(rng.choice((300, 300, 1e5))) for _ in range(2000)]
    bs += [(math.nan, 0.0, 5.0, 5.0), (-math.inf, 0.0, math.inf, 5.0)]
    grid = box_grid(bs)
    for _ in range(500):
        q = box(rng.choice((300, 1e5)))
        near = grid.near(q)
        assert near == sorted(set(near))
        for tol in (0.0, 0.5):
            want = {i for i, b in enumerate(bs) if box_ops.overlaps(q, b, tol)}
            assert want <= set(near)
    assert len(bs) - 2 in grid.near((0.0, 0.0, 1.0, 1.0))     # the NaN box: always


def test_a_slope_name_reads_the_markers_near_it_only(monkeypatch):
    """20 000 markers spread over the plot (one per 13 px square), one slope: every spot
    along it is taken, so all 38 are tried (19 along it, above and below). The all-pairs
    scan tests each spot against all 20 000 markers (>= 760 000 boxes.overlaps calls);
    the grid hands the few hundred filed near the spot to one numpy test
    (boxes.overlaps_many): counted as boxes tested, under a tenth; same spot."""
    rng = random.Random(1)
    axes = Axes((-2.0, 3.0), (9.0, 14.0))
    markers = [marker_box((rng.uniform(0, 600), rng.uniform(0, 440))) for _ in range(20000)]
    slope = [Slope(0, 1e11, 1e-2, 1e3, "DRAM 320 GB/s")]
    tested = [0]
    one, many = box_ops.overlaps, box_ops.overlaps_many

    def counted(a, b, tol=0.0):
        tested[0] += 1
        return one(a, b, tol)

    def counted_many(bs, box, tol=0.0):
        tested[0] += len(bs)
        return many(bs, box, tol)

    monkeypatch.setattr(box_ops, "overlaps", counted)
    monkeypatch.setattr(box_ops, "overlaps_many", counted_many)
    fast, fast_tested = place_slope_names(slope, axes, markers), tested[0]
    tested[0] = 0
    with _all_pairs(monkeypatch):
        slow, slow_tested = place_slope_names(slope, axes, markers), tested[0]
    assert fast == slow and 0 in fast
    assert slow_tested >= 38 * 20000
    assert 0 < fast_tested < slow_tested / 10, (fast_tested, slow_tested)
