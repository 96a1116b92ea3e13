"""Canonical names in rooflab's JSON vocabulary: precisions ('FP64', 'double' -> fp64),
memory levels ('HBM3e', 'dram' -> DRAM) and compute units ('Tensor cores' -> tensor), as
users' scripts and profilers spell them. Pure.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from ..errors import InputError
from ..units import LEVELS, LINKS, UNITS, canonical_dtype

# Level names as users' scripts and profilers spell them; HBM and GDDR are the DRAM level
# (../shared/design/ARCHITECTURE.md, "The JSON vocabulary").
_LEVEL_NAMES = {n.lower(): n for n in LEVELS + LINKS}

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

