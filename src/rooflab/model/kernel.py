"""A kernel: one piece of work with its FLOP, bytes and time, and where each came from."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from ..errors import InputError

_EMPTY: Mapping[str, Any] = MappingProxyType({})


def _frozen(mapping: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return MappingProxyType(dict(mapping or {}))


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
    field_ = what if key is None else f"{what}[{key}]"
    raise InputError(f"kernel '{name}': {field_} must be a plain number (SI base units: "
                     f"FLOP, bytes, seconds); got {value!r}")


def _canon(what: str):
    """schema's name canoniser for flop or bytes (schema imports this module, so late)."""
    if not _CANON:
        from . import schema

        _CANON.update(flop=schema.precision_name, bytes=schema.level_name,
                      unit=schema.unit_name)
    return _CANON[what]


_CANON: dict = {}


def _keyed(values: Any, what: str, name: str) -> dict[str, float]:
    """flop / bytes given in Python, read the way a kernel file reads them
    (schema.kernel_from_dict): a bare number is fp32 FLOP / DRAM bytes; names are made
    canonical ('float16' -> fp16, 'dram' -> DRAM, equal names added), so a Kernel built in
    a notebook is judged against the same ceiling as the same kernel loaded from JSON."""
    if values is None:
        return {}
    if type(values) is not dict and not isinstance(values, Mapping):
        if isinstance(values, (str, bool)) or not hasattr(values, "__float__"):
            example = "{'fp16': 1.37e11}" if what == "flop" else "{'DRAM': 1.0e8}"
            raise InputError(f"kernel '{name}': {what} must be a dict such as {example} or "
                             f"a number ({'fp32 FLOP' if what == 'flop' else 'DRAM bytes'});"
                             f" got {values!r}")
        values = {"fp32" if what == "flop" else "DRAM": values}
    canon = _canon(what)
    if type(values) is MappingProxyType and all(
            type(v) is float and canon(k) == k for k, v in values.items()):
        return values   # another Kernel's counts (with_(), replace()): already checked
    out: dict[str, float] = {}
    for key, value in values.items():
        if value is None:
            raise InputError(f"kernel '{name}': {what}[{key}] must be >= 0 and finite; got None")
        key = canon(key)
        out[key] = out.get(key, 0.0) + _plain_number(value, name, what, key)
    return out


# Where a number came from when whoever built the Kernel did not say (a Kernel in Python,
# a kernel file without "provenance"): FLOP and bytes were given to rooflab, the time was
# measured by the user -- the words a CSV kernel file's rows get (ingest/kernelfile.py).
DEFAULT_PROVENANCE = {"flop": "given", "bytes": "given", "seconds": "measured"}


def _provenance(k: Kernel) -> dict[str, str]:
    """The caller's provenance, plus the default for each number present without one."""
    given = dict(k.provenance or {})
    present = {"flop": bool(k.flop), "bytes": bool(k.bytes), "seconds": k.seconds is not None}
    return {**given, **{key: word for key, word in DEFAULT_PROVENANCE.items()
                        if present[key] and key not in given}}


@dataclass(frozen=True)
class Kernel:
    """One kernel (or op, or step).

    flop: FLOP by precision, e.g. {"fp16": 1.37e11}. One multiply-add counts 2.
    bytes: bytes moved by memory level, e.g. {"DRAM": 1.0e8, "L2": 3e8}.
    seconds: measured time of all `calls` together (None when only counted); flop and
      bytes are totals over all calls too (seconds_per_call = seconds / calls).
      A bare number for flop counts as fp32 FLOP, for bytes as DRAM bytes; names are
      made canonical ("float16" -> fp16, "dram" -> DRAM), as in a kernel file.
    provenance: where each number came from: {"flop": "derived"|"counted"|"measured", ...};
      a number present without one gets DEFAULT_PROVENANCE's word (flop and bytes
      "given", seconds "measured"), as a row of a CSV kernel file does.
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

    def __post_init__(self) -> None:
        object.__setattr__(self, "flop", _frozen(_keyed(self.flop, "flop", self.name)))
        object.__setattr__(self, "bytes", _frozen(_keyed(self.bytes, "bytes", self.name)))
        if self.unit is not None and self.unit not in ("tensor", "vector"):
            # 'Tensor' -> tensor, as a kernel file reads it
            object.__setattr__(self, "unit", _canon("unit")(self.unit))
        object.__setattr__(self, "meta", _frozen(self.meta))
        object.__setattr__(self, "samples", tuple(self.samples))
        for what, values in (("flop", self.flop), ("bytes", self.bytes)):
            for key, v in values.items():
                # inf passes `>= 0` but breaks every ratio downstream (AI, % of roof).
                if v is None or not 0 <= v < math.inf:
                    raise InputError(f"kernel '{self.name}': {what}[{key}] must be >= 0 and "
                                     f"finite; got {v!r}")
        if self.seconds is not None:
            object.__setattr__(self, "seconds", _plain_number(self.seconds, self.name, "seconds"))
        if self.seconds is not None and not 0 < self.seconds < math.inf:
            raise InputError(f"kernel '{self.name}': seconds must be > 0; got {self.seconds!r}")
        calls = _plain_number(self.calls, self.name, "calls")
        if not math.isfinite(calls) or calls != int(calls):
            # as a kernel file: a fractional launch count would skew the time per call
            raise InputError(f"kernel '{self.name}': calls must be a whole number of "
                             f"launches; got {self.calls!r}")
        object.__setattr__(self, "calls", int(calls))
        if self.calls < 1:
            raise InputError(f"kernel '{self.name}': calls must be >= 1; got {self.calls!r}")
        object.__setattr__(self, "provenance", _frozen(_provenance(self)))

    def __hash__(self) -> int:
        return hash((self.name, tuple(self.flop.items()), tuple(self.bytes.items()),
                     self.seconds, self.calls))

    @property
    def total_flop(self) -> float:
        return float(sum(self.flop.values()))

    @property
    def precision(self) -> str:
        """The precision carrying most of the FLOP (fp32 when there is none)."""
        if not self.flop:
            return "fp32"
        return max(self.flop.items(), key=lambda kv: kv[1])[0]

    @property
    def seconds_per_call(self) -> float | None:
        return None if self.seconds is None else self.seconds / self.calls

    def with_(self, **changes: Any) -> Kernel:
        """A copy with some fields changed (dataclasses.replace with dict-friendly fields)."""
        from dataclasses import replace

        return replace(self, **changes)
