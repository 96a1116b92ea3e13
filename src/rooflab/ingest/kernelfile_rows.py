"""Checks and joins shared by the kernel-file readers (kernelfile.py's JSON and CSV):
warnings about what a file's rows say (an `ai` that disagrees with flop / bytes, a precision
rooflab does not know, unknown fields), the op kinds that run on vector units, and the rows
of one kernel seen at several memory levels joined into one Kernel.
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Iterable

from ..errors import InputWarning, user_stacklevel
from ..model.canonical_names import UNKNOWN_UNIT_WHY, unknown_unit
from ..model.field_hints import KERNEL_FIELDS
from ..model.kernel import PRECISION_ASSUMED, Kernel, unknown_name
from ..model.provenance import WORDS
from ..units import DTYPE_BYTES as DTYPES
from ..units import fmt_fraction


def warn_file(path: str, message: str, line: int | None = None) -> None:
    """An InputWarning "FILE[:LINE]: message", raised in the one loader every verb shares
    (report, plot, whatif, choose, compare) so each says it; the CLI prints it on stderr
    (cli/main.py), so `--json` output stays pure JSON. Python's default filter shows one
    message once per line, so a file read twice (compare) warns once. From Python the
    warning points at the user's load_kernels(...) line, not inside rooflab (review 19b N3)."""
    where = f"{path}:{line}" if line is not None else path
    warnings.warn(f"{where}: {message}", InputWarning, stacklevel=user_stacklevel())


def unknown_fields_message(odd: list[tuple[str, tuple[str, ...], str]], shown: int = 3) -> str:
    """One message for a file's kernels with unknown fields: kernels with the same unknown
    fields are one group (a "time_ms" in every kernel is said once, with the first kernel's
    numbers), then the fields that are read."""
    groups: dict[tuple[str, ...], list[tuple[str, str]]] = {}
    for where, fields, words in odd:
        groups.setdefault(fields, []).append((where, words))
    parts = []
    for members in groups.values():
        (where, words), rest = members[0], [w for w, _ in members[1:]]
        also = ""
        if rest:
            more = f" and {len(rest) - shown} more" if len(rest) > shown else ""
            also = f" (the same in {', '.join(rest[:shown])}{more})"
        parts.append(f"{where}: {words}{also}")
    return "; ".join(parts) + f" (known kernel fields: {', '.join(KERNEL_FIELDS)})"


def _merge_levels(kernels: list[Kernel], path: str = "<kernels>",
                  wheres: list[tuple[int | None, str]] | None = None) -> tuple[Kernel, ...]:
    """Rows that are one kernel seen at different memory levels become one Kernel. Rows of
    one name that cannot be joined so (their flop, seconds, calls or unit differ, or they
    give bytes at the same level) are different kernels: the later ones get a distinct
    name ('gemm #2', as `rooflab ncu` names repeats), with one warning naming FILE:LINE,
    so every verb (report's per-kernel lookup, compare's matching) keeps them apart."""
    from dataclasses import replace

    out: list[Kernel] = []
    index: dict[tuple, int] = {}
    taken = {k.name for k in kernels}
    first_of: dict[str, tuple[int | None, str]] = {}   # a name's first row, for the warning
    renamed: list[tuple[tuple[int | None, str], str]] = []
    for i, k in enumerate(kernels):
        where = wheres[i] if wheres is not None else (None, f"kernel '{k.name}'")
        # a step's rows (meta step_index, an int: meta_check) join only within that step
        key = (k.name, tuple(k.flop.items()), k.seconds, k.calls, k.unit,
               k.meta.get("step_index"))
        j = index.get(key)
        if j is not None and not set(k.bytes) & set(out[j].bytes):
            out[j] = replace(out[j], bytes={**out[j].bytes, **k.bytes},
                             meta={**k.meta, **out[j].meta})
            continue
        if k.name in first_of:
            name = _free_name(k.name, taken)
            taken.add(name)
            renamed.append((where, f"named '{name}' (its first row: "
                                   f"{_row_words(first_of[k.name])})"))
            # compare adds launches of one name up again (model/compare.merge_by_name)
            k = replace(k, name=name, meta={**k.meta, "renamed_from": k.name})
            key = (name, *key[1:])
        first_of.setdefault(k.name, where)
        index[key] = len(out)
        out.append(k)
    if renamed:
        _warn_rows(path, renamed, "rows of one name whose flop, seconds, calls or unit differ "
                                  "(or that repeat a memory level) are not levels of one "
                                  "kernel, so each is its own kernel under its own name; "
                                  "give each kernel its own name, or one row per level with "
                                  "the same flop and seconds to join them")
    return tuple(out)


def _free_name(name: str, taken: set[str]) -> str:
    """'name #2', '#3', ...: the first not already a kernel's name."""
    n = 2
    while f"{name} #{n}" in taken:
        n += 1
    return f"{name} #{n}"


def _row_words(where: tuple[int | None, str]) -> str:
    return f"line {where[0]}" if where[0] is not None else where[1]



# How close a given AI must be to flop / bytes: seed 000 §4.2's table rounds its AI column
# (softmax 0.51 for 5.6e6 / 1.1e7 = 0.509) to within 2 %.
AI_TOLERANCE = 0.02
# The op kinds `rooflab ai` counts on vector units (workloads/ops.py: gemv, elementwise,
# reduction, softmax and the norms): a file's kernel of one of these kinds with no `unit`
# gets "vector", so an fp16 GEMV is held to the fp16 vector rate as `ai gemv` holds it, not
# to the tensor peak (4x higher on an A100), and 2:4 sparsity does not halve its FLOP.
VECTOR_OPS = frozenset({"gemv", "elementwise", "reduction", "softmax", "layernorm",
                        "rmsnorm", "batchnorm", "groupnorm", "norm"})


def _with_op_unit(k: Kernel) -> Kernel:
    from dataclasses import replace

    op = k.meta.get("op")
    if k.unit is None and isinstance(op, str) and op.strip().lower() in VECTOR_OPS:
        return replace(k, unit="vector")
    return k


def _given_ai(value) -> float | None:
    """A kernel's own `ai` cell or field, as a number (None when absent or not a number)."""
    try:
        ai = float(str(value).strip().replace(",", "")) if value is not None else None
    except ValueError:
        return None
    return ai if ai is not None and ai == ai else None


def _check_read(path: str, kernels: list[Kernel], wheres: list[tuple[int | None, str]],
                given_ai: list[float | None]) -> None:
    """Warnings, once per file, about what was read: an `ai` that disagrees with the
    kernel's flop / bytes (the file's AI is not read: the point sits at flop / bytes), a
    FLOP precision rooflab does not know (held to a stand-in ceiling, and a precision
    what-if cannot convert it), and a bytes level no roof has. `wheres`: each kernel's
    (CSV line, words naming it)."""
    from ..units import LEVELS, PRECISIONS

    off = []
    for k, where, ai in zip(kernels, wheres, given_ai, strict=True):
        nbytes = sum(k.bytes.values())
        if ai is None or not nbytes:
            continue
        counted = sum(k.flop.values()) / nbytes
        if abs(ai - counted) > AI_TOLERANCE * max(abs(counted), 1e-300):
            off.append((where, f"ai {ai:g} but flop / bytes = {counted:.4g}"))
    if off:
        _warn_rows(path, off, f"the point is placed at flop / bytes (more than "
                              f"{fmt_fraction(AI_TOLERANCE)} apart: check the flop, bytes or ai "
                              "value)")
    odd = [(where, f"precision '{p}'") for k, where in zip(kernels, wheres, strict=True)
           for p in k.flop if p not in DTYPES]
    if odd:
        _warn_rows(path, odd, f"not a precision rooflab knows ({', '.join(PRECISIONS)}, "
                              f"...): it is held to another precision's ceiling and a "
                              f"precision what-if cannot convert it; write one of these names")
    # the Kernel's own warning is off while a reader builds them (names_warned_by_reader):
    # said here once per file, every kernel named, as the precisions are (review 19b N3)
    odd = [(where, f"bytes level '{level}'") for k, where in zip(kernels, wheres, strict=True)
           for level in k.bytes if unknown_name(level, "bytes")]
    if odd:
        _warn_rows(path, odd, f"not a memory level ({', '.join(LEVELS)}; HBM and GDDR count "
                              f"as DRAM): no roof has it, so those bytes get no point; write "
                              f"one of these names")
    # a misspelt unit ('vektor') held the kernel to the tensor ceiling without a word
    odd = [(where, problem) for k, where in zip(kernels, wheres, strict=True)
           if (problem := unknown_unit(k.unit))]
    if odd:
        _warn_rows(path, odd, UNKNOWN_UNIT_WHY)
    # "flop": "guessed" was taken and written back out without a word (review r1 F8)
    odd = [(where, f"provenance '{key}' is '{word}'")
           for k, where in zip(kernels, wheres, strict=True)
           for key, word in k.provenance.items() if word not in WORDS]
    if odd:
        _warn_rows(path, odd, f"not a provenance word rooflab knows ({', '.join(WORDS)}; "
                              f"`rooflab docs json`, \"Provenance\"): kept as written, and written "
                              f"out so; write one of these words")


def _warn_rows(path: str, rows: list[tuple[tuple[int | None, str], str]], why: str,
               shown: int = 3) -> None:
    """One warning for a file's rows: FILE:LINE of the first, the others named after it."""
    ((line, name), what), rest = rows[0], rows[1:]

    def named(where: tuple[int | None, str]) -> str:
        return f"line {where[0]} {where[1]}" if where[0] is not None else where[1]

    also = ""
    if rest:
        more = f" and {len(rest) - shown} more" if len(rest) > shown else ""
        also = f" (also {'; '.join(f'{named(w)}: {x}' for w, x in rest[:shown])}{more})"
    warn_file(path, f"{name}: {what}: {why}{also}", line=line)


# BLAS/LAPACK routine names, after their one-letter type prefix (s, d, c, z): a kernel named
# dgemm_512 or cblas_daxpy says its precision, which a file without one leaves to the fp32
# default (review 16a J: a dgemm read 38 % of the fp32 roof instead of 76 % of fp64).
_BLAS_STEMS = ("gemm", "gemv", "gbmv", "ger", "geru", "gerc", "symm", "symv", "syrk",
               "syr2k", "syr", "syr2", "spmv", "sbmv", "spr", "hemm", "hemv", "herk",
               "her2k", "trmm", "trmv", "trsm", "trsv", "tbmv", "tpmv", "axpy", "axpby",
               "dot", "dotc", "dotu", "scal", "copy", "swap", "nrm2", "asum", "rot",
               "getrf", "getrs", "potrf", "potrs", "geqrf", "gesv", "syev", "gesvd")
# s and c (complex64) hold fp32 numbers, d and z (complex128) fp64: the precision FLOP run in
_BLAS_PRECISION = {"s": "fp32", "c": "fp32", "d": "fp64", "z": "fp64"}
# the routine may sit inside a longer name (cblas_dgemm, dgemm_512), not inside a word (a
# 'scale' kernel is no s-cale, 'sdotx' no sdot)
_BLAS_ROUTINES = "|".join(sorted(_BLAS_STEMS, key=len, reverse=True))
_BLAS_NAME = re.compile(rf"(?<![a-z0-9])([sdcz])(?:{_BLAS_ROUTINES})(?![a-z])")


def blas_precision(name: str) -> str | None:
    """The precision a BLAS-style kernel name says (dgemm -> fp64, saxpy -> fp32, zgemm ->
    fp64), None for any other name."""
    m = _BLAS_NAME.search(name.lower())
    return _BLAS_PRECISION[m.group(1)] if m else None


DEFAULT_PRECISION = "fp32"
# Kernel.provenance["precision"] of a kernel whose file gave no precision, so its FLOP were
# judged as DEFAULT_PRECISION: every --json document and report carries it (review r1 F3:
# the guess read as given input once -q dropped the warning); model.kernel's PRECISION_ASSUMED


def finish_read(path: str, kernels: list[Kernel], wheres: list[tuple[int | None, str]],
                given_ai: list[float | None], defaulted: list[int], fix: str
                ) -> tuple[Kernel, ...]:
    """The end of every kernel-file reader (CSV and JSON): the file's warnings
    (_check_read), the note for the kernels (indices `defaulted`) whose precision was not
    given, each of them marked provenance["precision"] = "assumed", then the level rows
    joined, and a kernel's precision rows (kernelfile_views). `fix`: what to write in this
    file's format."""
    _check_read(path, kernels, wheres, given_ai)
    note_default_precision(path, [(wheres[i], kernels[i].name) for i in defaulted], fix)
    assumed = set(defaulted)
    marked = [_assumed(k) if i in assumed else k for i, k in enumerate(kernels)]
    from .kernelfile_views import join_precision_views

    # an old `ncu --precision each -o` file's rows of one kernel: joined back (its module)
    return join_precision_views(_merge_levels([_with_op_unit(k) for k in marked], path,
                                              wheres), path)


def _assumed(k: Kernel) -> Kernel:
    return k.with_(provenance={**k.provenance, "precision": PRECISION_ASSUMED})


def precision_assumed_note(kernels: Iterable[Kernel]) -> str | None:
    """The note a document (report --json, .md, .html) keeps for the kernels whose
    precision was assumed (the reader's stderr warning, which -q drops, in words that do
    not name the file), None when there are none."""
    assumed = [k for k in kernels if k.provenance.get("precision") == PRECISION_ASSUMED]
    if not assumed:
        return None
    # the file's format is not known here: both ways, keyed by the first kernel's FLOP
    return _default_precision_words(
        [k.name for k in assumed], "give each kernel's precision (a CSV precision column, or "
        f"a JSON kernel's flop keyed by precision, e.g. {flop_example(assumed[0])})")


def flop_example(k: Kernel) -> str:
    """'{"fp64": 2.68435e8}': k's own FLOP keyed by a precision, for a fix's example (a
    fixed 2.7e8 read as if it were the user's number: review 17a N13)."""
    flop = f"{k.total_flop:.6g}".replace("e+0", "e").replace("e+", "e")
    return f'{{"fp64": {flop}}}'


def note_default_precision(path: str, defaulted: list[tuple[tuple[int | None, str], str]],
                           fix: str, shown: int = 3) -> None:
    """One note per file for the kernels whose precision was not given and so were judged
    as fp32 (README: "precision is fp32 when left out"): every ridge and % of roof depends
    on it, and an fp64 code (most HPC codes) reads half its real fraction of the roof.
    `defaulted`: (where, kernel name) of each; `fix`: what to write (a column, a key)."""
    if not defaulted:
        return
    (line, _), _name = defaulted[0]
    names = [n for _, n in defaulted]
    warn_file(path, _default_precision_words(names, fix, shown), line=line)


def _default_precision_words(names: list[str], fix: str, shown: int = 3) -> str:
    """The words "precision not given for N kernels (...): judged as fp32 (...); FIX". A
    BLAS-style name (dgemm, zaxpy) is named with the precision it says; the judged
    precision is not changed on a name's word."""
    names = list(dict.fromkeys(names))   # a kernel's level rows: once
    listed = ", ".join(f"'{n}'" for n in names[:shown]) + (
        f" and {len(names) - shown} more" if len(names) > shown else "")
    hinted: dict[str, list[str]] = {}
    for n in names:
        p = blas_precision(n)
        if p is not None and p != DEFAULT_PRECISION:
            hinted.setdefault(p, []).append(n)
    hint = "; ".join(f"{p} for {', '.join(ns[:shown])}"
                     + (f" and {len(ns) - shown} more" if len(ns) > shown else "")
                     for p, ns in hinted.items())
    if hint:
        fix += f"; by BLAS naming (d/z fp64, s/c fp32): {hint}"
    # Said before the roof is known (the reader runs first), so in words true of every
    # roof: an fp64-only one (ERT, likwid-bench peakflops, `specs import --fp64`) holds
    # them to its slowest float peak (fp64 there: Roof.compute_for), and the analysis'
    # per-kernel note says so; "held to the fp32 peak" there contradicted it two lines on
    # (review s20 r6 F3).
    return (f"precision not given for {len(names)} kernel{'s' if len(names) != 1 else ''} "
            f"({listed}): judged as {DEFAULT_PRECISION} (on a roof with an fp32 peak an "
            f"fp64 code is then held to it, about 2x fp64's: half its % of a compute roof, "
            f"twice the ridge; a roof with no fp32 peak, as an fp64-only ERT or likwid-bench "
            f"import, holds them to its slowest float peak instead, said per kernel); {fix}")


def threads_value(value: object, where: str) -> int:
    """A kernel's thread count (Kernel.meta["threads"], the key rooflab.measure writes):
    a whole number >= 1, or InputError saying what was given and what to write."""
    from ..errors import InputError

    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    if isinstance(value, str):
        try:
            value, ok = float(value.strip().replace("_", "")), True
        except ValueError:
            ok = False
    # isfinite: int(inf) raised OverflowError, a traceback (review s23 r4 F1)
    if not ok or not math.isfinite(value) or value < 1 or value != int(value):
        raise InputError(f"{where}: 'threads' must be a whole number of threads >= 1 (the "
                         f"threads the kernel ran on, e.g. 1 for a one-thread C loop); got "
                         f"{value!r:.40}")
    return int(value)
