"""Axis-aligned boxes for label layout, in whatever units they are given (points, pixels).

A box is (left, bottom, right, top), y up. chart_layout.py (points, matplotlib) and
html_labels.py (pixels, plotly) both place text boxes around markers with these. The
array forms score one box against many at once; they do the same float operations as the
scalar ones, element by element, so a layout does not move when it switches between them.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence

import numpy as np

Box = tuple[float, float, float, float]   # left, bottom, right, top


def aligned_box(x: float, y: float, w: float, h: float, ha: str, va: str) -> Box:
    """The w x h box of text anchored at (x, y), aligned like matplotlib: ha left, right or
    center; va bottom (or baseline), top or center."""
    left = x if ha == "left" else x - w if ha == "right" else x - w / 2
    bottom = y if va in ("bottom", "baseline") else y - h if va == "top" else y - h / 2
    return (left, bottom, left + w, bottom + h)


def marker_box(center: tuple[float, float], r: float) -> Box:
    return (center[0] - r, center[1] - r, center[0] + r, center[1] + r)


def box_distance(box: Box, xy) -> float:
    """From xy to the nearest point of box (0 inside it), in the box's units."""
    return math.hypot(max(box[0] - xy[0], 0.0, xy[0] - box[2]),
                      max(box[1] - xy[1], 0.0, xy[1] - box[3]))


def level_with_nearer(box: Box, own, others: Sequence, px: float | None = None) -> bool:
    """Whether a label's box is level with one of the `others` markers (its y within the
    box's height) and nearer it than its own marker `own` (or, with px, within px of it):
    text is read along its line, so such a label reads as that marker's. The PNG's point
    labels (chart_layout_points._own_side) and the HTML's ridge names (html_marks
    ._nearest_own) both keep to it."""
    mine = box_distance(box, own)
    return any(box[1] <= s[1] <= box[3]
               and (box_distance(box, s) < mine or (px is not None and box_distance(box, s) <= px))
               for s in others)


def overlap_area(a: Box, b: Box) -> float:
    """The area two boxes share (0.0 when they only touch or are apart)."""
    dx = min(a[2], b[2]) - max(a[0], b[0])
    dy = min(a[3], b[3]) - max(a[1], b[1])
    return dx * dy if dx > 0 and dy > 0 else 0.0


def overlaps(a: Box, b: Box, tol: float = 0.0) -> bool:
    """Whether two boxes share more than a touch (`tol` in each direction)."""
    return (min(a[2], b[2]) - max(a[0], b[0]) > tol
            and min(a[3], b[3]) - max(a[1], b[1]) > tol)


def inside(box: Box, size: tuple[float, float]) -> bool:
    """Whether box lies within (0, 0)-size."""
    return box[0] >= 0 and box[1] >= 0 and box[2] <= size[0] and box[3] <= size[1]


def crosses(a, b, c, d) -> bool:
    """Whether segments ab and cd cross (strictly)."""
    def side(p, q, r):
        return (q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0])
    return side(a, b, c) * side(a, b, d) < 0 and side(c, d, a) * side(c, d, b) < 0


def hits(a, b, box: Box) -> bool:
    """Whether segment ab passes through the inside of box."""
    t0, t1 = 0.0, 1.0
    d = (b[0] - a[0], b[1] - a[1])
    # Liang-Barsky: clip the segment to the box, one pair of edges at a time.
    for p, q in ((-d[0], a[0] - box[0]), (d[0], box[2] - a[0]),
                 (-d[1], a[1] - box[1]), (d[1], box[3] - a[1])):
        if p == 0:
            if q <= 0:
                return False
        elif p < 0:
            t0 = max(t0, q / p)
        else:
            t1 = min(t1, q / p)
    return t1 - t0 > 1e-6


# --- many at once ----------------------------------------------------------------------
# Each does, element by element, the float operations of its scalar twin above, so the
# results are the same to the last bit; sums are left to Python (see sums_in_order).

def as_array(boxes: Sequence[Box]) -> np.ndarray:
    """Boxes as an (n, 4) float array (n may be 0)."""
    return np.asarray(boxes, dtype=float).reshape(-1, 4)


def as_points(points) -> np.ndarray:
    """Points as an (n, 2) float array (n may be 0)."""
    return np.asarray(points, dtype=float).reshape(-1, 2)


def overlaps_many(bs: np.ndarray, box: Box, tol: float = 0.0) -> np.ndarray:
    """overlaps(b, box, tol) for each row b of bs, box finite (a NaN in b gives False in
    both: min and max hand it on)."""
    return ((np.minimum(bs[:, 2], box[2]) - np.maximum(bs[:, 0], box[0]) > tol)
            & (np.minimum(bs[:, 3], box[3]) - np.maximum(bs[:, 1], box[1]) > tol))


# Fewer boxes than this are all worked out: picking the ones in reach (_within) costs more
# than it saves.
FEW_BOXES = 64


def overlap_matrix(boxes: np.ndarray, others: np.ndarray) -> np.ndarray:
    """overlap_area(boxes[i], others[j]) at [i, j]. Only the others that meet the boxes'
    joint extent are worked out (the rest share no area with any of them): a label's
    candidates against the grid cells of 20 000 markers met a tenth of them."""
    if len(others) <= FEW_BOXES:
        return _areas(boxes, others)
    out = np.zeros((len(boxes), len(others)))
    cols = _within(others, boxes)
    if len(cols):
        out[:, cols] = _areas(boxes, others[cols])
    return out


def _areas(boxes: np.ndarray, others: np.ndarray) -> np.ndarray:
    a, b = boxes[:, None, :], others[None, :, :]
    dx = np.minimum(a[..., 2], b[..., 2]) - np.maximum(a[..., 0], b[..., 0])
    dy = np.minimum(a[..., 3], b[..., 3]) - np.maximum(a[..., 1], b[..., 1])
    return np.where((dx > 0) & (dy > 0), dx * dy, 0.0)


def _within(others: np.ndarray, boxes: np.ndarray, closed: bool = False) -> np.ndarray:
    """The indices of the others that may meet some box: every one unless the boxes are
    finite (a NaN box meets nothing, but its NaN would spoil the extent), else those
    reaching into the boxes' joint extent (x0 < max x1, x1 > min x0, the same in y: one
    outside it has dx or dy <= 0 against every box). closed: touching counts (<=)."""
    if not len(boxes) or not len(others):
        return np.arange(0)
    if not np.isfinite(boxes).all():
        return np.arange(len(others))
    lo, hi = boxes.min(axis=0), boxes.max(axis=0)
    if closed:
        return np.flatnonzero((others[:, 0] <= hi[2]) & (others[:, 2] >= lo[0])
                              & (others[:, 1] <= hi[3]) & (others[:, 3] >= lo[1]))
    return np.flatnonzero((others[:, 0] < hi[2]) & (others[:, 2] > lo[0])
                          & (others[:, 1] < hi[3]) & (others[:, 3] > lo[1]))


def sums_in_order(m: np.ndarray, add: float = 0.0) -> list:
    """sum(add + v for v in row if v > 0) for each row of m, as Python adds it: left to
    right, 0 (an int) when none is positive. A layout compares costs exactly, and numpy's
    pairwise sum may differ from Python's in the last bit when a row has three or more
    terms; with one or two, any order gives the same sum."""
    pos = m > 0
    # the columns with a positive value only (an overlap matrix against many obstacles is
    # mostly zeros): adding 0.0 leaves a sum as it was, so the sums are the same
    cols = np.flatnonzero(pos.any(axis=0))
    m, pos = m[:, cols], pos[:, cols]
    count = pos.sum(axis=1).tolist()
    fast = np.where(pos, m + add, 0.0).sum(axis=1).tolist()
    out: list = [v if n else 0 for n, v in zip(count, fast, strict=True)]
    for i in (i for i, n in enumerate(count) if n > 2):
        out[i] = sum((m[i][pos[i]] + add).tolist())
    return out


def hits_matrix(starts: np.ndarray, ends: np.ndarray, boxes: np.ndarray) -> np.ndarray:
    """hits(starts[i], ends[i], boxes[j]) at [i, j]. Only the pairs whose box meets the
    segment's bounding box are clipped (a segment cannot pass through a box beside it):
    with hundreds of labels, most pairs are far apart."""
    out = np.zeros((len(starts), len(boxes)), dtype=bool)
    lo, hi = np.minimum(starts, ends), np.maximum(starts, ends)
    # first the boxes within reach of any segment (their joint extent), as overlap_matrix
    cols = (_within(boxes, np.hstack([lo, hi]), closed=True) if len(boxes) > FEW_BOXES
            else np.arange(len(boxes)))
    b = boxes[cols]
    near = ((b[None, :, 0] <= hi[:, 0:1]) & (lo[:, 0:1] <= b[None, :, 2])
            & (b[None, :, 1] <= hi[:, 1:2]) & (lo[:, 1:2] <= b[None, :, 3]))
    i, j = np.nonzero(near)
    if not len(i):
        return out
    j = cols[j]
    ax, ay, b = starts[i, 0], starts[i, 1], boxes[j]
    dx, dy = ends[i, 0] - ax, ends[i, 1] - ay
    t0, t1 = np.zeros(len(i)), np.ones(len(i))
    ok = np.ones(len(i), dtype=bool)
    with np.errstate(divide="ignore", invalid="ignore"):
        for p, q in ((-dx, ax - b[:, 0]), (dx, b[:, 2] - ax),
                     (-dy, ay - b[:, 1]), (dy, b[:, 3] - ay)):
            r = q / p
            ok &= (p != 0) | (q > 0)
            t0 = np.where(p < 0, np.maximum(t0, r), t0)
            t1 = np.where(p > 0, np.minimum(t1, r), t1)
    out[i, j] = ok & (t1 - t0 > 1e-6)
    return out


def crossings_matrix(a: np.ndarray, b: np.ndarray, c: np.ndarray, d: np.ndarray
                     ) -> np.ndarray:
    """crosses(a[i], b[i], c[j], d[j]) at [i, j]."""
    a0, a1, b0, b1 = a[:, 0:1], a[:, 1:2], b[:, 0:1], b[:, 1:2]
    c0, c1, d0, d1 = c[:, 0], c[:, 1], d[:, 0], d[:, 1]
    s_c = (b0 - a0) * (c1 - a1) - (b1 - a1) * (c0 - a0)
    s_d = (b0 - a0) * (d1 - a1) - (b1 - a1) * (d0 - a0)
    s_a = (d0 - c0) * (a1 - c1) - (d1 - c1) * (a0 - c0)
    s_b = (d0 - c0) * (b1 - c1) - (d1 - c1) * (b0 - c0)
    return (s_c * s_d < 0) & (s_a * s_b < 0)


# --- turned boxes ----------------------------------------------------------------------
# A name set along a sloped line is a turned rectangle: its four corners, in order.

def corners(box: Box) -> tuple:
    """The corners of an axis-aligned box, counter-clockwise from bottom left."""
    return ((box[0], box[1]), (box[2], box[1]), (box[2], box[3]), (box[0], box[3]))


def turned_corners(center: tuple[float, float], w: float, h: float, angle: float) -> tuple:
    """The corners of the w x h box centred at `center`, turned `angle` radians
    counter-clockwise (y up), in order around it."""
    c, s = math.cos(angle), math.sin(angle)
    return tuple((center[0] + dx * c - dy * s, center[1] + dx * s + dy * c)
                 for dx, dy in ((-w / 2, -h / 2), (w / 2, -h / 2), (w / 2, h / 2),
                                (-w / 2, h / 2)))


def polygons_overlap(p: Sequence, q: Sequence, tol: float = 0.0) -> bool:
    """Whether two convex polygons (corners in order) share more than a touch (`tol`
    along some axis): no edge of either separates them (separating axis theorem)."""
    for poly in (p, q):
        for nx, ny, norm in _edge_normals(poly):
            pa, qa = _project(p, nx, ny, norm), _project(q, nx, ny, norm)
            if min(max(pa), max(qa)) - max(min(pa), min(qa)) <= tol:
                return False
    return True


def _edge_normals(poly: Sequence) -> Iterator[tuple[float, float, float]]:
    """Each edge's normal (nx, ny) of a polygon (corners in order) and its length; an edge
    of no length (a corner given twice) separates nothing and is passed over."""
    for i, a in enumerate(poly):
        b = poly[(i + 1) % len(poly)]
        nx, ny = a[1] - b[1], b[0] - a[0]
        norm = math.hypot(nx, ny)
        if norm != 0:
            yield nx, ny, norm


def _project(points: Iterable, nx, ny, norm) -> list:
    """The points' positions along the axis (nx, ny) of length norm: scalars, or arrays
    where the axis (or the points) are, with the same float operations in each."""
    return [(x * nx + y * ny) / norm for x, y in points]


def polygon_overlaps_boxes(p: Sequence, bs: np.ndarray, tol: float = 0.0) -> np.ndarray:
    """polygons_overlap(p, corners(b), tol) for each row b of bs ((n, 4)), with its float
    operations element by element: a slope's name against the ~2 000 markers round it
    was 80 000 Python calls on a 20 000-kernel page. A box's edge normal is (0, w) or
    (h, 0), whose math.hypot is |w| (or |h|) exactly, as np.hypot's. Rows with a
    coordinate that is no finite number go through polygons_overlap itself."""
    bs = as_array(bs)
    out = np.zeros(len(bs), dtype=bool)
    fine = np.isfinite(bs).all(axis=1)
    for i in np.nonzero(~fine)[0]:
        out[i] = polygons_overlap(p, corners(tuple(bs[i].tolist())), tol)
    b = bs[fine]
    cx = (b[:, 0], b[:, 2], b[:, 2], b[:, 0])     # corners() order
    cy = (b[:, 1], b[:, 1], b[:, 3], b[:, 3])
    q = tuple(zip(cx, cy, strict=True))            # the boxes' corners, as arrays
    keep = np.ones(len(b), dtype=bool)
    with np.errstate(divide="ignore", invalid="ignore"):
        for nx, ny, norm in _edge_normals(p):     # the polygon's own edges: scalars
            pa = _project(p, nx, ny, norm)
            qa = _project(q, nx, ny, norm)
            keep &= ~_apart(max(pa), min(pa), qa, tol)
        for k in range(4):                         # each box's edges: arrays
            nx, ny = cy[k] - cy[(k + 1) % 4], cx[(k + 1) % 4] - cx[k]
            norm = np.hypot(nx, ny)
            pa = _project(p, nx, ny, norm)
            qa = _project(q, nx, ny, norm)
            far = _apart(np.maximum.reduce(pa), np.minimum.reduce(pa), qa, tol)
            keep &= ~(far & (norm != 0))
    out[fine] = keep
    return out


def _apart(p_hi, p_lo, qa: list, tol: float) -> np.ndarray:
    """Whether projections [p_lo, p_hi] and those of qa share no more than tol."""
    q_hi, q_lo = np.maximum.reduce(qa), np.minimum.reduce(qa)
    return np.minimum(p_hi, q_hi) - np.maximum(p_lo, q_lo) <= tol


def local(point, center, angle: float) -> tuple[float, float]:
    """`point` in the frame of a box centred at `center` and turned `angle`: along its
    width, along its height."""
    c, s = math.cos(angle), math.sin(angle)
    dx, dy = point[0] - center[0], point[1] - center[1]
    return (dx * c + dy * s, -dx * s + dy * c)


def grown(box: Box, margin: float) -> Box:
    """box with `margin` added on every side."""
    return (box[0] - margin, box[1] - margin, box[2] + margin, box[3] + margin)


def lines_through(box: Box, segments: Sequence) -> int:
    """How many of the segments ((a, b) pairs of points) pass through the inside of box."""
    return sum(hits(a, b, box) for a, b in segments)
