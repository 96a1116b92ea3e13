"""Canonical names in rooflab's JSON vocabulary: precisions ('FP64', 'double' -> fp64),
memory levels ('HBM3e', 'dram' -> DRAM) and compute units ('Tensor cores' -> tensor), as
users' scripts and profilers spell them. Pure.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from ..errors import InputError
from ..units import GROUP_LINKS, LEVELS, LINKS, UNITS, canonical_dtype

# Level names as users' scripts and profilers spell them; HBM and GDDR are the DRAM level
# (../shared/design/ARCHITECTURE.md, "The JSON vocabulary").
_LEVEL_NAMES = {n.lower(): n for n in LEVELS + LINKS + GROUP_LINKS}

def precision_name(name: Any) -> str:
    """'FP64', 'double', 'float16' -> fp64, fp64, fp16; a name rooflab does not know is kept
    (the analysis then notes which ceiling it fell back to)."""
    return _precision_name(str(name))


@lru_cache(maxsize=1024)   # every Kernel canonicalises its keys; the names are few
def _precision_name(text: str) -> str:
    try:
        return canonical_dtype(text)
    except InputError:
        return text


def level_name(name: Any) -> str:
    """'dram', 'HBM3e', 'l2' -> DRAM, DRAM, L2; an unknown level is kept as written."""
    return _level_name(str(name))


@lru_cache(maxsize=1024)
def _level_name(text: str) -> str:
    text = text.strip()
    low = text.lower()
    if low.startswith(("hbm", "gddr")) or low == "vram":
        return "DRAM"
    return _LEVEL_NAMES.get(low, text)


def unit_name(name: Any) -> str | None:
    """'Tensor', 'tensor cores' -> tensor; 'Vector' -> vector; None or '' -> None (any)."""
    if name is None or not str(name).strip():
        return None
    low = str(name).strip().lower()
    return next((u for u in UNITS if low.startswith(u)), str(name))


# Why an unknown unit matters: the analysis holds such a kernel to its precision's fastest
# ceiling (the tensor one, 7x the vector one on an H100 at fp16), so a misspelt 'vector'
# read 7x further below its roof without a word (review r3 F1)
UNKNOWN_UNIT_WHY = (f"not a compute unit rooflab knows ({', '.join(UNITS)}, or empty for "
                    f"any): no ceiling has it, so the analysis holds the kernel to its "
                    f"precision's fastest ceiling (and notes which); write one of these names")


def unknown_unit(canonical: str | None) -> str | None:
    """"unit 'vektor' (did you mean 'vector'?)" for a canonical compute unit no ceiling has,
    else None; the readers and Kernel warn with it and UNKNOWN_UNIT_WHY."""
    if canonical is None or canonical in UNITS:
        return None
    import difflib

    close = difflib.get_close_matches(str(canonical).strip().lower(), UNITS, n=1, cutoff=0.6)
    return f"unit '{canonical}'" + (f" (did you mean '{close[0]}'?)" if close else "")
