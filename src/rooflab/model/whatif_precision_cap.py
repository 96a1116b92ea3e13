"""The gain a precision what-if may take from a measured roof: at most the nominal ratio of
the two precisions' ceilings (review r4 F4). A probe's fp32/fp64 ratio is two loaded
measurements: 234/17.8 = 13.1x on one Zen 4 profile (a disturbed fp64 reading), 101/118 =
0.86x on another, where the hardware's is 2x (same FMA width, twice the lanes: 236/118
nominal). Pure: no I/O."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from ..units import fmt_factor, fmt_rate, fmt_times
from .ceiling import Ceiling, Roof
from .kernel import Kernel


def old_precisions(kernels: Sequence[Kernel], names: Iterable[str] | None) -> tuple[str, ...]:
    """The precisions the moved kernels' math runs in now, in file order (kernels doing no
    math have none): change_precision caps a roof per precision."""
    wanted = None if names is None else set(names)
    return tuple(dict.fromkeys(
        k.precision for k in kernels
        if (wanted is None or k.name in wanted) and any(v > 0 for v in k.flop.values())))


def capped_roof(roof: Roof, nominal: Roof | None, old_p: str | None,
                new_p: str) -> tuple[Roof, tuple[str, ...]]:
    """`roof` with each `new_p` ceiling held to the nominal new/old ratio times the
    measured `old_p` ceiling of the same unit, where the measured ratio is past it either
    way (or on the other side of 1: the probe read a narrower precision slower, a wider
    one faster), and a note per ceiling changed. The roof unchanged where there is no
    nominal roof to read the ratio from, or no ceiling pair of one unit on both roofs."""
    if nominal is None or old_p is None or old_p == new_p:
        return roof, ()
    compute, notes = list(roof.compute), []
    for i, c in enumerate(compute):
        if c.precision != new_p:
            continue
        capped = _capped(c, roof.find_compute(old_p, c.unit),
                         nominal.find_compute(new_p, c.unit), nominal.find_compute(old_p, c.unit))
        if capped is not None:
            compute[i], note = capped
            notes.append(note)
    return (replace(roof, compute=tuple(compute)), tuple(notes)) if notes else (roof, ())


# A measured ratio this far past the nominal one is the two probes' noise, not a disturbed
# ceiling: 118/59 GFLOP/s read 2.0007x against a nominal 2.00x and was called "past the
# nominal ratio: a disturbed fp64 ceiling" (review r5 F6a); probe samples spread ~2-10 %.
CAP_TOLERANCE = 0.02


def _capped(new: Ceiling, old: Ceiling | None, n_new: Ceiling | None,
            n_old: Ceiling | None) -> tuple[Ceiling, str] | None:
    if old is None or n_new is None or n_old is None:
        return None
    measured, limit = new.value / old.value, n_new.value / n_old.value
    # the measured pair is trusted while its ratio lies between 1 and the nominal one (the
    # tolerance past it): a narrowing gains at most, a widening loses at most, the nominal
    # ratio (review r8 F6: fp32 -> fp64 on a probe with a disturbed fp64 read 13x slower)
    wrong_side = measured < 1.0 <= limit or measured > 1.0 >= limit
    if limit >= 1.0:
        past = measured > limit * (1 + CAP_TOLERANCE)
    else:
        past = measured < limit / (1 + CAP_TOLERANCE)
    if not (past or wrong_side):
        return None
    value = old.value * limit
    faster = measured > limit
    what = (f"the probe measured {new.precision} {'faster' if faster else 'slower'} than "
            f"{old.precision}" if wrong_side else
            f"past the nominal ratio: a disturbed "
            f"{old.precision if faster else new.precision} ceiling (or a lucky "
            f"{new.precision if faster else old.precision} one)")
    note = (f"measured {new.precision}/{old.precision} {new.unit or ''} = {fmt_times(measured)} "
            f"({fmt_rate(new.value, new.precision)} / {fmt_rate(old.value, old.precision)}), "
            f"nominal {fmt_times(limit)}: {what}; the {new.precision} ceiling is taken as "
            f"{fmt_times(limit)} the measured {old.precision} one, "
            f"{fmt_rate(value, new.precision)} (derived)").replace("  ", " ")
    # a factor in fmt_factor's 3 figures, not 4 ('0.0156x' for fp64/fp32 = 1/64, not '0.01562x')
    method = f"{fmt_factor(limit)} the measured {old.precision} ceiling (nominal ratio); {note}"
    return replace(new, value=value, provenance="derived", method=method), note
