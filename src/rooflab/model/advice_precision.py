"""Lower-precision pricing: moving a kernel's math (or, with no FLOP, its stored data) one
step down in precision, and moving the slow part of a mixed-precision kernel to a faster
ceiling. Each predicts the new point as advice_core does. Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import replace

from ..errors import InputError
from ..units import (
    dtype_bytes,
    fmt_ai,
    fmt_factor,
    fmt_fraction,
    fmt_rate,
    fmt_seconds,
    fmt_share,
    fmt_times,
    si,
    si_apart,
)
from .advice_core import Advice, Efficiency, _advice, keeps_words
from .advice_kind import precision_unit
from .advice_sparse import sparse_bytes, sparse_bytes_ratio
from .advice_vectorize import SCALAR, scalar_fit
from .analysis import Point
from .ceiling import KernelCeiling, Roof, kernel_ceiling
from .element_dtype import element_bytes, element_dtype, stored_dtype
from .held_unit import held_ceiling, held_unit
from .kernel import Kernel, converted_flop
from .machine import Machine
from .opkind import is_sparse
from .pool_index import pool_index_bytes
from .whatif_precision_cap import capped_roof

# One step down in precision, when the roof has a ceiling for it.
LOWER_PRECISION = {"fp64": ("fp32",), "fp32": ("bf16", "fp16"), "tf32": ("bf16", "fp16"),
                   "fp16": ("fp8",), "bf16": ("fp8",), "fp8": ("fp4", "int4")}


# Formats only hardware that has them can run (no A100 stores or computes fp8, no Hopper
# fp4: NVFP4/MXFP4 tensor math is Blackwell's): a lower
# precision among these is advised only where the roof lists a ceiling for it, never at
# Roof.compute_for's stand-in (review s21 r3 F3: "use fp8 instead of bf16: 2.00x" on an
# A100, priced at "fp16 vector 78 TFLOP/s").
NEEDS_HARDWARE = frozenset({"fp8", "fp4", "int4"})
# Same-width siblings: bf16 -> fp16 is no narrower, but where the roof lists fp16 faster
# on the unit (A100: fp16 vector 78 TFLOP/s, bf16 vector 39) it is the next real step.
SIBLING = {"bf16": "fp16"}


def _apart(old: float, new: float) -> str:
    """'385 GFLOP/s -> 24.1 TFLOP/s': two ceilings with the figures that tell them apart."""
    return "{} -> {}".format(*si_apart(old, new, "FLOP/s"))


def _listed(roof: Roof, precision: str) -> bool:
    """Whether the roof has a ceiling of that precision on any unit."""
    return any(c.precision == precision for c in roof.compute)


def _alternatives(roof: Roof, precision: str, unit: str | None) -> tuple[str, ...]:
    """LOWER_PRECISION's steps the roof can run (NEEDS_HARDWARE), then the same-width
    sibling where the roof lists it faster than the precision on that unit (SIBLING)."""
    alts = tuple(a for a in LOWER_PRECISION.get(precision, ())
                 if a not in NEEDS_HARDWARE or _listed(roof, a))
    sib = SIBLING.get(precision)
    if sib is not None and sib not in alts:
        own, other = roof.find_compute(precision, unit), roof.find_compute(sib, unit)
        if own is not None and other is not None and other.value > own.value:
            alts += (sib,)
    return alts


def _lower(roof: Roof, precision: str, unit: str | None = None):
    """The lower precision a kernel may move to and the ceiling that would hold it. Vector
    work (elementwise, reductions) stays on vector units, as kernel_ceiling holds a mixed
    kernel's moved part: fp32 softmax -> fp16 is priced at the fastest lower-precision
    vector rate (A100: fp16 vector 78 TFLOP/s, not bf16 vector 39 or the tensor peak
    312); where the roof lists no lower-precision vector rate, Roof.compute_for's
    stand-in (the wider vector ceiling) holds it. Other kernels take the fastest unit."""
    if precision in NEEDS_HARDWARE and not _listed(roof, precision):
        return None   # the kernel cannot have run in it here: no step down from a stand-in
    alts = _alternatives(roof, precision, unit)
    if unit == "scalar":
        # a scalar loop stays scalar: fp32 scalar FMAs retire at the fp64 rate on x86 and
        # Arm, so the fastest (vector) fp32 ceiling would price vectorising as precision
        own = [(a, c) for a in alts if (c := roof.find_compute(a, "scalar"))]
        return max(own, key=lambda ac: (ac[1].value, -alts.index(ac[0]))) if own else None
    if unit == "vector":
        # the fastest vector rate among the alternatives; a tie keeps the first (bf16)
        own = [(a, c) for a in alts if (c := roof.find_compute(a, "vector"))]
        if own:
            return max(own, key=lambda ac: (ac[1].value, -alts.index(ac[0])))
        return (alts[0], roof.compute_for(alts[0], "vector")[0]) if alts and roof.compute \
            else None
    for alt in alts:
        c = roof.find_compute(alt, "tensor") or roof.find_compute(alt)
        if c is not None:
            return alt, c
    return None


def _unit_words(ceiling, machine: Machine | None) -> str:
    """Which hardware does this precision's math: ' on AMX tiles', ' (VNNI dot products)'."""
    m = machine or Machine()
    if m.kind == "cpu":
        if ceiling.unit == "tensor":
            return " on AMX tiles" if "amx" in m.features or not m.features else " on matrix units"
        if ceiling.precision == "bf16" and "avx512_bf16" in m.features:
            return " (AVX512-BF16 dot products)"
        if str(ceiling.precision).startswith("int") and "vnni" in m.features:
            return " (VNNI dot products)"
        return ""
    if m.kind == "gpu" and ceiling.unit == "tensor":
        # AMD calls them Matrix Cores (MFMA); its catalog ceilings cite amd.com (review s28
        # R4 F15: "on tensor cores" for a Tensile MFMA kernel)
        amd = "amd.com" in str(ceiling.source) or "MFMA" in str(ceiling.method)
        return " on matrix cores (MFMA)" if amd else " on tensor cores"
    return ""


def _lower_precision(p: Point, e: Efficiency, roof: Roof, kind: str,
                     machine: Machine | None = None, kernel: Kernel | None = None,
                     nominal: Roof | None = None) -> Advice | None:
    """The "use ALT instead" advice. `nominal`: the datasheet roof beside a measured
    `roof`; the ALT ceiling is then held to the nominal ratio as `whatif --precision`
    holds it (whatif_precision_cap.capped_roof, review r4 F3/F4)."""
    if kernel is not None and kernel.meta.get("held_unquantized"):
        # the producer marked it as kept at its precision (a training step's optimizer:
        # fp32 master weights and state; MLA's absorbed 16-bit copies), as whatif
        # --quantize leaves it: a lower precision is no lever there
        return None
    if p.flop <= 0:
        return _narrower_storage(p, e, kernel)
    unit = kernel.unit if kernel is not None else None
    if unit is None and not p.memory_bound_side and scalar_fit(p, roof, machine, kernel):
        # one test says "this loop is scalar" for both lines (review s19 x1 F12): a
        # measured kernel with no unit that the vectorise advice finds at its scalar
        # ceiling (advice_vectorize, compute side) is priced on the lower precision's
        # scalar ceiling too, not its vector one, which would count vectorising twice
        unit = SCALAR
    # a known non-matrix kind (stencil, n-body) lowers its precision on the vector units
    unit = precision_unit(unit, kind, roof)
    found = _lower(roof, p.precision, unit)
    if found is None:
        return None
    roof, said = _held_to_nominal(roof, nominal, p.precision, found)
    a = _lower_on(p, e, roof, kind, machine, kernel, *_lower(roof, p.precision, unit))
    return replace(a, assumption=f"{a.assumption}; {said}") if a is not None and said else a


def _held_to_nominal(roof: Roof, nominal: Roof | None, old_p: str,
                     found) -> tuple[Roof, str]:
    """The roof with the lower precision's ceiling capped at the nominal ratio (and the
    cap's note), or, on a measured roof with no nominal one to check against, the roof
    as is and words saying the ratio priced is two measurements: a loaded probe's
    fp32/fp64 read 3.40x on Zen 4, whose FMA width makes it 2x (review r4 F3)."""
    capped, notes = capped_roof(roof, nominal, old_p, found[0])
    if notes:
        return capped, "; ".join(notes)
    old = roof.find_compute(old_p, found[1].unit)
    if nominal is not None or roof.kind != "measured" or old is None:
        return roof, ""
    return roof, (f"the {found[1].label}/{old.label} ratio priced, "
                  f"{fmt_times(found[1].value / old.value)}, is two measured ceilings, not "
                  f"checked against a nominal ratio (no nominal roof reached this advice)")


def _lower_on(p: Point, e: Efficiency, roof: Roof, kind: str, machine: Machine | None,
              kernel: Kernel | None, alt: str, ceiling) -> Advice | None:
    try:
        ratio = dtype_bytes(alt) / dtype_bytes(p.precision)
    except InputError:   # a precision with no storage size
        return None
    nbytes = p.bytes * ratio
    if nbytes <= 0:
        return None   # no bytes to shrink (a kernel counted as pure math)
    held = (held_ceiling(roof, kernel)
            if kernel is not None else None)
    if held is not None and len(held.parts) >= 2:
        return _lower_mixed(p, e, roof, machine, kernel, held, alt, nbytes)
    if kernel is not None and is_sparse(kind):
        return _lower_sparse(p, e, kernel, alt, ceiling, machine)
    return _lowered(p, e, alt, ceiling, machine, nbytes,
                    f"{dtype_bytes(p.precision):g} -> {dtype_bytes(alt):g} bytes per element "
                    f"moves AI {fmt_ai(p.ai)} -> {fmt_ai(p.flop / nbytes)}",
                    f"every byte is {p.precision} element data and accuracy allows {alt}")


def _lowered(p: Point, e: Efficiency, alt: str, ceiling, machine: Machine | None,
             nbytes: float, moves: str, assumed: str) -> Advice:
    """The "use ALT instead" advice at `nbytes` after the change, with what it `moves`
    (the AI words) and what is `assumed` of the bytes."""
    return _advice(
        p, e, f"use {alt} instead of {p.precision}{_unit_words(ceiling, machine)}",
        f"{moves} and the ceiling to {ceiling.label} "
        f"{fmt_rate(ceiling.value, ceiling.precision)}",
        "along slope" if p.memory_bound_side else "roof",
        flop=p.flop, nbytes=nbytes, peak=ceiling.value, bw=p.bytes_per_s,
        assumption=f"{assumed}; {keeps_words(p, e)}")


def _lower_sparse(p: Point, e: Efficiency, kernel: Kernel, alt: str, ceiling,
                  machine: Machine | None) -> Advice:
    """Lower precision for an SpMV: its values and vectors shrink, its integer indices and
    row pointers do not (review 16a C: fp64 -> fp32 CSR moves 12 -> 8 B per nonzero, 1.51x
    for 27 nonzeros per row, not 2x). advice_sparse.sparse_bytes_ratio gives the share."""
    old, new = dtype_bytes(p.precision), dtype_bytes(alt)
    ratio = sparse_bytes_ratio(kernel, old, new)
    split = sparse_bytes(kernel, kernel.precision)
    if ratio is None or split is None:
        ratio, said = new / old, ("every byte is assumed element data: the index bytes "
                                  "are not known (give meta read_only_bytes and "
                                  "index_bytes); integer indices do not shrink, so this "
                                  "is an upper bound")
    else:
        said = (f"values and vectors shrink, integer indices and row pointers "
                f"({fmt_fraction(split.matrix - split.values, 1)} of the bytes) do not "
                f"({split.source})")
    nbytes = p.bytes * ratio
    return _lowered(p, e, alt, ceiling, machine, nbytes,
                    f"{old:g} -> {new:g} bytes per value and vector element moves AI "
                    f"{fmt_ai(p.ai)} -> {fmt_ai(p.flop / nbytes)} (bytes x {ratio:.3g})",
                    f"{said}; accuracy allows {alt}")


def _narrower_storage(p: Point, e: Efficiency, kernel: Kernel | None) -> Advice | None:
    """A kernel with no FLOP (a copy, a sort, a gather) has no math to move to other units
    or precisions: only its data can be stored narrower, which shrinks its bytes. Its
    element type is the one its meta names (element_dtype: shape dtype, then meta dtype),
    else its FLOP's precision key ({"fp64": 0}); without one it is the fp32 default, and
    the assumption says so."""
    named = stored_dtype(kernel) if kernel is not None else None
    dtype = named or (p.precision if kernel is not None and kernel.flop else None)
    size = element_bytes(kernel, p.precision)
    if size is None:
        return None   # a dtype with no one storage size: nothing to say about narrowing it
    alt = next((a for a in LOWER_PRECISION.get(element_dtype(kernel, p.precision), ())
                if dtype_bytes(a) < size), None)
    new = dtype_bytes(alt) if alt else None
    if alt is None or not new or p.bytes <= 0:
        return None
    known = (f"every byte is {dtype} element data" if dtype else
             f"every byte is {p.precision} element data (assumed: the kernel names no FLOP "
             f"precision or dtype)")
    # a max-pool's int64 indices stay 8 B (pool_index; review s28 R3 F12: 2x, not 1.56x)
    idx = pool_index_bytes(kernel, size)
    total = (kernel.bytes.get("DRAM") or sum(kernel.bytes.values())) if idx else 0.0
    fixed = p.bytes * idx / total if total else 0.0
    if fixed:
        known = (f"the {dtype or p.precision} values narrow, the int64 indices "
                 f"({si(fixed, 'B')}) stay")
    narrowed = (p.bytes - fixed) * new / size + fixed
    return _advice(
        p, e, "store the data in a narrower type",
        f"{size:g} -> {new:g} bytes per element ({dtype or p.precision} -> {alt} or another "
        f"{new:g}-byte type) moves {si(narrowed, 'B')} instead of "
        f"{si(p.bytes, 'B')}; with no FLOP there is no math to move to other units",
        "along slope", flop=p.flop, nbytes=narrowed, peak=p.peak_flop_per_s,
        bw=p.bytes_per_s,
        assumption=f"{known} and the data can be stored in {new:g} bytes; "
                   f"{keeps_words(p, e)}")


def _lower_mixed(p: Point, e: Efficiency, roof: Roof, machine: Machine | None,
                 kernel: Kernel, held: KernelCeiling, alt: str, nbytes: float) -> Advice:
    """Lower precision for a kernel held to a weighted ceiling (9e9 fp16 tensor + 1e9 fp32
    vector): only the dominant part's FLOP move to `alt`; the others (epilogue, scaling,
    reductions) keep their precision and ceilings, and kernel_ceiling weighs the new mix as
    the roof weighs the kernel now. Pricing all the FLOP at the lower ceiling would let a
    slow fp32 part vanish (4.75x instead of 1.23x for that kernel on an H100). The bytes
    follow the single-precision rule: every byte is the dominant precision's element data
    (the other parts are math on it, not stored data)."""
    new = kernel_ceiling(roof, converted_flop(kernel, alt), held_unit(roof, kernel),
                         alt)
    dest = new.parts[0].ceiling if new.parts else new.ceiling   # what now holds alt's FLOP
    moved = next(part for part in held.parts if part.precision == kernel.precision)
    total = sum(part.flop for part in held.parts)
    rest = [part.label for part in held.parts if part.precision != kernel.precision]
    others = ", ".join(rest) + (" part" if len(rest) == 1 else " parts")
    stays, is_, keep = (("stays", "is", "keeps its") if len(rest) == 1 else
                        ("stay", "are", "keep their"))
    old_p, new_p = p.peak_flop_per_s, new.ceiling.value
    return _advice(
        p, e, f"use {alt} instead of {p.precision}{_unit_words(dest, machine)}",
        f"{dtype_bytes(p.precision):g} -> {dtype_bytes(alt):g} bytes per element moves AI "
        f"{fmt_ai(p.ai)} -> {fmt_ai(p.flop / nbytes)}; the {moved.label} part "
        f"({fmt_share(moved.flop / total)} of the FLOP) moves to {dest.label} "
        f"{fmt_rate(dest.value, dest.precision)} and the {others} {stays}, so the weighted ceiling "
        # si_apart: the figures that tell the two apart, as the header prints them (s28 R2)
        f"goes {_apart(old_p, new_p)} ({fmt_factor(new_p / old_p)})",
        "along slope" if p.memory_bound_side else "roof",
        flop=p.flop, nbytes=nbytes, peak=new_p, bw=p.bytes_per_s,
        assumption=f"every byte is {p.precision} element data (the {others} {is_} math "
                   f"on it, not stored data) and accuracy allows {alt} for the "
                   f"{p.precision} part; the {others} {keep} precision and ceiling "
                   f"(weighted as the roof holds the kernel now); {keeps_words(p, e)}")


def _part_targets(precision: str) -> tuple[str, ...]:
    """Where a slow part of a mixed kernel may move: its own precision on another unit, or
    one step down (LOWER_PRECISION; fp32 also to tf32, which tensor cores take as is). No
    further: an fp32 epilogue is not advised into fp8."""
    return (precision, *(("tf32",) if precision == "fp32" else ()),
            *LOWER_PRECISION.get(precision, ()))


def mixed_part_advice(p: Point, e: Efficiency, roof: Roof, held: KernelCeiling
                      ) -> Advice | None:
    """A kernel held to a weighted ceiling (ceiling.kernel_ceiling) whose slowest part, by
    time at the roof, is a minority of its FLOP (a GEMM's fp32 epilogue: 10 % of the FLOP,
    64 % of the time at an A100's roof): move that part to the fastest ceiling the roof has
    in its precision or one step lower (_part_targets), and predict the new weighted ceiling,
    the other parts unchanged, at the kernel's current efficiency. None when the bytes bind
    (memory side), or the slow part is the dominant one (the kernel's own precision, which
    the lower-precision and tensor-core advice speak to)."""
    if len(held.parts) < 2 or p.memory_bound_side:
        return None
    total = sum(part.flop for part in held.parts)
    at_roof = sum(part.seconds_at_peak for part in held.parts)
    slow = max(held.parts, key=lambda part: part.seconds_at_peak)
    # the dominant part (most FLOP, parts[0]) is the kernel's own precision even under
    # 50 % of a three-way mix: the lower-precision and tensor-core advice move it
    if total <= 0 or slow is held.parts[0]:
        return None
    targets = _part_targets(slow.precision)
    dominant = held.parts[0].precision
    faster = [c for c in roof.compute
              if c.precision in targets and c.value > slow.ceiling.value]
    if not faster:
        return None

    def rank(c):   # fastest; on a tie the kernel's own precision, then the nearest step
        return (c.value, c.precision == dominant, -targets.index(c.precision))

    # An epilogue's work is elementwise: it stays on its own units (vector) unless only
    # another unit is faster; the tensor figure needs it matrix-shaped or fused onto the
    # matrix units, so it is the aside, not the headline.
    own = [c for c in faster if c.unit == slow.ceiling.unit]
    dest = max(own or faster, key=rank)
    others_s = at_roof - slow.seconds_at_peak

    def weighted(c) -> float:
        return total / (others_s + slow.flop / c.value)

    old, new = p.peak_flop_per_s, weighted(dest)
    detail = (f"at the roof the {slow.label} part takes {fmt_seconds(slow.seconds_at_peak)}"
              f" of the {fmt_seconds(at_roof)}; on "
              f"{dest.label} ({fmt_rate(dest.value, dest.precision)}), the fastest "
              f"{slow.precision} or "
              f"one-step-lower ceiling on this roof, the weighted ceiling goes "
              f"{_apart(old, new)} ({fmt_factor(new / old)})")
    tensor = [c for c in faster if c.unit == "tensor" and c.value > dest.value]
    if dest.unit != "tensor" and tensor:
        t = max(tensor, key=rank)
        detail += (f"; on {t.label} ({fmt_rate(t.value, t.precision)}), if the work is "
                   f"matrix-shaped "
                   f"or fused onto the matrix units, {si(weighted(t), 'FLOP/s')} "
                   f"({fmt_factor(weighted(t) / old)})")
    bytes_s = p.bytes / p.bytes_per_s
    if bytes_s > total / new:
        detail += (f"; at {si(new, 'FLOP/s', 4)} {p.level} binds instead "
                   f"({fmt_seconds(bytes_s)} of bytes at {si(p.bytes_per_s, 'B/s')}), "
                   f"which caps the predicted speed-up")
    how = (f"the {slow.precision} work can run on {dest.label} units (fused onto the "
           f"matrix accumulators as an epilogue, or matrix-shaped)" if dest.unit == "tensor"
           else f"the {slow.precision} work can run on {dest.label} units")
    if dest.precision != slow.precision:
        how += f" and accuracy allows {dest.precision} for it"
    return _advice(
        p, e, f"move the {slow.label} part ({fmt_share(slow.flop / total)} of the FLOP, "
              f"{fmt_share(slow.seconds_at_peak / at_roof)} of the time at the roof) to "
              f"{dest.label}", detail, "roof", flop=p.flop,
        nbytes=p.bytes, peak=new, bw=p.bytes_per_s,
        assumption=f"{how}; the other parts keep their ceilings; {keeps_words(p, e)}")
