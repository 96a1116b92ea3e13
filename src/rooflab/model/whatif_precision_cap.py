"""The gain a precision what-if may take from a measured roof: at most the nominal ratio of
the two precisions' ceilings (review r4 F4). A probe's fp32/fp64 ratio is two loaded
measurements: 234/17.8 = 13.1x on one Zen 4 profile (a disturbed fp64 reading), 101/118 =
0.86x on another, where the hardware's is 2x (same FMA width, twice the lanes: 236/118
nominal). Pure: no I/O."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from ..units import fmt_rate
from .ceiling import Ceiling, Roof
from .kernel import Kernel


def old_precision(kernels: Sequence[Kernel], names: Iterable[str] | None) -> str | None:
    """The one precision the moved kernels' math runs in now; None when they differ (a cap
    per kernel would need a roof per kernel) or do no math."""
    wanted = None if names is None else set(names)
    found = {k.precision for k in kernels
             if (wanted is None or k.name in wanted) and any(v > 0 for v in k.flop.values())}
    return found.pop() if len(found) == 1 else None


def capped_roof(roof: Roof, nominal: Roof | None, old_p: str | None,
                new_p: str) -> tuple[Roof, tuple[str, ...]]:
    """`roof` with each `new_p` ceiling held to the nominal new/old ratio times the
    measured `old_p` ceiling of the same unit, where the measured ratio is past it (or
    below 1 while the nominal one is not: the probe read the new precision slower), and a
    note per ceiling changed. The roof unchanged where there is no nominal roof to read
    the ratio from, or no ceiling pair of one unit on both roofs."""
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
    if measured <= limit * (1 + CAP_TOLERANCE) and not (measured < 1.0 <= limit):
        return None
    value = old.value * limit
    what = (f"the probe measured {new.precision} slower than {old.precision}"
            if measured < 1.0 else f"past the nominal ratio: a disturbed {old.precision} "
            f"ceiling (or a lucky {new.precision} one)")
    note = (f"measured {new.precision}/{old.precision} {new.unit or ''} = {measured:.2f}x "
            f"({fmt_rate(new.value, new.precision)} / {fmt_rate(old.value, old.precision)}), "
            f"nominal {limit:.2f}x: {what}; the {new.precision} ceiling is taken as "
            f"{limit:.2f}x the measured {old.precision} one, "
            f"{fmt_rate(value, new.precision)} (derived)").replace("  ", " ")
    method = f"{limit:.4g}x the measured {old.precision} ceiling (nominal ratio); {note}"
    return replace(new, value=value, provenance="derived", method=method), note
