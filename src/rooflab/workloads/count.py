"""OpCount: the analytic FLOP and bytes of one op, under a stated byte model."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..model.display import pretty
from ..model.display_values import opcount_text
from ..model.kernel import Kernel

# The default byte model, said once and quoted by every op that uses it.
COMPULSORY = ("compulsory traffic: each input read once and each output written once "
              "(ideal reuse through caches; no write-allocate)")


@dataclass(frozen=True)
class OpCount:
    """FLOP and bytes of one op. One multiply-add is 2 FLOP.

    bytes_split breaks `bytes` down (e.g. {"read": .., "write": ..} or
    {"weights": .., "activations": .., "kv": ..}); its values sum to `bytes`.
    """

    name: str
    op: str
    flop: float
    bytes: float
    precision: str
    unit: str | None = None
    bytes_split: Mapping[str, float] = field(default_factory=dict)
    byte_model: str = COMPULSORY
    shape: Mapping[str, Any] = field(default_factory=dict)

    # a notebook shows one line, not the shape, split and byte model (repr() keeps them)
    _repr_pretty_ = pretty(opcount_text)

    @property
    def ai(self) -> float:
        return self.flop / self.bytes if self.bytes else float("inf")

    def kernel(self, seconds: float | None = None, calls: int = 1, level: str = "DRAM",
               samples: tuple[float, ...] = ()) -> Kernel:
        """This count as a Kernel (derived FLOP and bytes; measured time if given).

        A Kernel's FLOP, bytes and seconds are totals over its `calls`, and this count is
        one op: for N launches timed together use op.scaled(N).kernel(seconds=total,
        calls=N) (calls alone would spread one op's FLOP over N launches' time)."""
        prov = {"flop": "derived", "bytes": "derived"}
        if seconds is not None:
            prov["seconds"] = "measured"
        meta = {"op": self.op, "shape": dict(self.shape), "byte_model": self.byte_model}
        if self.bytes_split:
            meta["bytes_split"] = dict(self.bytes_split)
        return Kernel(name=self.name, flop={self.precision: self.flop},
                      bytes={level: self.bytes}, seconds=seconds, calls=calls,
                      provenance=prov, unit=self.unit, samples=samples, meta=meta)

    def scaled(self, factor: float, name: str | None = None) -> OpCount:
        """The same op repeated `factor` times (e.g. once per layer)."""
        return OpCount(name=name or self.name, op=self.op, flop=self.flop * factor,
                       bytes=self.bytes * factor, precision=self.precision, unit=self.unit,
                       bytes_split={k: v * factor for k, v in self.bytes_split.items()},
                       byte_model=self.byte_model, shape=self.shape)
