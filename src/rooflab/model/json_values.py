"""A document's numbers, read one way: a field that must hold a plain, finite number in
SI base units (number_field), and a value cut short for the message that refuses it
(short_value). Pure.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ..errors import InputError


def number_field(d: Mapping[str, Any], field: str, where: str, unit: str) -> float:
    """A field that must hold a plain number in SI base units; the message says which."""
    value = d[field]
    try:
        if isinstance(value, bool):
            raise TypeError
        number = float(value)
    except (TypeError, ValueError):
        raise InputError(f"{where}: field '{field}' must be a plain number of {unit} (SI "
                         f"base units, no unit suffix); got {value!r}") from None
    except OverflowError:
        # a 400-digit integer (valid JSON) is past float's range: the same as Infinity
        number = math.inf
    if not math.isfinite(number):
        # Python's json reads NaN/Infinity; rooflab's output (strict JSON) could not hold it
        raise InputError(f"{where}: field '{field}' must be a finite number of {unit}; got "
                         f"{short_value(value)} (NaN and Infinity are not JSON: leave the "
                         f"field out)")
    return number


def short_value(value: Any) -> str:
    """repr of a value for a message, a huge integer cut to its first digits and length."""
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:12]}... ({len(text)} characters)"
