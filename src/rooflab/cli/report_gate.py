"""`rooflab report --fail-below PCT`: a CI gate on how close each kernel runs to its roof.

A kernel's percent of its roof here is 100 / its diagnosis' headroom: its time at the roof
(the attainable rate at its binding level and precision) over its measured time, the
"x% of roof" of the report's table, one number per kernel (analysis[] has a row per memory
level). On the kernels' own best (no --on, no roof in the files, no recorded peaks) that
percent is 100 by construction for the kernels that set the ceilings, so such a gate
would pass whatever ran: it is refused (s21 r7 F4).
"""

from __future__ import annotations

import math

from ..errors import InputError
from ..sides import keep_side
from .finite_options import as_typed

OPTION = "--fail-below"
# 100 / headroom carries the float error of time / floor: a kernel built at 99.96 % of its
# roof came out at 99.95999999999 % and failed a gate at 99.96 (review s22 r4 F3); a gap
# this small is rounding, not a kernel below the line
REL_TOLERANCE = 1e-9


def check_pct(pct: float | None) -> None:
    """Before any work: a finite percentage in (0, 100]; 0 fails nothing, NaN never."""
    if pct is not None and not (math.isfinite(pct) and 0 < pct <= 100):
        raise InputError(f"{OPTION} takes a percentage of the roof above 0 and at most 100 "
                         f"(e.g. 50); got {as_typed(OPTION, pct)}")


def refuse_own_best(roof, pct: float | None) -> None:
    """A gate on the kernels' own best roof judges nothing (each ceiling is a kernel)."""
    from ..report.envelope_bound import on_envelope

    if pct is not None and on_envelope(roof):
        raise InputError(f"{OPTION} {pct:g}: there is no roof to judge against (the files "
                         f"hold none, so the ceilings are the best the kernels themselves "
                         f"reached, and the kernel that set each is at 100 % by "
                         f"construction); give the machine's roof with --on HARDWARE or "
                         f"--on profile.json (or ROOFLAB_ON)")


def percent_of_roof(d) -> float | None:
    """100 / headroom: None for a kernel without a time or not judged on its roof."""
    return 100.0 / d.headroom if d.headroom else None


def below(diags, pct: float) -> list[tuple[str, float]]:
    """(kernel, percent of roof) of the kernels under `pct`, lowest first."""
    found = [(d.kernel, p) for d in diags
             if (p := percent_of_roof(d)) is not None and p < pct * (1 - REL_TOLERANCE)]
    return sorted(found, key=lambda x: (x[1], x[0]))


def judged(diags) -> list:
    """The diagnoses the gate can judge (a time and a roof for their math)."""
    return [d for d in diags if percent_of_roof(d) is not None]


def refuse_nothing_judged(diags, pct: float | None) -> None:
    """A gate over kernels without a time (or not judged on their roof) passes on
    nothing: refused, as compare's gate over untimed kernels is."""
    if pct is None or judged(diags):
        return
    names = ", ".join(d.kernel for d in diags[:3]) + (", ..." if len(diags) > 3 else "")
    raise InputError(f"{OPTION} {pct:g}: no kernel has a time judged against its roof "
                     f"({names or 'no kernels'}); give the kernels' seconds")


def gate_dict(diags, pct: float) -> dict:
    """The --json document's keys of the gate: the threshold, and the kernels below it."""
    return {"fail_below_pct": pct,
            "below": [{"kernel": k, "percent_of_roof": p} for k, p in below(diags, pct)],
            "not_judged": [d.kernel for d in diags if percent_of_roof(d) is None]}


def gate_line(diags, pct: float) -> str | None:
    """The stderr line of a failed gate ('below 50 % of the roof: k1 (23.1 %), ...')."""
    found = below(diags, pct)
    if not found:
        return None
    # with the digits that keep each under the line: 'p9_996 (9.996 %)' at 10, not the
    # '(10.0 %)' CI logs read literally (sides.keep_side)
    names = ", ".join(f"{k} ({keep_side(p, f'{p:.1f}', pct)} %)" for k, p in found[:10])
    more = f", ... ({len(found)} kernels)" if len(found) > 10 else ""
    return f"below {pct:g} % of the roof: {names}{more}"
