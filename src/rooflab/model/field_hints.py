"""The fields a kernel dict may hold (KERNEL_FIELDS), and what an unknown one seems to
mean: a time under another name ('time_ms', 'durationNs': the "seconds" line to write), a
kernel CSV's column, another tool's word for calls, or a misspelt field. Pure.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Mapping
from typing import Any

# The fields a kernel dict may hold: what kernel_from_dict reads (kernel_to_dict writes all
# but "op" and "threads"), and "threads", which the kernel file reader takes into
# meta["threads"] first (ingest/kernelfile.py; docs/json.md documents it: leaving it off
# this list hid it from the warning's list and a misspelt "thread" from its hint, review
# r3 F8). Any other is ignored -- a newer rooflab's field stays readable -- but said
# (unknown_field_words): a hand-written "time_ms" or "sconds" once left a kernel untimed
# without a word.
KERNEL_FIELDS = ("name", "flop", "bytes", "seconds", "calls", "unit", "op", "provenance",
                 "meta", "samples", "threads")
# A time under another name: the unit its name ends in, in seconds ("time_ms", "us").
TIME_UNITS = {"s": 1.0, "sec": 1.0, "secs": 1.0, "ms": 1e-3, "msec": 1e-3, "millis": 1e-3,
              "us": 1e-6, "usec": 1e-6, "µs": 1e-6, "micros": 1e-6, "ns": 1e-9, "nsec": 1e-9}
_TIME_WORDS = {"time", "duration", "dur", "elapsed", "runtime", "latency"}
_TIME_QUALIFIERS = _TIME_WORDS | {"t", "wall", "kernel", "gpu", "cpu", "device", "avg",
                                  "mean", "median", "min", "max", "total", "exec"}
# Other tools' words for what a kernel file says under another name
_CSV_WORDS = ("precision", "dtype", "level", "gflops")
_CALLS_WORDS = ("launches", "count", "invocations", "ncalls", "num_calls", "n_calls")


def _words(field: str) -> list[str]:
    """'durationNs' -> ['duration', 'ns']; 'time (ms)' -> ['time', 'ms']."""
    spaced = re.sub(r"([a-z])([A-Z])", r"\1_\2", field).lower()
    return [w for w in re.split(r"[^a-zµ0-9]+", spaced) if w]


def time_unit(field: str) -> tuple[bool, float | None]:
    """Whether a field's name reads as a time, and its unit in seconds (None: not said):
    'time_ms' -> (True, 1e-3), 'us' -> (True, 1e-6), 'durationNs' -> (True, 1e-9),
    'elapsed' -> (True, None), 'flop_s' and 'sconds' -> (False, None)."""
    words = _words(field)
    if not words:
        return False, None
    if words[-1] in TIME_UNITS and (len(words) == 1 or set(words[:-1]) <= _TIME_QUALIFIERS):
        return True, TIME_UNITS[words[-1]]
    return bool(set(words) & _TIME_WORDS) and set(words) <= _TIME_QUALIFIERS, None


def _json_number(x: float) -> str:
    """A number as a user would type it in JSON: 0.001, 2.5e-6, 1e9 (not 1e+09)."""
    return re.sub(r"e([+-])0*(\d)", lambda m: f"e{m[1].strip('+')}{m[2]}", f"{x:.6g}")


def _plain(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def _field_hint(field: str, d: Mapping[str, Any]) -> str:
    """How to say what an unknown field seems to mean ('' when it looks like nothing)."""
    is_time, per_unit = time_unit(field)
    return _time_hint(field, d, per_unit) if is_time else _name_hint(field, d)


def _time_hint(field: str, d: Mapping[str, Any], per_unit: float | None) -> str:
    """A time under another name: the "seconds" line to write, from its own value."""
    value = _plain(d[field])
    if d.get("seconds") is not None:
        return f"'{field}' looks like a time; 'seconds' is the one read"
    if per_unit is None:
        example = _json_number(value) if value is not None else "0.001"
        return (f"'{field}' looks like a time in an unnamed unit, so the kernel is "
                f"untimed: write it in seconds, e.g. \"seconds\": {example} if it is")
    seconds = _json_number(value * per_unit) if value is not None else "<number>"
    return (f"'{field}' is a time in {_words(field)[-1]}, so the kernel is untimed: write "
            f"\"seconds\": {seconds}")


def _name_hint(field: str, d: Mapping[str, Any]) -> str:
    """A kernel CSV's column in JSON (precision, level, gflops: the JSON form, from the
    kernel's own numbers), another tool's word for calls, or the near known field."""
    low = field.lower()
    # a misspelt CSV word ('precison') too; a near kernel field wins ('flops' is "flop",
    # not a CSV's 'gflops')
    known = [] if low in _CSV_WORDS else difflib.get_close_matches(low, KERNEL_FIELDS, n=1,
                                                                   cutoff=0.8)
    if not known:
        low = next(iter(difflib.get_close_matches(low, _CSV_WORDS, n=1, cutoff=0.8)), low)
    value, flop = d[field], _plain(d.get("flop"))
    if low in ("precision", "dtype") and isinstance(value, str):
        return (f"'{field}': FLOP are keyed by precision: \"flop\": {{\"{value}\": "
                f"{_json_number(flop) if flop is not None else '1.0e9'}}}")
    if low == "level" and isinstance(value, str):
        nbytes = _plain(d.get("bytes"))
        return (f"'{field}': bytes are keyed by level: \"bytes\": {{\"{value}\": "
                f"{_json_number(nbytes) if nbytes is not None else '1.0e8'}}}")
    if low == "gflops":
        if isinstance(d.get("flop"), Mapping):
            flop = sum(v for v in map(_plain, d["flop"].values()) if v is not None)
        rate = _plain(value)
        seconds = (_json_number(flop / (rate * 1e9)) if flop and rate and rate > 0
                   else "FLOP / (gflops x 1e9)")
        return f"'{field}' is read from a kernel CSV only: in JSON write \"seconds\": {seconds}"
    if low in _CALLS_WORDS:
        return f"'{field}': did you mean \"calls\"?"
    close = known or difflib.get_close_matches(low, KERNEL_FIELDS, n=1, cutoff=0.6)
    if not close:
        return ""
    case = " (field names are lower case)" if low == close[0] else ""
    return f"'{field}': did you mean \"{close[0]}\"?{case}"


def unknown_fields(d: Mapping[str, Any]) -> list[str]:
    """A kernel's fields kernel_from_dict does not read (see KERNEL_FIELDS)."""
    return [str(f) for f in d if f not in KERNEL_FIELDS]


def unknown_field_words(d: Mapping[str, Any], verb: str = " ignored") -> str:
    """"unknown field(s) 'time_ms', 'sconds' ignored: 'time_ms' is a time in ms, so the
    kernel is untimed: write "seconds": 0.001; 'sconds': did you mean "seconds"?", or ''
    when every field is known. The known fields are for the caller to list once."""
    unknown = unknown_fields(d)
    if not unknown:
        return ""
    hints = [h for h in (_field_hint(f, d) for f in unknown) if h]
    return (f"unknown field(s) {', '.join(repr(f) for f in unknown)}{verb}"
            + (f": {'; '.join(hints)}" if hints else ""))

