"""What-ifs: change precision, quantize weights, sparsify, fuse kernels, change batch, scale
one kernel's bytes (more reuse), move hardware.

Each what-if builds new Kernels from old ones under one stated assumption; model/retime.py
predicts their time on the (new) roof at the efficiency each kernel reaches now, and holds
`WhatIf` and its JSON shape (`describe`), re-exported here. Pure: no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

from ..errors import InputError
from ..units import (
    GROUP_SCALED,
    canonical_dtype,
    dtype_bytes,
    flop_precision,
    stored_weight_bytes,
)
from .advice_core import efficiency_of
from .advice_memory import weight_share as known_weight_share
from .advice_sparse import sparse_bytes_ratio
from .analysis import analyze
from .ceiling import Roof, kernel_ceiling
from .choose import split_whole_steps, with_launches_s
from .element_dtype import (  # noqa: F401  (meta_in_dtype: whatif's name before the split)
    COMPLEX_PARTS,
    STALE_DTYPE_META,
    complex_name,
    element_bytes,
    meta_in_dtype,
    stored_dtype,
)
from .kernel import Kernel, converted_flop, sum_counts
from .opkind import (
    has_weights,
    is_attention,
    is_matrix,
    is_sparse,
    is_streaming,
    kernel_kind,
)

# The retiming core lived here before the split: its public names stay importable from here.
from .retime import (  # noqa: F401
    MEASURED_META,
    WhatIf,
    _apply,
    _floor,
    _primary,
    _select,
    floor_s,
    retime,
)
from .retime import describe as _describe_moves


def change_precision(roof: Roof, kernels: Sequence[Kernel], precision: str,
                     names: Iterable[str] | None = None) -> WhatIf:
    """Do the same math in another precision: bytes scale by the element size ratio.

    The old element size is that of the dtype the kernel's meta names (shape.dtype, else
    dtype) when rooflab knows it, else of its FLOP precision: an int64 kernel counts int32
    math on 8-byte elements. A complex kernel stays complex (both parts change precision).
    A matrix kernel (meta op matmul, gemm, linear, conv, attention ...) moves to the tensor
    ceiling of the new precision when the roof has one (fp32 FFMA -> fp16 tensor cores);
    other kernels keep their unit (elementwise work cannot use matrix units). A kernel of
    several precisions converts only its dominant one (converted_flop). A sparse kernel
    (opkind.is_sparse) keeps its integer indices: advice_sparse.sparse_bytes_ratio scales
    its values and vectors only (all its bytes where its split is unknown)."""
    new_p = flop_precision(precision)
    size = dtype_bytes(precision)
    dtype = canonical_dtype(precision)
    tensor = roof.find_compute(new_p, "tensor") is not None
    mixed = any(sum(v > 0 for v in k.flop.values()) > 1 for k in kernels)

    def change(k: Kernel) -> Kernel:
        old = stored_dtype(k)
        part = COMPLEX_PARTS.get(old or "")
        was = dtype_bytes(part or old or k.precision)
        ratio = size / was
        # an SpMV's integer indices and row pointers keep their width: only its values and
        # vectors scale (review 16a C: fp64 -> fp32 CSR, 688 -> 456 MB a sweep, not 344)
        sparse = sparse_bytes_ratio(k, was, size) if is_sparse(kernel_kind(k)[0]) else None
        moved = ratio if sparse is None else sparse
        named = complex_name(dtype) if part else dtype
        return k.with_(flop=converted_flop(k, new_p),
                       bytes={lv: b * moved for lv, b in k.bytes.items()},
                       unit=_unit_in(k, tensor), meta=meta_in_dtype(k.meta, named, ratio))

    return _apply(roof, kernels, change, names, f"precision -> {new_p}",
                  f"every byte is element data stored in the kernel's dtype, now "
                  f"{size:g} byte(s) per element (per part, for complex data); the math "
                  f"runs on the {new_p} ceiling, matrix kernels on its tensor units if any"
                  + ("; a sparse kernel's integer indices and row pointers keep their width"
                     if any(is_sparse(kernel_kind(k)[0]) for k in kernels) else "")
                  + ("; a kernel of several precisions converts its dominant one, the "
                     "others (epilogue) stay" if mixed else ""))


def _unit_in(k: Kernel, tensor: bool) -> str | None:
    """The unit of a kernel moved to a precision the roof has (`tensor`) or lacks tensor
    units for. Only matrix kernels (opkind.is_matrix, or already on tensor units) move;
    a tensor kernel without a tensor ceiling in the new precision is left to the roof's
    best ceiling (None) rather than held to a tensor ceiling it has not got."""
    # the kind report reads: meta's op, else the name's ('ampere_fp16_s16816gemm_...' has
    # no op and is a GEMM all the same)
    kind = kernel_kind(k)[0]
    matrix = k.unit == "tensor" or is_matrix(kind)
    if not matrix:
        return k.unit
    if tensor:
        return "tensor"
    return None if k.unit == "tensor" else k.unit


def weight_share(k: Kernel, share: float | None) -> float:
    """The fraction of a kernel's bytes that are weights (weight_share_of without where
    it came from)."""
    return weight_share_of(k, share)[0]


def weight_share_of(k: Kernel, share: float | None) -> tuple[float, str]:
    """The fraction of a kernel's bytes that are weights, and where it came from: `share`
    when given, else what the advice knows (advice_memory.weight_share: meta bytes_split or
    weight_bytes, a GEMM's shape), else by kind: all weights for a kind with weights
    (opkind.has_weights: a matrix multiply, a GEMV or decode step) and unknown ones, none
    for attention and streaming ops."""
    if share is not None:
        if not 0 <= share <= 1:
            raise InputError(f"weight share must be between 0 and 1; got {share}")
        return share, "given"
    # the kind report reads: meta's op, else the name's (a profiler's 'residual_add' or
    # 'vectorized_elementwise_kernel<...add...>' has no op; review 13v F-A)
    kind = kernel_kind(k)[0]
    nbytes = k.bytes.get("DRAM") or sum(k.bytes.values())
    known = known_weight_share(k, kind, k.total_flop / nbytes if nbytes else 0.0, k.precision)
    if known is not None:
        return known
    if is_attention(kind):
        # Q, K, V and O are activations and KV cache, not weights
        return 0.0, f"its kind, {kind}: activations"
    if has_weights(kind):
        return 1.0, f"its kind, {kind}"
    if is_streaming(kind):   # words, not prefixes: 'addmm' (nn.Linear) is no 'add'
        return 0.0, f"its kind, {kind}: activations"
    if not kind and _elementwise_ai(k):
        return 0.0, "its AI, a streaming pass's"
    return 1.0, f"its kind, {kind or 'unknown'}: taken as weights"


def shares_words(used: Sequence[tuple[str, float, str]], most: int = 4) -> str:
    """'weights 33.3 % of the bytes (its shape, fp16 weights)' for the shares a quantize
    used, one clause per distinct (share, source), naming the kernel when there are
    several (review 15v F-c: the text said 1 for matmul on a run that used 1/3)."""
    groups: dict[tuple[float, str], list[str]] = {}
    for name, s, src in used:
        groups.setdefault((round(s, 6), src), []).append(name)
    if not groups:
        return "no kernel moved"
    several = len(groups) > 1
    parts = []
    for (s, src), names in list(groups.items())[:most]:
        who = ""
        if several:
            who = (f"{names[0]}: " if len(names) == 1
                   else f"{names[0]} and {len(names) - 1} more: ")
        parts.append(f"{who}weights {s * 100:.3g} % of the bytes ({src})")
    if len(groups) > most:
        parts.append(f"{len(groups) - most} more share(s) in --json")
    return "; ".join(parts)


def _elementwise_ai(k: Kernel) -> bool:
    """Whether a kernel of no known kind has the AI of a streaming pass, not of a GEMV:
    a GEMV reads each weight (s bytes) once for 2 FLOP, AI ~ 2/s; an elementwise op does
    about 1 FLOP per element read and written, AI ~ 1/(2s) (seed 004: y = x + 1 in fp16 is
    0.25). Below 1/s, half a GEMV's AI, it is taken as streaming activations; the advice's
    plain AI < 1 would call an fp32 GEMV (AI 0.5) activations."""
    nbytes = k.bytes.get("DRAM") or sum(k.bytes.values())
    size = element_bytes(k, k.precision)   # None: complex, or no storage size
    return size is not None and nbytes > 0 and k.total_flop / nbytes < 1 / size


def quantize_weights(roof: Roof, kernels: Sequence[Kernel], dtype: str = "int4",
                     names: Iterable[str] | None = None, share: float | None = None,
                     group: int | None = None) -> WhatIf:
    """Store weights in `dtype` (dequantized on the fly): weight bytes shrink, FLOP stay.
    `group`: int4/int8 weights carry one fp16 scale per `group` weights (GPTQ/AWQ: 128, as
    `rooflab llm --weights` counts them), on both sides of the ratio; None: the bare dtype
    (seed 004's 0.5 byte per int4 weight)."""
    if group is not None and group < 1:
        raise InputError(f"--group must be >= 1 weights per scale (GPTQ/AWQ use 128); "
                         f"got {group}")

    def stored(name: str) -> float:
        return stored_weight_bytes(name, group) if group else dtype_bytes(name)

    to = stored(dtype)

    def change(k: Kernel) -> Kernel:
        frm = stored(str(k.meta.get("weight_dtype") or k.precision))
        # weight-only quantizers (GPTQ, AWQ, bitsandbytes) leave norm weights in the
        # activation dtype, as `rooflab llm --weights` does
        s, src = ((0.0, "a norm: weight-only quantizers leave it")
                  if share is None and kernel_kind(k)[0].endswith("norm")
                  else weight_share_of(k, share))
        used.append((k.name, s, src))
        factor = (1 - s) + s * to / frm
        # the weights are `dtype` now: a stale weight_dtype would make a second quantize
        # scale from the wrong size (a kernel without weights gets no such key)
        keep = s <= 0 and "weight_dtype" not in k.meta
        meta = k.meta if keep else {**k.meta, "weight_dtype": canonical_dtype(dtype)}
        return k.with_(bytes={lv: b * factor for lv, b in k.bytes.items()}, meta=meta)

    used: list[tuple[str, float, str]] = []
    w = _apply(roof, kernels, change, names, f"weights -> {canonical_dtype(dtype)}", "")
    # the shares are known once each moved kernel was changed: say the ones used
    return replace(w, assumption=(
        f"weights are read once per call and stored in {to:.4g} byte(s) each"
        f"{_scales_note(dtype, group)}; the math stays in the kernel's precision; "
        f"{shares_words(used)}"))


def _scales_note(dtype: str, group: int | None) -> str:
    if canonical_dtype(dtype) not in GROUP_SCALED:
        # fp8 keeps one scale per tensor: a --group given with it changes nothing, and
        # says so rather than being dropped without a word
        return (f" ({canonical_dtype(dtype)}: one scale per tensor, --group {group} not "
                f"used)" if group else "")
    if group:
        return f" (one fp16 scale per {group} weights, GPTQ/AWQ style)"
    return (" (no group scales; --group 128 adds GPTQ/AWQ's fp16 scale per 128 weights, "
            "as llm --weights counts them)")


def meta_batch(k: Kernel) -> int:
    """The batch a kernel was counted at (meta 'batch', 1 when absent), a whole number >= 1;
    anything else is the kernel file's mistake, said as such."""
    value = k.meta.get("batch", 1)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 1 or (
            value != int(value)):
        raise InputError(f"kernel '{k.name}': meta.batch must be a whole number >= 1 (the "
                         f"batch it was counted at); got {value!r}")
    return int(value)


def change_batch(roof: Roof, kernels: Sequence[Kernel], batch: int,
                 from_batch: int | None = None, names: Iterable[str] | None = None,
                 share: float | None = None) -> WhatIf:
    """Batch b instead of b0: FLOP and activation bytes scale b/b0, weight bytes stay."""
    if batch < 1:
        raise InputError(f"batch must be >= 1; got {batch}")

    def change(k: Kernel) -> Kernel:
        b0 = from_batch or meta_batch(k)
        r = batch / b0
        s = weight_share(k, share)
        w = expert_weight_ratio(k, r) if share is None else 1.0
        return k.with_(flop={p: f * r for p, f in k.flop.items()},
                       bytes={lv: b * (s * w + (1 - s) * r) for lv, b in k.bytes.items()},
                       meta={**k.meta, "batch": batch})

    return _apply(roof, kernels, change, names, f"batch -> {batch}",
                  "weights are read once for the whole batch (MoE experts: as many as the "
                  "batch's tokens touch); FLOP and activation (and KV) bytes grow with the "
                  "batch (seed 004: decode AI ~ batch)")


def scale_bytes(roof: Roof, kernels: Sequence[Kernel], factor: float,
                names: Iterable[str] | None = None) -> WhatIf:
    """More (or less) data reuse: bytes x `factor` at every memory level the kernel lists,
    FLOP unchanged, so AI / factor (seed 000 §5.3: better tiling took a conv from AI ~5 to
    20+, factor 0.25, "nearly 3x" faster while still bandwidth-bound). Every level, as the
    precision and weight what-ifs scale every level: the model cannot tell which level the
    reuse happens in; a kernel file with DRAM bytes only (most) does not see the choice.
    A 'weight_bytes' meta is scaled with the bytes, so the weight share stays."""
    if not 0 < factor < math.inf:
        raise InputError(f"bytes scale must be > 0 and finite (0.25 = a quarter of the "
                         f"bytes, AI x 4); got {factor:g}")

    def change(k: Kernel) -> Kernel:
        wb = k.meta.get("weight_bytes")
        meta = ({**k.meta, "weight_bytes": wb * factor}
                if isinstance(wb, (int, float)) and not isinstance(wb, bool) else k.meta)
        return k.with_(bytes={lv: b * factor for lv, b in k.bytes.items()}, meta=meta)

    return _apply(roof, kernels, change, names, f"bytes x {factor:g}",
                  f"the same FLOP move {factor:g}x the bytes at every memory level (AI x "
                  f"{1 / factor:.3g}: reuse from tiling, blocking or caching); the work "
                  f"keeps the fraction of its roof it reaches now")


def sparse_weight_ratio(element_bytes: float) -> float:
    """Bytes of 2:4-sparse weights over dense ones: two of every four values kept, each with
    a 2-bit position (4 bits per group of 4): fp16 9/16, fp8/int8 5/8 (NVIDIA's compressed
    format: values plus 2-bit metadata per kept value)."""
    return (2 * element_bytes + 0.5) / (4 * element_bytes)


def sparsify(roof: Roof, kernels: Sequence[Kernel], names: Iterable[str] | None = None,
             share: float | None = None) -> WhatIf:
    """2:4 structured sparsity on the weights (seed 002: "should a fully connected layer be
    sparsified?"): weight bytes shrink to the kept half plus metadata; on a tensor ceiling the
    math skips the zero half (sparse tensor cores run twice the dense rate: executed FLOP
    halve against the dense peak). Kernels without weights are left alone."""
    def change(k: Kernel) -> Kernel:
        # Pruning is for the weight matrices of linear layers (not embeddings or norms); the
        # kind as weight_share reads it (meta's op, else the name's: a profiler's
        # 'sm90_xmma_gemm_...' has no op)
        s = weight_share(k, share) if has_weights(kernel_kind(k)[0]) else 0.0
        if s <= 0 or k.meta.get("sparsity") == "2:4":
            # already 2:4 (meta says so): pruning again would halve bytes and FLOP twice
            return k
        ratio = sparse_weight_ratio(dtype_bytes(str(k.meta.get("weight_dtype")
                                                    or k.precision)))
        ceiling = kernel_ceiling(roof, k.flop, k.unit, k.precision).ceiling
        fl = 0.5 if ceiling.unit == "tensor" else 1.0
        # 2:4 halves the tensor units' work only: a mixed kernel's other precisions run on
        # vector units (kernel_ceiling), so they keep their FLOP
        return k.with_(flop={p: f * (fl if p == k.precision else 1.0)
                             for p, f in k.flop.items()},
                       bytes={lv: b * ((1 - s) + s * ratio) for lv, b in k.bytes.items()},
                       meta={**k.meta, "sparsity": "2:4"})

    return _apply(roof, kernels, change, names, "weights -> 2:4 sparse",
                  "half of every 4 weights pruned to zero (2:4); weights stored as the kept "
                  "half plus 2-bit positions (fp16 9/16 of the bytes, 8-bit 5/8); on tensor "
                  "ceilings the zero half is skipped (executed FLOP halve: NVIDIA's sparse "
                  "peak is twice the dense one), on vector ceilings only the bytes shrink; "
                  "whether the model keeps its accuracy when pruned is not modelled")


def expert_weight_ratio(k: Kernel, r: float) -> float:
    """How much more expert weight a batch r times larger reads: routed-expert kernels of
    `rooflab llm` say experts E and top-k in meta shape (m = tokens x top-k); T tokens touch
    E(1 - (1 - k/E)^T) distinct experts on average (uniform routing). 1 for other kernels."""
    shape = k.meta.get("shape")
    if not isinstance(shape, Mapping):
        return 1.0
    e, top, m = shape.get("experts"), shape.get("top_k"), shape.get("m")
    if not (isinstance(e, (int, float)) and isinstance(top, (int, float))
            and isinstance(m, (int, float)) and e > 0 and 0 < top <= e and m > 0):
        return 1.0
    tokens = m / top

    def distinct(t: float) -> float:
        return e * (1.0 - (1.0 - top / e) ** t)

    return distinct(tokens * r) / distinct(tokens)


def fuse(roof: Roof, kernels: Sequence[Kernel], names: Sequence[str],
         fused_name: str | None = None) -> WhatIf:
    """Fuse kernels into one: FLOP add up, intermediates stay on chip, one launch."""
    kernels = tuple(kernels)
    chosen = _select(kernels, names)
    if len(chosen) < 2:
        raise InputError("fuse needs at least two kernel names, e.g. --fuse add,relu,mul")
    members = [k for k in kernels if k.name in chosen]
    before = analyze(roof, kernels)
    prim = _primary(before)
    flop = sum_counts(k.flop for k in members)
    levels = {lv for k in members for lv in k.bytes}
    nbytes = {lv: max(k.bytes.get(lv, 0.0) for k in members) for lv in levels}
    fused = Kernel(name=fused_name or "+".join(k.name for k in members), flop=flop,
                   bytes=nbytes, calls=max(k.calls for k in members),
                   unit=next((k.unit for k in members if k.unit), None),
                   provenance={"flop": "derived", "bytes": "derived"},
                   meta={"fused": [k.name for k in members]})
    eff = None
    if all(k.seconds for k in members) and all(k.name in prim for k in members):
        effs = [efficiency_of(prim[k.name]) for k in members]
        work = sum(e.work_s for e in effs)
        floor = sum(prim[k.name].floor_s for k in members)
        eff = min(1.0, floor / work) if work > 0 else 1.0
    label = f"fuse {len(members)} kernels"
    new = retime(fused, roof, eff, label)
    after = [new if k is members[0] else k for k in kernels if k.name not in chosen or
             k is members[0]]
    return WhatIf(label,
                  "the fused kernel moves what its largest member moved (intermediates stay "
                  "on chip: k equal elementwise passes cut bytes k-fold), launches once per "
                  "call, and runs its work at the members' combined efficiency",
                  before, analyze(roof, after), tuple((k, new) for k in members))


def move_hardware(roof: Roof, kernels: Sequence[Kernel], other: Roof) -> WhatIf:
    """The same kernels on other hardware, each at the efficiency it reaches now."""
    inside = ("" if roof.overhead_s is not None or other.overhead_s is None else
              f"; {roof.name} has no launch floor, so its measured times include their "
              f"launches and {other.name}'s launch floor bounds each prediction from below "
              f"rather than adding to it")
    return _apply(roof, kernels, lambda k: k, None, f"on {other.name}",
                  f"each kernel reaches the same fraction of {other.name}'s roof as it "
                  f"reaches of {roof.name}'s{inside}", new_roof=other)


# (work floor, with launches) of one kernel; (None, None) where the roof has none of its levels
Floors = tuple[float | None, float | None]


def kernel_floors(roof: Roof, k: Kernel) -> Floors:
    """A kernel's two floors on a roof, as `rooflab llm` and `rooflab choose` give them:
    the work floor max(FLOP / P, bytes / B) at 100 % of the roof, and with its launches,
    max(work floor, calls x the roof's launch floor) (model.choose.with_launches_s)."""
    try:
        work, _ = _floor(roof, k)
    except InputError:
        return None, None
    return work, with_launches_s(work, k.calls, roof.overhead_s)


def move_floors(w: WhatIf) -> tuple[tuple[Floors, Floors], ...]:
    """(floors before, floors after) of each move, each on its own roof (derived)."""
    return tuple((kernel_floors(w.before.roof, old), kernel_floors(w.after.roof, new))
                 for old, new in w.moves)


def fused(w: WhatIf) -> bool:
    """Whether `w` fuses kernels (its new kernel lists the members it replaced)."""
    return any(new.meta.get("fused") for _, new in w.moves)


def moved_floors(w: WhatIf) -> dict[str, tuple[float | None, float | None]]:
    """{"work": (before, after), "with_launches": (before, after)}: the moved kernels'
    floors summed, each kernel once (fused members share one new kernel; a whole measured
    step beside its own kernels is not work again); None where any floor is unknown."""
    work_ids = {id(k) for k in split_whole_steps([old for old, _ in w.moves])[0]}
    sums: dict[str, tuple[dict[int, float | None], dict[int, float | None]]] = {
        "work": ({}, {}), "with_launches": ({}, {})}
    for (old, new), (fb, fa) in zip(w.moves, move_floors(w), strict=True):
        if id(old) not in work_ids:
            continue
        for i, key in enumerate(sums):
            sums[key][0][id(old)], sums[key][1][id(new)] = fb[i], fa[i]
    return {key: tuple(None if not v or None in v.values() else float(sum(v.values()))
                       for v in pair) for key, pair in sums.items()}


def total_floors(w: WhatIf) -> dict[str, tuple[float | None, float | None]]:
    """As moved_floors, on the whole step for a fusion: the kernels it leaves alone count
    on both sides, so `--fuse` and `--quantize` (which moves every kernel) give their
    totals in one scope (review 11b #11: fusing three launch-bound kernels of a decode step
    is 1.19x of the step with launches, not the 2.50x of the three alone)."""
    moved = moved_floors(w)
    if not fused(w):
        return moved
    olds = {id(old) for old, _ in w.moves}
    rest = [k for k in split_whole_steps(w.before.kernels)[0] if id(k) not in olds]
    floors = [kernel_floors(w.before.roof, k) for k in rest]
    out = {}
    for i, key in enumerate(moved):
        b, a = moved[key]
        extra = [f[i] for f in floors]
        if b is None or a is None or None in extra:
            out[key] = (None, None)
            continue
        out[key] = (b + sum(extra), a + sum(extra))   # type: ignore[arg-type]
    return out


def _ratio(before: float | None, after: float | None) -> float | None:
    return before / after if before and after else None


def describe(w: WhatIf) -> Mapping[str, object]:
    """JSON shape of a what-if (model.retime.describe) with both floors, named as in `rooflab
    llm` and `rooflab choose`: *_work_floor_s (max(FLOP / P, bytes / B) per kernel, summed)
    and *_with_launches_s (per kernel max(work floor, calls x launch floor), summed); for a
    fusion on the whole step, the fused kernels alone under moved_*. The older *_floor_s
    keys stay for scripts that read them, now equal to *_with_launches_s: they used to sum
    work + every launch, a third floor beside these two (review 11b #7)."""
    out = dict(_describe_moves(w))
    rows = [dict(r) for r in out["moves"]]
    for row, (fb, fa) in zip(rows, move_floors(w), strict=True):
        row.update({"before_work_floor_s": fb[0], "after_work_floor_s": fa[0],
                    "before_with_launches_s": fb[1], "after_with_launches_s": fa[1],
                    "before_floor_s": fb[1], "after_floor_s": fa[1]})
    t = total_floors(w)
    (wb, wa), (lb, la) = t["work"], t["with_launches"]
    out.update({"moves": rows, "total_before_work_floor_s": wb, "total_after_work_floor_s": wa,
                "work_floor_speedup": _ratio(wb, wa),
                "total_before_with_launches_s": lb, "total_after_with_launches_s": la,
                "with_launches_speedup": _ratio(lb, la),
                "total_before_floor_s": lb, "total_after_floor_s": la,
                "floor_scope": "whole step" if fused(w) else "moved kernels"})
    if fused(w):
        m = moved_floors(w)
        (mwb, mwa), (mlb, mla) = m["work"], m["with_launches"]
        out["moved"] = {"before_work_floor_s": mwb, "after_work_floor_s": mwa,
                        "before_with_launches_s": mlb, "after_with_launches_s": mla,
                        "with_launches_speedup": _ratio(mlb, mla)}
    return out


# The sanity findings (model/sanity.py's check_kernel, the checks `rooflab report` runs)
# and `rooflab bench` flags (meta flags, bench/check.py) that make a moved kernel's measured
# efficiency meaningless: a kernel above its roof is taken at 100 % of it (efficiency_of
# caps it), so what is built on it is a cap, not a prediction (review 16b #11).
DOUBTFUL_CHECKS = ("above_roof", "ai_high", "cache_resident", "timing_includes_counting")
DOUBTFUL_FLAGS = ("below-floor", "cache-resident")


def _doubt(w: WhatIf, old: Kernel, machine) -> str:
    """'exp (1.61x above)', 'amax (2.28x above; cache-resident)' for a moved kernel that
    is above its roof, has an AI its op cannot have or is cache-resident (sanity checks),
    or that bench flagged; '' for one that is none of these."""
    from .sanity import check_kernel

    found = [f for f in check_kernel(w.before, old, machine)
             if f.check in DOUBTFUL_CHECKS and f.severity == "warning"]
    why = [f.check.replace("_", "-") for f in found if f.check != "above_roof"]
    why += [f for f in old.meta.get("flags") or () if f in DOUBTFUL_FLAGS]
    above = [p.achieved_flop_per_s / p.attainable_flop_per_s
             for f in found if f.check == "above_roof"
             for p in w.before.points_of(old) if p.level == f.level
             and p.achieved_flop_per_s and p.attainable_flop_per_s]
    if not above and not why:
        return ""
    parts = ([f"{max(above):.2f}x above"] if above else []) + list(dict.fromkeys(why))
    return f"{old.name} ({'; '.join(parts)})"


def move_warnings(w: WhatIf, machine=None) -> list[str]:
    """The "read with care" lines of a what-if, as `rooflab report` gives them for the same
    kernels: the moved kernels its sanity checks or bench's flags doubt (_doubt), and for a
    fusion whose members run above their roof together, that its speed-up is capped (the
    fused kernel is taken at 100 % of the roof). Empty when nothing is doubtful."""
    olds = list({id(old): old for old, _ in w.moves}.values())
    doubted = [d for d in (_doubt(w, old, machine) for old in olds) if d]
    if not doubted:
        return []
    out = [f"{len(doubted)} of the {len(olds)} kernel(s) moved run faster than the roof "
           f"allows or were flagged: {', '.join(doubted)}. The roof is too low for them, "
           f"their counts are wrong or their data stayed in cache (see `rooflab report`'s "
           f"sanity checks); their efficiency is taken at 100 % of the roof, so the gains "
           f"built on them are caps, not predictions."]
    capped = _fused_cap(w, olds)
    if capped:
        out.append(capped)
    return out


def _fused_cap(w: WhatIf, members: Sequence[Kernel]) -> str:
    """For a fusion: the members' work floor over their measured work (fuse's combined
    efficiency) when it is above 1, and what that does to the fused speed-up; ''
    otherwise (no fusion, untimed members, or members within their roof together)."""
    from ..units import fmt_seconds

    new = next((n for _, n in w.moves if n.meta.get("fused")), None)
    prim = _primary(w.before)
    if new is None or not new.seconds or not all(
            k.seconds and k.name in prim for k in members):
        return ""
    work = sum(efficiency_of(prim[k.name]).work_s for k in members)
    floor = sum(prim[k.name].floor_s for k in members)
    if work <= 0 or floor <= work * (1 + 1e-9):
        return ""
    measured = sum(k.seconds for k in members)
    return (f"the fused members reach {100 * floor / work:.0f} % of their roof together "
            f"(work floor {fmt_seconds(floor)} in {fmt_seconds(work)} of measured work): the fused "
            f"kernel is taken at 100 %, so its {measured / new.seconds:.2f}x "
            f"({fmt_seconds(measured)} -> {fmt_seconds(new.seconds)}) is capped, not "
            f"predicted.")
