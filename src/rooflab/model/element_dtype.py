"""The element dtype of a kernel, and its meta once a what-if has changed that dtype.

A kernel's bytes are elements of the dtype its meta names (shape.dtype, else dtype); its
FLOP are counted in a compute precision that may differ (int64 data, int32 math; complex128
data, fp64 math). model/whatif.py scales bytes by the element size ratio and renames the
dtype in meta with these functions. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..errors import InputError
from ..units import canonical_dtype, dtype_bytes
from .kernel import Kernel

# Complex dtypes (bench/zoo's FFT says shape dtype complex128): each element is two parts
# of the real dtype, and FLOP are counted in that real precision (bench/torch_count.py).
COMPLEX_PARTS = {"complex128": "fp64", "complex64": "fp32", "complex32": "fp16"}


def complex_name(dtype: str) -> str:
    names = {part: name for name, part in COMPLEX_PARTS.items()}
    return names.get(dtype, f"complex {dtype}")


def stored_dtype(k: Kernel) -> str | None:
    """The element dtype a kernel's meta names (shape.dtype, else dtype), canonical or a
    COMPLEX_PARTS name; None when it names none rooflab knows."""
    shape = k.meta.get("shape")
    named = shape.get("dtype") if isinstance(shape, Mapping) else None
    named = named if named is not None else k.meta.get("dtype")
    if not isinstance(named, str):
        return None
    text = named.strip().lower().removeprefix("torch.")
    if text in COMPLEX_PARTS:
        return text
    try:
        return canonical_dtype(text)
    except InputError:
        return None


# Input dtypes as torch.profiler spelled them: no honest translation (indices stay integers).
STALE_DTYPE_META = ("dtypes",)


def meta_in_dtype(meta: Mapping[str, object], dtype: str, ratio: float) -> dict:
    """Meta of a kernel whose element data is now `dtype` (every byte scaled by `ratio`):
    shape['dtype'] and a top-level 'dtype' name the new dtype; 'weight_dtype' follows where
    the scaled weight element size is a known one (it was the old element dtype: now `dtype`;
    ratio 1: unchanged), else it is dropped rather than left naming the old dtype."""
    out = {k: v for k, v in meta.items() if k not in STALE_DTYPE_META}
    shape = out.get("shape")
    if isinstance(shape, Mapping) and "dtype" in shape:
        out["shape"] = {**shape, "dtype": dtype}
    if "dtype" in out:
        out["dtype"] = dtype
    wd = out.get("weight_dtype")
    if wd is not None and ratio != 1:
        try:
            same = dtype_bytes(str(wd)) * ratio == dtype_bytes(dtype)
        except InputError:
            same = False
        if same:
            out["weight_dtype"] = dtype
        else:
            del out["weight_dtype"]
    return out
