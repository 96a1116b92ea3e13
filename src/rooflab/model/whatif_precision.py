"""What if the math ran in another precision: bytes scale by the element size ratio (a
sparse kernel's integer indices excepted), the math moves to the new precision's ceiling,
and the kernel's meta says the new dtype and its byte breakdowns in the new sizes. Pure:
no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

from ..errors import InputError
from ..units import PRECISIONS, canonical_dtype, dtype_bytes, flop_precision
from .advice_sparse import sparse_bytes, sparse_bytes_ratio
from .analysis import analyze
from .ceiling import Roof
from .dtype_names import marked_words, renamed_in_dtype
from .element_dtype import COMPLEX_PARTS, complex_name, meta_in_dtype, stored_dtype
from .fp4_formats import DEFAULT_FP4, FP4_BLOCK, block_words, fp4_format
from .kernel import Kernel, converted_flop
from .opkind import is_matrix, is_sparse, kernel_kind
from .retime import WhatIf, _apply
from .whatif_comm_parts import COMM_WORDS, comm_parts_in_precision
from .whatif_complex import complex_held, complex_words
from .whatif_grads import follows_math, grads_kept, held_apart
from .whatif_precision_cap import capped_roof, old_precisions

# The integer parts of a CSR SpMV's bytes_split (`rooflab ai spmv`: column indices and row
# pointers): index-width data, so they keep their bytes whatever the values' precision.
INDEX_PARTS = ("indices", "rowptr")
# Meta totals (bytes) of the matrix an SpMV reads once (advice_sparse.sparse_bytes reads
# them): values and indices, so they scale as the matrix does.
MATRIX_META = ("read_only_bytes", "weight_bytes")


def change_precision(roof: Roof, kernels: Sequence[Kernel], precision: str,
                     names: Iterable[str] | None = None, nominal: Roof | None = None) -> WhatIf:
    """Do the same math in another precision: bytes scale by the element size ratio.

    The old element size is that of the dtype the kernel's meta names (shape.dtype, else
    dtype) when rooflab knows it, else of its FLOP precision: an int64 kernel counts int32
    math on 8-byte elements. A complex kernel stays complex (both parts change precision).
    A matrix kernel (meta op matmul, gemm, linear, conv, attention ...) moves to the tensor
    ceiling of the new precision when the roof has one (fp32 FFMA -> fp16 tensor cores);
    other kernels keep their unit (elementwise work cannot use matrix units). A kernel of
    several precisions converts only its dominant one (converted_flop). A sparse kernel
    (opkind.is_sparse) keeps its integer indices: advice_sparse.sparse_bytes_ratio scales
    its values and vectors only (all its bytes where its split is unknown). The byte
    totals in meta (bytes_split, read_only_bytes, weight_bytes) scale with the bytes
    (meta_bytes_in_precision), so the new kernel's meta agrees with its bytes.
    nominal: the same machine's nominal roof; where given, the new precision's measured
    ceiling is held to the nominal new/old ratio (whatif_precision_cap; review r4 F4: a
    loaded probe's fp32/fp64 13.1x predicted 13.18x for a kernel that gained 1.31x)."""
    fmt = str(precision).strip().lower()
    precision = "fp4" if fmt in FP4_BLOCK else precision
    new_p = flop_precision(precision)
    size = dtype_bytes(precision)
    # fp4 elements carry their block scales, an llm step's GEMM operands as llm --act
    # nvfp4|mxfp4 counts them and any other kernel's alike (s27: a kernel file's were a
    # bare 0.5 B); bare --precision fp4 is nvfp4 (fp4_formats.DEFAULT_FP4)
    named_fmt = (fmt if fmt in FP4_BLOCK else DEFAULT_FP4) if new_p == "fp4" else None
    block = FP4_BLOCK[named_fmt] if named_fmt else size
    dtype = canonical_dtype(precision)
    tensor = roof.find_compute(new_p, "tensor") is not None
    mixed = any(sum(v > 0 for v in k.flop.values()) > 1 for k in kernels)
    # each kernel's kind (meta op, else its name: opkind.kernel_kind, the costly part) once,
    # not for the assumption's words, the bytes and the unit each (s24: 100,000 kernels)
    kinds: dict[int, str] = {}

    def kind(k: Kernel) -> str:
        found = kinds.get(id(k))
        if found is None:
            found = kinds[id(k)] = kernel_kind(k)[0]
        return found

    def change(k: Kernel) -> Kernel:
        if held_master(k) or complex_held(k, dtype):
            return k
        if k.meta.get("train_part") == "comm":
            return comm_in_precision(k, size, dtype)
        share = _model_dtype_share(k) if size <= 1 else None
        if share is not None:
            return _said(_gemm_in_narrow_acts(k, share, named_of(k), new_p, block,
                                              _element_bytes(k, stored_dtype(k) or k.precision,
                                                             precision), tensor))
        wide = _model_dtype_parts(k) if size <= 1 else None
        if wide is not None:
            new = _rows_in_narrow_acts(k, wide, named_of(k), size, block, _element_bytes(
                k, stored_dtype(k) or k.precision, precision))
            return k if new is k else _said(new)
        old = stored_dtype(k)
        part = COMPLEX_PARTS.get(old or "")
        bare = _element_bytes(k, part or old or k.precision, precision)
        was = _fp4_bytes(k, bare)
        # fp4 data of no format said (a profiler's): its block scales are in its bytes too
        ratio = 1.0 if named_fmt and was == size else block / was
        # an SpMV's integer indices and row pointers keep their width: only its values and
        # vectors scale (review 16a C: fp64 -> fp32 CSR, 688 -> 456 MB a sweep, not 344)
        sparse = sparse_bytes_ratio(k, was, was * ratio) if is_sparse(kind(k)) else None
        moved = ratio if sparse is None else sparse
        named = complex_name(dtype) if part else dtype
        meta = {**k.meta, **meta_bytes_in_precision(k, ratio, moved)}
        # the dtype's words by its bare element size (weight_dtype fp16 -> fp4, not dropped)
        return _said(k.with_(flop=converted_flop(k, new_p),
                             bytes={lv: b * moved for lv, b in k.bytes.items()},
                             unit=_unit_in(k, tensor, kind(k)),
                             meta=meta_in_dtype(meta, named, size / bare)))

    def _said(k: Kernel) -> Kernel:
        # a predicted kernel in fp4 names its block format (meta fp4_format), as an llm
        # step's settings name theirs (act_format, weight_format); out of fp4, none
        meta = {key: v for key, v in k.meta.items() if key != FP4_FORMAT_META}
        return k.with_(meta={**meta, FP4_FORMAT_META: named_fmt} if named_fmt else meta)

    def named_of(k: Kernel) -> str:
        return complex_name(dtype) if COMPLEX_PARTS.get(stored_dtype(k) or "") else dtype

    names = None if names is None else list(names)
    # a roof per old precision, each held to the nominal ratio for its own kernels: one
    # roof for all switched the cap off with two precisions in the file (review r8 F9)
    olds = old_precisions(kernels, names)
    roofs = {p: capped_roof(roof, nominal, p, new_p) for p in olds}
    roofs = {p: r for p, r in roofs.items() if r[1]}
    several = len(olds) > 1
    caps = tuple((f"{_named(kernels, names, p)} ({p}): " if several else "") + n
                 for p, (_, notes) in roofs.items() for n in notes)
    # the after state's roof: the capped one where every moved kernel is on it, else
    # the roof as it is (the capped kernels' times are still from their capped roofs)
    target = next(iter(roofs.values()))[0] if len(roofs) == 1 and not several else roof

    def roof_of(k: Kernel) -> Roof:
        math = any(v > 0 for v in k.flop.values())
        return roofs[k.precision][0] if math and k.precision in roofs else roof

    # a name that says the old dtype is kept, marked [old->new] (dtype_names)
    taken = {k.name for k in kernels}
    w = _apply(roof, kernels,
               lambda k: renamed_in_dtype(k, grads_kept(k, change(k), size), taken), names,
               f"precision -> {new_p}" + (f" ({named_fmt})" if named_fmt else ""),
               f"every byte is element data stored in the kernel's dtype, now "
               f"{block:g} byte(s) per element ("
               + (_fp4_words(named_fmt, fmt) if named_fmt else "")
               + "per part, for complex data); the math "
               f"runs on the {new_p} ceiling, matrix kernels on its tensor units if any"
               + ("; a sparse kernel's integer indices and row pointers keep their width"
                  if any(is_sparse(kind(k)) for k in kernels) else "")
               + ("; a kernel of several precisions converts its dominant one, the "
                  "others (epilogue) stay" if mixed else "")
               + (_narrow_acts_words(kernels, new_p, fmt) if size <= 1 else "")
               + (COMM_WORDS if any(k.meta.get("train_part") == "comm" for k in kernels)
                  else "")
               + _held_words(kernels, names) + complex_words(kernels, names, dtype)
               + "".join(f"; {n}" for n in caps),
               new_roof=target if caps else None,
               roof_of=roof_of if caps else None)
    if caps:
        w = _only_chosen(w, kernels, names, target)
        w = replace(w, move_roofs=tuple(roof_of(old) for old, _ in w.moves))
    return replace(w, assumption=w.assumption + marked_words(w.moves))


def comm_in_precision(k: Kernel, size: float, dtype: str | None = None) -> Kernel:
    """A training step's gradient collective (`rooflab train --dp`: meta train_part comm)
    moves gradients of meta grad_bytes a value, not elements of a FLOP precision (it has
    none: read as fp32, --precision bf16 halved a bf16 step's all-reduce). Gradients stay
    at least 2 B in fp8 and fp4 recipes (Transformer Engine's GEMMs write bf16 weight
    gradients; the all-reduce runs in that dtype), so the bytes scale by
    max(size, 2) / grad_bytes; gradients held at --grad-dtype apart from the training
    dtype (whatif_grads.held_apart: fp32 under bf16) keep their width, as the dW's do.
    A row that lists its collectives' parts (weights, gradients, activations) moves each
    part by its own rule (whatif_comm_parts: ZeRO's weight all-gathers, --tp's
    activations); this one rule is an older file's."""
    held = held_apart(k)
    parts = comm_parts_in_precision(k, size, held, dtype)
    if parts is not None or held:
        return parts or k
    old = float(k.meta.get("grad_bytes") or 2)
    new = follows_math(size)
    if new == old:
        return k
    r = new / old
    return k.with_(bytes={lv: b * r for lv, b in k.bytes.items()},
                   meta={**k.meta, "grad_bytes": new})


def held_master(k: Kernel) -> bool:
    """Whether k is a training step's optimizer (`rooflab train`: meta train_part
    optimizer, held_unquantized): its fp32 master weights and AdamW state stay fp32 in any
    precision the math runs at, so --precision leaves its bytes and math, as --quantize
    does (review s27 v3-F3: an fp32 file's optimizer was halved under --precision bf16)."""
    return k.meta.get("train_part") == "optimizer" and bool(k.meta.get("held_unquantized"))


def _held_words(kernels: Sequence[Kernel], names: Iterable[str] | None) -> str:
    """'; optimizer.adamw held: <why>' for the held_master kernels moved, '' for none."""
    chosen = None if names is None else set(names)
    held = [k for k in kernels if held_master(k) and (chosen is None or k.name in chosen)]
    if not held:
        return ""
    return (f"; {', '.join(k.name for k in held)} held as it is: "
            f"{held[0].meta['held_unquantized']}")


# `rooflab llm` marks the kernels that stay at the model dtype under 8-bit activations
# (meta model_dtype_parts: norms, RoPE, the residual add, SwiGLU; the embedding's output),
# as llm --act fp8 counts them (review s26 r3 F6: they were halved)
NARROW_ACTS_WORDS = ("; as `rooflab llm --act fp8` counts a step, 8-bit activations exist "
                     "at the GEMM inputs only: norms, RoPE, the residual add and SwiGLU "
                     "(meta model_dtype_parts) keep the model dtype, in bytes and math")


# The meta a kernel moved to fp4 names its block format in (nvfp4, mxfp4)
FP4_FORMAT_META = "fp4_format"


def _fp4_bytes(k: Kernel, bare: float) -> float:
    """An element's bytes now: an fp4 kernel's format's (meta fp4_format: a predicted
    kernel's, its block scales counted) where it names one, else `bare`."""
    fmt = fp4_format(k.meta.get(FP4_FORMAT_META, ""))
    return FP4_BLOCK[fmt] if fmt and bare == dtype_bytes("fp4") else bare


def _fp4_words(named: str, typed: str) -> str:
    """'nvfp4: 0.5 B + an fp8 scale per 16 elements = 0.5625 B, as ...; ' for --precision
    in an fp4 format; bare fp4 says it was read as nvfp4 and how to ask for MX blocks."""
    bare = "" if typed in FP4_BLOCK else (f"; bare fp4 is read as {named}, --precision "
                                          f"mxfp4 for MX blocks")
    return (f"{block_words(named)}, as `rooflab llm --act {named}` counts it, meta "
            f"{FP4_FORMAT_META}{bare}; ")


def _narrow_acts_words(kernels: Sequence[Kernel], new_p: str, fmt: str) -> str:
    """The assumption's words for an llm step moved to an 8-bit (or fp4) precision: what
    keeps the model dtype (llm --act's convention), the fp4 format counted; '' where no
    kernel carries llm's marks."""
    if not any(_model_dtype_parts(k) is not None or _model_dtype_share(k) is not None
               for k in kernels):
        return ""
    words = NARROW_ACTS_WORDS
    if any(_model_dtype_share(k) is not None for k in kernels):
        words += ("; so do the GEMM outputs and attention (Q, O, the KV cache and its math; "
                  "the cache's dtype is --kv's what-if in `rooflab llm`)")
        if new_p == "fp4":
            name = fmt if fmt in FP4_BLOCK else DEFAULT_FP4
            words += (f"; fp4 GEMM weights and inputs are {name}, {FP4_BLOCK[name]:g} B each "
                      f"with the block scale, as `rooflab llm --act {name}` counts them")
    return words


def _model_dtype_share(k: Kernel) -> dict[str, float] | None:
    """{part: share kept at the model dtype} of an llm step's GEMM (meta
    model_dtype_share: its output's share of the activations, its KV-cache writes), None
    where the kernel has no such mark."""
    share = k.meta.get("model_dtype_share")
    if not isinstance(share, Mapping) or not isinstance(k.meta.get("bytes_split"), Mapping):
        return None
    return {str(p): float(v) for p, v in share.items() if _number(v)}


def _gemm_in_narrow_acts(k: Kernel, share: Mapping[str, float], dtype: str, new_p: str,
                         size: float, was: float, tensor: bool) -> Kernel:
    """An llm step's GEMM under --act `new_p` (llm's convention): the weights at `size`
    bytes each (from meta weight_bytes_per_param, else `was`), the inputs at `size` from
    `was`, the `share` of each part that is output (the activations' model-dtype output,
    the KV-cache writes) unchanged; the math in new_p on the tensor units if the roof has
    them."""
    split = k.meta["bytes_split"]
    per = k.meta.get("weight_bytes_per_param")
    per = float(per) if _number(per) and per > 0 else was
    # weights a checkpoint stores narrower than the model dtype (gpt-oss's mxfp4 experts)
    # stay as stored: llm --act fp8 multiplies them W4A8, it does not widen them
    to = size if per >= was else per
    new: dict = {}
    for p, v in split.items():
        if not _number(v):
            new[p] = v
            continue
        kept = min(1.0, max(0.0, share.get(p, 0.0)))
        ratio = to / per if p == "weights" else size / was
        new[p] = v * kept + v * (1 - kept) * ratio
    total = sum(float(v) for v in split.values() if _number(v))
    factor = sum(v for v in new.values() if _number(v)) / total if total > 0 else 1.0
    # the new split's kept shares, so that a chained what-if reads them right
    kept_now = {p: (split[p] * min(1.0, max(0.0, f)) / new[p] if new.get(p) else f)
                for p, f in share.items() if _number(split.get(p))}
    meta = {**k.meta, "bytes_split": new, "model_dtype_share": kept_now}
    if "weight_bytes_per_param" in k.meta:
        meta["weight_bytes_per_param"] = to
    return k.with_(flop=converted_flop(k, new_p),
                   bytes={lv: b * factor for lv, b in k.bytes.items()},
                   unit=_unit_in(k, tensor, "linear"),
                   meta=meta_in_dtype(meta, dtype, dtype_bytes(dtype) / was))


def _model_dtype_parts(k: Kernel) -> tuple[str, ...] | None:
    """The bytes_split parts an llm step's kernel keeps at the model dtype under 8-bit
    activations (meta model_dtype_parts), None where it names none."""
    parts = k.meta.get("model_dtype_parts")
    if not isinstance(parts, (list, tuple)) or not isinstance(k.meta.get("bytes_split"),
                                                              Mapping):
        return None
    return tuple(str(p) for p in parts)


def _rows_in_narrow_acts(k: Kernel, wide: tuple[str, ...], dtype: str, size: float,
                         block: float, was: float) -> Kernel:
    """An llm step's kernel with parts at the model dtype (`was` bytes an element) under
    --precision `dtype` (`size` bytes bare, `block` with an fp4 format's scales): the
    embedding's gathered rows move to `block` bytes a weight from the bytes they are
    stored at (meta weight_bytes_per_param), as llm --act nvfp4|mxfp4 counts the table
    with its block scales (s27: a bare 0.5 B); rows a table stores narrower than the
    model dtype (--weights int4: 0.515625 B) stay as stored, as llm --weights int4 --act
    fp8 keeps them and _gemm_in_narrow_acts keeps a GEMM's (s27: they were halved, 528 B a
    TinyLlama token, not 1,056), unless a what-if moved them to fp4 (meta fp4_format:
    bare 0.5 B)."""
    moved_fp4 = fp4_format(k.meta.get(FP4_FORMAT_META, "")) is not None
    bare = dtype_bytes("fp4") if moved_fp4 else was
    per = k.meta.get("weight_bytes_per_param")
    per = float(per) if _number(per) and per > 0 else bare
    if per < was and not moved_fp4 and "weights" not in wide:
        return k
    return _in_narrow_acts(k, wide, dtype, block / per, size / bare)


def _in_narrow_acts(k: Kernel, wide: tuple[str, ...], dtype: str, ratio: float,
                    bare: float) -> Kernel:
    """An llm step's kernel under 8-bit activations: the `wide` parts of its bytes_split
    and its math stay at the model dtype, its other parts (the embedding's gathered rows)
    scale by `ratio` (an fp4 format's block scales included), `bare` the bare element
    sizes' ratio that names the new dtype; a kernel all of whose parts stay is unchanged."""
    split = k.meta["bytes_split"]
    nums = {p: float(v) for p, v in split.items() if _number(v)}
    total = sum(nums.values())
    moved = sum(v for p, v in nums.items() if p not in wide)
    if moved <= 0 or total <= 0:
        return k
    factor = (total - moved + moved * ratio) / total
    meta = {**k.meta, "bytes_split": {p: (v * ratio if p not in wide and _number(v) else v)
                                      for p, v in split.items()}}
    if _number(k.meta.get("weight_bytes_per_param")) and "weights" not in wide:
        meta["weight_bytes_per_param"] = k.meta["weight_bytes_per_param"] * ratio
    meta = meta_in_dtype(meta, dtype, bare) if "weights" not in wide else meta
    return k.with_(bytes={lv: b * factor for lv, b in k.bytes.items()}, meta=meta)


def _named(kernels: Sequence[Kernel], names: list[str] | None, precision: str) -> str:
    """'dgemm', 'dgemm and 2 more': the moved kernels whose math runs in `precision`."""
    found = [k.name for k in kernels if (names is None or k.name in names)
             and k.precision == precision]
    return found[0] + (f" and {len(found) - 1} more" if len(found) > 1 else "")


def _only_chosen(w: WhatIf, kernels: Sequence[Kernel], names: list[str] | None,
                 target: Roof) -> WhatIf:
    """`w` (applied with a capped roof as its new roof, which retimes every kernel) with
    the kernels not named back as they were: a kernel not moved keeps its measured time."""
    moved = {id(old): new for old, new in w.moves if names is None or old.name in names}
    after = [moved.get(id(k), k) for k in kernels]
    return replace(w, after=analyze(target, after),
                   moves=tuple((o, n) for o, n in w.moves if id(o) in moved))


def _element_bytes(k: Kernel, dtype: str, precision: str) -> float:
    """The bytes of one of the kernel's elements now; a precision rooflab does not know is
    the kernel's to fix, not --precision's: "unknown dtype 'fp99'" read as if the option
    were wrong (review r1 F9)."""
    try:
        return dtype_bytes(dtype)
    except InputError:
        raise InputError(f"kernel '{k.name}': its precision '{dtype}' is not one rooflab "
                         f"knows, so --precision {precision} cannot convert it (its element "
                         f"size is unknown); write one of {', '.join(PRECISIONS)} in the "
                         f"kernel's file, or move the others with --only") from None


def _unit_in(k: Kernel, tensor: bool, kind: str | None = None) -> str | None:
    """The unit of a kernel moved to a precision the roof has (`tensor`) or lacks tensor
    units for. Only matrix kernels (opkind.is_matrix, or already on tensor units) move;
    a tensor kernel without a tensor ceiling in the new precision keeps unit "tensor", as
    train's and llm's kernels of that dtype do, so Roof.compute_for stands in for it and
    notes it (sanity's precision_fallback): whatif --precision fp32 of a bf16 train file
    reads as train --dtype fp32 does (s36 T: it had dropped the unit, and the note)."""
    # the kind report reads: meta's op, else the name's ('ampere_fp16_s16816gemm_...' has
    # no op and is a GEMM all the same); `kind` where the caller has it already
    kind = kernel_kind(k)[0] if kind is None else kind
    matrix = k.unit == "tensor" or is_matrix(kind)
    if not matrix:
        return k.unit
    return "tensor" if tensor else k.unit


def _number(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def meta_bytes_in_precision(k: Kernel, ratio: float, moved: float) -> dict:
    """The byte totals of k's meta once its elements are `ratio` times their size and its
    bytes `moved` times theirs (moved != ratio: a sparse kernel whose indices stay):
    bytes_split (split_in_precision) and the matrix totals (MATRIX_META) where present;
    index_bytes, integers, stays."""
    out: dict = {}
    split = k.meta.get("bytes_split")
    if isinstance(split, Mapping):
        out["bytes_split"] = split_in_precision(split, ratio, moved)
    matrix = ratio if moved == ratio else _matrix_ratio(k, ratio)
    for key in MATRIX_META:
        if _number(k.meta.get(key)):
            out[key] = k.meta[key] * matrix
    if _number(k.meta.get("weight_bytes_per_param")):   # `rooflab llm`'s, as its weights
        out["weight_bytes_per_param"] = k.meta["weight_bytes_per_param"] * matrix
    return out


def split_in_precision(split: Mapping[str, object], ratio: float,
                       moved: float) -> dict:
    """A bytes_split in the new element size: every part x `ratio` where all bytes moved
    so; for a sparse kernel, CSR's parts (`rooflab ai spmv`: values, indices, rowptr, x,
    y) x ratio but the index parts (INDEX_PARTS), which keep their width; a read/write
    split's write part (y: indices are never written) x ratio and its read part the rest
    of the kernel's new bytes; any other split, each part x `moved`, as the bytes."""
    nums = {p: float(v) for p, v in split.items() if _number(v)}
    if moved == ratio:
        factors = dict.fromkeys(nums, ratio)
    elif any(p in nums for p in INDEX_PARTS):
        factors = {p: 1.0 if p in INDEX_PARTS else ratio for p in nums}
    elif set(nums) == {"read", "write"}:
        read, write = nums["read"], nums["write"]
        new_read = max(0.0, (read + write) * moved - write * ratio)
        factors = {"read": new_read / read if read else 1.0, "write": ratio}
    else:
        factors = dict.fromkeys(nums, moved)
    return {p: v * factors[p] if p in nums else v for p, v in split.items()}


def _matrix_ratio(k: Kernel, ratio: float) -> float:
    """New matrix bytes / old of a sparse kernel: its values scale by `ratio`, its indices
    stay (advice_sparse.sparse_bytes' shares; `ratio` where they are not known)."""
    shares = sparse_bytes(k, k.precision)
    if shares is None or shares.matrix <= 0:
        return ratio
    return 1.0 - shares.values / shares.matrix * (1.0 - ratio)
