"""The JSON vocabulary: one dict shape per concept, SI numbers, unit-named fields.

History of schema_version:
  1 — first version (roof, kernels, analysis, profile).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import InputError
from .analysis import Analysis, Point
from .ceiling import Ceiling, Roof
from .kernel import Kernel

SCHEMA_VERSION = 1


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
    try:
        if "flop_per_s" in d:
            value, key = float(d["flop_per_s"]), {"precision": str(d["precision"]),
                                                   "unit": d.get("unit")}
        elif "bytes_per_s" in d:
            value, key = float(d["bytes_per_s"]), {"level": str(d["level"])}
        else:
            raise InputError(f"{where}: needs 'flop_per_s' (with 'precision') or "
                             f"'bytes_per_s' (with 'level')")
        return Ceiling(value=value, provenance=d.get("kind", default_kind),
                       source=d.get("source", ""), method=d.get("method", ""),
                       samples=tuple(float(s) for s in d.get("samples", ())),
                       warnings=tuple(d.get("warnings", ())), **key)
    except InputError:
        raise   # already says where
    except KeyError as exc:
        raise InputError(f"{where}: missing field {exc}") from None
    except (TypeError, ValueError) as exc:
        raise InputError(f"{where}: {exc}") from None


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
    return Roof(
        name=str(d.get("name", "unnamed")), kind=kind,
        compute=tuple(ceiling_from_dict(c, kind, f"{where}.compute[{i}]")
                      for i, c in enumerate(d.get("compute", ()))),
        memory=tuple(ceiling_from_dict(c, kind, f"{where}.memory[{i}]")
                     for i, c in enumerate(d.get("memory", ()))),
        overhead_s=d.get("overhead_s"), overhead_source=d.get("overhead_source", ""),
        source=d.get("source", ""), notes=tuple(d.get("notes", ())),
    )


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
    if not isinstance(d, Mapping):
        raise InputError(f"{where}: expected an object with name, flop, bytes, seconds")
    try:
        name = str(d["name"])
    except KeyError:
        raise InputError(f"{where}: missing field 'name'") from None
    try:
        flop = d.get("flop", {})
        if not isinstance(flop, Mapping):   # a bare number counts as fp32
            flop = {"fp32": float(flop)}
        nbytes = d.get("bytes", {})
        if not isinstance(nbytes, Mapping):  # a bare number counts as DRAM
            nbytes = {"DRAM": float(nbytes)}
        seconds = d.get("seconds")
        return Kernel(
            name=name, flop={k: float(v) for k, v in flop.items()},
            bytes={k: float(v) for k, v in nbytes.items()},
            seconds=None if seconds is None else float(seconds),
            calls=int(d.get("calls", 1)), provenance=dict(d.get("provenance", {})),
            unit=d.get("unit"), samples=tuple(float(s) for s in d.get("samples", ())),
            meta=dict(d.get("meta", {})),
        )
    except (TypeError, ValueError) as exc:
        raise InputError(f"{where} '{name}': {exc}") from None


def point_to_dict(p: Point) -> dict[str, Any]:
    return {
        "kernel": p.kernel, "precision": p.precision, "unit": p.unit, "level": p.level,
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


def _finite(x: float) -> float | None:
    return None if x != x or x in (float("inf"), float("-inf")) else x


def analysis_to_dict(a: Analysis) -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION,
        "roof": roof_to_dict(a.roof),
        "kernels": [kernel_to_dict(k) for k in a.kernels],
        "analysis": [point_to_dict(p) for p in a.points],
        **({"notes": list(a.notes)} if a.notes else {}),
    }
