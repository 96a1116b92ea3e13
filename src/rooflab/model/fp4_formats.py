"""The block-scaled 4-bit float formats and the bytes one element of each takes, the one
place rooflab counts them (s27: `whatif --precision nvfp4` on a kernel file counted a bare
0.5 B an element while `rooflab llm --act nvfp4` counted 0.5625).

An fp4 element is e2m1, half a byte (units.DTYPE_BYTES); no engine stores it without a
scale per block of elements, and the block is what tells the formats apart: NVIDIA's NVFP4
one fp8 (e4m3) scale per 16 elements, 0.5 + 1/16 = 0.5625 B an element (its per-tensor
fp32 scale is not counted), OCP MXFP4 one e8m0 byte per 32, 0.5 + 1/32 = 0.53125 B
(gpt-oss's experts). model/ sits below workloads/ (ARCHITECTURE: imports go down), so
`rooflab llm`'s settings read their FP4_FORMATS from here, not the other way. Pure.
"""

from __future__ import annotations

from ..units import dtype_bytes

# format -> (elements per scale, the scale's dtype), by the name --weights, --act,
# --precision and --quantize take
FP4_FORMATS = {"nvfp4": (16, "fp8"), "mxfp4": (32, "uint8")}
# a bare `fp4` where a format must be had: NVIDIA's, the one Blackwell's fp4 tensor
# ceiling multiplies (as whatif --precision fp4 has read an llm step's GEMMs since s26)
DEFAULT_FP4 = "nvfp4"
# the scale's name in words: uint8 holds MX's e8m0 exponent
_SCALE_WORDS = {"fp8": "an fp8 scale", "uint8": "an e8m0 scale"}


def fp4_format(name: object) -> str | None:
    """'nvfp4' / 'mxfp4' for a format's name (any case, spaces around), None otherwise."""
    fmt = str(name).strip().lower()
    return fmt if fmt in FP4_FORMATS else None


def block_bytes(fmt: str) -> float:
    """Bytes per element of a block-scaled fp4 format, its block scale's share included:
    nvfp4 0.5625, mxfp4 0.53125."""
    group, scale = FP4_FORMATS[fmt]
    return dtype_bytes("fp4") + dtype_bytes(scale) / group


def block_words(fmt: str, what: str = "elements") -> str:
    """'nvfp4: 0.5 B + an fp8 scale per 16 elements = 0.5625 B'."""
    group, scale = FP4_FORMATS[fmt]
    return (f"{fmt}: {dtype_bytes('fp4'):g} B + {_SCALE_WORDS[scale]} per {group} {what} "
            f"= {block_bytes(fmt):g} B")


# bytes per element of each format, for the what-ifs that look one up by name
FP4_BLOCK = {fmt: block_bytes(fmt) for fmt in FP4_FORMATS}
