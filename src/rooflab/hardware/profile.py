"""MachineProfile: a machine's nominal and measured roofs plus its identity, as one JSON file.

schema_version history:
  1 — host, nominal, measured, extras (sweeps and raw tables), created.
  2 — compute ceilings may have unit "scalar" (the one-lane FMA peak, Williams' "w/out
      SIMD"; a version-1 reader calls it an unknown unit), extras.scalar_fma (its method,
      samples and vector/scalar simd_ratio per precision) and a "scalar" entry in each
      extras.scaling.by_threads row; other documents' meanings changed (docs/json.md,
      "Changes since 1"): version-1 files still load.
"""

from __future__ import annotations

import datetime as _dt
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ..errors import InputError, parse_error_in
from ..files import load_json, write_json
from ..model.ceiling import Ceiling, Roof
from ..model.display import pretty
from ..model.display_results import profile_text
from ..model.document_parts import profile_part
from ..model.level_order import flag_inversions
from ..model.machine import core_share
from ..model.real_traffic import REAL_TRAFFIC, consistent, real_traffic_ceiling
from ..model.roof_schema import roof_from_dict, roof_to_dict
from ..model.schema import SCHEMA_VERSION
from ..model.spread_warnings import is_spread_warning, samples_vary
from ..user_path import user_path
from .profile_checks import check_document, check_parts


@dataclass(frozen=True)
class MachineProfile:
    """What one machine can do: identity, nominal roof, measured roof, raw extras.

    host: the machine's identity, a dict ({"name": "my box"}; the probe adds cpu_model,
    threads, GPU fields). nominal / measured: Roofs or None (a hand-built one:
    MachineProfile(host={"name": "box"}, measured=roof)). extras: the probe's raw tables.
    created: ISO 8601 time, filled in by save_profile when empty.
    """

    host: Mapping[str, Any]
    nominal: Roof | None = None
    measured: Roof | None = None
    extras: Mapping[str, Any] = field(default_factory=dict)
    created: str = ""

    def __post_init__(self) -> None:
        check_parts(self.host, self.nominal, self.measured, self.extras, self.created)

    # a notebook shows the CLI's row, not every field (display_results)
    _repr_pretty_ = pretty(profile_text)

    @property
    def roofs(self) -> tuple[Roof, ...]:
        """Measured first (the one to judge by), then nominal."""
        return tuple(r for r in (self.measured, self.nominal) if r is not None)

    @property
    def name(self) -> str:
        return str(self.host.get("name") or (self.roofs[0].name if self.roofs else "machine"))


def probe_label(extras: Mapping[str, Any], created: str) -> str:
    """'quick probe, 2026-11-30': the probe mode (extras.mode) and the day of `created`,
    which tell two measured roofs of one machine apart in a table or chart title (review
    14d L5); '' for a profile that records no mode (hand-built or imported: its name is
    its author's)."""
    mode = extras.get("mode") if isinstance(extras, Mapping) else None
    if not isinstance(mode, str) or not mode:
        return ""
    day = created[:10] if re.fullmatch(r"\d{4}-\d{2}-\d{2}", created[:10]) else ""
    return ", ".join(p for p in (f"{mode} probe", day) if p)


def with_probe_label(roof: Roof, extras: Mapping[str, Any], created: str) -> Roof:
    """A profile's measured roof named with its probe mode and day: 'EPYC measured (2
    threads)' -> 'EPYC measured (2 threads), quick probe, 2026-11-30' (after the name, so
    the thread count stays as the probe wrote it). Only Roof.name changes (no JSON key); a
    name that has the label already is returned as it is."""
    label = probe_label(extras, created)
    if not label or roof.kind != "measured" or roof.name.endswith(f", {label}"):
        return roof
    return replace(roof, name=f"{roof.name}, {label}")


def now_iso() -> str:
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()


def profile_to_dict(p: MachineProfile) -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION,
        "created": p.created or now_iso(),
        "host": dict(p.host),
        "nominal": roof_to_dict(p.nominal) if p.nominal else None,
        "measured": roof_to_dict(_without_probe_label(p)) if p.measured else None,
        "extras": dict(p.extras),
    }


def _without_probe_label(p: MachineProfile) -> Roof:
    """The measured roof as the probe named it: profile_from_dict's label is for display,
    so loading and saving a profile again does not add it to the stored name."""
    label, name = probe_label(p.extras, p.created), p.measured.name
    if label and name.endswith(f", {label}"):
        return replace(p.measured, name=name.removesuffix(f", {label}"))
    return p.measured


def profile_from_dict(d: Mapping[str, Any], where: str = "profile") -> MachineProfile:
    check_document(d, where)
    extras, created = dict(d.get("extras", {})), str(d.get("created", ""))
    measured = (roof_from_dict(d["measured"], f"{where}.measured") if d.get("measured")
                else None)
    return MachineProfile(
        host=dict(d.get("host") or {}),
        nominal=roof_from_dict(d["nominal"], f"{where}.nominal") if d.get("nominal") else None,
        # a saved profile's measured roof says how and when it was measured wherever it
        # is shown (--on, specs, report titles); profile_to_dict stores the name without
        measured=(with_probe_label(consistent_real_traffic(measured, extras), extras, created)
                  if measured else None),
        extras=extras, created=created,
    )


def profile_in_file(path: str | os.PathLike) -> MachineProfile | None:
    """The profile a JSON file is or carries (a probe's profile; a demo document's
    'profile'), read as load_profile reads one; None for a file that carries none (a roof,
    analysis or kernel file). A broken profile is a ParseError naming the file and field."""
    data = load_json(path)
    part = profile_part(data)
    if part is None:
        return None
    where = str(path) if part is data else f"{path}: profile"
    try:
        return profile_from_dict(part, where=where)
    except InputError as exc:
        raise parse_error_in(exc, str(path)) from None


def consistent_real_traffic(measured: Roof, extras: Mapping[str, Any]) -> Roof:
    """The measured roof with its DRAM (real traffic) ceiling re-derived where a profile
    written before review 19c N1 stores one beyond 3/2x (+10 %) its DRAM ceiling (the best
    real rate of every STREAM kernel, one of them read in a quiet moment of a disturbed
    run: 38.4 vs 12.8 GB/s on a demo profile): model/real_traffic.py consistent, from the
    profile's extras.stream.DRAM; the ceiling's warnings say so (the chart's `*`)."""
    stream = (extras.get("stream") or {}) if isinstance(extras, Mapping) else {}
    stream_dram = stream.get("DRAM") if isinstance(stream, Mapping) else None
    fixed = consistent(measured.memory, stream_dram if isinstance(stream_dram, Mapping)
                       else {})
    if fixed is None:
        return measured
    real, said = fixed
    real = replace(real, warnings=real.warnings + (said,))
    return replace(measured, memory=tuple(real if c.level == REAL_TRAFFIC else c
                                          for c in measured.memory))


def save_profile(path: str | os.PathLike, profile: MachineProfile) -> None:
    """Write `profile` (a MachineProfile) to `path` as JSON (`rooflab docs json`, "Profile"),
    atomically: an interrupted save leaves no partial profile. Returns None.

    A Roof alone is no profile: wrap it, MachineProfile(host={"name": ...}, measured=roof).
    A roof without any ceiling is refused here, as every reader of the file refuses it.
    `~` is the home folder, as load_profile reads it."""
    if not isinstance(profile, MachineProfile):
        how = ("wrap it: MachineProfile(host={'name': ...}, measured=roof)"
               if isinstance(profile, Roof) else
               "build one with MachineProfile(host={'name': ...}, measured=roof), or "
               "rooflab.load_profile(FILE)")
        got = (f"Roof '{profile.name}'" if isinstance(profile, Roof)
               else f"{type(profile).__name__} {profile!r:.60}")
        raise InputError(f"save_profile(): profile must be a MachineProfile; got {got}; "
                         f"{how}", field="profile")
    for what, roof in (("nominal", profile.nominal), ("measured", profile.measured)):
        if roof is not None and not roof.compute and not roof.memory:
            # the reader's words (hardware/resolve.py _check_judging, docs/json.md)
            raise InputError(f"save_profile(): {what} roof '{roof.name}' has no ceilings; "
                             f"add at least one, e.g. Roof(..., compute=(Ceiling(1e12, "
                             f"'fp32', unit='vector'),), memory=(Ceiling(3.2e11, "
                             f"level='DRAM'),))", field=what)
    write_json(user_path(path, "save_profile()", "a profile file's path"),
               profile_to_dict(profile))


def load_profile(path: str | os.PathLike) -> MachineProfile:
    """Read a profile JSON (what `rooflab probe -o FILE` or save_profile wrote); a broken
    one is a ParseError naming the file and field. Its roofs: profile.roofs (measured
    first), profile.measured, profile.nominal. `~` is the home folder, as in a shell."""
    path = user_path(path, "load_profile()", "a profile file's path")
    data = load_json(path)
    try:
        return profile_from_dict(data, where=str(path))
    except InputError as exc:
        raise parse_error_in(exc, str(path)) from None


# extras.scaling row keys -> the ceiling each becomes (probe/cpu/scaling.py writes them;
# L3 where the host has one and the probe measured it: a one-thread L3-sized run had no
# ceiling to be placed on without it)
_SCALING_MEMORY = ("L1", "L2", "L3", "DRAM")
_SCALING_COMPUTE = ("fp64", "fp32")
_THREADS_SUFFIX = re.compile(r"\s*\(\d+ threads?\)$")


def _threads_label(n: int) -> str:
    return f"{n} thread" if n == 1 else f"{n} threads"


def scaling_counts(profile: Mapping[str, Any]) -> list[int]:
    """The thread counts a profile holds a roof for: extras.scaling's counts, else the one
    count it was probed with (extras.threads); [] when it says neither."""
    extras = profile.get("extras") or {}
    by = (extras.get("scaling") or {}).get("by_threads") or {}
    if by:
        return sorted(int(k) for k in by)
    n = extras.get("threads")
    return [int(n)] if isinstance(n, int) and n >= 1 else []


def roof_at_threads(profile: Mapping[str, Any], n: int, where: str = "profile") -> Roof:
    """The measured roof for `n` threads from a profile dict (the JSON of `rooflab probe`).

    The count the whole probe ran at (extras.scaling.reference_threads, or extras.threads
    of a one-count profile) gives the profile's measured roof itself; another count of a
    scaling profile (`probe --threads 1,2,all`) gives the ceilings measured at it: DRAM,
    L1, L2, L3 (STREAM triad; L3 only in rows that have it) and the fp64/fp32 FMA peaks,
    each `measured (N threads)` in its method, with the overhead floor of the measured
    roof (one call, not a per-thread figure). A count the profile lacks is an InputError
    naming the counts it has."""
    extras = profile.get("extras") or {}
    scaling = extras.get("scaling") or {}
    counts = scaling_counts(profile)
    if n not in counts:
        have = ", ".join(map(str, counts)) or "none recorded"
        raise InputError(f"{where}: no roof for {_threads_label(n)} (thread counts in this "
                         f"profile: {have}); probe them with `rooflab probe --threads "
                         f"1,2,all -o profile.json`")
    reference = scaling.get("reference_threads", extras.get("threads"))
    if not profile.get("measured"):
        raise InputError(f"{where}: no measured roof; `rooflab probe` writes one",
                         field=f"{where}.measured")
    measured = roof_from_dict(profile["measured"], f"{where}.measured")
    created = str(profile.get("created", ""))
    if n == reference:
        return with_probe_label(consistent_real_traffic(measured, extras), extras, created)
    row = scaling["by_threads"][str(n)]
    label, row_label = f"measured ({_threads_label(n)})", f"{_threads_label(n)} row"
    memory = [_scaling_ceiling(row, lv, "bytes_per_s", _memory_method(label, row[lv]),
                               measured.source, level=lv, row_label=row_label)
              for lv in _SCALING_MEMORY if isinstance(row.get(lv), Mapping)]
    # the level-order check the full roof gets (probe/cpu/assemble), on the row's own
    # figures (review 19c N2: a one-thread L1 below its L2 went unflagged)
    ordered = flag_inversions({c.level: c for c in memory})
    memory = [ordered[c.level] for c in memory]
    memory += _row_real_traffic(memory, n)
    compute = [_scaling_ceiling(row, p, "flop_per_s", f"{label}: FMA-throughput kernel "
                                f"(the probe's fp64/fp32 peak kernel), value = best sample "
                                f"(extras.scaling)", measured.source, precision=p,
                                kind="vector", row_label=row_label)
               for p in _SCALING_COMPUTE if isinstance(row.get(p), Mapping)]
    compute += _row_scalar(row, measured, n, reference, label, row_label,
                           _host_cores(profile))
    # "EPYC measured (2 threads)" -> "EPYC measured (1 thread)"
    name = f"{_THREADS_SUFFIX.sub('', measured.name)} ({_threads_label(n)})"
    roof = Roof(name=name, kind="measured", compute=tuple(compute), memory=tuple(memory),
                overhead_s=measured.overhead_s, overhead_source=measured.overhead_source,
                source=f"{measured.source}; extras.scaling, {_threads_label(n)}",
                notes=(*_run_notes(measured, extras, load=True),
                       f"{label}: the ceilings measured at {_threads_label(n)} in the thread "
                       f"scaling of this profile ({_levels_note(row)})",
                       *_run_notes(measured, extras, load=False)))
    return with_probe_label(roof, extras, created)


def _host_cores(profile: Mapping[str, Any]) -> int | None:
    """host.cores (physical cores) when the profile records a positive count, else None."""
    c = (profile.get("host") or {}).get("cores")
    return c if isinstance(c, int) and not isinstance(c, bool) and c >= 1 else None


def _row_scalar(row: Mapping, measured: Roof, n: int, reference: Any, label: str,
                row_label: str, cores: int | None = None) -> list[Ceiling]:
    """The row's scalar (no SIMD) FMA ceilings (review s19 r4 F1: a scaling profile's rows
    had none, so a one-thread scalar loop never met its scalar ceiling): the scaling
    pass's own (row 'scalar'), else, in a profile written before it measured them, the
    full roof's scalar ceiling x its share of the probed threads' cores (model.machine.
    core_share: scalar FMA throughput is per core, SMT siblings share it), provenance
    derived and the method saying so. [] where neither exists."""
    got = row.get("scalar") if isinstance(row.get("scalar"), Mapping) else {}
    out = [_scaling_ceiling(got, p, "flop_per_s", f"{label}: scalar FMA-throughput kernel "
                            f"(the probe's scalar peak kernel, no SIMD), value = best "
                            f"sample (extras.scaling)", measured.source, precision=p,
                            kind="scalar", row_label=row_label)
           for p in _SCALING_COMPUTE if isinstance(got.get(p), Mapping)]
    if out or not isinstance(reference, int) or reference < 1:
        return out
    share = core_share(n, reference, cores)
    how = f"x {n}/{reference}, scalar FMA throughput being per core"
    if cores:
        how = (f"x {min(n, cores)}/{min(reference, cores)}, scalar FMA throughput being per "
               f"core (threads on the host's {cores} cores; SMT siblings share one)")
    for c in measured.compute:
        if c.unit == "scalar" and c.precision in _SCALING_COMPUTE:
            out.append(Ceiling(
                value=c.value * share, precision=c.precision, unit="scalar",
                provenance="derived", source=measured.source,
                method=(f"derived ({_threads_label(n)}): the profile's {c.label} peak "
                        f"({c.value / 1e9:.3g} GFLOP/s on {_threads_label(reference)}) "
                        f"{how}; this profile's thread scaling did not measure it")))
    return out


# Words of the probe's notes on the run as a whole (probe/cpu/flags.py): other load on the
# machine (machine_load_notes), and the clock or the memory bandwidth moving between the
# start and the end of the probe (drift_note, dram_drift_note). The scaling pass ran inside
# that run, so they hold for every thread row; the other notes speak of the full roof's
# own figures (its sweep, a dropped level, below nominal) and are not the row's.
_LOAD_WORDS = ("while the probe ran", "before the probe started")
_DRIFT_WORDS = ("between the start and the end of the probe", "changed during the run")


def _run_notes(measured: Roof, extras: Mapping[str, Any], load: bool) -> tuple[str, ...]:
    """The profile's notes on the whole run a thread row was measured in (review 19c N2:
    a `@1t` chart lost the load footnote of the same file's full chart): the load notes
    (`load`: extras.machine_load.notes, else the measured roof's), or the drift notes."""
    words = _LOAD_WORDS if load else _DRIFT_WORDS
    got = [str(n) for n in measured.notes if any(w in str(n) for w in words)]
    machine_load = extras.get("machine_load")
    if load and isinstance(machine_load, Mapping) and machine_load.get("notes"):
        got = list(dict.fromkeys([*map(str, machine_load["notes"]), *got]))
    return tuple(got)


def _row_real_traffic(memory: list[Ceiling], n: int) -> list[Ceiling]:
    """The row's DRAM (real traffic) ceiling, derived from its DRAM triad as the probe
    derives the measured roof's (model/real_traffic.py), so counter-measured bytes judged
    at this count meet real-traffic units, not the STREAM-counted triad (review 17a N5);
    [] for a row without DRAM. The same function as the full roof's, so the same
    consistency rule (review 19c N1): with triad alone it is DRAM x 4/3, inside it."""
    dram = next((c for c in memory if c.level == "DRAM"), None)
    if dram is None:
        return []
    ceiling, _ = real_traffic_ceiling(
        dram, {}, where=f"the {_threads_label(n)} row's",
        note=(f"the scaling pass measured only triad at {_threads_label(n)} (x 4/3), not "
              f"copy or scale (x 3/2), which set the full probe's figure when their rate "
              f"is higher: a copy-shaped loop may read above this one"))
    return [ceiling]


def _levels_note(row: Mapping) -> str:
    """What a scaling row lacks next to the full probe: GEMM and the low precisions always,
    L3 where the host has none or the profile predates its measurement."""
    return ("no L3, GEMM or low precisions there" if not isinstance(row.get("L3"), Mapping)
            else "no GEMM or low precisions there")


def _memory_method(label: str, got: Mapping) -> str:
    ws = got.get("ws_bytes_per_thread")
    at = ""
    if isinstance(ws, (int, float)):
        at = (f" at {ws / 2**20:.4g} MiB per thread" if ws >= 2**20 else
              f" at {ws / 2**10:.4g} KiB per thread")
    return (f"{label}: STREAM triad (24 B per element: explicit loads + stores, no "
            f"write-allocate){at}, value = best sample (extras.scaling)")


def _scaling_ceiling(row: Mapping, key: str, field_: str, method: str, source: str,
                     level: str | None = None, precision: str | None = None,
                     kind: str | None = None, row_label: str = "") -> Ceiling:
    got = row[key]
    c = Ceiling(value=float(got[field_]), precision=precision, unit=kind, level=level,
                provenance="measured", source=source, method=method,
                samples=tuple(float(v) for v in got.get("samples") or ()))
    return replace(c, warnings=_row_warnings(c, got, row_label))


def _row_warnings(c: Ceiling, got: Mapping, row_label: str) -> tuple[str, ...]:
    """The row ceiling's own flags, as the full roof's ceilings carry theirs (review 19c
    N2: the chart's `*`): warnings the row stored (the full run's row), calibration given
    up, or samples that disagree by the probe's test (model/spread_warnings.samples_vary:
    IQR or the median's gap below the best over 5 %, the `specs show --threads` table's
    `!`). A stored "samples vary" warning is said again from the samples, not kept as an
    older rooflab's figures beside today's (review s21 r1 F1)."""
    out = [str(w) for w in got.get("warnings") or () if not is_spread_warning(str(w))]
    what = f"{c.label} bandwidth" if c.level else c.label
    where = f" ({row_label})" if row_label else ""
    if got.get("calibrated") is False:
        out.append(f"{what}{where}: calibration gave up (other load held every call up), "
                   f"so the figure can read far low; rerun on a quiet machine")
    vary = samples_vary(f"{what}{where}", c.samples, "; other load on the machine or "
                        "clock changes; rerun on a quiet machine")
    return tuple(out + [vary] if vary else out)
