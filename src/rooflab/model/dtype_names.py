"""A kernel's name once a what-if has changed its element dtype: `whatif --precision fp8`
moved 'gemm_fp16_1024' to fp8 and still called it 'gemm_fp16_1024' (session 30). The dtype
a name says is a whole token of it (between characters that are not letters or digits), so
'gemm_fp16_1024' -> 'gemm_fp8_1024', while 'tf32gemm', cuBLAS's 's16816gemm' and
'bf16x9' say no dtype and keep their names. Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from .element_dtype import COMPLEX_PARTS, element_dtype
from .kernel import Kernel

# The spellings of a dtype read off a name, each with the dtype it means (the units
# vocabulary's canonical names and its aliases). C's type words (float, double, half, int,
# long, char) are not read: they are a template's arguments in profiler names
# ('vectorized_elementwise_kernel<4, float>'), not what the kernel was named for.
NAME_DTYPES: dict[str, str] = {
    **{d: d for d in ("fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "fp4", "int64",
                      "int32", "int16", "int8", "uint8", "int6", "int4", "int3", "int2")},
    **{c: c for c in COMPLEX_PARTS},
    "float64": "fp64", "f64": "fp64", "float32": "fp32", "f32": "fp32",
    "float16": "fp16", "f16": "fp16", "bfloat16": "bf16",
    "float8": "fp8", "e4m3": "fp8", "e5m2": "fp8", "e4m3fn": "fp8", "fp8_e4m3": "fp8",
    "fp8_e5m2": "fp8", "float8_e4m3fn": "fp8", "float8_e5m2": "fp8",
    "e2m1": "fp4", "fp4_e2m1": "fp4", "nvfp4": "fp4", "mxfp4": "fp4",
}
# Longest spelling first, so 'fp8_e4m3' is one token, not 'fp8' then a stray 'e4m3'.
_TOKEN = re.compile(
    r"(?<![A-Za-z0-9])("
    + "|".join(map(re.escape, sorted(NAME_DTYPES, key=len, reverse=True)))
    + r")(?![A-Za-z0-9])", re.IGNORECASE)


def name_in_dtype(name: str, old: Collection[str], new: str) -> str:
    """`name` with each whole dtype token that means one of `old` (canonical dtypes)
    replaced by `new`, in the token's case ('gemm_FP16' -> 'gemm_FP8'); tokens of other
    dtypes stay ('fp16_to_fp32_copy' at fp8 from fp16: 'fp8_to_fp32_copy'); a name with no
    such token is returned as it is (nothing is appended: 'q_proj' stays 'q_proj')."""
    def swap(hit: re.Match) -> str:
        token = hit.group(0)
        if NAME_DTYPES[token.lower()] not in old:
            return token
        return new.upper() if token.isupper() else new

    return _TOKEN.sub(swap, name)


def renamed_in_dtype(old: Kernel, new: Kernel, taken: Collection[str] = ()) -> Kernel:
    """`new` (what a what-if made of `old`) named for its element dtype where that changed
    and the name says the old one (name_in_dtype: the old element dtype or math precision),
    ('nvfp4' where meta fp4_format says the block format), unless the new name is `taken`
    (another kernel of the file has it: two kernels of one name after the change would
    read as one). A kernel whose dtype did not change keeps
    its name (a training step's gradient collective, an optimizer held in fp32)."""
    was, now = element_dtype(old, old.precision), element_dtype(new, new.precision)
    if was == now:
        return new
    # fp4 data names its block format where the what-if gave one (meta fp4_format: nvfp4)
    fmt = new.meta.get("fp4_format") if now == "fp4" else None
    name = name_in_dtype(new.name, {was, old.precision}, fmt if isinstance(fmt, str) else now)
    return new if name == new.name or name in taken else new.with_(name=name)
