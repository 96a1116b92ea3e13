"""The JSON shape of a roof and its ceilings (split from model/schema.py, which re-exports
every name here): what every document's `roof` holds, and what `--on FILE` reads back.

A roof's `kind` in a document is the kind its numbers were judged on (judged_kind): a
catalog roof whose compute ceilings were scaled to the SM clock ncu recorded is "derived",
as the kernel CSV's roof_kind column says (review s26 v2 F8); `report K.csv --json` said
"nominal" beside those derived ceilings (s27 fA).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import InputError, field_named
from .ceiling import PROVENANCES, Ceiling, Roof
from .field_words import ceiling_level, ceiling_precision, name_field
from .json_values import number_field
from .spread_warnings import restated_all

# the opening of the note ingest/profile_checks.at_recorded_clock adds to a catalog roof
# whose compute ceilings it scaled to the SM clock ncu recorded
SCALED = "compute ceilings derived at SM"


def judged_kind(roof: Roof) -> str:
    """The kind a roof's numbers judge by: "derived" for a catalog (nominal) roof whose
    compute ceilings were scaled to the SM clock ncu recorded (ingest/profile_checks.
    at_recorded_clock): percent_of_roof is then judged on derived figures, not on the
    datasheet's. Else the roof's own kind. The Roof keeps "nominal" in memory (the
    datasheet notes and the chart's clock legend read it as a catalog roof); the
    documents and the kernel CSV say what the numbers are."""
    # the note at_recorded_clock leaves, not any derived ceiling: a catalog CPU's or Apple
    # GPU's peaks are derived (cores x clock x lanes) and its roof stays "nominal"
    if roof.kind == "nominal" and any(n.startswith(SCALED) for n in roof.notes):
        return "derived"
    from .dies import label_kind  # one die of a package: its figures / dies (s34 G)

    return label_kind(roof)


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
    """The ceiling `d` at the place `where` ('p.json.compute[0]'); a bad one is an
    InputError naming that place in its message and the field in it on the exception
    (errors.field_named: the --json error document's `field`)."""
    if not isinstance(d, Mapping):
        raise InputError(f"{where}: expected an object with 'flop_per_s' and 'precision', or "
                         f"'bytes_per_s' and 'level'; got {d!r}", field=where)
    value_key = "flop_per_s" if "flop_per_s" in d else "bytes_per_s"
    try:
        if "flop_per_s" in d:
            with field_named(f"{where}.flop_per_s"):
                value = number_field(d, "flop_per_s", where, "FLOP/s")
            # the precision is the field at fault until it is a string, then the unit
            bad = "precision" if not isinstance(d.get("precision"), str) else "unit"
            with field_named(f"{where}.{bad}"):
                precision, unit = ceiling_precision(d, where)
            key = {"precision": precision, "unit": unit}
        elif "bytes_per_s" in d:
            with field_named(f"{where}.bytes_per_s"):
                value = number_field(d, "bytes_per_s", where, "bytes/s")
            with field_named(f"{where}.level"):
                key = {"level": ceiling_level(d, where)}
        else:
            raise InputError(f"{where}: needs 'flop_per_s' (with 'precision') or "
                             f"'bytes_per_s' (with 'level')", field=where)
        samples = d.get("samples") or ()
        if not isinstance(samples, (list, tuple)):
            raise InputError(f"{where}: field 'samples' must be a list of numbers",
                             field=f"{where}.samples")
        with field_named(f"{where}.samples"):
            samples = tuple(number_field({"samples": s}, "samples", where,
                                         "the ceiling's unit") for s in samples)
        # the Ceiling's own checks: a provenance it does not know, else the value's
        kind = d.get("kind", default_kind)
        with field_named(f"{where}.{'kind' if kind not in PROVENANCES else value_key}"):
            return Ceiling(value=value, provenance=kind, source=d.get("source", ""),
                           method=d.get("method", ""), samples=samples,
                           warnings=tuple(d.get("warnings", ())), **key)
    except KeyError as exc:
        raise InputError(f"{where}: missing field {exc}",
                         field=f"{where}.{exc.args[0]}") from None
    except InputError as exc:
        # the Ceiling's own checks (value > 0, provenance) do not know the file's place
        text = str(exc)
        raise InputError(text if text.startswith(where) else f"{where}: {text}",
                         field=exc.field or where) from None


def roof_to_dict(r: Roof) -> dict[str, Any]:
    d: dict[str, Any] = {
        "name": r.name, "kind": judged_kind(r),
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
    """The roof `d` at the place `where` (a file's name, 'k.json: roof'); a bad field is
    an InputError carrying it (ceiling_from_dict)."""
    if not isinstance(d, Mapping):
        raise InputError(f"{where}: expected an object with 'compute' and 'memory' lists",
                         field=where)
    kind = d.get("kind", "nominal")
    for field, example in (("compute", '{"precision": "fp32", "flop_per_s": 1e12}'),
                           ("memory", '{"level": "DRAM", "bytes_per_s": 3.2e11}')):
        if not isinstance(d.get(field) or [], list):
            raise InputError(f"{where}: field '{field}' must be a list of ceilings, e.g. "
                             f"[{example}]; got {type(d[field]).__name__}",
                             field=f"{where}.{field}")
    notes = d.get("notes") or ()
    with field_named(f"{where}.name"):
        name = name_field(d, where, default="unnamed", example="H100 measured")
    # the Roof's own checks (a compute ceiling that is a memory level) name the roof
    with field_named(where):
        return Roof(
            name=name, kind=kind,
            # the "samples vary" warnings said again from the samples by today's rule,
            # not as an older rooflab wrote them (review s21 r1 F1: spread_warnings)
            compute=restated_all([ceiling_from_dict(c, kind, f"{where}.compute[{i}]")
                                  for i, c in enumerate(d.get("compute") or ())]),
            memory=restated_all([ceiling_from_dict(c, kind, f"{where}.memory[{i}]")
                                 for i, c in enumerate(d.get("memory") or ())]),
            overhead_s=_overhead(d, where), overhead_source=d.get("overhead_source", ""),
            # a single note written as a string is one note, not one per character
            source=d.get("source", ""),
            notes=(notes,) if isinstance(notes, str) else tuple(notes),
        )


OVERHEAD_MAX_S = 1.0   # the most a roof's launch (or call) overhead may be, in seconds


def _overhead(d: Mapping[str, Any], where: str) -> float | None:
    if d.get("overhead_s") is None:
        return None
    with field_named(f"{where}.overhead_s"):
        value = number_field(d, "overhead_s", where, "seconds")
    if value < 0:
        raise InputError(f"{where}: field 'overhead_s' must be >= 0 seconds; got {value!r}",
                         field=f"{where}.overhead_s")
    if value > OVERHEAD_MAX_S:
        # a launch costs microseconds: past 1 s is a unit slip or a stranger's 1e308 (s22 r1 F8)
        raise InputError(f"{where}: field 'overhead_s' is {value:g} s, past the "
                         f"{OVERHEAD_MAX_S:g} s rooflab takes for one launch; it is in "
                         f"seconds (5 us is 5e-06)", field=f"{where}.overhead_s")
    return value
