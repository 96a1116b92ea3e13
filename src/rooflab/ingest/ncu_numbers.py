"""Numbers and units in Nsight Compute's metrics: a unit's factor to SI base units, a cell's
number, and one launch's metric value (None when missing or nan). Split from
ingest/ncu_metrics.py.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping

_PREFIX = {"": 1.0, "K": 1e3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15,
           "m": 1e-3, "u": 1e-6, "n": 1e-9, "p": 1e-12}
# Counted things whose SI base is the thing itself. ncu auto-scales with decimal prefixes
# (Kbyte = 1e3 byte; `--print-units base` turns scaling off).
_BASES = ("byte", "second", "cycle", "inst", "warp", "sector", "request", "thread", "block",
          "wavefront", "register", "op", "flop")
_UNIT_RE = re.compile(r"^([KkMGTPmunp]?)(" + "|".join(_BASES) + r")s?$")
_SHORT_TIME = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9, "ps": 1e-12}


def unit_scale(unit: str) -> float | None:
    """The factor that turns a value in `unit` into SI base units; None when unknown.

    Handles 'byte', 'Kbyte', 'usecond', 'msecond', 'ns', 'hz', 'Ghz', 'Gcycle/second',
    'byte/cycle', 'inst/cycle', 'Tbyte/s', '%' and '' (plain count).
    """
    u = unit.strip()
    if u in ("", "%"):
        return 1.0
    if "/" in u:
        num, _, den = u.partition("/")
        a, b = unit_scale(num), unit_scale(den)
        return None if a is None or b is None else a / b
    if u in _SHORT_TIME:
        return _SHORT_TIME[u]
    low = u.lower()
    if low.endswith("hz"):
        return {"": 1.0, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12}.get(low[:-2])
    m = _UNIT_RE.match(u)
    if m is None:
        return None
    return _PREFIX[m.group(1)]


_NAN_WORDS = frozenset(("nan", "n/a", "-nan", "inf", "-inf", ""))


def parse_number(text: str) -> float:
    """'1,619,726,202.90' -> 1619726202.9; 'nan', 'n/a' and '' -> nan; else ValueError."""
    s = text.strip()
    if s.lower() in _NAN_WORDS:
        return math.nan
    return float(s.replace(",", ""))


def _get(m: Mapping[str, float], name: str) -> float | None:
    v = m.get(name)
    return None if v is None or v != v else v
