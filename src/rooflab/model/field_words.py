"""The words a rooflab JSON file gives (a kernel's or a roof's name, a ceiling's precision,
level and unit), checked where the file is read: a value that is no string is an error
naming the file's place and the field; a string rooflab does not know is a warning, as a
kernel file's unknown precision or level is (review r1 F4, F7: `"name": null` ranked a
kernel called "None", a roof level `null` became a ceiling "None" no kernel could reach,
and `"unit": "abc"` a ceiling the advice changed for, silently). A kernel's provenance
words are checked by its file's reader (ingest/kernelfile_rows.py). Pure but for the
warnings (InputWarning, which the CLI prints as `warning: ...`).
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Mapping
from typing import Any

from ..errors import InputError, InputWarning, user_stacklevel
from ..units import LEVELS, PRECISIONS, UNITS
from .canonical_names import level_name, precision_name, unit_name, unknown_unit


def _shown(value: Any) -> str:
    """A value as the file wrote it: null, true, [1], {} (JSON's words, not Python's)."""
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def name_field(d: Mapping[str, Any], where: str, default: str | None = None,
               example: str = "gemm") -> str:
    """d["name"] as a string: a string, or a whole number (a kernel numbered 7); null, a
    bool, a list, an object or a fraction is refused (they were str()'d into names such
    as "None" and "[1]"). Missing: `default`, or KeyError when there is none."""
    if "name" not in d and default is not None:
        return default
    value = d["name"]
    if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
        return str(value)
    raise InputError(f"{where}: field 'name' must be a string, e.g. \"{example}\"; got "
                     f"{_shown(value)}")


def _text(d: Mapping[str, Any], field: str, where: str, example: str) -> str:
    value = d[field]
    if not isinstance(value, str):
        raise InputError(f"{where}: field '{field}' must be a string such as \"{example}\"; "
                         f"got {_shown(value)}")
    return value


def _warn(message: str) -> None:
    warnings.warn(message, InputWarning, stacklevel=user_stacklevel())


def ceiling_precision(d: Mapping[str, Any], where: str) -> tuple[str, str | None]:
    """A compute ceiling's (precision, unit), canonical; an unknown word is warned about:
    no kernel's FLOP are of that precision (the ceiling judges nothing), and a unit no
    kernel names leaves the ceiling to every kernel of its precision."""
    from .kernel import unknown_name

    precision = precision_name(_text(d, "precision", where, "fp16"))
    if unknown_name(precision, "flop"):
        _warn(f"{where}: ceiling precision '{precision}' is not one rooflab knows (one of "
              f"{', '.join(PRECISIONS)}): no kernel's FLOP are of it, so it judges none; "
              f"write one of these names")
    unit = d.get("unit")
    if unit is not None and not isinstance(unit, str):
        raise InputError(f"{where}: field 'unit' must be a string such as \"tensor\" or "
                         f"\"vector\" (or left out for any); got {_shown(unit)}")
    unit = unit_name(unit)
    if unknown_unit(unit):
        _warn(f"{where}: ceiling {unknown_unit(unit)} is not a compute unit rooflab knows "
              f"({', '.join(UNITS)}, or left out for any): the kernels of its precision "
              f"are held to it as to any unit, and the advice reads it as neither; write "
              f"one of these names")
    return precision, unit


def ceiling_level(d: Mapping[str, Any], where: str) -> str:
    """A memory ceiling's level, canonical; an unknown word is warned about (no kernel's
    bytes are at it, so it judges nothing)."""
    from .kernel import unknown_name

    level = level_name(_text(d, "level", where, "DRAM"))
    if unknown_name(level, "bytes"):
        _warn(f"{where}: ceiling level '{level}' is not a memory level (one of "
              f"{', '.join(LEVELS)}; HBM and GDDR count as DRAM): no kernel's bytes are at "
              f"it, so it judges none; write one of these names")
    return level
