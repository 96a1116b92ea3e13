"""Turn what a user typed after --on (a catalog name or a saved file) into roofs."""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import InputError, ParseError
from ..files import load_json
from ..model.ceiling import Roof
from ..model.schema import check_schema_version, roof_from_dict
from ..units import LINKS
from .profile import profile_from_dict


def looks_like_file(spec: str) -> bool:
    return spec.lower().endswith((".json", ".csv")) or Path(spec).is_file()


def roofs_from_file(path: str) -> tuple[Roof, ...]:
    """A profile (measured then nominal), an analysis/roof file, or a bare roof."""
    roofs = _roofs_from_file(path)
    if roofs and roofs[0].kind != "measured" and not roofs[0].memory and _no_measured(path):
        # a saved profile whose measured roof is gone: its nominal CPU roof (no bandwidth)
        # was blamed for "no memory ceilings" (review 12c item 10)
        raise ParseError("the profile has no 'measured' roof, and its nominal roof has no "
                         "memory ceilings to judge by; measure one with `rooflab probe -o "
                         f"{path}`", path=path)
    # Every verb places kernels against a bandwidth; a hand-written roof without one
    # would fail deep inside the analysis instead of here. Only the roof that judges
    # (the first) must have one: a CPU profile's nominal companion has no memory
    # ceilings (the CPU reports no nominal bandwidth) and is only drawn, dashed.
    for r in roofs[:1]:
        if not r.compute and not r.memory:   # (a links-only roof still serves `scale`)
            raise ParseError(f"roof '{r.name}' has no ceilings; add at least one, e.g. "
                             f"\"compute\": [{{\"precision\": \"fp32\", \"unit\": \"vector\", "
                             f"\"flop_per_s\": 1e12}}]", path=path)
        if r.memory and not r.compute and not all(c.level in LINKS for c in r.memory):
            raise ParseError(f"roof '{r.name}' has no compute ceilings; add at least one, "
                             f"e.g. \"compute\": [{{\"precision\": \"fp32\", \"unit\": "
                             f"\"vector\", \"flop_per_s\": 1e12}}]", path=path)
        if r.compute and not r.memory:
            raise ParseError(f"roof '{r.name}' has no memory ceilings; add at least one, e.g. "
                             f"\"memory\": [{{\"level\": \"DRAM\", \"bytes_per_s\": 3.2e11}}]",
                             path=path)
    return roofs


def _no_measured(path: str) -> bool:
    """Whether a .json file is a profile without a measured roof (read again: the error
    path only)."""
    if not path.lower().endswith(".json"):
        return False
    data = load_json(path)
    profile = data.get("profile", data) if isinstance(data, dict) else None
    return (isinstance(profile, dict) and "nominal" in profile
            and not profile.get("measured"))


def _roofs_from_file(path: str) -> tuple[Roof, ...]:
    if path.lower().endswith(".csv"):
        # rocprof-compute's roofline.csv: the peaks it benchmarked on the machine, a
        # measured roof as a saved profile is (so every --on and load_roof() takes it)
        from .rocprof_roofline import is_roofline_csv, load_roofline_csv

        if is_roofline_csv(path):
            return (load_roofline_csv(path),)
        empty = not Path(path).read_bytes().strip()
        raise ParseError(("the file is empty" if empty else "not rocprof-compute's roofline.csv "
                          "(its header names none of HBMBw, MALLBw, L2Bw, L1Bw)") +
                         "; a roof is a roofline.csv, a profile .json (`rooflab probe -o "
                         "me.json`) or a catalog name (`rooflab specs list`)", path=path)
    data = load_json(path)
    try:
        check_schema_version(data, path)
        if isinstance(data, dict) and ("measured" in data or "nominal" in data):
            return profile_from_dict(data, where=path).roofs
        if isinstance(data, dict) and isinstance(data.get("roof"), dict):
            return (roof_from_dict(data["roof"], where=f"{path}: roof"),)
        if isinstance(data, dict) and isinstance(data.get("profile"), dict):
            # `rooflab demo --json`: {"profile", "analysis", "files"}
            return profile_from_dict(data["profile"], where=f"{path}: profile").roofs
        after = data.get("after") if isinstance(data, dict) else None
        if isinstance(after, dict) and isinstance(after.get("roof"), dict):
            # `rooflab whatif -o w.json`: the roof its predicted kernels were placed on
            return (roof_from_dict(after["roof"], where=f"{path}: after.roof"),)
        if isinstance(data, dict) and "compute" in data:
            return (roof_from_dict(data, where=path),)
    except InputError as exc:
        raise ParseError(str(exc)) from None
    raise ParseError("not a profile or roof file (expected 'measured'/'nominal', 'roof', or "
                     "'compute' + 'memory'); make one with `rooflab probe -o FILE.json`",
                     path=path)


def load_roofs(spec: str | os.PathLike) -> tuple[Roof, ...]:
    """Roofs for a --on argument: a saved profile/roof file, or a catalog device name."""
    if isinstance(spec, os.PathLike):   # a pathlib.Path from Python
        spec = os.fspath(spec)
    if not isinstance(spec, str):
        raise InputError(f"the hardware must be a catalog name or a profile file path; got "
                         f"{type(spec).__name__} {spec!r:.60}")
    if not spec.strip():
        # Path('') is '.', which read as "is a directory"
        raise InputError(f"give a catalog name or a profile path; got {spec!r}")
    if looks_like_file(spec):
        if not Path(spec).exists():
            raise ParseError("file not found", path=spec)
        return roofs_from_file(spec)
    if (Path(spec) / "roofline.csv").is_file():
        # `--on workloads/app/MI300X_A1`: rocprof-compute's workload folder, its benchmark
        # (before the catalog, which would match the folder's name 'MI300X_A1')
        return roofs_from_file(str(Path(spec) / "roofline.csv"))
    from ..errors import HardwareNotFound
    from .catalog import lookup_roof

    try:
        return (lookup_roof(spec),)
    except HardwareNotFound:
        if not Path(spec).is_dir():
            raise
        hint = Path(spec) / "profile.json"   # `--on rooflab-demo`: the demo's folder
        raise ParseError("is a directory; give a profile file" +
                         (f" such as {hint}" if hint.is_file() else "") +
                         " or a catalog name (`rooflab specs list`)", path=spec) from None


def load_roof(spec: str | os.PathLike) -> Roof:
    """The roof to judge by: the measured one of a profile, else the nominal one."""
    roofs = load_roofs(spec)
    if not roofs:
        raise InputError(f"'{spec}' holds no roof")
    return roofs[0]
