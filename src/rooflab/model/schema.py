"""The JSON vocabulary: one dict shape per concept, SI numbers, unit-named fields.

History of schema_version:
  1 — first version (roof, kernels, analysis, profile).
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from ..errors import InputError
from ..units import LEVELS, LINKS, UNITS, canonical_dtype
from .analysis import Analysis, Point, Unplaced
from .ceiling import Ceiling, Roof
from .kernel import Kernel

SCHEMA_VERSION = 1

# Level names as users' scripts and profilers spell them; HBM and GDDR are the DRAM level
# (ARCHITECTURE.md, "JSON vocabulary").
_LEVEL_NAMES = {n.lower(): n for n in LEVELS + LINKS}


def check_schema_version(d: Any, where: str) -> None:
    """Refuse a document written by a newer rooflab (or with a version that is no number)."""
    version = d.get("schema_version") if isinstance(d, Mapping) else None
    if version is None:
        return
    if isinstance(version, bool) or not isinstance(version, int):
        raise InputError(f"{where}: field 'schema_version' must be a whole number (this "
                         f"rooflab writes {SCHEMA_VERSION}); got {version!r}")
    if version > SCHEMA_VERSION:
        raise InputError(f"{where}: schema_version {version} is newer than this rooflab "
                         f"understands ({SCHEMA_VERSION}); upgrade rooflab")


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


def _number(d: Mapping[str, Any], field: str, where: str, unit: str) -> float:
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
                         f"{_short(value)} (NaN and Infinity are not JSON: leave the field out)")
    return number


def _short(value: Any) -> str:
    """repr of a value for a message, a huge integer cut to its first digits and length."""
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:12]}... ({len(text)} characters)"


def ceiling_to_dict(c: Ceiling) -> dict[str, Any]:
    d: dict[str, Any]
    if c.is_compute:
        d = {"precision": c.precision, "unit": c.unit, "flop_per_s": c.value}
    else:
        d = {"level": c.level, "bytes_per_s": c.value}
    d["kind"] = c.provenance
    if c.source:
        d["source"] = c.source
    if c.method:
        d["method"] = c.method
    if c.samples:
        d["samples"] = list(c.samples)
        d["median"] = c.median
        d["best"] = c.best
        d["spread"] = c.spread
        d["iqr_rel"] = c.iqr_rel      # the probe table's IQR column
    if c.warnings:
        d["warnings"] = list(c.warnings)
    return d


def ceiling_from_dict(d: Mapping[str, Any], default_kind: str = "nominal",
                      where: str = "ceiling") -> Ceiling:
    if not isinstance(d, Mapping):
        raise InputError(f"{where}: expected an object with 'flop_per_s' and 'precision', or "
                         f"'bytes_per_s' and 'level'; got {d!r}")
    try:
        if "flop_per_s" in d:
            value, key = _number(d, "flop_per_s", where, "FLOP/s"), {
                "precision": precision_name(d["precision"]), "unit": unit_name(d.get("unit"))}
        elif "bytes_per_s" in d:
            value, key = _number(d, "bytes_per_s", where, "bytes/s"), {
                "level": level_name(d["level"])}
        else:
            raise InputError(f"{where}: needs 'flop_per_s' (with 'precision') or "
                             f"'bytes_per_s' (with 'level')")
        samples = d.get("samples") or ()
        if not isinstance(samples, (list, tuple)):
            raise InputError(f"{where}: field 'samples' must be a list of numbers")
        return Ceiling(value=value, provenance=d.get("kind", default_kind),
                       source=d.get("source", ""), method=d.get("method", ""),
                       samples=tuple(_number({"samples": s}, "samples", where,
                                             "the ceiling's unit") for s in samples),
                       warnings=tuple(d.get("warnings", ())), **key)
    except KeyError as exc:
        raise InputError(f"{where}: missing field {exc}") from None
    except InputError as exc:
        # the Ceiling's own checks (value > 0, provenance) do not know the file's place
        text = str(exc)
        raise InputError(text if text.startswith(where) else f"{where}: {text}") from None


def roof_to_dict(r: Roof) -> dict[str, Any]:
    d: dict[str, Any] = {
        "name": r.name, "kind": r.kind,
        "compute": [ceiling_to_dict(c) for c in r.compute],
        "memory": [ceiling_to_dict(c) for c in r.memory],
        "overhead_s": r.overhead_s,
    }
    if r.overhead_source:
        d["overhead_source"] = r.overhead_source
    if r.source:
        d["source"] = r.source
    if r.notes:
        d["notes"] = list(r.notes)
    return d


def roof_from_dict(d: Mapping[str, Any], where: str = "roof") -> Roof:
    if not isinstance(d, Mapping):
        raise InputError(f"{where}: expected an object with 'compute' and 'memory' lists")
    kind = d.get("kind", "nominal")
    for field, example in (("compute", '{"precision": "fp32", "flop_per_s": 1e12}'),
                           ("memory", '{"level": "DRAM", "bytes_per_s": 3.2e11}')):
        if not isinstance(d.get(field) or [], list):
            raise InputError(f"{where}: field '{field}' must be a list of ceilings, e.g. "
                             f"[{example}]; got {type(d[field]).__name__}")
    notes = d.get("notes") or ()
    return Roof(
        name=str(d.get("name", "unnamed")), kind=kind,
        compute=tuple(ceiling_from_dict(c, kind, f"{where}.compute[{i}]")
                      for i, c in enumerate(d.get("compute") or ())),
        memory=tuple(ceiling_from_dict(c, kind, f"{where}.memory[{i}]")
                     for i, c in enumerate(d.get("memory") or ())),
        overhead_s=_overhead(d, where), overhead_source=d.get("overhead_source", ""),
        # a single note written as a string is one note, not one per character
        source=d.get("source", ""), notes=(notes,) if isinstance(notes, str) else tuple(notes),
    )


def _overhead(d: Mapping[str, Any], where: str) -> float | None:
    if d.get("overhead_s") is None:
        return None
    value = _number(d, "overhead_s", where, "seconds")
    if value < 0:
        raise InputError(f"{where}: field 'overhead_s' must be >= 0 seconds; got {value!r}")
    return value


def kernel_to_dict(k: Kernel) -> dict[str, Any]:
    d: dict[str, Any] = {"name": k.name, "flop": dict(k.flop), "bytes": dict(k.bytes),
                         "seconds": k.seconds, "calls": k.calls,
                         "provenance": dict(k.provenance)}
    if k.unit:
        d["unit"] = k.unit
    if k.samples:
        d["samples"] = list(k.samples)
    if k.meta:
        d["meta"] = dict(k.meta)
    return d


# The fields kernel_from_dict reads (kernel_to_dict writes all but "op"). Any other is
# ignored -- a newer rooflab's field stays readable -- but said (unknown_field_words): a
# hand-written "time_ms" or "sconds" once left a kernel untimed without a word.
KERNEL_FIELDS = ("name", "flop", "bytes", "seconds", "calls", "unit", "op", "provenance",
                 "meta", "samples")
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


def kernel_from_dict(d: Mapping[str, Any], where: str = "kernel") -> Kernel:
    if not isinstance(d, Mapping):
        raise InputError(f"{where}: expected an object with name, flop, bytes, seconds")
    try:
        name = str(d["name"])
    except KeyError:
        raise InputError(f"{where}: missing field 'name'") from None
    here = f"{where} '{name}'"
    if all(d.get(f) is None for f in ("flop", "bytes", "seconds", "samples")) and \
            unknown_fields(d):
        # nothing left to analyse once the unknown fields are set aside: an error, not a
        # warning over an empty kernel
        raise InputError(f"{here}: nothing rooflab reads besides the name (no flop, bytes "
                         f"or seconds); {unknown_field_words(d, '')} (known fields: "
                         f"{', '.join(KERNEL_FIELDS)})")
    for field, example in (("flop", '{"fp16": 1.37e11}'), ("bytes", '{"DRAM": 1.0e8}'),
                           ("provenance", '{"seconds": "measured"}'), ("meta", '{"op": "matmul"}')):
        value = d.get(field)
        if isinstance(value, (list, str)) or (field in ("provenance", "meta")
                                              and value is not None
                                              and not isinstance(value, Mapping)):
            raise InputError(f"{here}: field '{field}' must be an object, e.g. {example}; "
                             f"got {value!r}")
    flop = {} if d.get("flop") is None else d["flop"]
    if not isinstance(flop, Mapping):   # a bare number counts as fp32
        flop = {"fp32": _number(d, "flop", here, "FLOP")}
    nbytes = {} if d.get("bytes") is None else d["bytes"]
    if not isinstance(nbytes, Mapping):  # a bare number counts as DRAM
        nbytes = {"DRAM": _number(d, "bytes", here, "bytes")}
    calls = _number(d, "calls", here, "launches") if "calls" in d else 1.0
    if calls != int(calls):
        # int(2.5) would silently change the time per call
        raise InputError(f"{here}: field 'calls' must be a whole number of launches; "
                         f"got {calls:g}")
    meta = _with_ignored(d, _meta_with_op(d, here))
    samples = d.get("samples") or ()
    if not isinstance(samples, (list, tuple)):
        raise InputError(f"{here}: field 'samples' must be a list of seconds")
    try:
        return Kernel(
            name=name,
            flop=_summed(precision_name, flop, f"{here}: flop", "FLOP"),
            bytes=_summed(level_name, nbytes, f"{here}: bytes", "bytes"),
            seconds=None if d.get("seconds") is None else _number(d, "seconds", here, "seconds"),
            calls=int(calls), provenance=dict(d.get("provenance") or {}),
            unit=unit_name(d.get("unit")),
            samples=tuple(_number({"samples": s}, "samples", here, "seconds") for s in samples),
            meta=meta,
        )
    except InputError as exc:
        # the Kernel's own checks name the kernel but not its place in the file
        text = str(exc)
        raise InputError(text if text.startswith(where) else f"{where}: {text}") from None
    except (TypeError, ValueError) as exc:
        raise InputError(f"{here}: {exc}") from None


def _with_ignored(d: Mapping[str, Any], meta: dict[str, Any]) -> dict[str, Any]:
    """meta plus "ignored_fields": the kernel's unknown fields as given, so a document
    written from it (`report --json`) says what was not read, as the loader's warning
    does, and a newer rooflab's field survives the round trip."""
    ignored = {f: d[f] for f in unknown_fields(d)}
    if not ignored:
        return meta
    ignored = {f: v if _json_safe(v) else repr(v) for f, v in ignored.items()}
    before = meta.get("ignored_fields")
    return {**meta, "ignored_fields": {**(before if isinstance(before, Mapping) else {}),
                                       **ignored}}


def _json_safe(value: Any) -> bool:
    """Whether strict JSON holds it (Python's json reads NaN, which it cannot write)."""
    import json

    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return False
    return True


def _meta_with_op(d: Mapping[str, Any], here: str) -> dict[str, Any]:
    """The kernel's meta, with a top-level "op" (as a kernel CSV's `op` column gives it)
    moved into meta.op, where the advice and the sanity checks read the op kind."""
    meta = dict(d.get("meta") or {})
    op = d.get("op")
    if op is None:
        return meta
    if not isinstance(op, str) or not op.strip():
        raise InputError(f"{here}: field 'op' must be the op's kind as text, e.g. "
                         f"\"elementwise\" or \"matmul\"; got {op!r}")
    if meta.get("op") not in (None, op.strip()):
        raise InputError(f"{here}: 'op' {op.strip()!r} and meta 'op' {meta['op']!r} differ; "
                         f"give one")
    return {**meta, "op": op.strip()}


def _summed(canon, values: Mapping[str, Any], where: str, unit: str) -> dict[str, float]:
    """Values keyed by canonical names ('FP64' and 'fp64' in one file add up)."""
    out: dict[str, float] = {}
    for key in values:
        name = canon(key)
        out[name] = out.get(name, 0.0) + _number(values, key, where, unit)
    return out


def point_to_dict(p: Point) -> dict[str, Any]:
    return {
        "kernel": p.kernel, **_index(p.kernel_index),
        "precision": p.precision, "unit": p.unit, "level": p.level,
        "flop": p.flop, "bytes": p.bytes, "seconds": p.seconds, "calls": p.calls,
        "ai": _finite(p.ai), "peak_flop_per_s": p.peak_flop_per_s,
        "bytes_per_s": p.bytes_per_s, "ridge": p.ridge,
        "attainable_flop_per_s": p.attainable_flop_per_s,
        "achieved_flop_per_s": p.achieved_flop_per_s, "percent_of_roof": p.percent_of_roof,
        # what the tables show as "achieved" for a kernel without FLOP (copy, sort)
        "achieved_bytes_per_s": p.bytes / p.seconds if p.seconds else None,
        "binding": p.binding, "bound": p.bound, "floor_s": p.floor_s,
        "overhead_floor_s": p.overhead_floor_s, "floor_ratio": p.floor_ratio,
        "time_share": p.time_share,
        "distances": {"below_roof": p.below_roof, "along_slope": p.along_slope,
                      "roof_headroom": p.roof_headroom},
        **({"note": p.note} if p.note else {}),
    }


def _index(i: int) -> dict[str, int]:
    """The kernel's position in the document's `kernels` (names may repeat: two ncu launches
    of one template, a whatif's before and after): what links a point to its kernel."""
    return {"kernel_index": i} if i >= 0 else {}


def _finite(x: float) -> float | None:
    return None if x != x or x in (float("inf"), float("-inf")) else x


def unplaced_to_dict(u: Unplaced) -> dict[str, Any]:
    """A kernel without a point: why, the fix, and its compute position (no memory level,
    so no AI: achieved FLOP/s against its compute ceiling only)."""
    return {
        "kernel": u.kernel, **_index(u.kernel_index), "seconds": u.seconds, "calls": u.calls,
        "time_share": u.time_share, "levels": list(u.levels), "reason": u.reason,
        "fix": u.fix, "flop": u.flop,
        "compute_only": {"ceiling": u.compute, "peak_flop_per_s": u.peak_flop_per_s,
                         "achieved_flop_per_s": u.achieved_flop_per_s,
                         "percent_of_peak": u.percent_of_peak},
    }


def analysis_to_dict(a: Analysis) -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION,
        "roof": roof_to_dict(a.roof),
        "kernels": [kernel_to_dict(k) for k in a.kernels],
        "analysis": [point_to_dict(p) for p in a.points],
        # kernels without a point: their time is in the total `analysis` shares are of
        **({"unplaced": [unplaced_to_dict(u) for u in a.unplaced]} if a.unplaced else {}),
        **({"notes": list(a.notes)} if a.notes else {}),
    }


# Which rooflab document a JSON is, told once (review 14b F12): the kernel reader, the roof
# reader and the verbs ask here instead of testing keys in their own orders. Each verb's
# --json (or -o .json) writes one of these shapes:
DOCUMENT_KINDS = {
    "kernels": "a kernel list: a list, or {'kernels': [...]} without a roof",
    "analysis": "kernels with the roof they were placed on ({'roof', 'kernels'}: report, "
                "bench, ncu, rocprof, torch, llm and ai --on --json; a kernel file with "
                "its roof)",
    "chart": "plot --json: {'roofs', 'kernels', 'drawn'}",
    "whatif": "whatif --json / -o .json: {'after': {'roof', 'kernels'}}",
    "demo": "demo --json: {'profile', 'analysis'}",
    "profile": "a machine profile (probe -o, demo's profile.json): {'measured', 'nominal'}",
    "roof": "a roof alone ({'compute', 'memory'}) or a document carrying one without "
            "kernels (specs show, scale --json)",
    "compare": "compare --json: {'matches'}",
    "choose": "choose --json: {'devices': ranked rows}",
    "devices": "specs list / specs compare --json: {'devices': catalog entries}",
    "torch_trace": "a torch.profiler chrome trace: {'traceEvents'}",
}


def document_kind(data: Any) -> str | None:
    """Which rooflab document `data` (a parsed JSON) is: a key of DOCUMENT_KINDS, or None
    for none of them. Kernels first: a document that lists kernels is read as kernels."""
    if isinstance(data, list):
        return "kernels"
    if not isinstance(data, Mapping):
        return None
    if "kernels" in data:
        if isinstance(data.get("roof"), Mapping):
            return "analysis"
        return "chart" if isinstance(data.get("roofs"), list) else "kernels"
    if isinstance(data.get("after"), Mapping):
        return "whatif"
    if isinstance(data.get("analysis"), Mapping) or isinstance(data.get("profile"), Mapping):
        return "demo"
    if "matches" in data:
        return "compare"
    devices = data.get("devices")
    if isinstance(devices, list):
        ranked = bool(devices) and isinstance(devices[0], Mapping) and "rank" in devices[0]
        return "choose" if ranked else "devices"
    if "measured" in data or "nominal" in data:
        return "profile"
    if isinstance(data.get("roof"), Mapping) or "compute" in data:
        return "roof"
    if isinstance(data.get("traceEvents"), list):
        return "torch_trace"
    return None


def kernels_part(data: Any) -> Any:
    """What a document holds under its kernels (a list when well formed; the reader checks
    it), or None for a document without kernels (a profile, a roof, a comparison)."""
    kind = document_kind(data)
    if kind == "kernels" and isinstance(data, list):
        return data
    if kind in ("kernels", "analysis", "chart"):
        return data["kernels"]
    if kind == "whatif":             # the predicted kernels
        return data["after"].get("kernels")
    if kind == "demo" and isinstance(data.get("analysis"), Mapping):
        return data["analysis"].get("kernels")
    return None


def profile_part(data: Any) -> Mapping[str, Any] | None:
    """The machine profile a document is or carries (a profile; demo's 'profile'), else
    None. A profile's roofs come before any other roof of the document."""
    kind = document_kind(data)
    if kind == "profile":
        return data
    if kind == "demo" and isinstance(data.get("profile"), Mapping):
        return data["profile"]
    return None


def roof_parts(data: Any) -> tuple[tuple[str, Any], ...]:
    """(where, roof dict) of each roof a document carries outside a profile, the one that
    judges its kernels first: 'roof' (an analysis, specs show, scale), 'after.roof' (a
    what-if: the roof its predicted kernels sit on), 'roofs[i]' (a chart), '' (a bare
    roof). Empty for a document without one (a plain kernel list)."""
    kind = document_kind(data)
    if kind in ("analysis", "roof") and isinstance(data.get("roof"), Mapping):
        return (("roof", data["roof"]),)
    if kind == "roof":
        return (("", data),)
    if kind == "whatif" and isinstance(data["after"].get("roof"), Mapping):
        return (("after.roof", data["after"]["roof"]),)
    if kind == "chart":
        return tuple((f"roofs[{i}]", r) for i, r in enumerate(data["roofs"]))
    return ()


# The figures of an `rooflab llm --json` document's `llm` block that choose, whatif and
# compare read besides its kernels: (field, unit, whole number?, least value). Checked once
# here (llm_part), so one bad file gets the same words in every verb; each verb read them
# its own way before, and a "3 GB" footprint was skipped without a word (no fit check), a
# string --tp was a traceback and a negative floor a negative step time.
LLM_FIELDS = (
    ("footprint.total_bytes", "bytes", False, 0.0),
    ("footprint.weights_bytes", "bytes", False, 0.0),
    ("footprint.kv_bytes", "bytes", False, 0.0),
    ("footprint.activations_bytes", "bytes", False, 0.0),
    ("settings.weight_bytes_per_param", "bytes per parameter", False, 0.0),
    ("settings.group_size", "weights per scale", True, 1.0),
    ("settings.tp", "GPUs", True, 1.0),
    ("settings.pp", "GPUs", True, 1.0),
    ("decode.floor_s", "seconds", False, 0.0),
    ("prefill.floor_s", "seconds", False, 0.0),
    ("parallel.tp", "GPUs", True, 1.0),
    ("parallel.comm_s", "seconds", False, 0.0),
    ("parallel.allreduces_per_step", "all-reduces", True, 0.0),
    ("parallel.allreduce_bytes", "bytes", False, 0.0),
    ("parallel.link_bytes_per_s", "bytes/s", False, 1.0),   # divided by: not 0
)
LLM_FIX = "write the file again with `rooflab llm CONFIG ... --json`, or fix the field"


def llm_part(data: Any, where: str) -> Mapping[str, Any] | None:
    """The `llm` block of a `rooflab llm --json` document (an analysis with an 'llm'
    object; a hand-cut one without its roof too), None for any other document;
    InputError naming the file, the field and the fix when the block or one of LLM_FIELDS
    is malformed (a string, NaN, negative, a fractional --tp), so the verbs can read those
    figures as plain numbers."""
    if not isinstance(data, Mapping) or "llm" not in data:
        return None
    llm = data["llm"]
    if not isinstance(llm, Mapping):
        raise InputError(f"{where}: field 'llm' must be an object (the block `rooflab llm "
                         f"--json` writes); got {_short(llm)}; {LLM_FIX}")
    for field, unit, whole, least in LLM_FIELDS:
        _llm_number(llm, field, where, unit, whole, least)
    return llm


def _llm_number(llm: Mapping[str, Any], field: str, where: str, unit: str, whole: bool,
                least: float) -> None:
    """Check one dotted field of an llm block; absent (or null) is fine."""
    head, _, key = field.partition(".")
    part = llm.get(head)
    if part is None:
        return
    name = f"llm.{field}"
    if not isinstance(part, Mapping):
        raise InputError(f"{where}: field 'llm.{head}' must be an object; got "
                         f"{_short(part)}; {LLM_FIX}")
    if part.get(key) is None:
        return
    try:
        value = _number({name: part[key]}, name, where, unit)
    except InputError as exc:
        raise InputError(f"{exc}; {LLM_FIX}") from None
    if (whole and value != int(value)) or value < least:
        need = f"a whole number >= {least:g}" if whole else f">= {least:g}"
        raise InputError(f"{where}: field '{name}' must be {need} {unit}; got "
                         f"{_short(part[key])}; {LLM_FIX}")


def analysis_floors(data: Any, where: str) -> list[tuple[str, float | None]]:
    """(kernel, floor_s) of each row of a document's 'analysis' list (a floor not written:
    None); InputError naming the row when a floor is no number or negative."""
    rows = data.get("analysis") if isinstance(data, Mapping) else None
    out: list[tuple[str, float | None]] = []
    for i, r in enumerate(rows if isinstance(rows, list) else ()):
        if not isinstance(r, Mapping):
            raise InputError(f"{where}: analysis[{i}] must be an object (a point `rooflab "
                             f"report --json` writes); got {_short(r)}")
        floor = None
        if r.get("floor_s") is not None:
            here = f"{where}: analysis[{i}] '{r.get('kernel')}'"
            try:
                floor = _number(r, "floor_s", here, "seconds")
            except InputError as exc:
                raise InputError(f"{exc}; {LLM_FIX}") from None
            if floor < 0:
                raise InputError(f"{here}: field 'floor_s' must be >= 0 seconds; got "
                                 f"{_short(r['floor_s'])}; {LLM_FIX}")
        out.append((str(r.get("kernel")), floor))
    return out
