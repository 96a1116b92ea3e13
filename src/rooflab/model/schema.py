"""The JSON vocabulary: one dict shape per concept, SI numbers, unit-named fields.

History of schema_version (docs/json.md, "Changes since 1"; every reader takes 1 and 2):
  1 — first version (roof, kernels, analysis, profile).
  2 — meanings recorded since 1: an analysis row under another level's roof reads
      "not binding" + binding_level (was "latency"); `ai`'s time_floor_s and whatif's
      before/after floors are max(work, launches) (were the work floor); llm counts the
      embedding's all-reduce; notes always present ([] when empty); rows name the
      ceilings they were judged by (memory_ceiling, compute_ceiling and their kinds);
      error documents carry `detail`; profiles: compute ceilings may have unit "scalar"
      (one-lane FMA), extras.scalar_fma, extras.scaling.by_threads[n].scalar.

The parts live by what they do: roof_schema (a roof's and its ceilings' shapes; their
names are imported here too), canonical_names (precision, level and unit names),
json_values (a field's number), field_hints (a kernel's unknown fields), document_parts
(which document a JSON is and what the verbs take from it). Import them from their owner
(ceiling.py must: this module imports ceiling, so going through here would be a cycle).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ..errors import InputError, field_named
from ..json_stream import Streamed
from .analysis import Analysis, Point, Unplaced, primary_points
from .bandwidth_reached import bandwidth_of
from .canonical_names import level_name, precision_name, unit_name
from .field_hints import KERNEL_FIELDS, unknown_field_words, unknown_fields
from .field_words import name_field
from .json_values import number_field
from .kernel import Kernel
from .meta_check import checked_meta
from .placement import NOT_BINDING, binds_elsewhere, kernel_key
from .roof_schema import roof_to_dict

SCHEMA_VERSION = 2

# The most launches a kernel's `calls` may give: 10^12 launches of 1 us each are 11 days
# of launching. Past it the number is a typo: calls 1e308 came back as "seconds 5e+302
# is longer than rooflab takes", a time the user never wrote (review r1 F6).
MAX_CALLS = 10**12


def calls_problem(calls: float) -> str | None:
    """What is wrong with a kernel's `calls` (for the reader to place), or None."""
    if not math.isfinite(calls):
        # int(inf) raised OverflowError, int(nan) ValueError: a CSV cell 'inf' (s23 r4 F9)
        return f"field 'calls' must be a finite number of launches; got {calls:g}"
    if calls != int(calls):
        # int(2.5) would silently change the time per call
        return f"field 'calls' must be a whole number of launches; got {calls:g}"
    if calls > MAX_CALLS:
        return (f"field 'calls' is {calls:.3g}, more than the {MAX_CALLS:.0e} launches "
                f"rooflab takes (10^12 launches of 1 us are 11 days); is the field right?")
    return None


def check_schema_version(d: Any, where: str) -> None:
    """Refuse a document written by a newer rooflab (or with a version that is no number)."""
    version = d.get("schema_version") if isinstance(d, Mapping) else None
    if version is None:
        return
    if isinstance(version, bool) or not isinstance(version, int):
        raise InputError(f"{where}: field 'schema_version' must be a whole number (this "
                         f"rooflab writes {SCHEMA_VERSION}); got {version!r}", path=where)
    if version > SCHEMA_VERSION:
        raise InputError(f"{where}: schema_version {version} is newer than this rooflab "
                         f"understands ({SCHEMA_VERSION}); upgrade rooflab", path=where)


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


def kernel_from_dict(d: Mapping[str, Any], where: str = "kernel") -> Kernel:
    """The kernel `d` at the place `where` ('kernels[0]'); a bad field is an InputError
    naming the kernel in its message and the field on the exception ('kernels[0].flop.
    fp32', errors.field_named), the kernel itself where no one field is at fault."""
    if not isinstance(d, Mapping):
        raise InputError(f"{where}: expected an object with name, flop, bytes, seconds",
                         field=where)
    try:
        with field_named(f"{where}.name"):
            name = name_field(d, where)
    except KeyError:
        raise InputError(f"{where}: missing field 'name'", field=f"{where}.name") from None
    here = f"{where} '{name}'"
    if all(d.get(f) is None for f in ("flop", "bytes", "seconds", "samples")) and \
            unknown_fields(d):
        # nothing left to analyse once the unknown fields are set aside: an error, not a
        # warning over an empty kernel
        raise InputError(f"{here}: nothing rooflab reads besides the name (no flop, bytes "
                         f"or seconds); {unknown_field_words(d, '')} (known fields: "
                         f"{', '.join(KERNEL_FIELDS)})", field=where)
    for field, example in (("flop", '{"fp16": 1.37e11}'), ("bytes", '{"DRAM": 1.0e8}'),
                           ("provenance", '{"seconds": "measured"}'), ("meta", '{"op": "matmul"}')):
        value = d.get(field)
        if isinstance(value, (list, str)) or (field in ("provenance", "meta")
                                              and value is not None
                                              and not isinstance(value, Mapping)):
            raise InputError(f"{here}: field '{field}' must be an object, e.g. {example}; "
                             f"got {value!r}", field=f"{where}.{field}")
    flop = {} if d.get("flop") is None else d["flop"]
    if not isinstance(flop, Mapping):   # a bare number counts as fp32
        with field_named(f"{where}.flop"):
            flop = {"fp32": number_field(d, "flop", here, "FLOP")}
    nbytes = {} if d.get("bytes") is None else d["bytes"]
    if not isinstance(nbytes, Mapping):  # a bare number counts as DRAM
        with field_named(f"{where}.bytes"):
            nbytes = {"DRAM": number_field(d, "bytes", here, "bytes")}
    with field_named(f"{where}.calls"):
        calls = number_field(d, "calls", here, "launches") if "calls" in d else 1.0
        if calls_problem(calls):
            raise InputError(f"{here}: {calls_problem(calls)}")
    with field_named(f"{where}.op"):
        meta = _with_ignored(d, _meta_with_op(d, here))
    # the meta keys rooflab reads, of the type it reads them as (model/meta_check)
    meta = checked_meta(meta, here, field=f"{where}.meta")
    samples = d.get("samples") or ()
    if not isinstance(samples, (list, tuple)):
        raise InputError(f"{here}: field 'samples' must be a list of seconds",
                         field=f"{where}.samples")
    try:
        # read in the order the fields were read before they named themselves: of two bad
        # fields the message names the same one
        flop = _summed(precision_name, flop, f"{here}: flop", "FLOP", f"{where}.flop")
        nbytes = _summed(level_name, nbytes, f"{here}: bytes", "bytes", f"{where}.bytes")
        with field_named(f"{where}.seconds"):
            seconds = (None if d.get("seconds") is None
                       else number_field(d, "seconds", here, "seconds"))
        with field_named(f"{where}.unit"):
            unit = unit_name(d.get("unit"))
        with field_named(f"{where}.samples"):
            samples = tuple(number_field({"samples": s}, "samples", here, "seconds")
                            for s in samples)
        return Kernel(name=name, flop=flop, bytes=nbytes, seconds=seconds, calls=int(calls),
                      provenance=dict(d.get("provenance") or {}), unit=unit,
                      samples=samples, meta=meta)
    except InputError as exc:
        # the Kernel's own checks name the kernel but not its place in the file
        text = str(exc)
        raise InputError(text if text.startswith(where) else f"{where}: {text}",
                         field=exc.field or where) from None
    except (TypeError, ValueError) as exc:
        raise InputError(f"{here}: {exc}", field=where) from None


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


def _summed(canon, values: Mapping[str, Any], where: str, unit: str,
            field: str) -> dict[str, float]:
    """Values keyed by canonical names ('FP64' and 'fp64' in one file add up); a bad one
    names its key under `field` ('kernels[0].flop' -> 'kernels[0].flop.fp32')."""
    out: dict[str, float] = {}
    for key in values:
        with field_named(f"{field}.{key}"):
            name = canon(key)
            out[name] = out.get(name, 0.0) + number_field(values, key, where, unit)
    return out


def point_to_dict(p: Point, binding: Point | None = None) -> dict[str, Any]:
    """One point; `binding`: its kernel's binding point (analysis.primary_points), so that
    a level under another level's binding roof says "not binding" with that level, as the
    tables do (placement.binds_elsewhere), not the "latency" its own % of roof reads."""
    other = binds_elsewhere(p, binding)
    bound = ({"bound": p.bound} if other is None else
             {"bound": NOT_BINDING, "binding_level": other})
    return {
        "kernel": p.kernel, **_index(p.kernel_index),
        # precision: the kernel's; unit and compute_ceiling_precision (as `ai --json` names
        # it): its ceiling's, with fallback true where that ceiling stands in for one the
        # roof lacks ("fp32 -> fp16 tensor (fallback)" in the tables)
        "precision": p.precision, "unit": p.unit,
        "compute_ceiling_precision": p.ceiling_precision or p.precision, "fallback": p.fallback,
        "level": p.level,
        "flop": p.flop, "bytes": p.bytes, "seconds": p.seconds, "calls": p.calls,
        "ai": _finite(p.ai), "peak_flop_per_s": p.peak_flop_per_s,
        "bytes_per_s": p.bytes_per_s, "ridge": p.ridge,
        "attainable_flop_per_s": p.attainable_flop_per_s,
        "achieved_flop_per_s": p.achieved_flop_per_s, "percent_of_roof": p.percent_of_roof,
        # what the tables show as "achieved" for a kernel without FLOP (copy, sort), and
        # its % of the level's bandwidth (None for a kernel with FLOP): in every verb's rows
        "achieved_bytes_per_s": p.bytes / p.seconds if p.seconds else None,
        "percent_of_bandwidth": bandwidth_of(p)[1],
        "binding": p.binding, **bound, **_floors(p), "floor_ratio": p.floor_ratio,
        "time_share": p.time_share,
        "distances": {"below_roof": p.below_roof, "along_slope": p.along_slope,
                      "roof_headroom": p.roof_headroom},
        **({"note": p.note} if p.note else {}),
    }


def _floors(p: Point) -> dict[str, float | None]:
    """The point's floors under the names every document uses (docs/json.md, "Floor
    keys"): work_floor_s = max(FLOP / P, bytes / B), launch_floor_s = calls x the roof's
    launch cost, with_launches_s = the larger of the two (whatif's per-kernel rule). The
    older floor_s (= work_floor_s) and overhead_floor_s (= launch_floor_s) stay for the
    scripts that read them (review r1_json F1: floor_s is with launches in whatif's moves)."""
    launch = p.overhead_floor_s
    return {"floor_s": p.floor_s, "overhead_floor_s": launch, "work_floor_s": p.floor_s,
            "launch_floor_s": launch,
            "with_launches_s": p.floor_s if launch is None else max(p.floor_s, launch)}


def points_to_dicts(points: Sequence[Point]) -> list[dict[str, Any]]:
    """point_to_dict of each point, each with its kernel's binding point and the ceilings
    it was judged by (they travel on the point: Point.memory_ceiling, set by analyze_point)."""
    return list(iter_point_dicts(points))


def iter_point_dicts(points: Sequence[Point]) -> Iterator[dict[str, Any]]:
    """points_to_dicts one point at a time (a Streamed document's `analysis`)."""
    primary = primary_points(points)
    return ({**point_to_dict(p, primary.get(kernel_key(p))), **_judged_by(p)} for p in points)


def _judged_by(p: Point) -> dict[str, Any]:
    """{"memory_ceiling": "DRAM (real traffic)", "memory_ceiling_kind": "derived",
    "compute_ceiling": "fp64 vector", "compute_ceiling_kind": "measured"}: the ceilings
    analyze() placed the point against (review s19 r2 F16), compute_* null for a kernel
    without FLOP (no compute side, as `ai --json` writes it); {} for a point built outside
    analyze_point, which names none."""
    if not p.memory_ceiling:
        return {}
    flop = p.flop > 0
    return {"memory_ceiling": p.memory_ceiling, "memory_ceiling_kind": p.memory_ceiling_kind,
            "compute_ceiling": p.compute_ceiling if flop else None,
            "compute_ceiling_kind": p.compute_ceiling_kind if flop else None}


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


def analysis_to_dict(a: Analysis, streamed: bool = False) -> dict[str, Any]:
    """The analysis document; streamed: its kernels and points as Streamed arrays, each
    row made as it is written (a what-if of 100,000 kernels: ~200 MB of dicts, s32)."""
    return {
        "schema_version": SCHEMA_VERSION,
        "roof": roof_to_dict(a.roof),
        "kernels": (Streamed(lambda: map(kernel_to_dict, a.kernels)) if streamed
                    else [kernel_to_dict(k) for k in a.kernels]),
        "analysis": (Streamed(lambda: iter_point_dicts(a.points)) if streamed
                     else points_to_dicts(a.points)),
        # kernels without a point: their time is in the total `analysis` shares are of
        **({"unplaced": [unplaced_to_dict(u) for u in a.unplaced]} if a.unplaced else {}),
        # always a list, [] when empty: doc["notes"] raised KeyError on some runs of a verb
        # and not others (review s19 r2 F4)
        "notes": list(a.notes),
    }

