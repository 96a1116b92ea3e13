"""Advice for a sparse matrix-vector product (SpMV, review 16a C): its bytes are mostly the
matrix (values and integer indices), read once per product whatever runs next to it, so
fusion keeps only the vectors, lower precision shrinks the values and the vectors but not
the indices, and several right-hand sides per matrix read (SpMM, block Krylov) are the
lever a GEMV's batching is. Pure: no I/O.

The byte model is CSR's (the usual SpMV format): 2 FLOP per nonzero (one FMA), each nonzero
a value and a column index, one row pointer per row, x read once and y written once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from ..units import fmt_ai, fmt_fraction
from .advice_core import Advice, Efficiency, _advice
from .analysis import Point
from .byte_convention import holds_write_allocate
from .element_dtype import element_bytes
from .kernel import Kernel

# CSR's default index width: int32 column indices and row pointers (SciPy, MKL, cuSPARSE
# and PETSc's default build all use 32-bit indices).
DEFAULT_INDEX_BYTES = 4
# Right-hand sides per matrix read in the SpMM advice (the GEMV batching advice's 8).
SPMM_RHS = 8


@dataclass(frozen=True)
class SparseBytes:
    """How an SpMV's bytes split, as shares of its (DRAM) bytes."""

    matrix: float       # read once per product: values + indices + row pointers
    values: float       # the matrix values (shrink with the precision)
    source: str         # how the split is known, for the assumption
    rowptr: float = 0.0  # the row pointers, where known (0: the indices taken as all columns)


def _num(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0


def _kernel_bytes(kernel: Kernel) -> float:
    return kernel.bytes.get("DRAM") or sum(kernel.bytes.values())


def _from_split(kernel: Kernel) -> SparseBytes | None:
    """The split `rooflab ai spmv` writes (meta bytes_split values / indices / rowptr /
    x / y); None without one."""
    split = kernel.meta.get("bytes_split")
    if not isinstance(split, Mapping) or not _num(split.get("values")):
        return None
    nums = {k: float(v) for k, v in split.items() if _num(v)}
    total = sum(nums.values())
    matrix = sum(nums.get(k, 0.0) for k in ("values", "indices", "rowptr"))
    return SparseBytes(matrix / total, nums["values"] / total, "meta bytes_split",
                       nums.get("rowptr", 0.0) / total)


def sparse_bytes(kernel: Kernel, precision: str) -> SparseBytes | None:
    """The matrix and value shares of an SpMV's bytes, from (first found): meta bytes_split
    (values, indices, rowptr, x, y); meta read_only_bytes (or weight_bytes) for the matrix,
    less meta index_bytes (all its integer indices and row pointers, bytes) for the values;
    else the CSR model on its FLOP: nnz = FLOP / 2 (per right-hand side, meta shape rhs),
    values nnz x s, column indices nnz x 4 B (int32, assumed), and the rest row pointers
    (4 B), x and y (s each) per row. None where none applies (no FLOP or element size, or
    fewer bytes than the values and indices: a cache level's count, or another format)."""
    split = _from_split(kernel)
    if split is not None:
        return split
    nbytes = _kernel_bytes(kernel)
    s = element_bytes(kernel, precision)
    if nbytes <= 0 or s is None:
        return None
    shape = kernel.meta.get("shape")
    rhs = shape.get("rhs") if isinstance(shape, Mapping) else None
    rhs = float(rhs) if _num(rhs) else 1.0
    nnz = kernel.total_flop / (2 * rhs)
    ib = DEFAULT_INDEX_BYTES
    given = next((k for k in ("read_only_bytes", "weight_bytes")
                  if _num(kernel.meta.get(k))), None)
    if given is not None:
        matrix = min(1.0, float(kernel.meta[given]) / nbytes)
        index = kernel.meta.get("index_bytes")
        if _num(index):
            values, how = max(0.0, matrix - float(index) / nbytes), "meta index_bytes"
        elif nnz > 0:
            values, how = min(matrix, nnz * s / nbytes), "2 FLOP per nonzero"
        else:
            values, how = matrix * s / (s + ib), f"{ib} B indices assumed"
        return SparseBytes(matrix, values, f"meta {given} (values: {how})")
    vi = nnz * (s + ib)
    if nnz <= 0 or vi > nbytes * 1.0001:
        return None
    # real traffic (counter bytes) holds y's write-allocate read too: 28 B a row in fp64,
    # not 20 (review s18 r2 F2: a 1e6-row matrix read as 1.4e6 rows)
    wa = 1 if holds_write_allocate(kernel) else 0
    rows = (nbytes - vi) / (ib + (2 + wa) * s)
    matrix = (vi + rows * ib) / nbytes
    return SparseBytes(min(1.0, matrix), nnz * s / nbytes,
                       f"CSR model: 2 FLOP per nonzero ({nnz / kernel.calls:.3g} per call), "
                       f"{s:g}-byte values and {ib}-byte (int32) indices, assumed (give "
                       f"meta read_only_bytes and index_bytes); the other bytes row "
                       f"pointers, x and y" + (" with y's write-allocate read (real "
                                               "traffic)" if wa else "")
                       + f" ({rows / kernel.calls:.3g} rows per call)", rows * ib / nbytes)


def sparse_bytes_ratio(kernel: Kernel, old_size: float, new_size: float) -> float | None:
    """New bytes / old bytes of an SpMV whose values and vectors go from old_size to
    new_size bytes per element while its integer indices stay (review 16a C: fp64 -> fp32
    CSR, 12 -> 8 B per nonzero: 1.51x, not 2x); None where the split is not known (the
    caller scales every byte then). For `whatif --precision` (model/whatif.py
    change_precision: for a kernel with opkind.is_sparse(kind), scale its bytes by this
    instead of new/old size)."""
    split = sparse_bytes(kernel, kernel.precision)
    if split is None or old_size <= 0:
        return None
    shrinks = split.values + (1.0 - split.matrix)
    return 1.0 - shrinks * (1.0 - new_size / old_size)


def spmm_advice(p: Point, e: Efficiency, kernel: Kernel, why: str = "") -> Advice | None:
    """SPMM_RHS right-hand sides per matrix read (SpMV -> SpMM, block Krylov): the matrix
    is read once for all of them, x and y grow with them. Per vector (throughput), as the
    GEMV batching advice counts: k x bytes / (matrix + k x rest)."""
    if p.flop <= 0:
        return None   # no products counted: nothing to multiply by more vectors
    split = sparse_bytes(kernel, p.precision)
    m, src = (split.matrix, split.source) if split else (
        1.0, "assumption that all bytes are the matrix (an upper bound; give meta "
             "read_only_bytes)")
    k = SPMM_RHS
    nbytes = p.bytes * (m + k * (1.0 - m))
    got = _advice(
        p, e, f"multiply {k} right-hand sides per matrix read (SpMV -> SpMM, block Krylov)",
        f"the matrix ({fmt_fraction(m, 1)} of the bytes) is read once for all {k} vectors, x and y "
        f"once per vector: AI {fmt_ai(p.ai)} -> {fmt_ai(k * p.flop / nbytes)}; the speed-up is "
        f"per vector (throughput)", "along slope", flop=k * p.flop, nbytes=nbytes,
        peak=p.peak_flop_per_s, bw=p.bytes_per_s,
        assumption=f"the matrix split comes from the {src}; {k} independent vectors are "
                   f"there to multiply by it (several systems, block CG/GMRES, "
                   f"s-step methods)" + why)
    return replace(got, speedup=k * got.speedup)



# Blocked CSR's block side in the index advice: 3x3 is a 3-D elasticity or a 3-component
# flow matrix (one block per pair of mesh nodes); one column index and 1/b of the row
# pointers per b x b values (review s18 r2 F8: 12 -> 8 + 4/9 B per nonzero, 1.39x).
BCSR_BLOCK = 3
# Relative (delta) column indices within a row window fit 16 bits (SELL/CSR-DU, CSR-VI).
NARROW_INDEX_BYTES = 2
# Index advice below this predicted speed-up is left out (fusion's rule, 1.05).
INDEX_MIN_GAIN = 1.05


def index_advice(p: Point, e: Efficiency, kernel: Kernel) -> list[Advice]:
    """The index bytes an SpMV reads with its values (review s18 r2 F8): a blocked format
    (BCSR/BSR b x b: one column index per b^2 values, one row pointer per b rows) and
    16-bit relative column indices, each priced from the split's index share (matrix less
    values; its row pointers where known); the 16-bit one only for wider indices."""
    split = sparse_bytes(kernel, p.precision)
    if split is None or p.bytes <= 0:
        return []
    index = max(0.0, split.matrix - split.values)
    cols = max(0.0, index - split.rowptr)
    shape = kernel.meta.get("shape")
    width = shape.get("index_size") if isinstance(shape, Mapping) else None
    width = float(width) if _num(width) else DEFAULT_INDEX_BYTES
    if cols <= 0:
        return []
    b = BCSR_BLOCK
    rows = ("its row pointers from the split" if split.rowptr else
            "its indices all taken as column indices (row pointers not known apart)")
    options = (
        (f"store the matrix in a blocked format (BCSR/BSR {b}x{b} blocks)",
         cols * (1 - 1 / b**2) + split.rowptr * (1 - 1 / b),
         f"one column index per {b}x{b} block of values and one row pointer per {b} rows: "
         f"the indices ({fmt_fraction(index, 1)} of the bytes) shrink to "
         f"{fmt_fraction(cols / b**2 + split.rowptr / b, 1)}",
         f"the matrix has dense {b}x{b} blocks (a PDE with {b} unknowns per mesh node: "
         f"elasticity, multi-component flow) stored without zero fill; {rows}"),
        (f"use {8 * NARROW_INDEX_BYTES}-bit relative column indices",
         cols * (1 - NARROW_INDEX_BYTES / width),
         f"column indices stored as {NARROW_INDEX_BYTES}-byte offsets within a row window "
         f"instead of {width:g}-byte integers: {fmt_fraction(cols, 1)} of the bytes -> "
         f"{fmt_fraction(cols * NARROW_INDEX_BYTES / width, 1)}",
         f"every row's columns lie within 2^16 of a base kept per row or slice (banded or "
         f"RCM-reordered matrices; CSR-DU, CSR-VI, SELL with relative indices); row "
         f"pointers stay; {rows}"),
    )
    out = []
    for action, saved, detail, assumption in options:
        if saved <= 0:   # 16-bit indices already
            continue
        got = _advice(p, e, action, detail + f": AI {fmt_ai(p.ai)} -> "
                      f"{fmt_ai(p.ai / (1 - saved))}", "along slope", flop=p.flop,
                      nbytes=p.bytes * (1 - saved), peak=p.peak_flop_per_s,
                      bw=p.bytes_per_s,
                      assumption=f"the split comes from the {split.source}; {assumption}; "
                                 f"FLOP unchanged")
        if got.speedup >= INDEX_MIN_GAIN:
            out.append(got)
    return out
