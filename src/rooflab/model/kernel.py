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


@dataclass(frozen=True)
class Kernel:
    """One kernel (or op, or step).

    flop: FLOP by precision, e.g. {"fp16": 1.37e11}. One multiply-add counts 2.
    bytes: bytes moved by memory level, e.g. {"DRAM": 1.0e8, "L2": 3e8}.
    seconds: measured time of all `calls` together (None when only counted).
    provenance: where each number came from: {"flop": "derived"|"counted"|"measured", ...}.
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
        object.__setattr__(self, "flop", _frozen(self.flop))
        object.__setattr__(self, "bytes", _frozen(self.bytes))
        object.__setattr__(self, "provenance", _frozen(self.provenance))
        object.__setattr__(self, "meta", _frozen(self.meta))
        object.__setattr__(self, "samples", tuple(self.samples))
        for what, values in (("flop", self.flop), ("bytes", self.bytes)):
            for key, v in values.items():
                # inf passes `>= 0` but breaks every ratio downstream (AI, % of roof).
                if v is None or not 0 <= v < math.inf:
                    raise InputError(f"kernel '{self.name}': {what}[{key}] must be >= 0 and "
                                     f"finite; got {v!r}")
        if self.seconds is not None and not 0 < self.seconds < math.inf:
            raise InputError(f"kernel '{self.name}': seconds must be > 0; got {self.seconds!r}")
        if self.calls < 1:
            raise InputError(f"kernel '{self.name}': calls must be >= 1; got {self.calls!r}")

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
