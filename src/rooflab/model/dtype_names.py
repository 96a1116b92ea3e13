"""A kernel's name once a what-if has changed its dtype. The rule (docs/whatif.md): a name
is never rewritten, since a profiler's name is a real library's ('ampere_fp16_s16816gemm_
fp16_...' at fp8 is no kernel cuBLAS ships); a kernel whose name says the dtype the
what-if changed keeps that name, marked with the change: 'gemm_fp16_1024 [fp16->fp8]'
under --precision, 'gemm_fp16_1024 [weights fp16->int4]' under --quantize (the weights
alone changed), 'fft_c128 [complex128->complex64]'. A name that says no dtype ('q_proj')
claims nothing the change falsifies and stays as it is. A chained what-if updates the mark
(its left side stays what the name says) and drops it where the dtype is back.

A name says a dtype by a whole token (between characters that are not letters or digits,
in the spellings of NAME_DTYPES: 'fp16', 'f16', 'e4m3', 'c128'), by a run of such spellings
(cuBLAS's 'bf16bf16', 'bf16f32'), by ATen's 'c10::Half' / 'c10::complex<float>', or, for
weights, by 'w4a16'-style words; 'tf32gemm', 's16816gemm' and 'bf16x9' say none. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from .element_dtype import COMPLEX_PARTS, INT4_WEIGHT_WORDS, complex_name, element_dtype
from .kernel import Kernel
from .opkind import name_words

# The spellings of a dtype read off a name, each with the dtype it means (the units
# vocabulary's canonical names and its aliases). C's type words (float, double, half, int,
# long, char) are not read: they are a template's arguments in profiler names
# ('vectorized_elementwise_kernel<4, float>'), not what the kernel was named for.
NAME_DTYPES: dict[str, str] = {
    **{d: d for d in ("fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "fp4", "int64",
                      "int32", "int16", "int8", "uint8", "int6", "int4", "int3", "int2")},
    **{c: c for c in COMPLEX_PARTS}, "c128": "complex128", "c64": "complex64",
    "float64": "fp64", "f64": "fp64", "float32": "fp32", "f32": "fp32",
    "float16": "fp16", "f16": "fp16", "bfloat16": "bf16",
    "float8": "fp8", "e4m3": "fp8", "e5m2": "fp8", "e4m3fn": "fp8", "fp8_e4m3": "fp8",
    "fp8_e5m2": "fp8", "float8_e4m3fn": "fp8", "float8_e5m2": "fp8",
    "e2m1": "fp4", "fp4_e2m1": "fp4", "nvfp4": "fp4", "mxfp4": "fp4",
}
_ALTS = "|".join(map(re.escape, sorted(NAME_DTYPES, key=len, reverse=True)))
# a whole token, or a run of spellings with nothing between ('bf16bf16', 'bf16f32');
# longest spelling first, so 'fp8_e4m3' is one token, not 'fp8' then a stray 'e4m3'
_TOKEN = re.compile(rf"(?<![A-Za-z0-9])(?:{_ALTS})+(?![A-Za-z0-9])", re.IGNORECASE)
_PART = re.compile(_ALTS, re.IGNORECASE)
# ATen's scalar types in a template's arguments (PyTorch's own kernels)
_ATEN = re.compile(r"(?:c10|at)::(complex<c10::Half>|complex<double>|complex<float>|Half|"
                   r"BFloat16|Float8_e4m3fn|Float8_e5m2)")
ATEN_DTYPES = {"complex<c10::Half>": "complex32", "complex<double>": "complex128",
               "complex<float>": "complex64", "Half": "fp16", "BFloat16": "bf16",
               "Float8_e4m3fn": "fp8", "Float8_e5m2": "fp8"}
# weight-only quantized GEMMs say their weights' bits: 'w4a16' (Marlin, AWQ), 'w8a8'
_WEIGHT_BITS = re.compile(r"(?<![A-Za-z0-9])w(2|3|4|8)a(?:4|8|16|32)(?![A-Za-z0-9])",
                          re.IGNORECASE)
# the mark: ' [fp16->fp8]', ' [weights fp16->int4]', both: ' [fp16->fp8, weights fp8->int4]'
_MARK = re.compile(r" \[([^\[\]]+)\]$")
_CLAUSE = re.compile(r"(weights )?([a-z0-9_]+)->([a-z0-9_]+)")
WEIGHTS = "weights"


def dtypes_said(name: str, weights: bool = False) -> set[str]:
    """The dtypes a name says (canonical, complex ones by their complex names); with
    `weights`, also the weight dtype of a 'w4a16'-style word (int4) and int4 for a
    weight-only int4 GEMM's name (element_dtype.INT4_WEIGHT_WORDS, as the advice reads it)."""
    said = {NAME_DTYPES[p.lower()] for hit in _TOKEN.finditer(_ATEN.sub(" ", name))
            for p in _PART.findall(hit.group(0))}
    said |= {ATEN_DTYPES[t] for t in _ATEN.findall(name)}
    if weights:
        said |= {f"int{b}" for b in _WEIGHT_BITS.findall(name)}
        if any(w in INT4_WEIGHT_WORDS for w in name_words(name)):   # 'awq', 'marlin'
            said.add("int4")
    return said


def split_mark(name: str) -> tuple[str, dict[str, tuple[str, str]]]:
    """(the name without its mark, {'' or 'weights': (dtype the name says, dtype now)});
    a trailing bracket that is no mark (a torch trace's shapes) stays in the name."""
    hit = _MARK.search(name)
    if hit is None:
        return name, {}
    clauses = {}
    for part in hit.group(1).split(", "):
        c = _CLAUSE.fullmatch(part)
        if c is None:
            return name, {}
        clauses[WEIGHTS if c.group(1) else ""] = (c.group(2), c.group(3))
    return name[:hit.start()], clauses


def marked_name(name: str, what: str, olds: Collection[str], was: str, now: str) -> str:
    """`name` marked for `what` ('' the data, 'weights' the weights) going from `was` to
    `now`, where the name says one of `olds` (dtypes_said), or its mark says `what`
    already (a chained what-if: its left side is kept), or, for the weights, its data
    mark says `was`; `name` as it is otherwise. A mark back at its left side is dropped."""
    base, clauses = split_mark(name)
    if what in clauses:
        said = clauses[what][0]
    elif what == WEIGHTS and clauses.get("", ("", ""))[1] == was:
        said = was
    else:
        hits = dtypes_said(base, weights=what == WEIGHTS)
        found = {d for d in hits if d in olds or COMPLEX_PARTS.get(d) in olds}
        if not found:
            return name
        said = was
        if was not in COMPLEX_PARTS and any(d in COMPLEX_PARTS for d in found):
            # 'fft_c128' of fp64 data with no complex dtype in its meta: said as complex
            said = complex_name(was)
            now = complex_name(now) if complex_name(now) in COMPLEX_PARTS else now
    clauses[what] = (said, now)
    kept = [(w, s, n) for w, (s, n) in sorted(clauses.items()) if s != n]
    if not kept:
        return base
    return base + " [" + ", ".join(f"{w + ' ' if w else ''}{s}->{n}" for w, s, n in kept) + "]"


def renamed_in_dtype(old: Kernel, new: Kernel, taken: Collection[str] = ()) -> Kernel:
    """`new` (what --precision made of `old`) marked for its element dtype where that
    changed and the name says the old one (the old element dtype or math precision):
    marked_name, 'nvfp4' where meta fp4_format says the block format; unless the marked
    name is `taken` (another kernel of the file has it). A kernel whose dtype did not
    change keeps its name (a gradient collective, an optimizer held in fp32)."""
    was, now = element_dtype(old, old.precision), element_dtype(new, new.precision)
    if was == now:
        return new
    name = marked_name(new.name, "", {was, old.precision}, _format(old, was),
                       _format(new, now))
    return new if name == new.name or name in taken else new.with_(name=name)


def renamed_in_weights(old: Kernel, new: Kernel, was: str, now: str,
                       taken: Collection[str] = ()) -> Kernel:
    """`new` (what --quantize made of `old`: its weights from `was` to `now`, the math and
    activations as they were) marked '[weights was->now]' where the name says `was`
    (marked_name), unless that name is `taken`."""
    if was == now:
        return new
    name = marked_name(new.name, WEIGHTS, {was}, was, now)
    return new if name == new.name or name in taken else new.with_(name=name)


def _format(k: Kernel, dtype: str) -> str:
    """fp4 data by its block format where meta fp4_format names one (nvfp4), else dtype."""
    fmt = k.meta.get("fp4_format") if dtype == "fp4" else None
    return fmt if isinstance(fmt, str) and fmt else dtype


def marked_words(moves: Collection[tuple[Kernel, Kernel]]) -> str:
    """'; ... keep their names, marked ...' for the assumption line where a move marked a
    name, '' where none did."""
    marked = [new.name for old, new in moves if new.name != old.name
              and split_mark(new.name)[0] == split_mark(old.name)[0]]
    if not marked:
        return ""
    more = f" and {len(marked) - 1} more" if len(marked) > 1 else ""
    return (f"; a kernel whose name says the dtype that changed keeps its (real) name, "
            f"marked [old->new] ({min(marked, key=len)}{more})")


def move_label(old: str, new: str) -> str:
    """A move's row or arrow label: the new name alone where it is the old one marked
    ('gemm_fp16 [fp16->fp8]', not 'gemm_fp16 -> gemm_fp16 [fp16->fp8]'), else
    'old -> new' (a --batch rename, a fusion), the old name where they agree."""
    if old == new:
        return old
    if split_mark(old)[0] == split_mark(new)[0]:
        return new
    return f"{old} -> {new}"
