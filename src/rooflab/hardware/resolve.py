"""Turn what a user typed after --on (a catalog name or a saved file) into roofs."""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import InputError, ParseError, parse_error_in
from ..files import load_json
from ..model.ceiling import Roof
from ..model.document_parts import profile_part, roof_parts
from ..model.roof_schema import roof_from_dict
from ..model.schema import check_schema_version
from ..units import LINKS
from .ert_roofs import ert_roofs, is_ert
from .profile import profile_from_dict

# a probed profile's thread rows (--on me.json@1t, the nominal beside a row, the row a
# kernel's thread count picks): thread_rows.py
from .thread_rows import roofs_at_threads, split_threads


def looks_like_file(spec: str) -> bool:
    return spec.lower().endswith((".json", ".csv")) or Path(spec).is_file()


def roofs_from_file(path: str) -> tuple[Roof, ...]:
    """A profile (measured then nominal), an analysis/roof file, or a bare roof."""
    if path.lower().endswith(".csv"):
        return (_roofline_csv(path),)
    if not path.lower().endswith(".json"):
        from .roof_file_hints import tool_output_hint

        # likwid-bench, STREAM, ERT's sum ...: "import it first", not "invalid JSON"
        # (review s20 r6 F7)
        instead = tool_output_hint(path)
        if instead:
            raise ParseError(instead, path=path)
    data = load_json(path)
    roofs = embedded_roofs(data, path)
    if not roofs and is_ert(data):
        # ERT's roofline.json: its empirical (measured) roof, then its spec (nominal)
        roofs = ert_roofs(data, path)
        _check_judging(roofs[0], path, None)
    if not roofs:
        from .roof_file_hints import not_a_roof

        instead = not_a_roof(path, data)
        if instead:
            raise ParseError(f"not a profile or roof file: {instead}", path=path)
        raise ParseError("not a profile or roof file (expected 'measured'/'nominal', 'roof', "
                         "'compute' + 'memory', or ERT's 'empirical'); make one with "
                         "`rooflab probe -o FILE.json` or `rooflab specs import`", path=path)
    return roofs


def embedded_roofs(data: object, path: str) -> tuple[Roof, ...]:
    """The roofs a rooflab JSON document carries (model.schema: profile_part, then
    roof_parts), the one that judges first: () when it carries none (a plain kernel list),
    ParseError when one is there and broken, so a kernel file whose roof is misspelt is
    told what is wrong with it, not "no roof" (review 14b F9). An older `rooflab train --dp
    --tp` file's one ceiling for two links: each its own (model/train_links.py)."""
    from ..model.train_links import per_link_document

    try:
        check_schema_version(data, path)
        data = per_link_document(data)[0]
        profile = profile_part(data)
        if profile is not None:
            where = path if profile is data else f"{path}: profile"
            roofs = profile_from_dict(profile, where=where).roofs
        else:
            roofs = tuple(roof_from_dict(d, where=f"{path}: {key}" if key else path)
                          for key, d in roof_parts(data))
    except InputError as exc:
        raise parse_error_in(exc, path) from None
    if roofs:
        _check_judging(roofs[0], path, profile)
    return roofs


def _check_judging(r: Roof, path: str, profile) -> None:
    """Every verb places kernels against a bandwidth; a hand-written roof without one
    would fail deep inside the analysis instead of here. Only the roof that judges (the
    first) must have one: a CPU profile's nominal companion has no memory ceilings (the
    CPU reports no nominal bandwidth) and is only drawn, dashed."""
    if (r.kind != "measured" and not r.memory and profile is not None
            and "nominal" in profile and not profile.get("measured")):
        # a saved profile whose measured roof is gone: its nominal CPU roof (no bandwidth)
        # was blamed for "no memory ceilings" (review 12c item 10)
        raise ParseError("the profile has no 'measured' roof, and its nominal roof has no "
                         "memory ceilings to judge by; measure one with `rooflab probe -o "
                         f"{path}`", path=path)
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


def _roofline_csv(path: str) -> Roof:
    """rocprof-compute's roofline.csv: the peaks it benchmarked on the machine, a measured
    roof as a saved profile is (so every --on and load_roof() takes it)."""
    from .rocprof_roofline import is_roofline_csv, load_roofline_csv

    if is_roofline_csv(path):
        return load_roofline_csv(path)
    from .roof_file_hints import not_a_roof, tool_output_hint

    empty = not Path(path).read_bytes().strip()
    instead = None if empty else (not_a_roof(path) or tool_output_hint(path))
    if instead:   # a kernel CSV is no broken roofline.csv: say where it goes
        raise ParseError(f"not rocprof-compute's roofline.csv: {instead}", path=path)
    raise ParseError(("the file is empty" if empty else "not rocprof-compute's roofline.csv "
                      "(its header names none of HBMBw, MALLBw, L2Bw, L1Bw)") +
                     "; a roof is a roofline.csv, a profile .json (`rooflab probe -o "
                     "me.json`) or a catalog name (`rooflab specs list`)", path=path)


NCU_REP_ON = ("is an Nsight Compute report: here --on takes a catalog name (`rooflab specs "
              "list`) or a profile/roof JSON; a report's recorded peaks judge its own "
              "kernels (`rooflab report FILE.ncu-rep --on FILE.ncu-rep`): give the GPU it "
              "ran on, e.g. --on \"H100 SXM\"")


def load_roofs(spec: str | os.PathLike) -> tuple[Roof, ...]:
    """Roofs for a --on argument: a saved profile/roof file (ERT's roofline.json too), a
    profile at a thread count ('me.json@1t'), or a catalog device name."""
    if isinstance(spec, os.PathLike):   # a pathlib.Path from Python
        spec = os.fspath(spec)
    if not isinstance(spec, str):
        raise InputError(f"the hardware must be a catalog name or a profile file path; got "
                         f"{type(spec).__name__} {spec!r:.60}")
    if not spec.strip():
        # Path('') is '.', which read as "is a directory"
        raise InputError(f"give a catalog name or a profile path; got {spec!r}")
    at = split_threads(spec)
    if at is not None:
        return roofs_at_threads(*at)
    if spec.startswith("~"):
        spec = os.path.expanduser(spec)   # from Python; a shell expands it on the command line
    if looks_like_file(spec):
        if not Path(spec).exists():
            raise ParseError("file not found", path=spec)
        if spec.lower().endswith(".ncu-rep"):
            # cli/inputs.resolve_on reads a report's recorded peaks beside its own kernels;
            # llm, train and scale come here, where it said "not a text file; give the
            # .json", though `report --on` had just read it (s38 I)
            raise ParseError(NCU_REP_ON, path=spec)
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


def name_note(spec: str | os.PathLike) -> str:
    """What a catalog name that fits several sizes or boards of one product resolved to,
    as load_roofs resolves it: "'A100' is NVIDIA A100 80GB SXM (also: A100 40GB PCIe, ...;
    name one to choose)" (names.choice_note); "" for a file, a profile, a folder, an
    unknown name (load_roofs says what is wrong with it) or a name that says which. Only
    the CLI prints it (cli/options.py: once per --on)."""
    from ..errors import HardwareNotFound
    from .catalog import all_devices, lookup
    from .names import choice_note

    text = os.fspath(spec).strip() if isinstance(spec, (str, os.PathLike)) else ""
    if not text or "@" in text or looks_like_file(text) or Path(text).exists():
        return ""
    try:
        found = lookup(text)
    except HardwareNotFound:
        return ""
    return choice_note(text, found, all_devices())


def load_roof(spec: str | os.PathLike) -> Roof:
    """The roof to judge by: the measured one of a profile, else the nominal one."""
    roofs = load_roofs(spec)
    if not roofs:
        raise InputError(f"'{spec}' holds no roof")
    return roofs[0]
