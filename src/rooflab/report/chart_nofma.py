"""The longest kernel's no-FMA ceiling on the chart (review s22 r6 F8).

The report says where a kernel's instruction mix tops out ("FMA share 51 % ... tops out
at 75 % of the peak (the no-FMA ceiling)", model/fma_ceiling.py); Williams et al.'s and
Advisor's charts draw such in-core ceilings under the peak, and rooflab's did not. Drawn
for the longest timed kernel only (the one the report judges first; one dashed line per
kernel would bury a crowded chart): peak x (1 + s) / 2, thin and dashed in the kernel's
colour from its ridge to the right, named in the legend. Pure: plain data.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..model.ceiling import Roof
from ..model.fma_ceiling import FMA_SHARE_NAMED, fma_share_of, mix_ceiling
from ..model.held_unit import held_unit
from ..model.kernel import Kernel
from ..units import fmt_ai, fmt_fraction, si
from .chart_parts import COMPUTE_BOUND_COLOR, Line, kernel_who, roof_label

# Line.kind of such a ceiling (chart_draw draws it as a mixed roof, chart_legend names it)
NOFMA_KIND = "nofma"


def nofma_lines(shown: Sequence[Roof], kernels: Sequence[Kernel], ref: str | None,
                colors: Mapping[int, str], xlim: tuple[float, float]) -> list[Line]:
    """[the line] for the longest timed kernel whose FMA share of its precision is under
    FMA_SHARE_NAMED, on vector units, judged by a drawn ceiling of the first roof; ref:
    the level its ridge is taken on."""
    timed = [k for k in kernels if k.seconds]
    if not shown or not timed or ref is None or ref not in shown[0].levels:
        return []
    k = max(timed, key=lambda k: k.seconds)
    share = fma_share_of(k.meta or {}, k.precision) if k.precision else None
    roof = shown[0]
    if share is None or share >= FMA_SHARE_NAMED or k.unit == "tensor" or not roof.compute:
        return []
    peak = roof.compute_for(k.precision, held_unit(roof, k))[0]
    if peak.unit == "tensor" or peak.precision != k.precision:
        return []   # a stand-in ceiling or a matrix unit: no add/mul/fma mix to speak of
    value = peak.value * mix_ceiling(share)
    ridge = value / roof.bandwidth(ref).value
    name = f"{kernel_who(k)} no-FMA ceiling {si(value, 'FLOP/s')} (FMA share {fmt_fraction(share)})"
    return [Line(label=name, xs=(ridge, xlim[1]), ys=(value, value), style="dashed",
                 kind=NOFMA_KIND, roof=roof_label(roof),
                 color=colors.get(id(k), COMPUTE_BOUND_COLOR), level=ref,
                 hover=f"{name}: (1 + {share:.2f}) / 2 of {peak.label} "
                       f"{si(peak.value, 'FLOP/s')}; ridge vs {ref} {fmt_ai(ridge)} FLOP/B")]
