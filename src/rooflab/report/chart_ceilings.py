"""Which compute ceilings a roofline chart draws: every one, the ones asked for, or, for a
roof with many (a catalog GPU has up to 10), the kernels' own plus the top float one."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ..errors import InputError
from ..model.ceiling import Ceiling, KernelCeiling, Roof, kernel_ceiling
from ..model.held_unit import held_ceiling, held_unit
from ..model.kernel import Kernel
from ..units import fmt_rate, si
from .chart_parts import kernel_who, roof_label

# A roof with more compute ceilings than this is drawn with a selection by default (a
# catalog GPU has up to 10: fp64/fp32/tf32/fp16/bf16/fp8/int8/int4, vector and tensor).
MAX_CEILINGS = 5


# A kernel's precision whose next step down is drawn beside its own ceiling: fp64's fp32,
# the pair Nsight Compute's roofline draws (double and single). On a GeForce the fp32
# vector peak is 64x the fp64 one: the move the report advises ("fp32 vector, 64x
# higher"), and the chart showed fp64 and fp8 tensor only (review s22 r6 F5). Other
# kernels' next step is the top float ceiling itself or near it (fp32 -> fp16 tensor).
STEP_DRAWN = ("fp64",)


def _held(roof: Roof, k: Kernel, unit: str | None) -> set[Ceiling]:
    """Every ceiling a kernel's FLOP are held to: its precision's, and for a mixed kernel
    each part's (ceiling.kernel_ceiling's parts). The label precision alone is the one with
    most FLOP, not the one that binds: a kernel of 1.96e12 fp64 and 4.3e12 fp16 tensor FLOP
    spends 97 % of its time at the roof on fp64, and its 228 GFLOP/s line was left out for
    fp16 and fp8 tensor (review s26 r2 F2). unit: held_unit(roof, k) (held_ceiling's)."""
    held = kernel_ceiling(roof, k.flop, unit, k.precision)
    return {part.ceiling for part in held.parts} or {held.ceiling}


def _held_units(roof: Roof, kernels: Sequence[Kernel]) -> list[str | None]:
    """held_unit(roof, k) of each kernel, worked out once for every use of it below: it
    reads the op kind from the kernel's name, and select_ceilings asked it three times a
    kernel (~0.2 s of 20 000 kernels' chart; benchmarks/RESULTS.md session 37)."""
    return [held_unit(roof, k) for k in kernels]


def _precisions(kernels: Sequence[Kernel], units: Sequence[str | None] | None = None
                ) -> set[tuple[str, str | None]]:
    """(precision, unit) of every kernel's label and of each part a mixed kernel has FLOP
    in, on the unit kernel_ceiling holds the part to (a tensor kernel's others: vector;
    with units, a roof's _held_units: a non-matrix kernel's vector, held_unit)."""
    from ..model.ceiling import _unit_of_part

    if units is None:
        units = [k.unit for k in kernels]
    return {(p, _unit_of_part(p, k.precision, unit))
            for k, unit in zip(kernels, units, strict=True)
            for p in {k.precision, *(q for q, v in k.flop.items() if v > 0)}}


def _steps_down(roof: Roof, kernels: Sequence[Kernel], units: Sequence[str | None]
                ) -> set[Ceiling]:
    """The ceilings STEP_DRAWN kernels (or kernels' parts) would move to, by the report's
    rule (advice_precision._lower: the same unit's fp32 for vector work). units: the
    roof's _held_units of the kernels."""
    from ..model.advice_precision import _lower

    out = set()
    for precision, unit in _precisions(kernels, units):
        step = _lower(roof, precision, unit) if precision in STEP_DRAWN else None
        if step is not None and step[1] in roof.compute:   # not a stand-in
            out.add(step[1])
    return out


def _auto_ceilings(roof: Roof, kernels: Sequence[Kernel], units: Sequence[str | None]
                   ) -> tuple[Ceiling, ...]:
    """The default selection for a roof with many ceilings: with kernels, the ceilings they
    are judged by, fp32 beside fp64 (STEP_DRAWN) and the top float ceiling; without, the
    fastest unit of each precision. units: the roof's _held_units of the kernels."""
    if kernels:
        # _held asked once per kind of kernel: its ceilings depend on its precision, unit
        # and which precisions have FLOP only (not how many), and 20 000 kernels have a few
        kinds = {(k.precision, unit, frozenset(p for p, v in k.flop.items() if v > 0)): k
                 for k, unit in zip(kernels, units, strict=True)}
        want = {c for (_, unit, _), k in kinds.items() for c in _held(roof, k, unit)}
        want |= _steps_down(roof, kernels, units)
        top = roof.top_float_compute()
        if top.value > max(c.value for c in want):   # not a second name for the same height
            want.add(top)
    else:
        want = {roof.find_compute(p) for p in roof.precisions}
    return tuple(c for c in roof.compute if c in want)


# Two measured scalar ceilings within this ratio are one height on the chart: x86 and Arm
# cores retire scalar fp64 and fp32 FMAs at one rate, so the probe's two lines coincide.
SCALAR_SAME = 1.10


def _scalar_drawn(roof: Roof, kernels: Sequence[Kernel]) -> set[Ceiling]:
    """The in-core scalar ceilings drawn by default (the CPU probe's, under the vector
    ones): with kernels, those of the kernels' precisions; without, one per height."""
    scalar = [c for c in roof.compute if c.unit == "scalar"]
    if not scalar:   # (a GPU's roof: no pass over the kernels)
        return set()
    if kernels:
        precisions = {p for p, _ in _precisions(kernels)}
        return {c for c in scalar if c.precision in precisions}
    kept: list[Ceiling] = []
    for c in scalar:
        if not any(max(c.value, o.value) <= SCALAR_SAME * min(c.value, o.value) for o in kept):
            kept.append(c)
    return set(kept)


def _crowded(roof: Roof) -> bool:
    """More than MAX_CEILINGS vector and tensor ceilings: drawn with a selection."""
    return sum(c.unit != "scalar" for c in roof.compute) > MAX_CEILINGS


def _default_ceilings(roof: Roof, kernels: Sequence[Kernel],
                      sweep_precision: str | None, units: Sequence[str | None]
                      ) -> tuple[Ceiling, ...]:
    """Every ceiling, or _auto_ceilings past MAX_CEILINGS, counting the vector and tensor
    ones; scalar ceilings as _scalar_drawn picks them (they never crowd a roof out); the
    sweep's precision's ceiling (Roof.find_compute, the one its ridge is marked on).
    units: the roof's _held_units of the kernels (read where it is crowded only)."""
    others = [c for c in roof.compute if c.unit != "scalar"]
    picked = (set(others) if not _crowded(roof)
              else set(_auto_ceilings(roof, kernels, units)))
    picked |= _scalar_drawn(roof, kernels)
    swept = roof.find_compute(sweep_precision) if sweep_precision else None
    picked |= {swept} if swept is not None else set()
    return tuple(c for c in roof.compute if c in picked)


def select_ceilings(roofs: Sequence[Roof], kernels: Sequence[Kernel] = (),
                    precisions: Sequence[str] | str | None = None,
                    sweep_precision: str | None = None
                    ) -> tuple[list[tuple[Ceiling, ...]], list[str], list[str]]:
    """Which compute ceilings of each roof to draw: (kept per roof, hidden, notes).

    precisions: None picks automatically (every ceiling, unless a roof has more than
    MAX_CEILINGS); "all" draws every one; else precisions ("fp16") or ceiling labels
    ("fp16 tensor") to draw.
    sweep_precision: the drawn intensity sweep's precision ("fp64", the CPU probe's): the
    automatic choice keeps its ceiling, whose ridge marks where the sweep should bend (a
    T4 with fp16 kernels left fp64 out, and the ridge plot_roofline promises with it).
    """
    if isinstance(precisions, str):
        precisions = [precisions]
    wanted = [p.strip().lower() for p in precisions or () if p.strip()]
    every = not wanted and precisions is not None or "all" in wanted
    if wanted and not every:
        have = {c.precision.lower() for r in roofs for c in r.compute} | {
            c.label.lower() for r in roofs for c in r.compute}
        missing = [p for p in wanted if p not in have]
        if missing:
            names = ", ".join(sorted({c.precision for r in roofs for c in r.compute})) or "none"
            raise InputError(f"no roof has a '{missing[0]}' compute ceiling; the roofs have: "
                             f"{names} (or 'all')")
    kept, hidden, notes = [], [], []
    for roof in roofs:
        if every:
            chosen = roof.compute
        elif wanted:
            chosen = tuple(c for c in roof.compute
                           if c.precision.lower() in wanted or c.label.lower() in wanted)
            if roof.compute and not chosen:
                notes.append(f"{roof_label(roof)} has none of the precisions asked "
                             f"({', '.join(wanted)}); its compute ceilings are not drawn")
        else:
            units = _held_units(roof, kernels) if kernels and _crowded(roof) else []
            chosen = _default_ceilings(roof, kernels, sweep_precision, units)
        # a scalar ceiling the default leaves out (_scalar_drawn: a precision no kernel
        # has, or the height of one drawn) is an in-core line under a drawn vector one:
        # not worth a warning on every plot of a probed CPU; --precision all draws it
        left_out = [c for c in roof.compute if c not in chosen
                    and (wanted or c.unit != "scalar")]
        if left_out and not (wanted and not chosen):
            hidden += [f"{roof_label(roof)}: {c.label} {fmt_rate(c.value, c.precision)}"
                       for c in left_out]
            why = "asked for" if wanted else (_why_auto(roof, kernels, sweep_precision, units)
                                              if kernels else "fastest unit per precision")
            notes.append(f"{roof_label(roof)}: drawn {len(chosen)} of {len(roof.compute)} "
                         f"compute ceilings ({why}); left out "
                         f"{', '.join(c.label for c in left_out)}; show every one with "
                         f"--precision all (in Python: precisions='all')")
        kept.append(tuple(chosen))
    return kept, hidden, notes


def _why_auto(roof: Roof, kernels: Sequence[Kernel], sweep_precision: str | None,
              units: Sequence[str | None]) -> str:
    """The note's words for _auto_ceilings' choice (units: the roof's _held_units)."""
    step = " and fp32 beside fp64" if _steps_down(roof, kernels, units) else ""
    sweep = (f", the intensity sweep's {sweep_precision}"
             if sweep_precision and roof.find_compute(sweep_precision) else "")
    return f"kernels' precisions{step}{sweep} and the top float ceiling"


# A mixed kernel's own roof runs a decade right of its ridge (or to twice its points' AI,
# past them): short, so it reads as the kernel's, not as one more ceiling of the roof. The
# PNG chart and the HTML report draw it alike.
MIXED_SPAN = 10.0


@dataclass(frozen=True)
class MixedRoof:
    """The weighted compute ceiling that mixed-precision kernels are held to
    (ceiling.kernel_ceiling: FLOP-share harmonic mean of their precisions' ceilings). No
    ceiling of the roof is it, so the chart draws it as the kernels' own segment; without it
    an A100 kernel of 9e9 fp16 tensor + 1e9 fp32 FLOP sat left of the drawn fp16 ridge (153)
    while the report called it compute-bound against its own ridge (61.2).

    roof: the roof that judges the kernels; held: their weighted ceiling; kernels: every
    drawn kernel held to it (on this roof), in order."""

    roof: Roof
    held: KernelCeiling
    kernels: tuple[Kernel, ...]
    # the kernels by identity, so holds() is one look-up: the chart asks it of every
    # kernel, and a scan of 20 000 mixed kernels each was quadratic (~10 s; RESULTS.md s38)
    _ids: frozenset[int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_ids", frozenset(map(id, self.kernels)))

    @property
    def value(self) -> float:
        return self.held.ceiling.value

    def holds(self, kernel: Kernel) -> bool:
        return id(kernel) in self._ids


def mixed_roofs(judged: Sequence[tuple[Roof, Kernel]]) -> tuple[MixedRoof, ...]:
    """The weighted ceilings of the (roof, kernel) pairs whose kernel spans precisions on
    that roof, one per roof and value: kernels sharing one weighted ceiling draw it once.
    A kernel of one precision (or whose parts share one ceiling) gets none."""
    # (the last kernel's roof, the first one's ceiling, the kernels): a tuple grown by one
    # kernel at a time was quadratic in a file of thousands of one mix
    groups: dict[tuple[str, float], tuple[Roof, KernelCeiling, list[Kernel]]] = {}
    for roof, k in judged:
        if not k.mixed:   # FLOP in one precision: its precision's ceiling, not a weighted one
            continue
        held = held_ceiling(roof, k)
        if not held.weighted:
            continue
        key = (roof_label(roof), held.ceiling.value)
        _, first, ks = groups.get(key) or (roof, held, [])
        ks.append(k)
        groups[key] = (roof, first, ks)
    return tuple(MixedRoof(roof, held, tuple(ks)) for roof, held, ks in groups.values())


def mixed_label(m: MixedRoof, judge: str = "") -> str:
    """'gemm mixed roof 124.8 TFLOP/s (weighted by FLOP share)': four digits, as the
    report's 'held to a weighted 124.8 TFLOP/s' (no catalog figure, so 125 would hide that
    it is computed); at most three kernel names, so the legend stays one line. A roof other
    than `judge` (the chart's first) is named: a before-roof's kernels share their names
    with the after ones."""
    names = list(dict.fromkeys(kernel_who(k) for k in m.kernels))
    who = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    on = f" on {roof_label(m.roof)}" if judge and roof_label(m.roof) != judge else ""
    return f"{who} mixed roof{on} {si(m.value, 'FLOP/s', 4)} (weighted by FLOP share)"
