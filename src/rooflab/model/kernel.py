"""A kernel: one piece of work with its FLOP, bytes and time, and where each came from."""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, fields
from typing import Any

from ..errors import InputError, InputWarning, user_stacklevel
from ..units import GROUP_LINKS, INT_PRECISIONS, LEVELS, LINKS, PRECISIONS
from .canonical_names import (
    UNKNOWN_UNIT_WHY,
    level_name,
    precision_name,
    unit_name,
    unknown_unit,
)
from .display import kernel_text, pretty
from .frozen import FrozenDict
from .provenance import ASSUMED, GIVEN, MEASURED
from .timing_samples import timing_samples

_EMPTY: Mapping[str, Any] = FrozenDict()


def sum_counts(counts: Iterable[Mapping[str, float]]) -> dict[str, float]:
    """FLOP by precision (or bytes by level) of several kernels added up, key by key."""
    out: dict[str, float] = {}
    for c in counts:
        for key, value in c.items():
            out[key] = out.get(key, 0.0) + value
    return out


def _plain_number(value: Any, name: str, what: str, key: str | None = None) -> float:
    if type(value) is float:       # the common case; Kernels are built by the thousand
        return value
    if not isinstance(value, (bool, str)):
        try:
            return float(value)
        except (TypeError, ValueError):
            pass
        except OverflowError:
            return _INF   # 10**400: past float's range, refused as inf is (_check_range)
    field_ = what if key is None else f"{what}[{key}]"
    raise InputError(f"kernel '{name}': {field_} must be a plain number (SI base units: "
                     f"FLOP, bytes, seconds); got {value!r}")


def _canon(what: str):
    """The name canoniser for flop, bytes or unit (model/canonical_names.py)."""
    return _CANON[what]


_CANON = {"flop": precision_name, "bytes": level_name, "unit": unit_name}
# {what: {name as given: canonical name}}: the canonisers' answers for the str names met so
# far ('fp16' -> fp16, 'dram' -> DRAM), so a Kernel pays one dict lookup per key (the
# canonisers are pure; at most _NAMES_MAX names each are kept, the rest asked every time).
_NAMES: dict[str, dict[str, str]] = {"flop": {}, "bytes": {}}
_NAMES_MAX = 4096
_INF = math.inf
_KNOWN_FLOP = frozenset(PRECISIONS + INT_PRECISIONS)
# ... and the derived DRAM ceilings a roof names (review 19a N3): the GPU probe's
# "DRAM (triad)" (seed 000 §3.1's roof, which the report tells a kernel to select) and the
# CPU probe's "DRAM (real traffic)" (model/real_traffic.py); kept in step with
# probe/gpu/memory.py TRIAD and real_traffic.REAL_TRAFFIC (tests/test_seed_review19a.py)
_KNOWN_BYTES = frozenset(LEVELS + LINKS + GROUP_LINKS
                         + ("DRAM (triad)", "DRAM (real traffic)"))


# True while a reader builds a file's Kernels: it says the file's unknown names itself,
# once per file with every kernel and row (ingest/kernelfile_rows._check_read), so the
# Kernel's own warning would say the same fact twice, in other words (review 19b N3)
_READER_WARNS: ContextVar[bool] = ContextVar("rooflab_reader_warns", default=False)


@contextmanager
def names_warned_by_reader() -> Iterator[None]:
    """Kernels built inside do not warn about an unknown precision or level: the reader
    around them does, naming the file and every kernel."""
    token = _READER_WARNS.set(True)
    try:
        yield
    finally:
        _READER_WARNS.reset(token)


def _name(key: Any, what: str, kernel: str = "") -> str:
    """_canon(what)(key), through _NAMES (the path of a name not met before); a name no
    ceiling can match gets unknown_name's warning, for every kernel that has it (such a
    name is not kept in _NAMES, so the next kernel warns too: each names its own kernel,
    and Python's filter still says one message once per line)."""
    canonical = _canon(what)(key)
    problem = unknown_name(canonical, what)
    if problem:
        if not _READER_WARNS.get():
            # a warning, not measure()'s error: a kernel file may carry names of its own,
            # and the analysis notes the ceiling it falls back to; at the user's line
            warnings.warn(f"kernel '{kernel}': {problem}", InputWarning,
                          stacklevel=user_stacklevel())
        return canonical
    names = _NAMES[what]
    if type(key) is str and len(names) < _NAMES_MAX:
        names[key] = canonical
    return canonical


def unknown_name(canonical: str, what: str) -> str | None:
    """Why a canonical FLOP precision or byte level is no name a ceiling has ('fp61',
    'L4': a typo), or None. The one vocabulary check: measure() raises with it, a Kernel
    warns with it (review 18b J: Kernel took what measure refused)."""
    known = _KNOWN_FLOP if what == "flop" else _KNOWN_BYTES
    if canonical in known:
        return None
    if what == "flop":
        return (f"flop precision '{canonical}' is not one rooflab knows (one of "
                f"{', '.join(PRECISIONS)}); no ceiling is of that precision, so the "
                f"analysis holds it to another (and notes which); a typo?")
    return (f"bytes level '{canonical}' is not a memory level; use one of "
            f"{', '.join(LEVELS)} (HBM and GDDR count as DRAM); no roof has it, so those "
            f"bytes get no point")


def _keyed(values: Any, what: str, name: str) -> tuple[dict[str, float], bool]:
    """flop / bytes given in Python, read the way a kernel file reads them
    (schema.kernel_from_dict): a bare number is fp32 FLOP / DRAM bytes; names are made
    canonical ('float16' -> fp16, 'dram' -> DRAM, equal names added), so a Kernel built in
    a notebook is judged against the same ceiling as the same kernel loaded from JSON.

    Returns a new dict (the Kernel keeps it, read-only, without copying it again) and
    whether every count in it is known to be >= 0 and finite; if not, _check_range says
    which is not, later (after the other fields' own errors, in Kernel's order)."""
    if values is None:
        return {}, True
    if type(values) is not dict and not isinstance(values, Mapping):
        if isinstance(values, (str, bool)) or not hasattr(values, "__float__"):
            example = "{'fp16': 1.37e11}" if what == "flop" else "{'DRAM': 1.0e8}"
            raise InputError(f"kernel '{name}': {what} must be a dict such as {example} or "
                             f"a number ({'fp32 FLOP' if what == 'flop' else 'DRAM bytes'});"
                             f" got {values!r}")
        values = {"fp32" if what == "flop" else "DRAM": values}
    names = _NAMES[what]
    if type(values) is FrozenDict and all(
            type(v) is float
            and ((names.get(k) if type(k) is str else None) or _canon(what)(k)) == k
            for k, v in values.items()):
        # another Kernel's counts (with_(), replace()): that Kernel warned about its names
        return dict(values), False
    out: dict[str, float] = {}
    ok = True
    for key, value in values.items():
        if value is None:
            raise InputError(f"kernel '{name}': {what}[{key}] must be >= 0 and finite; got None")
        # a str key met before: one lookup (a str subclass or any other key: the canoniser)
        key = (names.get(key) if type(key) is str else None) or _name(key, what, name)
        x = out[key] = out.get(key, 0.0) + (value if type(value) is float
                                            else _plain_number(value, name, what, key))
        if not (x == 0 or _LO <= x <= _HI):   # each key's last sum: ok holds for the end
            ok = False
    return out, ok


# The physical range a Kernel's numbers must lie in; outside it is a unit slip or a
# subnormal, and the numbers the analysis derives from them overflowed to inf (1e308 FLOP
# over 1e-308 bytes: AI inf; 1e9 FLOP in 1e-320 s: FLOP/s inf), which put "infx" in the
# tables and crashed `--json` (strict JSON holds no inf) and the chart (review 12c A).
# Inside it every derived number is finite: AI within 1e+-39 FLOP/byte, FLOP/s and
# bytes/s at most 1e45.
# seconds: at least 1 fs, a millionth of the fastest GPU clock cycle (~0.4 ns), far below
# any launch (~1 us).
MIN_SECONDS = 1e-15
# ... and at most 1e7 s (116 days, a long training run): more is a unit slip (ms or ns
# given as seconds), and the ratios against a microsecond floor ran to 300 digits (review
# r3 F6: 1e300 s passed).
MAX_SECONDS = 1e7
# a nonzero FLOP or byte count: at least 1e-9 (no kernel moves a nanobyte; fractional
# counts from scaling stay well above), at most 1e30 (31 years at 1e21 FLOP/s, 200x the
# fastest catalog chip).
COUNT_RANGE = (1e-9, 1e30)
_LO, _HI = COUNT_RANGE


def _check_range(values: Mapping[str, float], what: str, name: str) -> None:
    """Every count >= 0 and finite (inf passes `>= 0` but breaks every ratio downstream:
    AI, % of roof)."""
    for key, v in values.items():
        if v is None or not 0 <= v < _INF:
            raise InputError(f"kernel '{name}': {what}[{key}] must be >= 0 and "
                             f"finite; got {v!r}")
        if v and not _LO <= v <= _HI:
            unit = "FLOP" if what == "flop" else "bytes"
            raise InputError(f"kernel '{name}': {what}[{key}] {v:g} is outside the range "
                             f"rooflab takes (0, or {_LO:g} to {_HI:g} {unit}); is the unit "
                             f"right? (SI base units: {unit}, not G{unit})")


# Where a number came from when whoever built the Kernel did not say (a Kernel in Python,
# a kernel file without "provenance"): FLOP and bytes were given to rooflab, the time was
# measured by the user -- the words a CSV kernel file's rows get (ingest/kernelfile.py).
# The words and who writes which: model/provenance.py, docs/json.md "Provenance".
DEFAULT_PROVENANCE = {"flop": GIVEN, "bytes": GIVEN, "seconds": MEASURED}


def _provenance_of(provenance: Any, flop: Mapping, bytes_: Mapping,
                   seconds: float | None) -> dict[str, str]:
    """The caller's provenance, plus the default for each number present without one: a
    new dict, the given words first, then the missing defaults in DEFAULT_PROVENANCE's
    order."""
    given = dict(provenance) if provenance else {}
    if flop and "flop" not in given:
        given["flop"] = DEFAULT_PROVENANCE["flop"]
    if bytes_ and "bytes" not in given:
        given["bytes"] = DEFAULT_PROVENANCE["bytes"]
    if seconds is not None and "seconds" not in given:
        given["seconds"] = DEFAULT_PROVENANCE["seconds"]
    return given


@dataclass(frozen=True, init=False)   # __init__ below
class Kernel:
    """One kernel (or op, or step).

    flop: FLOP by precision, e.g. {"fp16": 1.37e11}. One multiply-add counts 2.
    bytes: bytes moved by memory level, e.g. {"DRAM": 1.0e8, "L2": 3e8}.
    seconds: measured time of all `calls` together (None when only counted); flop and
      bytes are totals over all calls too (seconds_per_call = seconds / calls).
      A bare number for flop counts as fp32 FLOP, for bytes as DRAM bytes; names are
      made canonical ("float16" -> fp16, "dram" -> DRAM), as in a kernel file.
    provenance: where each number came from, in model/provenance.py's words ("given",
      "assumed", "counted" by a profiler's counters, "derived" by rooflab's formulas,
      "measured" by a clock), e.g. {"flop": "counted", "bytes": "counted", "seconds":
      "measured"}; a number present without one gets DEFAULT_PROVENANCE's word (flop and
      bytes "given", seconds "measured"), as a row of a CSV kernel file does.
    unit: the compute unit the kernel can use ("tensor" for matmuls), None for any.
    samples: raw per-call times in seconds when the time was measured.
    meta: anything else worth keeping (op kind, shape, full name, source file and line).
    """

    name: str
    flop: Mapping[str, float] = field(default_factory=dict)
    bytes: Mapping[str, float] = field(default_factory=dict)
    seconds: float | None = None
    calls: int = 1
    provenance: Mapping[str, str] = field(default_factory=dict)
    unit: str | None = None
    samples: tuple[float, ...] = ()
    meta: Mapping[str, Any] = field(default_factory=dict)

    def __init__(self, name: str, flop: Mapping[str, float] | float | None = None,
                 bytes: Mapping[str, float] | float | None = None,
                 seconds: float | None = None, calls: int = 1,
                 provenance: Mapping[str, str] | None = None, unit: str | None = None,
                 samples: Iterable[float] = (), meta: Mapping[str, Any] | None = None) -> None:
        # Written out, not generated: dataclass's frozen __init__ sets every field through
        # object.__setattr__ and a __post_init__ then sets most of them again; this fills
        # the instance's __dict__ once (Kernels are built by the thousand). The parameters
        # are the fields, in order (tests/test_kernel_speed_paths.py holds them to that); a
        # missing flop/bytes/provenance/meta is an empty one, as the fields' defaults say.
        d = self.__dict__
        d["name"] = name
        d["flop"] = flop
        d["bytes"] = bytes
        d["seconds"] = seconds
        d["calls"] = calls
        d["provenance"] = provenance
        d["unit"] = unit
        d["samples"] = samples
        d["meta"] = meta
        _settle(d, None)

    # a notebook shows a few lines (time, IQR, counts and their provenance), not every
    # sample and meta entry (model/display.py)
    _repr_pretty_ = pretty(kernel_text)

    def __hash__(self) -> int:
        return hash((self.name, tuple(self.flop.items()), tuple(self.bytes.items()),
                     self.seconds, self.calls))

    @property
    def total_flop(self) -> float:
        return float(sum(self.flop.values()))

    @property
    def precision(self) -> str:
        """The precision carrying most of the FLOP (fp32 when there is none): the kernel's
        label. Its compute roof weighs every precision's share (ceiling.kernel_ceiling)."""
        if not self.flop:
            return "fp32"
        return max(self.flop.items(), key=lambda kv: kv[1])[0]

    @property
    def mixed(self) -> bool:
        """FLOP in more than one precision: its compute roof is ceiling.kernel_ceiling's
        weighted one, not its label precision's ceiling."""
        return sum(1 for v in self.flop.values() if v > 0) > 1

    @property
    def seconds_per_call(self) -> float | None:
        return None if self.seconds is None else self.seconds / self.calls

    def with_(self, **changes: Any) -> Kernel:
        """A copy with some fields changed (dataclasses.replace with dict-friendly fields).

        Only the changed fields are made canonical and checked again (and the provenance
        when a number or it changed): the others are this Kernel's, already settled, and
        the copy shares them (read-only). Same result, same errors, as replace(), but
        for this: a new `seconds` or `calls` without `samples` drops the old timing samples, and
        (without `meta`) the meta describing them (TIMING_META: median_s, best_s, the
        TimingWarning text, ...): they timed the old kernel, and a 5 ms "after" shown as
        the median of 32-45 ms samples, or flagged noisy by them, is wrong (review s18
        r8 F9). The copy then reads as Kernel(..., seconds=...) built afresh would."""
        if "samples" not in changes and (
                ("seconds" in changes and changes["seconds"] != self.seconds)
                or ("calls" in changes and changes["calls"] != self.calls)):
            changes["samples"] = ()
            if "meta" not in changes and not TIMING_META.isdisjoint(self.meta):
                changes["meta"] = {k: v for k, v in self.meta.items() if k not in TIMING_META}
        if type(self) is not Kernel or not _FIELDS.issuperset(changes):
            from dataclasses import replace

            return replace(self, **changes)   # a subclass, or a field Kernel lacks: TypeError
        new = object.__new__(Kernel)
        d = new.__dict__
        d.update(self.__dict__)
        d.update(changes)
        _settle(d, changes)
        return new


_FIELDS = frozenset(f.name for f in fields(Kernel))
# provenance["precision"] of a kernel whose FLOP came as a bare number (fp32 by default);
# ingest/kernelfile_rows.py imports this one
PRECISION_ASSUMED = ASSUMED
# meta that describes a kernel's timing samples (measuring.timed_kernel, bench/check.py's
# floor check): stale once its seconds or calls change (Kernel.with_); retime.MEASURED_META
# is this list less the raw samples, the plan and the warm-up calls
TIMING_META = frozenset(("seconds_stat", "median_s", "best_s", "spread", "iqr_rel",
                         "samples_n", "calls_per_sample", "warning", "raw_samples", "plan",
                         "warmup_calls", "warmup_samples_left_out", "floor_s",
                         "floor_ratio", "floor_level",
                         "floor_binding", "floor_tolerance", "flags", "best_floor_ratio",
                         "summed_call_s", "wall_span_s", "overlapped_calls",
                         "calling_threads", "keep_last", "calls_dropped"))
_NUMBERS = ("flop", "bytes", "seconds", "provenance")   # what the provenance depends on

_MAX_EXACT = 2 ** 53   # a count up to here is the same int after float()


def converted_flop(k: Kernel, new_p: str) -> dict[str, float]:
    """A kernel's FLOP by precision after its work moves to new_p (whatif --precision, the
    lower-precision advice). One precision: all of it moves. A mixed kernel (9e9 fp16
    tensor + 1e9 fp32): only the converted part moves, its dominant precision's FLOP (the
    work on the dtype being changed); the other parts (epilogue, scaling, reductions, kept
    in their own precision: ceiling._unit_of_part) stay, and kernel_ceiling weighs the
    result as `rooflab report` does (-> fp8: 9e9 fp8 tensor + 1e9 fp32; -> fp32: 1e10
    fp32, one precision again)."""
    parts = {p: v for p, v in k.flop.items() if v > 0}
    if len(parts) < 2:
        return {new_p: k.total_flop}
    out = {p: v for p, v in parts.items() if p != k.precision}
    out[new_p] = out.get(new_p, 0.0) + parts[k.precision]
    return out


def _settle(d: dict[str, Any], changed: Mapping[str, Any] | None) -> None:
    """Make a Kernel's fields canonical and check them, in place in its __dict__ `d`: every
    field (changed None, from __init__) or only those in `changed` (with_(): the
    others are another Kernel's, already settled). Always in the same order, so the first
    error is the same either way."""
    every = changed is None
    name = d["name"]
    if (every or "name" in changed) and not isinstance(name, str):
        # Kernel(None, ...) once passed, and a file then got "name": "None"
        raise InputError(f"a kernel's name must be text, e.g. Kernel('gemm', ...); got "
                         f"{name!r:.60}")
    if (every or "name" in changed) and not name.strip():
        # a blank name made a table row no --kernel, --map, --fuse or --only can select
        raise InputError(f"field 'name': a kernel's name is empty ({name!r}); give each "
                         f"kernel a name, e.g. 'gemm'")
    flop_ok = bytes_ok = True
    bare = False
    if every or "flop" in changed:
        given = d["flop"]   # (type() first: Kernels are built by the thousand)
        bare = given is not None and type(given) is not dict and not isinstance(given, Mapping)
        flop, flop_ok = _keyed(d["flop"], "flop", name)
        d["flop"] = FrozenDict(flop)
    if every or "bytes" in changed:
        bytes_, bytes_ok = _keyed(d["bytes"], "bytes", name)
        d["bytes"] = FrozenDict(bytes_)
    if every or "unit" in changed:
        unit = d["unit"]
        if unit is not None and unit not in ("tensor", "vector"):
            # 'Tensor' -> tensor, as a kernel file reads it
            d["unit"] = _canon("unit")(unit)
            problem = unknown_unit(d["unit"])
            if problem and not _READER_WARNS.get():   # a reader says it per file
                warnings.warn(f"kernel '{name}': {problem}: {UNKNOWN_UNIT_WHY}",
                              InputWarning, stacklevel=user_stacklevel())
    if every or "meta" in changed:
        meta = d["meta"]
        d["meta"] = FrozenDict(meta) if meta else _EMPTY
    if every or "samples" in changed:
        d["samples"] = timing_samples(d["samples"], name)
    if not flop_ok:
        _check_range(flop, "flop", name)
    if not bytes_ok:
        _check_range(bytes_, "bytes", name)
    if every or "seconds" in changed:
        seconds = d["seconds"]
        if seconds is not None:
            if type(seconds) is not float:
                seconds = d["seconds"] = _plain_number(seconds, name, "seconds")
            if not 0 < seconds < _INF:
                raise InputError(f"kernel '{name}': seconds must be > 0 and finite; got "
                                 f"{seconds!r}")
            if seconds < MIN_SECONDS:
                raise InputError(f"kernel '{name}': seconds {seconds!r} is shorter than any "
                                 f"kernel runs (the least rooflab takes is {MIN_SECONDS:g} s);"
                                 f" is the unit right? (seconds, not ms or ns)")
            if seconds > MAX_SECONDS:
                raise InputError(f"kernel '{name}': seconds {seconds:g} is longer than "
                                 f"rooflab takes (at most {MAX_SECONDS:g} s, about "
                                 f"{MAX_SECONDS / 86400:.0f} days); is the unit right? "
                                 f"(seconds, not ms or ns)")
    if every or "calls" in changed:
        given = d["calls"]
        if not (type(given) is int and 1 <= given <= _MAX_EXACT):   # else: already right
            calls = _plain_number(given, name, "calls")
            if not math.isfinite(calls) or calls != int(calls):
                # as a kernel file: a fractional launch count would skew the time per call
                raise InputError(f"kernel '{name}': calls must be a whole number of "
                                 f"launches; got {given!r}")
            calls = d["calls"] = int(calls)
            if calls < 1:
                raise InputError(f"kernel '{name}': calls must be >= 1; got {calls!r}")
    if every or not changed.keys().isdisjoint(_NUMBERS):
        prov = _provenance_of(d["provenance"], d["flop"], d["bytes"], d["seconds"])
        if bare and "precision" not in prov and any(d["flop"].values()):
            # a bare FLOP number is fp32 by default, not by the user's word: marked as a
            # kernel file's is (ingest/kernelfile_rows.py PRECISION_ASSUMED), so a report
            # of it saved by save_kernels says so (review s18 r8 F6); 0 FLOP: nothing judged
            prov["precision"] = PRECISION_ASSUMED
        d["provenance"] = FrozenDict(prov)
