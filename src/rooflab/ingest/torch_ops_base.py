"""The shared vocabulary of the trace rules (ingest/torch_ops*.py): one recorded op call
(OpCall: the shapes, dtypes and constant arguments the PyTorch profiler records) and its
counted work (OpWork), the profiler's dtype names, and the dtype and shape helpers every
rule uses (PyTorch's type promotion, element counts, compulsory bytes of tensor inputs).
Every rule module imports from here, and ingest/torch_ops.py assembles their tables, so
no rule module imports another's internals (and nothing imports in a cycle).
"""

from __future__ import annotations

import ast
import math
from collections.abc import Sequence
from dataclasses import dataclass

from ..units import dtype_bytes, flop_precision

# Profiler dtype spellings -> rooflab dtypes. The `fnuz` fp8 variants are MI300's (gfx942)
# fp8 formats, torch.float8_e4m3fnuz / float8_e5m2fnuz, which ROCm traces record.
TORCH_DTYPES = {
    "float": "fp32", "double": "fp64", "c10::Half": "fp16", "c10::BFloat16": "bf16",
    "c10::Float8_e4m3fn": "fp8", "c10::Float8_e5m2": "fp8",
    "c10::Float8_e4m3fnuz": "fp8", "c10::Float8_e5m2fnuz": "fp8", "long int": "int64",
    "long": "int64", "int": "int32", "short int": "int16", "signed char": "int8",
    "unsigned char": "uint8", "bool": "bool", "c10::complex<float>": "complex64",
    "c10::complex<double>": "complex128", "c10::complex<c10::Half>": "complex32",
}
# A complex element is two of its real type: its bytes are twice, its FLOP are counted in
# the real type's precision (complex64 math is fp32 math).
COMPLEX_REAL = {"complex32": "fp16", "complex64": "fp32", "complex128": "fp64"}


@dataclass(frozen=True)
class OpCall:
    """One recorded call: op name, tensor shapes (None for non-tensors), dtypes, constants;
    lists: the shapes of each tensor-list argument (aten::cat's), in order."""

    name: str
    dims: tuple[tuple[int, ...] | None, ...]
    types: tuple[str, ...]
    concrete: tuple[str, ...] = ()
    lists: tuple[tuple[tuple[int, ...], ...], ...] = ()

    def tensors(self) -> list[tuple[tuple[int, ...], str]]:
        """(shape, dtype) of each tensor input (Scalars and None are skipped)."""
        out = []
        for dims, t in zip(self.dims, self.types, strict=False):
            d = dtype_of(t)
            if dims is not None and d is not None and (len(dims) > 0 or t != "Scalar"):
                out.append((tuple(dims), d))
        return out

    def const(self, i: int, default):
        """Constant argument i as the trace recorded it ("Concrete Inputs"), or default
        when it is absent or not a Python literal."""
        try:
            value = ast.literal_eval(self.concrete[i])
        except (IndexError, ValueError, SyntaxError):
            return default
        return value

    def output_mask(self, i: int, n: int = 3) -> list[bool]:
        """A backward op's output_mask (argument i), the gradients it returns ([True] * n
        when not recorded)."""
        value = self.const(i, [True] * n)
        if not isinstance(value, (list, tuple)) or len(value) != n:
            raise ValueError(f"output_mask {value!r}")
        return [bool(v) for v in value]


@dataclass(frozen=True)
class OpWork:
    """One call's work. complex: counted from complex values (the profiler's own `flops`
    count real-valued formulas, so they do not apply). assumed: what the count assumed
    for want of the trace's data (cat's dtype), for the kernel's meta; empty if nothing."""

    op: str
    flop: float
    bytes: float
    precision: str
    unit: str | None
    complex: bool = False
    assumed: str = ""


def dtype_of(type_name: str) -> str | None:
    return TORCH_DTYPES.get(type_name.strip())


def real_dtype(dtype: str) -> str:
    """The real type of a complex dtype (complex64 -> fp32); a real dtype itself."""
    return COMPLEX_REAL.get(dtype, dtype)


def itemsize(dtype: str) -> float:
    """Bytes per element, a complex one counted as its two real halves."""
    return dtype_bytes(real_dtype(dtype)) * (2 if dtype in COMPLEX_REAL else 1)


def numel(shape: Sequence[int]) -> int:
    return math.prod(shape) if shape else 1


def broadcast(shapes: Sequence[Sequence[int]]) -> tuple[int, ...]:
    nd = max(len(s) for s in shapes)
    out = []
    for i in range(nd):
        dims = [s[len(s) - nd + i] for s in shapes if len(s) - nd + i >= 0]
        out.append(max(dims))
    return tuple(out)


def in_bytes(tensors) -> float:
    """Bytes of (shape, dtype) tensors, each read once."""
    return float(sum(numel(s) * itemsize(d) for s, d in tensors))


# Type promotion (torch.promote_types / torch.result_type), on rooflab's dtype names.
_CATEGORY = {"bool": 0, "uint8": 1, "int8": 1, "int16": 1, "int32": 1, "int64": 1}


def category(dtype: str) -> int:
    """bool 0 < integer 1 < floating 2 < complex 3, the order of PyTorch's promotion."""
    return 3 if dtype in COMPLEX_REAL else _CATEGORY.get(dtype, 2)


def promote(a: str, b: str) -> str:
    """torch.promote_types on two dtypes: the smallest dtype that holds both."""
    if a == b:
        return a
    ca, cb = category(a), category(b)
    if ca == 3 or cb == 3:   # complex64 with fp64 -> complex128: the wider real part
        real = promote(real_dtype(a), real_dtype(b)) if min(ca, cb) >= 2 else (
            real_dtype(a) if ca == 3 else real_dtype(b))
        return {v: k for k, v in COMPLEX_REAL.items()}.get(real, "complex128")
    if ca != cb:
        return a if ca > cb else b
    if {a, b} in ({"fp16", "bf16"}, {"uint8", "int8"}):
        return "fp32" if ca == 2 else "int16"
    return a if dtype_bytes(a) >= dtype_bytes(b) else b


def result_dtype(tensors: Sequence[tuple[tuple[int, ...], str]]) -> str:
    """torch.result_type over tensor inputs: tensors with dimensions decide; a 0-dim tensor
    only when it is of a higher category (a float scalar times an int tensor). The trace
    records a Python number as a 0-dim `double`, so a 0-dim fp64 that raises the category
    is taken as the default float dtype, fp32, as PyTorch treats the number."""
    dim = [d for s, d in tensors if len(s) > 0]
    zero = [d for s, d in tensors if len(s) == 0]
    if not dim:
        return _promote_all(zero)
    out = _promote_all(dim)
    if zero:
        z = _promote_all(zero)
        if category(z) > category(out):
            out = promote(out, "fp32" if z == "fp64" else z)
    return out


def _promote_all(dtypes: Sequence[str]) -> str:
    out = dtypes[0]
    for d in dtypes[1:]:
        out = promote(out, d)
    return out


def rows_cols(shape: Sequence[int], dim: int) -> tuple[int, int] | None:
    if not shape:
        return None
    dim = dim % len(shape)
    cols = shape[dim]
    return numel(shape) // cols, cols


def per_dim(value, spatial: int) -> list[int]:
    """A conv argument per spatial dimension: [s] is broadcast, [s1, s2] kept."""
    v = list(value) if isinstance(value, (list, tuple)) else [value]
    if len(v) == 1:
        v = v * spatial
    if len(v) != spatial or not all(isinstance(x, int) and not isinstance(x, bool) for x in v):
        raise ValueError(f"{value!r} for {spatial} spatial dimensions")
    return v


def reduced_out(shape: tuple[int, ...], dims) -> int:
    """Output elements of reducing `shape` over `dims` (None or []: every dimension; keepdim
    leaves 1s, which do not change the count)."""
    if not shape or not dims:
        return 1
    dims = dims if isinstance(dims, (list, tuple)) else [dims]
    cut = {int(d) % len(shape) for d in dims}
    return numel([n for i, n in enumerate(shape) if i not in cut])


def precision_of(types: Sequence[str]) -> str:
    for t in types:
        d = dtype_of(t)
        if d is not None:
            return flop_precision(real_dtype(d))
    return "fp32"
