"""Ceilings and roofs: what a machine can give, each number with its provenance."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from ..errors import InputError

PROVENANCES = ("nominal", "measured", "derived")
FLOAT_PRECISIONS = ("fp64", "fp32", "tf32", "fp16", "bf16", "fp8")

# When a roof lacks a kernel's precision, the nearest ceiling that does the same math
# more expensively is used, and the analysis says so.
PRECISION_FALLBACK: dict[str, tuple[str, ...]] = {
    "tf32": ("fp32",),
    "bf16": ("fp16", "fp32"),
    "fp16": ("bf16", "fp32"),
    "fp8": ("fp16", "bf16", "fp32"),
    "int8": ("fp16", "bf16", "fp32"),
    "int4": ("int8", "fp16", "fp32"),
    "int32": ("fp32",),
    "fp64": (),
    "fp32": (),
}


def iqr_over_median(samples) -> float:
    """Interquartile range / median of samples (statistics.quantiles; the full range under
    4 samples): the spread every measurement reports."""
    xs = sorted(float(v) for v in samples)
    med = statistics.median(xs)
    if len(xs) >= 4:
        q = statistics.quantiles(xs, n=4)
        iqr = q[2] - q[0]
    else:
        iqr = xs[-1] - xs[0]
    return iqr / med if med else 0.0


@dataclass(frozen=True)
class Ceiling:
    """One ceiling: a compute peak (FLOP/s) or a bandwidth (B/s).

    A compute ceiling has `precision` and `unit` (vector or tensor); a memory ceiling has
    `level` (L1, L2, L3, DRAM, or a link: PCIe, NVLink, network, loopback).
    A measured ceiling keeps its raw `samples` (in the ceiling's unit); `value` is the
    figure used as the roof (the best sample unless the method says otherwise).
    """

    value: float
    precision: str | None = None
    unit: str | None = None
    level: str | None = None
    provenance: str = "nominal"
    source: str = ""
    method: str = ""
    samples: tuple[float, ...] = ()
    warnings: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if (self.precision is None) == (self.level is None):
            raise InputError("a ceiling needs either a precision (compute) or a level (memory)")
        # names as a profile file reads them ('float64' -> fp64, 'dram' -> DRAM), so a
        # ceiling built in Python matches the kernels it should judge
        from .schema import level_name, precision_name, unit_name  # schema imports this

        if self.precision is not None:
            object.__setattr__(self, "precision", precision_name(self.precision))
        if self.unit is not None:
            object.__setattr__(self, "unit", unit_name(self.unit))
        if self.level is not None:
            object.__setattr__(self, "level", level_name(self.level))
        if isinstance(self.value, (bool, str)) or not hasattr(self.value, "__float__"):
            raise InputError(f"ceiling {self.label}: value must be a plain number (FLOP/s or "
                             f"bytes/s); got {self.value!r}")
        if self.provenance not in PROVENANCES:
            raise InputError(f"provenance must be one of {PROVENANCES}; got '{self.provenance}'")
        if not self.value > 0:
            raise InputError(f"ceiling {self.label} must be positive; got {self.value!r}")

    @property
    def is_compute(self) -> bool:
        return self.precision is not None

    @property
    def label(self) -> str:
        if self.precision is not None:
            return f"{self.precision} {self.unit}" if self.unit else self.precision
        return str(self.level)

    @property
    def median(self) -> float | None:
        return statistics.median(self.samples) if self.samples else None

    @property
    def best(self) -> float | None:
        return max(self.samples) if self.samples else None

    @property
    def spread(self) -> float | None:
        """(max - min) / median of the samples: 0.05 means the samples span 5 %."""
        if len(self.samples) < 2:
            return None
        med = statistics.median(self.samples)
        return (max(self.samples) - min(self.samples)) / med if med else None

    @property
    def iqr_rel(self) -> float | None:
        """Interquartile range / median (the probe table's IQR column; the same quartiles
        as probe.stats.summarize: statistics.quantiles, the range under 4 samples)."""
        return iqr_over_median(self.samples) if len(self.samples) >= 2 else None


@dataclass(frozen=True)
class Roof:
    """The ceilings of one machine of one kind (nominal or measured)."""

    name: str
    kind: str = "nominal"
    compute: tuple[Ceiling, ...] = ()
    memory: tuple[Ceiling, ...] = ()
    overhead_s: float | None = None
    overhead_source: str = ""
    source: str = ""
    notes: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        object.__setattr__(self, "compute", tuple(self.compute))
        object.__setattr__(self, "memory", tuple(self.memory))
        for c in self.compute:
            if not c.is_compute:
                raise InputError(f"roof '{self.name}': compute ceiling {c.label} is a memory "
                                 f"level; put it in memory=(...)")
        for c in self.memory:
            if c.is_compute:
                # Ceiling(1e11, "DRAM") sets the precision: the level is a keyword
                raise InputError(f"roof '{self.name}': memory ceiling '{c.precision}' has no "
                                 f"level; write Ceiling({c.value:g}, level="
                                 f"'{c.precision}')")
        if self.overhead_s is not None and self.overhead_s < 0:
            raise InputError(f"overhead_s must be >= 0; got {self.overhead_s}")

    def _repr_pretty_(self, printer, cycle: bool) -> None:
        # IPython/Jupyter display: the numbers, not every ceiling's source URL (repr())
        from ..units import si

        lines = [f"Roof '{self.name}' ({self.kind})"]
        lines += [f"  {c.label:<14} {si(c.value, 'FLOP/s')}" for c in self.compute]
        lines += [f"  {c.label:<14} {si(c.value, 'B/s')}" for c in self.memory]
        if self.overhead_s is not None:
            lines.append(f"  overhead       {self.overhead_s * 1e6:.3g} µs per launch")
        printer.text("\n".join(lines))

    # --- lookups -------------------------------------------------------------
    @property
    def precisions(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(c.precision for c in self.compute))

    @property
    def levels(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(c.level for c in self.memory))

    def find_compute(self, precision: str, unit: str | None = None) -> Ceiling | None:
        """The ceiling for a precision (and unit); with no unit, the fastest unit."""
        matches = [c for c in self.compute if c.precision == precision
                   and (unit is None or c.unit == unit)]
        return max(matches, key=lambda c: c.value) if matches else None

    def compute_for(self, precision: str, unit: str | None = None) -> tuple[Ceiling, str]:
        """The ceiling a kernel of this precision is held to, and a note when it fell back."""
        found = self.find_compute(precision, unit)
        if found is None and unit == "vector":
            # Vector work cannot run on matrix units: a GPU that lists no fp16 vector rate
            # (AMD Instinct) runs fp16 elementwise at least at its fp32 vector rate, so a
            # wider precision's vector ceiling judges it, not the fp16 tensor peak (8x higher
            # on an MI300X, which put the ridge at 247 instead of 31).
            for alt in PRECISION_FALLBACK.get(precision, ("fp32",)):
                wider = self.find_compute(alt, "vector")
                if wider is not None:
                    return wider, (f"roof '{self.name}' has no {precision} vector ceiling; "
                                   f"using {wider.label}, since vector work cannot use "
                                   f"tensor units")
        found = found or (self.find_compute(precision) if unit else None)
        if found is not None:
            note = "" if unit is None or found.unit == unit else (
                f"roof '{self.name}' has no {precision} {unit} ceiling; using {found.label}")
            return found, note
        alts = PRECISION_FALLBACK.get(precision, ("fp32",))
        # every stand-in on the kernel's own unit first: an fp8 matmul on a Xeon with AMX
        # goes to bf16 AMX (tensor), not to fp16 vector, the first stand-in on any unit
        found = next((c for c in (self.find_compute(a, unit) for a in alts) if c), None) if unit \
            else None
        found = found or next((c for c in map(self.find_compute, alts) if c), None)
        if found is not None:
            return found, f"roof '{self.name}' has no {precision} ceiling; using {found.label}"
        if self.compute:
            # Last resort: the slowest ceiling of the same family (float or integer), never a
            # faster unrelated one (an fp64 kernel judged against int4 math would look idle).
            same = [c for c in self.compute
                    if (c.precision in FLOAT_PRECISIONS) == (precision in FLOAT_PRECISIONS)]
            found = min(same or self.compute, key=lambda c: c.value)
            family = "float" if precision in FLOAT_PRECISIONS else "integer"
            return found, (f"roof '{self.name}' has no {precision} ceiling; using {found.label}"
                           f" (the slowest {family} ceiling), so this point's percent of roof"
                           f" is only indicative")
        raise InputError(f"roof '{self.name}' has no compute ceilings")

    def find_memory(self, level: str) -> Ceiling | None:
        matches = [c for c in self.memory if c.level == level]
        return max(matches, key=lambda c: c.value) if matches else None

    def bandwidth(self, level: str = "DRAM") -> Ceiling:
        found = self.find_memory(level)
        if found is None:
            have = ", ".join(self.levels) or "none"
            raise InputError(f"roof '{self.name}' has no {level} ceiling (it has: {have})")
        return found

    @property
    def top_compute(self) -> Ceiling:
        if not self.compute:
            raise InputError(f"roof '{self.name}' has no compute ceilings")
        return max(self.compute, key=lambda c: c.value)
