"""Nsight Compute's per-precision view: `rooflab ncu --precision fp64` (or `each`).

ncu draws one chart per precision (double, single, half, tensor), each kernel a point of its
FLOP in that precision over the kernel's whole time and bytes. rooflab's default merges a
kernel's precisions into one point held to their weighted ceiling (ceiling.kernel_ceiling),
which judges the whole kernel and gives the same % of roof (NERSC GPP output.csv: weighted
88.42 / 159.3 = 55.49 %, ncu's fp64 alone 86.26 / 155.5 = 55.47 %), but a minor
precision's point is gone and the label names the FLOP majority (review s26 r2 F3). This
module gives ncu's points as well:

- `--precision fp64`: each kernel's fp64 FLOP only (ncu's double-precision chart: GPP
  1.9638e12 FLOP in 22.765 s, 86.26 GFLOP/s at AI 14.55); kernels with no fp64 FLOP are
  left out, said in a note;
- `--precision each`: one row per precision a kernel has FLOP in ('k [fp64]', 'k [fp32]'),
  each over the kernel's whole time and bytes, as ncu's charts each take them: the rows'
  times add up to more than was measured, said in a note.

Pure: kernels in, kernels and notes out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ..errors import InputError
from ..model.canonical_names import precision_name
from ..model.ceiling import _unit_of_part
from ..model.kernel import Kernel
from ..units import PRECISIONS

EACH = "each"


def _part(k: Kernel, precision: str, name: str) -> Kernel:
    """The kernel with only its FLOP in `precision`, on the unit kernel_ceiling holds that
    part to (a tensor kernel's other precisions run on the vector units)."""
    return replace(k, name=name, flop={precision: k.flop[precision]},
                   unit=_unit_of_part(precision, k.precision, k.unit),
                   meta={**k.meta, "precision_view": precision})


def _parts(k: Kernel) -> list[str]:
    return [p for p, v in k.flop.items() if v > 0]


def parse_view(text: str) -> str:
    """EACH or a precision name ('double' -> fp64); a clear error for anything else."""
    word = text.strip().lower()
    if word == EACH:
        return EACH
    if word == "all":
        raise InputError("`rooflab ncu --precision` picks which FLOP of each kernel make "
                         "its point (each, or one precision: fp64, fp32, fp16, ...); "
                         "'all' is the default view, every precision in one point; to draw "
                         "every ceiling of the roof, use `rooflab plot FILE --on GPU "
                         "--precision all -o chart.png`")
    name = precision_name(word)   # an unknown word is kept, and refused below
    if name not in PRECISIONS:
        raise InputError(f"--precision '{text}': not a precision; give each (one point per "
                         f"precision, as ncu's charts) or one of {', '.join(PRECISIONS)}")
    return name


def kernel_view(k: Kernel, view: str) -> tuple[Kernel, ...]:
    """One kernel in the view (parse_view's word): EACH, a row per precision it has FLOP
    in (itself when it has one or none); a precision, its FLOP in that precision alone
    (nothing when it has none)."""
    parts = _parts(k)
    if view == EACH:
        return tuple(_part(k, p, f"{k.name} [{p}]") for p in parts) if len(parts) > 1 else (k,)
    return (_part(k, view, k.name),) if view in parts else ()


def view_notes(kernels: Sequence[Kernel], view: str) -> tuple[str, ...]:
    """What the view did to these kernels, for the notes; an error when a precision's view
    keeps none of them."""
    mixed = [k.name for k in kernels if len(_parts(k)) > 1]
    if view == EACH:
        return (f"--precision each: {len(mixed)} mixed kernel(s) ({', '.join(mixed[:3])}"
                f"{', ...' if len(mixed) > 3 else ''}) split into one row per precision, "
                f"each over the kernel's whole time and bytes as Nsight Compute's "
                f"per-precision charts take them: the rows' times add up to more than "
                f"was measured and the time shares count each kernel once per "
                f"precision; the default view holds each kernel, all its precisions, to "
                f"their weighted ceiling",) if mixed else ()
    gone = [k.name for k in kernels if view not in _parts(k)]
    if len(gone) == len(kernels):
        have = sorted({p for k in kernels for p in _parts(k)})
        raise InputError(f"--precision {view}: no kernel has {view} FLOP; the kernels have "
                         f"{', '.join(have) or 'no FLOP'} (or --precision each)")
    minor = sum(1 for k in kernels if view in _parts(k) and len(_parts(k)) > 1)
    notes = [f"--precision {view}: each kernel's {view} FLOP alone over its whole time and "
             f"bytes (Nsight Compute's {view} chart); {minor} kernel(s) have FLOP in other "
             f"precisions too, left out of their point here"]
    if gone:
        notes.append(f"--precision {view}: {len(gone)} kernel(s) with no {view} FLOP left "
                     f"out ({', '.join(gone[:3])}{', ...' if len(gone) > 3 else ''})")
    return tuple(notes)


def precision_view(kernels: Sequence[Kernel], which: str | None
                   ) -> tuple[tuple[Kernel, ...], tuple[str, ...]]:
    """(the kernels of the view `which` asks for, its notes): None keeps them as they are;
    a precision keeps each kernel's FLOP in it; EACH splits a mixed kernel into one row
    per precision (a kernel of one precision stays as it is)."""
    if which is None:
        return tuple(kernels), ()
    view = parse_view(which)
    notes = view_notes(kernels, view)
    return tuple(v for k in kernels for v in kernel_view(k, view)), notes
