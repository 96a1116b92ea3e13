"""Analytic FLOP and bytes of HPC kernels (review 16a D): a stencil sweep, CSR SpMV and
BLAS level 1 (dot, axpy), each an OpCount under a stated byte model, as in workloads.ops
(where docs/ai.md calls the four kernels). Their dtype defaults to fp64, HPC's precision.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field, fields

from ..errors import InputError
from ..model.byte_convention import REAL_TRAFFIC_COUNT
from ..model.kernel import Kernel
from ..units import si
from .count import OpCount
from .ops_common import _count, _dt, _size

# --- HPC kernels (review 16a D): stencil, CSR SpMV, BLAS level 1 ---------------------
# Their dtype defaults to fp64, HPC's precision (review 17a N10: an SpMV in the ML ops'
# fp16 default counted 340 MB where the fp64 loop moves 688 MB).

@dataclass(frozen=True)
class MetaOpCount(OpCount):
    """An OpCount whose kernel carries extra meta fields (totals, in bytes), scaled with
    it: an SpMV's read_only_bytes and index_bytes, which the advice reads so that the
    matrix is treated as read once whatever runs next to it (review 16a C)."""

    extra_meta: Mapping[str, float] = field(default_factory=dict)
    # meta byte_count: REAL_TRAFFIC_COUNT where the count holds every write-allocate read
    # (an SpMV's y: review s18 r2 F2), as RealTrafficCount's kernels say
    byte_count: str = ""

    def kernel(self, seconds: float | None = None, calls: int = 1, level: str = "DRAM",
               samples: tuple[float, ...] = ()) -> Kernel:
        k = super().kernel(seconds=seconds, calls=calls, level=level, samples=samples)
        marked = {"byte_count": self.byte_count} if self.byte_count else {}
        return k.with_(meta={**k.meta, **self.extra_meta, **marked})

    def scaled(self, factor: float, name: str | None = None) -> MetaOpCount:
        base = super().scaled(factor, name)
        return MetaOpCount(**{f.name: getattr(base, f.name) for f in fields(OpCount)},
                           extra_meta={k: v * factor for k, v in self.extra_meta.items()},
                           byte_count=self.byte_count)


@dataclass(frozen=True)
class RealTrafficCount(OpCount):
    """An OpCount whose bytes are real traffic, as hardware counters see them (the write-
    allocate reads counted in, or stores that hit lines just read): its kernel's meta says
    so (byte_count "real traffic"), and model/byte_convention.memory_ceiling judges such bytes
    against a probed roof's real-traffic DRAM ceiling, not the STREAM-counted one (review
    17a N8: `ai stencil --write-allocate` read 400 ms against 19.6 GB/s where perf's count
    of the same loop read 300 ms against 26.2)."""

    def kernel(self, seconds: float | None = None, calls: int = 1, level: str = "DRAM",
               samples: tuple[float, ...] = ()) -> Kernel:
        k = super().kernel(seconds=seconds, calls=calls, level=level, samples=samples)
        return k.with_(meta={**k.meta, "byte_count": REAL_TRAFFIC_COUNT})

    def scaled(self, factor: float, name: str | None = None) -> RealTrafficCount:
        base = super().scaled(factor, name)
        return RealTrafficCount(**{f.name: getattr(base, f.name) for f in fields(OpCount)})


def _real_traffic(count: OpCount) -> RealTrafficCount:
    return RealTrafficCount(**{f.name: getattr(count, f.name) for f in fields(OpCount)})


# A star stencil u'(p) = a·u(p) + b·Σ neighbours, the constant-coefficient Jacobi update:
# P - 1 adds and 2 muls per point (7-point: 6 + 2 = 8 FLOP, review 16a D and Hager &
# Wellein's 3-D Jacobi). One coefficient per point would be P muls + P - 1 adds: give
# flop_per_point then.
STENCIL_MULS_PER_POINT = 2


def _grid(grid) -> tuple[int, ...]:
    """GRID as 256x256x256, 1000x1000 or 1e6 (text), or a sequence of 1-3 sizes."""
    parts = str(grid).lower().replace("×", "x").split("x") if isinstance(grid, str) \
        else list(grid) if isinstance(grid, list | tuple) else [grid]
    if not 1 <= len(parts) <= 3:
        raise InputError(f"grid must have 1 to 3 dimensions such as 256x256x256; got {grid!r}")
    dims = []
    for p in parts:
        try:
            value = float(str(p).strip().replace("_", "")) if isinstance(p, str) else p
        except ValueError:
            value = None
        if value is None:
            raise InputError(f"grid must be sizes joined by x, such as 256x256x256 or "
                             f"1000x1000; got {grid!r}")
        dims.append(_size(value, "each grid size"))
    return tuple(dims)


def stencil_radius(points: int, dims: int, box: bool = False) -> int:
    """The radius r of a symmetric stencil of `points` points in `dims` dimensions: a star
    has 1 + 2·dims·r points (7 in 3-D: r = 1; 13: r = 2), a box (2r + 1)^dims (27 in 3-D)."""
    points = _size(points, "points", 3)
    if box:
        side = round(points ** (1 / dims))
        r = (side - 1) // 2 if side % 2 and side ** dims == points else 0
    else:
        r = (points - 1) // (2 * dims) if (points - 1) % (2 * dims) == 0 else 0
    if r < 1:
        shape = "box" if box else "star"
        fits = [str((2 * k + 1) ** dims if box else 1 + 2 * dims * k) for k in (1, 2, 3)]
        raise InputError(
            f"{points} points is no symmetric {dims}-D {shape} stencil: a {shape} of "
            f"radius 1, 2, 3 has {', '.join(fits)} points"
            + ("" if box else f"; a box stencil ((2r + 1)^{dims}: "
               f"{3 ** dims} points at radius 1) takes box=True (--box)"))
    return r


def stencil(grid, points: int, dtype: str = "fp64", sweeps: int = 1,
            write_allocate: bool = False, flop_per_point: float | None = None,
            box: bool = False, name: str | None = None) -> OpCount:
    """A symmetric stencil sweep (Jacobi: reads u, writes a second array) over a grid.

    Points updated: the interior, Π (N_i − 2r), times `sweeps`. FLOP per point: P − 1 adds
    + 2 muls (a·centre + b·Σ neighbours; 7-point: 8), or `flop_per_point`. DRAM bytes:
    one read and one write per point (2s: 16 B in fp64), + s with `write_allocate` (the
    read of each written line a normal store causes; 24 B). That assumes the layer
    condition: the 2r + 1 neighbouring planes (3 x N² x s for 7 points) stay in cache, so
    each element comes from DRAM once per sweep. The halo's reads are left out (2.4 % at
    256³), as the usual per-point count does. 256³ fp64, 7 points, 20 sweeps: 3.2774e8
    points, 2.6219e9 FLOP, 5.244e9 B (AI 0.5), 7.866e9 B with write-allocate (0.333).
    """
    dims = _grid(grid)
    r = stencil_radius(points, len(dims), box)
    sweeps = _size(sweeps, "sweeps")
    if any(n <= 2 * r for n in dims):
        raise InputError(f"a radius-{r} stencil needs every grid size > {2 * r} (an interior "
                         f"to update); got {'x'.join(map(str, dims))}")
    if flop_per_point is None:
        flop_per_point = points - 1 + STENCIL_MULS_PER_POINT
    elif not (isinstance(flop_per_point, numbers.Real) and math.isfinite(flop_per_point)
              and flop_per_point >= 0):
        raise InputError(f"flop_per_point must be a finite number >= 0; got {flop_per_point!r}")
    d, s, _ = _dt(dtype)
    interior = math.prod(n - 2 * r for n in dims)
    updated = interior * sweeps
    plane = math.prod(dims[1:]) if len(dims) > 1 else 1
    layer = (2 * r + 1) * plane * s
    split = {"read": s * updated, "write": s * updated}
    if write_allocate:
        split["write_allocate"] = s * updated
    shape = {"grid": list(dims), "points": int(points), "radius": r,
             "stencil": "box" if box else "star", "sweeps": sweeps,
             "interior_points": interior, "updated_points": updated,
             "flop_per_point": flop_per_point, "write_allocate": bool(write_allocate),
             "layer_condition_bytes": layer}
    label = f"stencil{points}_{'x'.join(map(str, dims))}" + (
        f"_s{sweeps}" if sweeps > 1 else "") + f"_{d}"
    count = _count(name or label, "stencil", flop_per_point * updated,
                   split["read"] + split.get("write_allocate", 0.0), split["write"], d,
                   "vector", shape, model=_stencil_model(dims, r, s, layer, write_allocate),
                   split=split)
    return _real_traffic(count) if write_allocate else count


def _stencil_model(dims, r, s, layer, write_allocate) -> str:
    what = {1: "elements", 2: "rows", 3: "planes"}[len(dims)]
    inner = "x".join(map(str, dims[1:])) or "1"
    wa = (f"; + the write-allocate read of each written line: {3 * s:g} B/point (real "
          f"traffic, what hardware counters see)" if write_allocate else
          "; no write-allocate read (STREAM's convention, as a probed roof counts)")
    return (f"stencil, layer condition assumed: the {2 * r + 1} neighbouring {what} "
            f"({2 * r + 1} x {inner} x {s:g} B = {si(layer, 'B')}) stay in cache, so each "
            f"updated point is read once and written once from DRAM: {2 * s:g} B/point{wa}; "
            f"halo reads left out")


SPMV_X_REUSE = ("perfect", "none")


def _check_index_width(rows: int, nnz: int, index_bytes: int) -> None:
    """CSR's integers are signed 1, 2, 4 or 8-byte ints (int32 by default; cuSPARSE's
    CUSPARSE_INDEX_64I, MKL's ILP64 for int64), and the last row pointer holds nnz: int32
    indexes at most 2**31 - 1 nonzeros, so `spmv 1e8 3e9` at 4 B counted a matrix no
    int32 CSR can hold, 25 % short of its int64 bytes (review s33 D). 1 and 2 B model
    relative (delta) column indices (CSR-DU, SELL: advice_sparse's 16-bit lever), whose
    width does not bound the matrix: no range check there."""
    if index_bytes not in (1, 2, 4, 8):
        raise InputError(f"index_bytes (--index-bytes) must be 1, 2, 4 or 8, the width of "
                         f"a signed integer (4: int32, 8: int64); got {index_bytes}")
    most = 2**31 - 1
    if index_bytes == 4 and max(nnz, rows - 1) > most:
        what = f"nnz={nnz}" if nnz > most else f"rows={rows}"
        raise InputError(f"{what} does not fit int32 CSR indices (at most {most:,}: row "
                         f"pointers hold nnz, column indices rows - 1); give index_bytes 8 "
                         f"(--index-bytes 8, int64)")


def spmv(rows: int, nnz: int, dtype: str = "fp64", index_bytes: int = 4, rhs: int = 1,
         x_reuse: str = "perfect", name: str | None = None,
         write_allocate: bool = True) -> OpCount:
    """y = A·x, A a square CSR matrix of `rows` rows and `nnz` nonzeros (SpMM with rhs > 1).

    FLOP 2·nnz·rhs. Bytes: values nnz·s + column indices nnz·i + row pointers (rows + 1)·i
    (the matrix, read once whatever rhs is) + x (rows·s per vector when it stays in cache,
    x_reuse="perfect"; nnz·s, one element per nonzero, with "none") + y written rows·s per
    vector + y's write-allocate read rows·s per vector (bytes_split write_allocate): the
    count is real traffic, what the memory moves and counters see, and is judged as such
    (review s18 r2 F2: without y's read it was 9 % short at 5 nonzeros a row). rows 2e6,
    nnz 54e6, fp64: 648e6 + 8e6 + 4 + 16e6 + 16e6 + 16e6 = 704e6 B, AI 0.153. The kernel's
    meta carries read_only_bytes (the matrix) and index_bytes (its integer part), so the
    advice does not expect fusion or a smaller dtype to shrink them. write_allocate=False
    (a GPU roof: byte_convention.roof_write_allocates) leaves y's read out: a GPU writes
    the whole sectors of y back without reading them (review s19 r1 F12).
    """
    rows, nnz = _size(rows, "rows"), _size(nnz, "nnz")
    index_bytes, rhs = _size(index_bytes, "index_bytes"), _size(rhs, "rhs")
    if x_reuse not in SPMV_X_REUSE:
        raise InputError(f"x_reuse must be one of {', '.join(SPMV_X_REUSE)}; got {x_reuse!r}")
    if nnz > rows * rows:
        raise InputError(f"nnz={nnz} exceeds rows² = {rows * rows} (a square matrix of "
                         f"{rows} rows has at most that many nonzeros)")
    _check_index_width(rows, nnz, index_bytes)
    d, s, _ = _dt(dtype)
    split = {"values": float(nnz * s), "indices": float(nnz * index_bytes),
             "rowptr": float((rows + 1) * index_bytes),
             "x": rhs * s * (rows if x_reuse == "perfect" else nnz), "y": rhs * s * rows}
    if write_allocate:      # a CPU's store of y first reads its line (review s18 r2 F2)
        split["write_allocate"] = rhs * s * rows
    read = sum(v for k, v in split.items() if k != "y")
    matrix = split["values"] + split["indices"] + split["rowptr"]
    x = ("x read once per vector (perfect reuse in cache)" if x_reuse == "perfect" else
         "x gathered once per nonzero (no reuse)")
    model = (f"CSR: values nnz x {s:g} B + column indices nnz x {index_bytes} B + row "
             f"pointers (rows + 1) x {index_bytes} B, the matrix read once"
             + (f" for all {rhs} vectors" if rhs > 1 else "") + f"; {x}; y written once"
             + (" per vector" if rhs > 1 else "")
             + (" and its write-allocate read (real traffic, what a CPU's counters see)"
                if write_allocate else ", no write-allocate read (a GPU writes whole sectors "
                "of y without reading them)") + "; square matrix assumed")
    shape = {"rows": rows, "nnz": nnz, "index_size": index_bytes, "rhs": rhs,
             "x_reuse": x_reuse}
    label = f"spmv_{rows}r_{nnz}nnz" + (f"_rhs{rhs}" if rhs > 1 else "") + f"_{d}"
    base = _count(name or label, "spmv", 2.0 * nnz * rhs, read, split["y"], d, "vector",
                  shape, model=model, split=split)
    return MetaOpCount(**{f.name: getattr(base, f.name) for f in fields(OpCount)},
                       extra_meta={"read_only_bytes": float(matrix),
                                   "index_bytes": float(split["indices"] + split["rowptr"])},
                       # real traffic only with y's write-allocate read counted in
                       byte_count=REAL_TRAFFIC_COUNT if write_allocate else "")


def dot(n: int, dtype: str = "fp64", name: str | None = None) -> OpCount:
    """s = x·y (BLAS dot): 2n FLOP (one FMA per element); bytes 2n·s (x and y read once;
    the scalar result stays in a register). fp64: 16 B per element, AI 1/8."""
    n = _size(n, "n")
    d, s, _ = _dt(dtype)
    model = "compulsory traffic: x and y read once; the scalar result is not counted"
    return _count(name or f"dot_{n}_{d}", "dot", 2.0 * n, 2 * s * n, 0.0, d, "vector",
                  {"n": n}, model=model, split={"x": s * n, "y": s * n})


def axpy(n: int, dtype: str = "fp64", write_allocate: bool = False,
         out_of_place: bool = False, name: str | None = None) -> OpCount:
    """y = a·x + y (BLAS axpy): 2n FLOP; bytes 3n·s (x and y read, y written). In place,
    the store hits the line just read for y, so write-allocate adds nothing and the count
    is real traffic; out_of_place (z = a·x + y, STREAM's triad) with write_allocate adds
    the read of z: 4n·s. Real-traffic counts carry meta byte_count (RealTrafficCount)."""
    n = _size(n, "n")
    d, s, _ = _dt(dtype)
    out = "z" if out_of_place else "y"
    split = {"x": s * n, "y": s * n, out + "_write": s * n}
    if write_allocate and out_of_place:
        split["write_allocate"] = s * n
    wa = ("; + the write-allocate read of z (real traffic)" if write_allocate and out_of_place
          else "; no write-allocate read of z (STREAM's convention)" if out_of_place else
          "; no write-allocate read arises: the store hits the line just read for y, so "
          "the count is real traffic")
    model = f"compulsory traffic: x and y read once, {out} written once{wa}"
    shape = {"n": n, "write_allocate": bool(write_allocate), "out_of_place": bool(out_of_place)}
    read = split["x"] + split["y"] + split.get("write_allocate", 0.0)
    count = _count(name or f"axpy_{n}_{d}", "axpy", 2.0 * n, read, split[out + "_write"], d,
                   "vector", shape, model=model, split=split)
    # in place, or with z's allocate read counted in, the count is what the memory moves
    return _real_traffic(count) if write_allocate or not out_of_place else count
