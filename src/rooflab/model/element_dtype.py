"""The element dtype of a kernel, its element and weight sizes, and its meta once a
what-if has changed that dtype.

A kernel's bytes are elements of the dtype its meta names (shape.dtype, else dtype); its
FLOP are counted in a compute precision that may differ (int64 data, int32 math; complex128
data, fp64 math). The advice reads element sizes here (element_bytes,
weight_bytes_per_element), one rule for all; model/whatif.py scales bytes by the element
size ratio and renames the dtype in meta with these functions. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..errors import InputError
from ..units import canonical_dtype, dtype_bytes
from .kernel import Kernel
from .opkind import name_words

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


def element_dtype(k: Kernel | None, precision: str) -> str:
    """The dtype of a kernel's elements: the one its meta names (stored_dtype: shape.dtype,
    then dtype), else `precision`, its math precision."""
    return (stored_dtype(k) if k is not None else None) or precision


def element_bytes(k: Kernel | None, precision: str) -> float | None:
    """Bytes per element of a kernel's data (element_dtype: shape.dtype, then meta dtype,
    then `precision`). None where no one size holds: a complex dtype (two real parts: the
    callers' real-valued formulas, one element per 2 FLOP, do not apply) or a name with no
    storage size."""
    dtype = element_dtype(k, precision)
    if dtype in COMPLEX_PARTS:
        return None
    try:
        size = dtype_bytes(dtype)
    except InputError:   # not a dtype rooflab knows the size of
        return None
    return size if size > 0 else None


# Name words of weight-only quantized GEMMs (W4A16, AWQ, GPTQ, Marlin): 4-bit weights under
# 16-bit math, so the weight size is not the math precision's (review 13v F-J: a W4A16
# lm_head at AI 3.9 is a GEMV, one 0.5-byte weight per 2 FLOP).
INT4_WEIGHT_WORDS = ("w4a16", "w4a8", "awq", "gptq", "marlin", "int4")


def stored_weight_bytes(k: Kernel | None) -> float | None:
    """Bytes per weight as the kernel's weights are stored: meta 'weight_bytes_per_param'
    (`rooflab llm` writes it: an fp16 scale per group, zero points, a ggml type's blocks;
    int4 group 128: 0.515625, Q4_K: 0.5625), None where meta gives no positive number."""
    per = k.meta.get("weight_bytes_per_param") if k is not None else None
    ok = isinstance(per, (int, float)) and not isinstance(per, bool) and per > 0
    return float(per) if ok else None


def weight_bytes_per_element(k: Kernel | None, precision: str) -> tuple[float | None, str]:
    """Bytes per weight and where that comes from: meta 'weight_dtype' (or the shape's),
    4 bits for a weight-only quantized GEMM's name (INT4_WEIGHT_WORDS), meta
    'weight_bytes_per_param' (stored_weight_bytes), else the kernel's element size
    (element_bytes); (None, '') where no size is known.

    Where both weight_dtype and weight_bytes_per_param are given, the size is the dtype's
    bare width and the stored bytes are in the words. The callers set this size against
    bare widths: the int4 advice's 0.5 B target (seed 004) and the "already 4-bit" verdict
    (size <= 0.5). A stored 0.515625 (int4, group 128) there would offer int4 to int4
    weights; a Q8_0 file's 1.0625 -> 0.5 would count its scales on one side of the ratio
    only (whatif --quantize keeps one rule on both sides the same way). Without a
    weight_dtype (a what-if that dropped it) the stored bytes are the best size known, and
    the math precision's would be the config's dtype, not what is stored (s26 leftover)."""
    meta = k.meta if k is not None else {}
    shape = meta.get("shape") if isinstance(meta.get("shape"), Mapping) else {}
    given = meta.get("weight_dtype") or shape.get("weight_dtype")
    stored = stored_weight_bytes(k)
    if given:
        try:
            size: float | None = dtype_bytes(str(given))
        except InputError:   # not a dtype rooflab knows the size of
            size = None
        src = f"weight dtype {given} (meta)"
        if stored is not None and size is not None and abs(stored - size) > 1e-12:
            src += (f", stored at {stored:.6g} B a weight with its scales (meta "
                    f"weight_bytes_per_param)")
    elif k is not None and any(w in INT4_WEIGHT_WORDS for w in name_words(k.name)):
        return 0.5, f"4-bit weights (the name '{k.name}' says a weight-only int4 GEMM)"
    elif stored is not None:
        return stored, f"{stored:.6g} B a weight as stored (meta weight_bytes_per_param)"
    else:
        size = element_bytes(k, precision)
        src = (f"{element_dtype(k, precision)} weights (its math precision; give meta "
               f"weight_dtype if they are not)")
    return (size, src) if size is not None and size > 0 else (None, "")


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
