"""The helpers every op count in workloads.ops and workloads.ops_hpc shares: the size
check, the dtype triple and the OpCount builder (split out of ops.py, one copy of each rule).
"""

from __future__ import annotations

import math
import numbers

from ..errors import InputError
from ..units import canonical_dtype, dtype_bytes, flop_precision
from .count import COMPULSORY, OpCount

# Precisions whose matrix products run on tensor cores / matrix engines (NVIDIA tensor
# cores, AMD MFMA, Intel AMX): a matmul in these is held to the tensor ceiling. uint8 is
# int8 math (units.flop_precision): the IMMA takes u8 operands (mma.sync ...s32.u8.u8.s32),
# as AMX and VNNI do (u8 x s8 -> s32).
TENSOR_DTYPES = frozenset({"fp16", "bf16", "tf32", "fp8", "int8", "uint8", "int4", "fp4"})

# The largest size an op takes: an int64 tensor dimension (2**63 - 1; torch and numpy hold
# no larger). Below it the counts stay finite floats (the most factors any op multiplies is
# conv2d's 7: (2**63)**7 = 2**441 < 2**1024); a 150-digit size overflowed the float
# conversion into an internal error, exit 70 (review r1 F5).
MAX_SIZE = 2**63 - 1


def too_large(name: str, value, typed: str | None = None) -> str:
    """The message for a size past MAX_SIZE: what, where (the argument) and how to fix.
    `typed`: the size as the user typed it, shown where it is short (1e400 was shown as
    "beyond 1e308": s36 I)."""
    # an int past 1e308 does not convert to float
    big = value == math.inf or (isinstance(value, int) and value.bit_length() > 1023)
    shown = "beyond 1e308" if big else f"{float(value):.3g}"
    if typed is not None and len(typed.strip()) <= 24:
        shown = typed.strip()
    return (f"{name} is {shown}, larger than rooflab takes (at most 2**63 - 1 = "
            f"{float(MAX_SIZE):.3g}, the largest tensor dimension); give the size in "
            f"elements, such as 4096 or 1e6")


def _size(value, name: str, minimum: int = 1) -> int:
    """A whole number >= minimum, or InputError naming the parameter."""
    # an int is finite; math.isfinite of one past 1e308 raised OverflowError (review r1 F11)
    ok = (isinstance(value, numbers.Real) and not isinstance(value, bool)
          and (isinstance(value, numbers.Integral) or math.isfinite(value)))
    if not ok or value != int(value) or value < minimum:
        need = "a positive whole number" if minimum == 1 else f"a whole number >= {minimum}"
        raise InputError(f"{name} must be {need}; got {value!r}")
    if value > MAX_SIZE:
        raise InputError(too_large(name, value))
    return int(value)


def _dt(dtype: str) -> tuple[str, float, str]:
    d = canonical_dtype(dtype)
    return d, dtype_bytes(d), flop_precision(d)


def _count(name, op, flop, read, write, dtype, unit, shape, model=COMPULSORY, split=None):
    d, _, precision = _dt(dtype)
    return OpCount(name=name, op=op, flop=float(flop), bytes=float(read + write),
                   precision=precision, unit=unit,
                   bytes_split=split or {"read": float(read), "write": float(write)},
                   byte_model=model, shape={**shape, "dtype": d})


def _matrix_unit(dtype: str) -> str | None:
    return "tensor" if canonical_dtype(dtype) in TENSOR_DTYPES else None
