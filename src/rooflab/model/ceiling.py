"""Ceilings and roofs: what a machine can give, each number with its provenance."""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache

from ..errors import InputError
from ..units import fmt_rate, fmt_seconds, fmt_share, is_float, si
from .canonical_names import level_name, precision_name, unit_name
from .dies import kind_words, label_kind  # one die of a package reads derived
from .display import pretty
from .display_values import ceiling_text
from .sample_spread import iqr_over_median

PROVENANCES = ("nominal", "measured", "derived")

# The values a ceiling may take, FLOP/s or bytes/s alike: no machine is slower than 1 per
# second, and 1e21 is 5e4 x the fastest catalog peak (GB200 fp4 sparse, 2e16): a whole rack's
# sum stays inside. Outside it is a unit slip or a subnormal: 1e-320 B/s put the ridge
# point at inf and crashed report, plot and `ai --json` (review 12c L).
CEILING_RANGE = (1.0, 1e21)

# When a roof lacks a kernel's precision, the nearest ceiling that does the same math
# more expensively is used, and the analysis says so. bf16 goes to fp32, not fp16: a roof
# without bf16 is a machine without bf16 math (Volta and Turing tensor cores do fp16 MMA
# only; a CPU without AVX512-BF16 converts), where bf16 runs at the fp32 rate: a V100's
# bf16 GEMM held to fp16 tensor had an 8x low floor (review s19 r1 F9). Where bf16
# exists it ties fp16 (A100 and later) and no stand-in is needed.
PRECISION_FALLBACK: dict[str, tuple[str, ...]] = {
    "tf32": ("fp32",),
    "bf16": ("fp32",),
    "fp16": ("bf16", "fp32"),
    "fp8": ("fp16", "bf16", "fp32"),
    # no fp4 math (Hopper, Ada): fp4 data are converted and multiplied in fp8 at best
    "fp4": ("fp8", "fp16", "bf16", "fp32"),
    "int8": ("fp16", "bf16", "fp32"),
    "int4": ("int8", "fp16", "fp32"),
    "int32": ("fp32",),
    "fp64": (),
    "fp32": (),
}


BF16_WHY = " (without bf16 math bf16 runs at the fp32 rate{})"
# where the roof has fp16 tensor math but no bf16 (Volta/Turing): the way to its ceiling
BF16_CAST = ": these tensor cores do fp16 only; cast to fp16 for the fp16 tensor ceiling"


@dataclass(frozen=True)
class Ceiling:
    """One ceiling: a compute peak (FLOP/s) or a bandwidth (B/s).

    A compute ceiling has `precision` and `unit` (vector or tensor); a memory ceiling has
    `level` (L1, L2, L3, DRAM, or a link: units.LINKS, e.g. NVLink, xGMI, PCIe).
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

    # a notebook shows one line, not the datasheet URL and raw samples (repr() keeps them)
    _repr_pretty_ = pretty(ceiling_text)

    def __post_init__(self) -> None:
        if (self.precision is None) == (self.level is None):
            raise InputError("a ceiling needs either a precision (compute) or a level (memory)")
        # names as a profile file reads them ('float64' -> fp64, 'dram' -> DRAM), so a
        # ceiling built in Python matches the kernels it should judge
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
        if not CEILING_RANGE[0] <= self.value <= CEILING_RANGE[1]:
            unit = "FLOP/s" if self.precision is not None else "bytes/s"
            try:
                value = f"{float(self.value):g}"
            except OverflowError:   # 10**400
                value = f"an integer of {len(str(self.value))} digits"
            raise InputError(f"ceiling {self.label} must be between {CEILING_RANGE[0]:g} and "
                             f"{CEILING_RANGE[1]:g} {unit}; got {value} (SI base units: "
                             f"320 GB/s is 3.2e11)")

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
        as probe.stats.summarize: iqr_over_median's inclusive ones, the range under 4 samples)."""
        return iqr_over_median(self.samples) if len(self.samples) >= 2 else None


# On an exact tie for the fastest ceiling the fp16 one is named (A100: fp16 = bf16 tensor,
# 312 TFLOP/s): seed 000's table and most kernels say FP16, so the chart's flat and the
# report's "fastest float ceiling" said bf16 for no reason (review r2 F5). Any other tie keeps
# the roof's order.
TIE_PREFERRED = "fp16"


def fastest(ceilings: Iterable[Ceiling]) -> Ceiling:
    """The fastest of `ceilings` (non-empty); an exact tie goes to TIE_PREFERRED, else to the
    first listed. The one rule for every "top ceiling" (Roof.top_compute, top_float_compute,
    the chart's top drawn ceiling)."""
    return max(ceilings, key=lambda c: (c.value, c.precision == TIE_PREFERRED))


@dataclass(frozen=True)
class Roof:
    """The ceilings of one machine of one kind.

    name: the machine as tables and charts name it. kind: where the numbers came from,
    in model/provenance.py's words: "nominal" (datasheet), "measured" (`rooflab probe`),
    "derived" (computed, e.g. imported from another tool). compute: Ceilings with a
    precision, value in FLOP/s; memory: Ceilings with a level, value in bytes/s (SI:
    2.039e12 for 2.039 TB/s). overhead_s: the fixed cost of one launch or call in
    seconds (5e-6 for 5 us; None when unknown), the floor under every call's time;
    overhead_source says where it came from. A profile file holds one or two Roofs
    (MachineProfile); save_profile refuses a Roof without any ceiling, as its readers do.
    """

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
        rows = [(c.label, fmt_rate(c.value, c.precision), c.provenance) for c in self.compute]
        rows += [(c.label, si(c.value, "B/s"), c.provenance) for c in self.memory]
        # labels padded to the longest ("DRAM (real traffic)" once broke the column); a
        # provenance column only where a ceiling's differs from the roof's kind (a derived
        # row in a measured roof), so a catalog roof stays two columns (review 18b L)
        width = max([14, *(len(label) for label, _, _ in rows)])

        says = any(prov != label_kind(self) for _, _, prov in rows)
        lines = [f"Roof '{self.name}' ({kind_words(self)})"]
        vwidth = max([0, *(len(value) for _, value, _ in rows)]) if says else 0
        lines += [f"  {label:<{width}} {value:<{vwidth}}" + (f"  ({prov})" if says else "")
                  for label, value, prov in rows]
        if self.overhead_s is not None:
            lines.append(f"  {'overhead':<{width}} {fmt_seconds(self.overhead_s)} per launch")
        printer.text("\n".join(lines))

    # --- lookups -------------------------------------------------------------
    @property
    def precisions(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(c.precision for c in self.compute))

    @property
    def levels(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(c.level for c in self.memory))

    def find_compute(self, precision: str, unit: str | None = None) -> Ceiling | None:
        """The ceiling for a precision (and unit); with no unit, the fastest unit; None
        when the roof has none of that precision (T4: "fp8"), so `.value` on it is an
        AttributeError: test for None, or take compute_for(precision), which returns the
        stand-in a kernel of that precision is held to and a note saying so."""
        precision = precision_name(precision)   # 'FP16' -> fp16, as the files read it
        matches = [c for c in self.compute if c.precision == precision
                   and (unit is None or c.unit == unit)]
        return max(matches, key=lambda c: c.value) if matches else None

    def fallbacks(self, precision: str) -> tuple[str, ...]:
        """The stand-in precisions for one this roof lacks, nearest first (PRECISION_FALLBACK).
        On a CPU roof fp16 skips bf16: without AVX512-FP16 or NEON fp16 math (which a roof
        lists as an fp16 ceiling) fp16 data is converted (F16C) and multiplied at the fp32
        rate, and bf16 dot products (AVX512-BF16, AMX-BF16) take bf16 inputs only: a Zen 4
        fp16 GEMM held to bf16 vector had half its true floor (review 11a F-M). A GPU
        keeps the bf16 stand-in (the same tensor-core rate on every GPU that lists both)."""
        alts = PRECISION_FALLBACK.get(precision, ("fp32",))
        if precision == "fp16" and "bf16" in alts:
            from .machine import machine_of  # machine imports this module

            if machine_of(self).kind == "cpu":
                return tuple(a for a in alts if a != "bf16")
        return alts

    def compute_for(self, precision: str, unit: str | None = None) -> tuple[Ceiling, str]:
        """The ceiling a kernel of this precision is held to, and a note when it fell back."""
        found = self.find_compute(precision, unit)
        if found is None and unit == "vector":
            # Vector work cannot run on matrix units: a GPU that lists no fp16 vector rate
            # (AMD Instinct) runs fp16 elementwise at least at its fp32 vector rate, so a
            # wider precision's vector ceiling judges it, not the fp16 tensor peak (8x higher
            # on an MI300X, which put the ridge at 247 instead of 31).
            for alt in self.fallbacks(precision):
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
        alts = self.fallbacks(precision)
        # every stand-in on the kernel's own unit first: an fp8 matmul on a Xeon with AMX
        # goes to bf16 AMX (tensor), not to fp16 vector, the first stand-in on any unit
        found = next((c for c in (self.find_compute(a, unit) for a in alts) if c), None) if unit \
            else None
        found = found or next((c for c in map(self.find_compute, alts) if c), None)
        if found is not None:
            # the cast advice only where an fp16 tensor ceiling exists (a CPU roof has none:
            # review s19 h1 R2)
            cast = BF16_CAST if self.find_compute("fp16", "tensor") else ""
            why = BF16_WHY.format(cast) if precision == "bf16" else ""
            return found, (f"roof '{self.name}' has no {precision} ceiling; using "
                           f"{found.label}{why}")
        if self.compute:
            # Last resort: the slowest ceiling of the same family (float or integer), never a
            # faster unrelated one (an fp64 kernel judged against int4 math would look idle).
            same = [c for c in self.compute
                    if is_float(c.precision) == is_float(precision)]
            found = min(same or self.compute, key=lambda c: c.value)
            family = "float" if is_float(precision) else "integer"
            return found, (f"roof '{self.name}' has no {precision} ceiling; using {found.label}"
                           f" (the slowest {family} ceiling), so this point's percent of roof"
                           f" is only indicative")
        raise InputError(f"roof '{self.name}' has no compute ceilings")

    def find_memory(self, level: str) -> Ceiling | None:
        level = level_name(level)   # 'dram' -> DRAM, as the files read it
        matches = [c for c in self.memory if c.level == level]
        return max(matches, key=lambda c: c.value) if matches else None

    def bandwidth(self, level: str = "DRAM") -> Ceiling:
        """The fastest memory ceiling at `level` (value in bytes/s); an InputError naming
        the levels the roof has when it has none there (find_memory returns None)."""
        found = self.find_memory(level)
        if found is None:
            have = ", ".join(self.levels) or "none"
            raise InputError(f"roof '{self.name}' has no {level} ceiling (it has: {have})")
        return found

    @property
    def top_compute(self) -> Ceiling:
        """The fastest ceiling of any precision, integer included (A100: int4 tensor, 1.25
        POP/s): the height every ceiling fits under, for a chart's axis limits. The top
        of the roofline (the ridge) is top_float_compute()."""
        if not self.compute:
            raise InputError(f"roof '{self.name}' has no compute ceilings")
        return fastest(self.compute)

    def top_float_compute(self) -> Ceiling:
        """The fastest floating-point ceiling (units.is_float): the top of the roofline
        that rooflab.ridge(roof) and attainable(roof, ai), the chart's default ceilings and
        the catalog's tables all use (A100 SXM: fp16 tensor 312 TFLOP/s, ridge 312e12 /
        2.039e12 = 153 FLOP/B). Integer TOPS are not FLOP/s. A roof with no float ceiling
        gives its fastest overall."""
        return self._fastest(floats=True)

    def top_compute_for(self, precision: str) -> Ceiling:
        """The fastest ceiling of a kernel's own family (float or integer): the roof a
        change of unit or precision could reach (seed 004's third distance: "换精度(fp8)").
        A float kernel is not held to int4 math (A100: 1.25 POP/s) it could only use by
        quantizing its activations too; a float kernel's is top_float_compute()."""
        return self._fastest(floats=is_float(precision))

    def _fastest(self, floats: bool) -> Ceiling:
        """The fastest ceiling of one family; a roof with none of it: the fastest overall."""
        same = [c for c in self.compute if is_float(c.precision) == floats]
        return fastest(same) if same else self.top_compute


@dataclass(frozen=True)
class CeilingPart:
    """One precision of a mixed kernel: its FLOP and the ceiling it is held to
    (Roof.compute_for's, stand-ins included)."""

    precision: str
    flop: float
    ceiling: Ceiling

    @property
    def seconds_at_peak(self) -> float:
        return self.flop / self.ceiling.value

    @property
    def label(self) -> str:
        """'fp32 vector', or 'fp8 on fp16 tensor' when a stand-in holds it."""
        c = self.ceiling
        return c.label if c.precision == self.precision else f"{self.precision} on {c.label}"


@dataclass(frozen=True)
class KernelCeiling:
    """The compute ceiling one kernel is held to, with its words.

    ceiling: Roof.compute_for's ceiling for a kernel of one precision; for a kernel whose
      FLOP are split across precisions, a derived ceiling (the dominant precision's name and
      unit, the weighted value, method "weighted: ...").
    label: what binds on the compute side ("fp16 tensor", or "weighted fp16 tensor + fp32
      vector" for a mix).
    notes: Roof.compute_for's stand-in notes, one per precision that needed one.
    parts: for a weighted ceiling, each precision's FLOP and ceiling (dominant first), so
      advice can say which part costs the time; empty otherwise.
    """

    ceiling: Ceiling
    label: str
    notes: tuple[str, ...] = ()
    parts: tuple[CeilingPart, ...] = ()

    @property
    def weighted(self) -> bool:
        return self.ceiling.method.startswith("weighted: ")

    @property
    def note(self) -> str:
        return "; ".join(self.notes)


def _unit_of_part(precision: str, dominant: str, unit: str | None) -> str | None:
    """The unit a precision of a mixed kernel is assumed to run on. A kernel records one
    unit, its dominant work's: in a tensor kernel the other precisions are the epilogue,
    the scaling, the reductions (seed 000 §3.2's "普通 CUDA Core" part), so vector work;
    a vector kernel is vector throughout; with no unit, each precision gets its fastest."""
    if unit == "tensor" and precision != dominant:
        return "vector"
    return unit


def kernel_ceiling(roof: Roof, flop: Mapping[str, float], unit: str | None,
                   dominant: str) -> KernelCeiling:
    """The compute ceiling of a kernel with FLOP by precision `flop` (Kernel.flop), unit
    `unit` and dominant precision `dominant` (Kernel.precision).

    One precision with FLOP (or none): Roof.compute_for(dominant, unit), unchanged.
    Several: each precision's ceiling from Roof.compute_for (stand-in notes kept), combined
    time-weighted (seed 000 §3.2): P = sum FLOP / sum(FLOP_p / P_p), the rate at which the
    whole kernel's FLOP finish if each part runs at its own peak, one after the other (the
    harmonic mean weighted by FLOP; a FLOP-weighted arithmetic mean would let the fast part
    hide the slow one). No share threshold: a 0.1 % fp32 part costs exactly its time, so the
    value is exact; only precisions with 0 FLOP are left out."""
    parts = [(p, v) for p, v in flop.items() if v > 0]
    if len(parts) < 2:
        found, note = roof.compute_for(dominant, unit)
        return KernelCeiling(found, found.label, (note,) if note else ())
    parts.sort(key=lambda pv: (pv[0] != dominant, -pv[1]))   # dominant first, then by FLOP
    held = [(p, v, *roof.compute_for(p, _unit_of_part(p, dominant, unit))) for p, v in parts]
    if len({c for _, _, c, _ in held}) == 1:
        # every part on one ceiling: the weighted value is that ceiling's, so the kernel
        # reads as before (a roof of one ceiling: the best-achieved envelope an ncu import
        # builds when no roof is given, where an fp64 + fp32 kernel set the fp64 ceiling)
        # the stand-in notes of every part, not the main one's only: the fp32 part of an
        # fp64 + fp32 kernel held to the fp64 ceiling of a roof without fp32 gets the note a
        # pure fp32 kernel gets (review 12b H)
        found = held[0][2]
        return KernelCeiling(found, found.label, tuple(dict.fromkeys(n for *_, n in held if n)))
    total = sum(v for _, v, _, _ in held)
    seconds_at_peak = sum(v / c.value for _, v, c, _ in held)
    first = held[0][2]
    value = total / seconds_at_peak
    shares = tuple(CeilingPart(p, v, c) for p, v, c, _ in held)
    ceiling = Ceiling(value=value, precision=first.precision, unit=first.unit,
                      provenance="derived", source=f"roof '{roof.name}'",
                      method=_weighted_method(shares, total))
    label = "weighted " + " + ".join(dict.fromkeys(c.label for _, _, c, _ in held))
    notes = tuple(dict.fromkeys(n for _, _, _, n in held if n))
    return KernelCeiling(ceiling, label, notes, shares)


def _weighted_method(parts: tuple[CeilingPart, ...], total: float) -> str:
    """'weighted: 90.0 % fp16 tensor (312 TFLOP/s) + 10.0 % fp32 vector (19.5 TFLOP/s)':
    each precision's share of the FLOP (fmt_share, as every share of a total: '3.3 %', not
    the '3 %' beside a '3.3 %' of roof, s35 B) and the ceiling it is held to."""
    return _method_words(tuple((part.flop / total, part.label, part.ceiling.value,
                                part.ceiling.precision) for part in parts))


# Worded once per distinct mix: 20 000 launches of one mixed GEMM share a handful of
# share floats, and wording each was ~1.6 s of their `rooflab plot` (session 38)
@lru_cache(maxsize=4096)
def _method_words(parts: tuple[tuple[float, str, float, str], ...]) -> str:
    return "weighted: " + " + ".join(f"{fmt_share(share)} {label} ({fmt_rate(value, prec)})"
                                     for share, label, value, prec in parts)

