"""The compute unit a kernel without one is held to. A kernel that names no unit runs on
its precision's fastest ceiling, unless its op kind (meta op, else its name) is known to
be no matrix op (advice_kind.known_non_matrix: pooling, stencils, elementwise passes,
norms, softmax, reductions, FFTs, sorts): such work cannot use tensor (matrix) units, so
on a roof that has them it is held to its precision's vector ceiling. An fp16
max_pool_forward_nchw on an A100 meets fp16 vector (78 TFLOP/s, ridge 78e12 / 2.039e12 =
38.3 FLOP/B), not fp16 tensor (312 TFLOP/s, ridge 153). Matrix kinds (gemm, conv,
attention) and unknown kinds ('custom_kernel': rooflab cannot tell) keep the fastest.
Every verb that places a kernel takes its ceiling from here, so the table, the chart and
the advice agree. Pure: no I/O.
"""

from __future__ import annotations

from ..units import is_float
from .advice_kind import precision_unit
from .ceiling import Ceiling, KernelCeiling, Roof, fastest, kernel_ceiling
from .kernel import Kernel
from .opkind import kernel_kind

# Said once per output (the note printers group notes by text), after the kernel names;
# worded as Roof.compute_for's fallback to a wider vector ceiling is.
VECTOR_KIND_NOTE = ("no unit given and its op kind is no matrix op, so it is held to its "
                    "precision's vector ceiling, since vector work cannot use tensor units "
                    "(give unit \"tensor\" if it does run on them)")


def held_unit(roof: Roof, kernel: Kernel) -> str | None:
    """The kernel's own unit; with none, "vector" for a known non-matrix kind on a roof
    with tensor ceilings (advice_kind.precision_unit), else None (the fastest unit)."""
    if kernel.unit is not None:
        return kernel.unit
    return precision_unit(None, kernel_kind(kernel)[0], roof)


def held_ceiling(roof: Roof, kernel: Kernel) -> KernelCeiling:
    """ceiling.kernel_ceiling for the kernel at its held_unit: the one ceiling every verb
    holds it to."""
    return kernel_ceiling(roof, kernel.flop, held_unit(roof, kernel), kernel.precision)


def vector_kind_note(roof: Roof, kernel: Kernel) -> str:
    """VECTOR_KIND_NOTE where held_unit chose the vector unit for a kernel with no unit;
    '' otherwise."""
    if kernel.unit is None and held_unit(roof, kernel) == "vector":
        return VECTOR_KIND_NOTE
    return ""


def top_ceiling(roof: Roof, kernel: Kernel) -> Ceiling:
    """The fastest ceiling a change of precision could bring the kernel to (seed 004's third
    distance, Roof.top_compute_for): for a kernel held to the vector unit by its kind
    (vector_kind_note), the fastest vector ceiling of its family, since tensor units do
    not run pooling or a norm (an fp16 pool on an A100: fp16 vector 78 TFLOP/s is its top,
    not fp16 tensor 312: 1x, not "4x higher, tensor cores raise it")."""
    top = roof.top_compute_for(kernel.precision)
    if not vector_kind_note(roof, kernel):
        return top
    vectors = [c for c in roof.compute if c.unit == "vector"
               and is_float(c.precision) == is_float(top.precision)]
    return fastest(vectors) if vectors else top
