"""MachineProfile: a machine's nominal and measured roofs plus its identity, as one JSON file.

schema_version history:
  1 — host, nominal, measured, extras (sweeps and raw tables), created.
"""

from __future__ import annotations

import datetime as _dt
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import InputError, ParseError
from ..files import load_json, write_json
from ..model.ceiling import Roof
from ..model.schema import SCHEMA_VERSION, check_schema_version, roof_from_dict, roof_to_dict


@dataclass(frozen=True)
class MachineProfile:
    """What one machine can do: identity, nominal roof, measured roof, raw extras."""

    host: Mapping[str, Any]
    nominal: Roof | None = None
    measured: Roof | None = None
    extras: Mapping[str, Any] = field(default_factory=dict)
    created: str = ""

    @property
    def roofs(self) -> tuple[Roof, ...]:
        """Measured first (the one to judge by), then nominal."""
        return tuple(r for r in (self.measured, self.nominal) if r is not None)

    @property
    def name(self) -> str:
        return str(self.host.get("name") or (self.roofs[0].name if self.roofs else "machine"))


def now_iso() -> str:
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()


def profile_to_dict(p: MachineProfile) -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION,
        "created": p.created or now_iso(),
        "host": dict(p.host),
        "nominal": roof_to_dict(p.nominal) if p.nominal else None,
        "measured": roof_to_dict(p.measured) if p.measured else None,
        "extras": dict(p.extras),
    }


def profile_from_dict(d: Mapping[str, Any], where: str = "profile") -> MachineProfile:
    if not isinstance(d, Mapping) or not ("measured" in d or "nominal" in d):
        raise InputError(f"{where}: not a rooflab profile (no 'measured' or 'nominal' roof)")
    check_schema_version(d, where)
    if not isinstance(d.get("host") or {}, Mapping):
        raise InputError(f"{where}: field 'host' must be an object, e.g. {{\"name\": \"my box\"}}; "
                         f"got {d['host']!r}")
    return MachineProfile(
        host=dict(d.get("host") or {}),
        nominal=roof_from_dict(d["nominal"], f"{where}.nominal") if d.get("nominal") else None,
        measured=roof_from_dict(d["measured"], f"{where}.measured") if d.get("measured") else None,
        extras=dict(d.get("extras", {})), created=str(d.get("created", "")),
    )


def save_profile(path: str | os.PathLike, profile: MachineProfile) -> None:
    """Write atomically: an interrupted save leaves no partial profile."""
    write_json(path, profile_to_dict(profile))


def load_profile(path: str | os.PathLike) -> MachineProfile:
    data = load_json(path)
    try:
        return profile_from_dict(data, where=str(path))
    except InputError as exc:
        raise ParseError(str(exc)) from None
