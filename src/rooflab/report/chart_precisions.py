"""Which ceiling judges each precision on a roofline chart (precision_ceilings: the
legend's 'fp16 kernels: judged on fp16 tensor 312 TFLOP/s' lines), and a kernel's own
name under compare's point label (PLAIN_NAME). Split from chart_points.py, which imports
these names back.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..model.held_unit import held_unit
from ..model.kernel import Kernel
from ..units import fmt_rate
from .chart_parts import RooflineDisplay


def _precisions(kernels: Sequence[Kernel]) -> list[str]:
    """The precisions of the kernels with FLOP (Kernel.precision: the one carrying most)."""
    return list(dict.fromkeys(k.precision for k in kernels if k.total_flop > 0))


def precision_ceilings(display: RooflineDisplay) -> list[str]:
    """'fp16 kernels: judged on fp16 tensor 312 TFLOP/s', one line per precision and
    ceiling where the chart's kernels have several precisions (the first roof judges
    them; a mixed kernel's weighted ceiling is named in the legend on its own); [] for
    one precision."""
    kernels = [k for k in display.kernels if k.total_flop > 0]
    if len(_precisions(kernels)) < 2 or not display.roofs or not display.roofs[0].compute:
        return []
    roof = display.roofs[0]
    # precision -> ceiling label -> (c, names): the names a dict, in order (a list's `in`
    # made 100 000 kernels quadratic); one ceiling lookup per precision and unit
    ceilings: dict[str, dict[str, tuple]] = {}
    held: dict[tuple, object] = {}
    for k in kernels:
        precision, unit = k.precision, held_unit(roof, k)
        if (precision, unit) not in held:
            held[precision, unit] = roof.compute_for(precision, unit)[0]
        c = held[precision, unit]
        ceilings.setdefault(precision, {}).setdefault(c.label, (c, {}))[1][_plain_name(k)] = None
    out = []
    for precision, by_label in ceilings.items():
        for label, (c, names) in by_label.items():
            # one precision held to two ceilings (fp64 vector triad, fp64 tensor GEMMs)
            # read "fp64 kernels" twice with two roofs: say which kernels
            names = list(names)
            who = (f"{precision} kernels" if len(by_label) == 1 else
                   f"{label.removeprefix(precision).strip() or precision} {precision} "
                   f"kernels ({', '.join(names[:2])}{', ...' if len(names) > 2 else ''})")
            out.append(f"{who}: judged on {label} {fmt_rate(c.value, c.precision)}")
    return out


# The meta key where `rooflab compare`'s chart keeps a kernel's own name, beside the point
# label ("x (before)", "x (after, 2.91x)") it draws under (cli/compare.py)
PLAIN_NAME = "compare_name"


def _plain_name(k) -> str:
    """A kernel's own name, without compare's point label."""
    return k.meta.get(PLAIN_NAME, k.name)
