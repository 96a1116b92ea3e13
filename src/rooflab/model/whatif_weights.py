"""What if the weights changed: their share of a kernel's bytes (weight_share_of), stored in
another dtype (quantize_weights) or pruned 2:4 (sparsify). FLOP stay, the weight bytes
shrink. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import replace

from ..errors import InputError
from ..units import GROUP_SCALED, canonical_dtype, dtype_bytes, fmt_share, stored_weight_bytes
from .advice_memory import weight_share as known_weight_share
from .ceiling import Roof
from .dtype_names import marked_words, renamed_in_weights
from .element_dtype import INT4_WEIGHT_WORDS, element_bytes
from .fp4_formats import FP4_BLOCK, block_words
from .held_unit import held_ceiling
from .kernel import Kernel
from .opkind import (
    has_weights,
    is_attention,
    is_sparse,
    is_streaming,
    is_whole_step,
    kernel_kind,
    name_words,
)
from .retime import WhatIf, _apply
from .whatif_conv import conv_filter_share


def weight_share(k: Kernel, share: float | None) -> float:
    """The fraction of a kernel's bytes that are weights (weight_share_of without where
    it came from)."""
    return weight_share_of(k, share)[0]


def weight_share_of(k: Kernel, share: float | None) -> tuple[float, str]:
    """The fraction of a kernel's bytes that are weights, and where it came from: `share`
    when given, else what the advice knows (advice_memory.weight_share: meta bytes_split or
    weight_bytes, a GEMM's shape), else by kind: all weights for a kind with weights
    (opkind.has_weights: a matrix multiply, a GEMV or decode step) and for a sparse
    matrix (read once per product, as a GEMV's weights), none for any other: attention
    and streaming ops, and a batched matmul or unknown kind, whose bytes no rule splits,
    are taken as activations, the rule --sparsity uses (review r8 F2: a conv held whole
    under --batch 8 was predicted free). A conv's filter is its weights
    (whatif_conv.conv_filter_share: ai conv2d's bytes_split, a trace's filter shape)."""
    if share is not None:
        if not 0 <= share <= 1:
            raise InputError(f"weight share must be between 0 and 1; got {share}")
        return share, "given"
    # a conv's filter is its weights, read once per call (review s28 R3 F1: `ai conv2d`
    # writes bytes_split filter, a trace its shape; both were taken as activations)
    conv = conv_filter_share(k)
    if conv is not None:
        return conv
    # the kind report reads: meta's op, else the name's (a profiler's 'residual_add' or
    # 'vectorized_elementwise_kernel<...add...>' has no op; review 13v F-A)
    kind = kernel_kind(k)[0]
    nbytes = k.bytes.get("DRAM") or sum(k.bytes.values())
    known = known_weight_share(k, kind, k.total_flop / nbytes if nbytes else 0.0, k.precision)
    # a batched matmul's shape or AI says nothing of weights (its batch is on both
    # operands): only its meta does
    if known is not None and (has_weights(kind) or known[1].startswith("meta")):
        return known
    if is_attention(kind):
        # Q, K, V and O are activations and KV cache, not weights
        return 0.0, f"its kind, {kind}: activations"
    if has_weights(kind):
        return 1.0, f"its kind, {kind}"
    if is_sparse(kind):
        return 1.0, f"its kind, {kind}: the matrix, read once per product"
    if is_streaming(kind):   # words, not prefixes: 'addmm' (nn.Linear) is no 'add'
        return 0.0, f"its kind, {kind}: activations"
    if not kind and _elementwise_ai(k):
        return 0.0, "its AI, a streaming pass's"
    return 0.0, (f"its kind, {kind or 'unknown'}: no weight split known, taken as "
                 f"activations; its meta.weight_bytes gives one")


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
        # a share of the bytes as every share prints; 99.95 % is not '100.0 %' (all of
        # the bytes, review s28 R2 F10): share_text keeps it off 100
        parts.append(f"{who}weights {fmt_share(s)} of the bytes ({src})")
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

    block = FP4_BLOCK.get(str(dtype).strip().lower())
    if block is not None:
        # nvfp4 / mxfp4: fp4 with the format's own block scale, as llm --weights counts it
        if group is not None:
            raise InputError(f"--group goes with --quantize int4/int8; {dtype} has its own "
                             f"blocks (nvfp4: an fp8 scale per 16 weights, mxfp4: an e8m0 "
                             f"scale per 32): drop --group")
        dtype, label, target = "fp4", str(dtype).strip().lower(), block
    else:
        target, label = _target_bytes(dtype, stored), None

    def moved(k: Kernel) -> tuple[float, str, float, float]:
        """(weight share, where it came from, new bytes per weight / old, new bytes per
        weight) of one kernel, without a word said (a whole step reads its kernels')."""
        # weight-only quantizers (GPTQ, AWQ, bitsandbytes) leave norm weights in the
        # activation dtype, as `rooflab llm --weights` does; an llm step's MLA absorbed
        # kernels stay 16-bit as vLLM runs them (meta held_unquantized; s26 r3 F4)
        s, src = ((0.0, "a norm: weight-only quantizers leave it")
                  if share is None and kernel_kind(k)[0].endswith("norm")
                  else (0.0, "held unquantized") if share is None
                  and k.meta.get("held_unquantized")
                  else (0.0, "a weight gradient, written at the training dtype")
                  if share is None and k.meta.get("weight_gradient")
                  else weight_share_of(k, share))
        step = steps.get(id(k))
        # every kernel's weights at `target`, the embedding's gathered rows too: an fp4
        # table carries its block scales, as llm --weights nvfp4|mxfp4 counts it (s27:
        # its rows were a bare 0.5 B, the table stored at 0.5625)
        return s, src, (target / _stored_per_param(k, stored) if step is None else step), target

    def change(k: Kernel) -> Kernel:
        s, src, ratio, to = moved(k)
        held = k.meta.get("held_unquantized")
        if share is None and held:
            kept.append((k.name, str(held)))
        if s > 0 and ratio > 1:
            # --quantize sets the weights' format both ways (int4 -> int8 is a fair what-if),
            # but a widening is said: gpt-oss's mxfp4 experts under fp8 read 2x the bytes
            widened.append(f"{k.name} ({weights_dtype(k)})")
        used.append((k.name, s, src))
        factor = (1 - s) + s * ratio
        # the weights are `dtype` now: a stale weight_dtype would make a second quantize
        # scale from the wrong size (a kernel without weights gets no such key)
        if s <= 0:
            # nothing moved: a kernel without weights (or held) keeps its meta, but a
            # stale weight_dtype is still set, as before
            meta = (k.meta if "weight_dtype" not in k.meta or held
                    else {**k.meta, "weight_dtype": canonical_dtype(dtype)})
            return k.with_(bytes={lv: b * factor for lv, b in k.bytes.items()}, meta=meta)
        # bytes_split's weights and the bytes per weight follow, so a chained what-if
        # reads the new share and size (review s26 r3 F2: a stale split after --quantize)
        meta = {**k.meta, "weight_dtype": canonical_dtype(dtype),
                **meta_weights_scaled(k.meta, ratio)}
        if "weight_bytes_per_param" in k.meta:
            meta["weight_bytes_per_param"] = to
        new = k.with_(bytes={lv: b * factor for lv, b in k.bytes.items()}, meta=meta)
        # a name that says the old weights' dtype is kept, marked (dtype_names)
        return renamed_in_weights(k, new, weights_dtype(k), named, taken)

    kernels = tuple(kernels)
    # filled after `moved` exists (it reads it: {} while the steps' kernels are priced)
    steps: dict[int, float] = {}
    steps.update(step_weight_ratios(kernels, moved))
    used: list[tuple[str, float, str]] = []
    widened: list[str] = []
    kept: list[tuple[str, str]] = []
    named = label or canonical_dtype(dtype)
    taken = {k.name for k in kernels}
    w = _apply(roof, kernels, change, names, f"weights -> {named}", "")
    narrower = (f"; WIDER, not narrower: these kernels' weights were stored in fewer bytes "
                f"than {named}'s and now read more (--only to leave them): "
                f"{', '.join(widened)}" if widened else "")
    # the shares are known once each moved kernel was changed: say the ones used
    return replace(w, assumption=(
        f"weights are read once per call and stored in {target:.4g} byte(s) each"
        f"{_block_note(label) if label else _scales_note(dtype, group)}; the math stays in "
        f"the kernel's precision; "
        f"{shares_words(used)}{narrower}{_held_words(kept)}{_train_words(kernels)}"
        f"{marked_words(w.moves)}"))


def weights_dtype(k: Kernel) -> str:
    """The dtype a kernel's weights are stored in, one reading for their bytes and their
    mark: meta weight_dtype, else int4 for a weight-only int4 GEMM's name
    (INT4_WEIGHT_WORDS: 'w4a16', 'awq', 'marlin', as the advice reads it), else the
    kernel's precision."""
    given = k.meta.get("weight_dtype")
    if given:
        try:
            return canonical_dtype(str(given))
        except InputError:
            return str(given)
    if any(w in INT4_WEIGHT_WORDS for w in name_words(k.name)):
        return "int4"
    return k.precision


def _train_words(kernels: Sequence[Kernel]) -> str:
    """What --quantize means on a training step (`rooflab train`'s kernels, meta
    train_part): frozen quantized base weights as QLoRA keeps them, read narrow by the
    forward and the backward's dX; the dW kernels and the optimizer still counted at the
    training dtype, as a full fine-tune computes them (review s27 v3-F7)."""
    if not any(k.meta.get("train_part") for k in kernels):
        return ""
    return ("; a training step: the forward and the backward's dX read the weights in the "
            "new format (QLoRA-style frozen base weights); the weight gradients (.bwd_dw, "
            "embedding.bwd) are still written at the training dtype and the optimizer "
            "keeps its fp32 state, as full fine-tuning computes them (QLoRA computes no "
            "dW of frozen weights and keeps no optimizer state for them: this step's "
            "backward and optimizer are an upper bound for it)")


QUANTIZE_TARGETS = ("int8", "int4", "int3", "int2", "fp8", "fp4", "nvfp4", "mxfp4", "fp16",
                    "bf16")


def _target_bytes(dtype: str, stored) -> float:
    """Bytes per weight of a --quantize target; an unknown one says which targets exist
    (review s26 v1-F2: "unknown dtype 'nvfp4'" listed fp4 but not the fp4 formats)."""
    try:
        return stored(dtype)
    except InputError:
        raise InputError(f"--quantize: unknown weight format '{dtype}'; use one of "
                         f"{', '.join(QUANTIZE_TARGETS)} (nvfp4/mxfp4: fp4 with their block "
                         f"scales, as rooflab llm --weights counts them)") from None


def _block_note(label: str) -> str:
    """' (nvfp4: 0.5 B + an fp8 scale per 16 weights)' for a block-scaled fp4 target."""
    return f" ({block_words(label, 'weights')}, as rooflab llm --weights {label} counts)"


def _held_words(kept: Sequence[tuple[str, str]]) -> str:
    """'; q_absorb, v_absorb held unquantized: <why>' for the kernels whose meta says
    held_unquantized (an llm step's MLA absorbed kernels), '' for none."""
    if not kept:
        return ""
    return f"; {', '.join(n for n, _ in kept)} held unquantized: {kept[0][1]}"


def _stored_per_param(k: Kernel, stored) -> float:
    """A kernel's bytes per weight now: its meta weight_bytes_per_param (`rooflab llm`
    writes what it counted: group scales, zero points, a ggml type's blocks; review s26 r3
    F3: int4 in groups of 32 was read as a bare 0.5 B), else its weights_dtype's size as
    --quantize counts the target's (s31: a weight-only int4 name, vLLM's AWQ GEMM, was
    read at its fp16 math precision, so int8 halved weights it said were 4-bit)."""
    per = k.meta.get("weight_bytes_per_param")
    if isinstance(per, (int, float)) and not isinstance(per, bool) and per > 0:
        return float(per)
    return stored(weights_dtype(k))


def step_weight_ratios(kernels: Sequence[Kernel], moved) -> dict[int, float]:
    """{id(step): new weight bytes / old} for each whole step (opkind.is_whole_step: the
    step `rooflab llm --tpot-ms` writes beside its kernels) whose meta gives no bytes per
    weight but whose bytes_split weights are the sum of the other kernels' (its own, in
    one file): their weights as each of them moves (`moved`: quantize_weights' per-kernel
    rule), so the step lands on its kernels' sum. Its weight_dtype alone priced a
    --weights q4_k step's 0.5625 B a weight as int4's bare 0.5 (s27: to int8 2x the
    weights, not its kernels' 1.78x), and moved its norms too. A step without such kernels
    scales from its weight_dtype, as before."""
    def weights(k: Kernel) -> float | None:
        split = k.meta.get("bytes_split")
        w = split.get("weights") if isinstance(split, Mapping) else None
        return float(w) if _number(w) and w > 0 else None

    # the split first: a profiler's file has none, and is_whole_step reads names (s24)
    split = [(k, w, is_whole_step(k)) for k in kernels if (w := weights(k)) is not None]
    parts = [(k, w) for k, w, whole in split if not whole]
    total = sum(w for _, w in parts)
    out = {}
    for k, own, whole in split:
        if (not whole or total <= 0 or abs(total - own) > 1e-6 * own
                or _number(k.meta.get("weight_bytes_per_param"))):
            continue
        new = 0.0
        for part, w in parts:
            s, _, ratio, _ = moved(part)
            new += w * (ratio if s > 0 else 1.0)
        out[id(k)] = new / total
    return out


def meta_weights_scaled(meta: Mapping, weights: float, rest: float = 1.0) -> dict:
    """The meta byte totals of a kernel whose weight bytes were scaled by `weights` and its
    other bytes by `rest`: bytes_split (its 'weights' part, every other part) and the
    weight_bytes total, where present; {} where neither is."""
    out: dict = {}
    split = meta.get("bytes_split")
    if isinstance(split, Mapping):
        # a conv's filter is its weights (ai conv2d's split: input, filter, output)
        out["bytes_split"] = {p: (v * (weights if p in ("weights", "filter") else rest)
                                  if _number(v) else v) for p, v in split.items()}
    if _number(meta.get("weight_bytes")):
        out["weight_bytes"] = meta["weight_bytes"] * weights
    return out


def _number(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


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

def sparse_weight_ratio(element_bytes: float) -> float:
    """Bytes of 2:4-sparse weights over dense ones: two of every four values kept, each with
    a 2-bit position (4 bits per group of 4): fp16 9/16, fp8/int8 5/8 (NVIDIA's compressed
    format: values plus 2-bit metadata per kept value)."""
    return (2 * element_bytes + 0.5) / (4 * element_bytes)


def sparsify(roof: Roof, kernels: Sequence[Kernel], names: Iterable[str] | None = None,
             share: float | None = None, sparse: Collection[str] | None = None) -> WhatIf:
    """2:4 structured sparsity on the weights (seed 002: "should a fully connected layer be
    sparsified?"): weight bytes shrink to the kept half plus metadata; on a tensor ceiling
    whose hardware has a sparse rate for the kernel's precision the math skips the zero half
    (the sparse peak is twice the dense one: executed FLOP halve against the dense peak).
    `sparse`: the precisions the device has a sparse rate for (the catalog's sparse figures:
    MI300X tf32/fp16/bf16/fp8/int8, none on an MI250X); None where the device is not known:
    every tensor precision but fp64. fp64 never: no GPU has a sparse fp64 path (CDNA3's
    sparse MFMA and NVIDIA's sparse tensor cores stop at tf32), review s28 R4 F6. Kernels
    without weights are left alone."""
    dense_only: set[str] = set()

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
        ceiling = held_ceiling(roof, k).ceiling
        skips = (ceiling.unit == "tensor" and k.precision != "fp64"
                 and (sparse is None or k.precision in sparse))
        if ceiling.unit == "tensor" and not skips:
            dense_only.add(k.precision)
        fl = 0.5 if skips else 1.0
        # 2:4 halves the tensor units' work only: a mixed kernel's other precisions run on
        # vector units (kernel_ceiling), so they keep their FLOP
        return k.with_(flop={p: f * (fl if p == k.precision else 1.0)
                             for p, f in k.flop.items()},
                       bytes={lv: b * ((1 - s) + s * ratio) for lv, b in k.bytes.items()},
                       meta={**k.meta, "sparsity": "2:4"})

    w = _apply(roof, kernels, change, names, "weights -> 2:4 sparse", "")
    which = ("the device's sparse rates (" + (", ".join(sorted(sparse)) or "none") + ")"
             if sparse is not None else "every tensor precision but fp64 (the device is "
             "not in the catalog, so its sparse rates are not known)")
    gone = (f"; {', '.join(sorted(dense_only))} on tensor ceilings: no sparse rate on "
            f"{roof.name}, so only the bytes shrink" if dense_only else "")
    return replace(w, assumption=(
        "half of every 4 weights pruned to zero (2:4); weights stored as the kept half plus "
        "2-bit positions (fp16 9/16 of the bytes, 8-bit 5/8); on tensor ceilings of a "
        f"precision with a sparse rate, {which}, the zero half is skipped (executed FLOP "
        f"halve: the sparse peak is twice the dense one), elsewhere only the bytes shrink"
        f"{gone}; whether the model keeps its accuracy when pruned is not modelled"))
