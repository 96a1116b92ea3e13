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

from ..units import fmt_ai
from .advice_core import Advice, Efficiency, _advice
from .analysis import Point
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
    return SparseBytes(matrix / total, nums["values"] / total, "meta bytes_split")


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
    rows = (nbytes - vi) / (ib + 2 * s)
    matrix = (vi + rows * ib) / nbytes
    return SparseBytes(min(1.0, matrix), nnz * s / nbytes,
                       f"CSR model: 2 FLOP per nonzero ({nnz / kernel.calls:.3g} per call), "
                       f"{s:g}-byte values and {ib}-byte (int32) indices, assumed (give "
                       f"meta read_only_bytes and index_bytes); the other bytes row "
                       f"pointers, x and y ({rows / kernel.calls:.3g} rows per call)")


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
        f"the matrix ({m:.1%} of the bytes) is read once for all {k} vectors, x and y once "
        f"per vector: AI {fmt_ai(p.ai)} -> {fmt_ai(k * p.flop / nbytes)}; the speed-up is "
        f"per vector (throughput)", "along slope", flop=k * p.flop, nbytes=nbytes,
        peak=p.peak_flop_per_s, bw=p.bytes_per_s,
        assumption=f"the matrix split comes from the {src}; {k} independent vectors are "
                   f"there to multiply by it (several systems, block CG/GMRES, "
                   f"s-step methods)" + why)
    return replace(got, speedup=k * got.speedup)

