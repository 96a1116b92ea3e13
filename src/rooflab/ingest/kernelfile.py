"""Kernel lists in rooflab's own formats: JSON (the vocabulary) and a simple CSV.

CSV columns (header required; unknown columns are kept in meta, and one that looks like a
misspelt known column or a time in another unit -- 'sconds', 'time_ms' -- is warned about):
  name, flop, bytes, seconds[, precision=fp32][, level=DRAM][, calls=1][, unit][, threads]
A kernel without a precision is judged as fp32, with a note naming it (and the precision a
BLAS-style name says: dgemm -> fp64), and marked provenance["precision"] = "assumed" (the
report's documents carry that note: kernelfile_rows.precision_assumed_note). `threads`
(CSV column, JSON kernel field, or the JSON document's top-level field for all its kernels)
is the thread count the kernel ran on, kept in Kernel.meta["threads"] as rooflab.measure
keeps it; cli/inputs.py picks a scaling profile's row for it.
Instead of seconds, a `gflops` column (achieved GFLOP/s, seed 000 §4.2's "实测性能 (GFLOPS)"
column) gives seconds = flop / (gflops x 1e9), marked derived.
flop_<precision> columns (flop_fp64, flop_fp32, ...: the profiler verbs' -o x.csv writes
them) give a kernel's FLOP in several precisions; flop is then their sum.

A kernel measured at several memory levels (hierarchical roofline) is one row per level:
rows with the same name, precision, flop, seconds, calls and unit and different levels
are one kernel with bytes at each level (its time is counted once, not once per level).

Every verb that takes a kernel file also takes a profiler's file, told by its content (not
only its name): Nsight Compute CSV pages and .ncu-rep reports, rocprof / rocprofv3 /
rocprof-compute counter CSVs and their folders, torch.profiler chrome traces (.json,
.json.gz). They are read as `rooflab ncu`, `rooflab rocprof` and `rooflab torch` read them.
Which file is which (file_kind) and reading the profilers' files is profile_files.py; the
checks and level joins both readers share are kernelfile_rows.py; the CSV reader is
kernelfile_csv.py.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from ..errors import InputError, ParseError, field_named
from ..files import load_json, read_text
from ..files_kind import is_advisor_survey
from ..model.document_parts import document_kind, kernels_part
from ..model.kernel import Kernel, names_warned_by_reader
from ..model.schema import (
    check_schema_version,
    kernel_from_dict,
    unknown_field_words,
    unknown_fields,
)
from ..user_path import user_path
from .kernelfile_csv import ACCEPTED, kernels_from_csv
from .kernelfile_rows import (
    _given_ai,
    finish_read,
    flop_example,
    threads_value,
    unknown_fields_message,
    warn_file,
)
from .profile_files import file_kind, load_profiler_files


def load_kernels(path: str | os.PathLike) -> tuple[Kernel, ...]:
    """Kernels from a .json (list, or object with 'kernels') or .csv file, or from any
    profiler's file or folder (`file_kind`). A kernel field (a CSV column) that is not read
    and looks like a mistake gets one `warning:` line per file on stderr (warn_file).
    `~` is the home folder, as in a shell (a notebook has no shell to expand it)."""
    return kernels_and_document(path)[0]


def kernels_and_document(path: str | os.PathLike) -> tuple[tuple[Kernel, ...], object]:
    """load_kernels' kernels and the JSON document they came from as parsed (None from a
    CSV or a profiler's file): the verbs read a file's roof and notes from it too, so a
    large file is parsed once, not once for each (s36 D)."""
    path = user_path(path, "load_kernels()", "a kernel file's path")
    p = Path(path)
    if not p.exists():
        raise ParseError("file not found", path=path)
    kind = file_kind(path)
    if kind != "rooflab":
        # a profiler's file (ncu, rocprof, a torch trace, gzipped or not), read as its own
        # verb reads it: `rooflab report results.csv` once said "missing column(s) name..."
        return load_profiler_files(kind, [path]).kernels, None
    # k.csv.gz is a CSV: read_text decompresses it (review s21 r5 F1)
    if Path(p.name.lower().removesuffix(".gz")).suffix == ".csv":
        text = read_text(p)
        if is_advisor_survey(text):   # Intel Advisor's per-loop CSV (review s26 r2 F6)
            from .advisor_survey import kernels_from_advisor

            return kernels_from_advisor(text, path), None
        _refuse_advisor_roofs(text, path)
        from .advisor_survey import refuse_preamble_only

        refuse_preamble_only(text, path)   # Advisor's export cut before its header
        return kernels_from_csv(text, path), None
    data = _read_json(p, path)
    if document_kind(data) == "torch_trace":
        # A torch.profiler chrome trace: read as `rooflab torch TRACE` reads it, so report,
        # compare and plot take a trace directly instead of failing on its shape.
        from .torch_trace import load_torch_trace

        return load_torch_trace(path).kernels, data
    from ..model.train_links import per_link_document

    # an older train --dp --tp file: each link its own ceiling, as train timed it (s33)
    kept, said = per_link_document(data)   # a new dict where it differs: data is as read
    if said:
        warn_file(path, said)
    kernels = kernels_from_items(_kernel_items(kept, path), path, _file_threads(kept, path))
    from ..model.train_comm import shard_older_optimizer

    # an older train --zero file's optimizer pass is sharded already (s30)
    return shard_older_optimizer(kernels), data


def _refuse_advisor_roofs(text: str, path: str) -> None:
    """Advisor's roofs CSV given as kernels: said what it is and where it goes, not
    "missing column(s) name, flop, bytes"."""
    from ..hardware.advisor_roofs import is_advisor_roofs

    if is_advisor_roofs(text):
        raise ParseError(f"it is Intel Advisor's roofs report (the machine's ceilings), not "
                         f"kernels: make a roof of it with `rooflab specs import {path} -o "
                         f"roof.json` and give it as --on roof.json; Advisor's per-loop "
                         f"results are `advisor --report=survey --format=csv`", path=path)


def _file_threads(data: object, path: str) -> int | None:
    """The document's top-level "threads" (every kernel's thread count unless a kernel
    gives its own), None when absent."""
    if not isinstance(data, dict) or data.get("threads") is None:
        return None
    try:
        return threads_value(data["threads"], "top-level field")
    except InputError as exc:
        raise ParseError(str(exc), path=path, field="threads") from None


# What a document that holds no kernels is, and what to pass instead (model.schema kinds)
NOT_KERNELS = {
    "compare": "this is a comparison (`rooflab compare` output), not a list of kernels; pass "
               "the kernel files it compared",
    "choose": "this is a hardware ranking (`rooflab choose` output), not a list of kernels; "
              "pass the kernel files it ranked",
    "devices": "this is a device list (`rooflab specs --json` output), not a list of "
               "kernels; pass kernel files, and name devices with --on",
    "profile": "this is a machine profile or roof, not a list of kernels: pass it as the "
               "roof, e.g. `--on {path}` (`rooflab plot --on {path} -o chart.png` draws it "
               "alone)",
}
NOT_KERNELS["roof"] = NOT_KERNELS["profile"]


def _read_json(p: Path, path: str) -> object:
    """The parsed JSON; a file that is no JSON at all (a picture, a binary) is told what
    rooflab reads (a JSON file cut short keeps its own error)."""
    try:
        data = load_json(path)
    except ParseError as exc:
        # A picture ("is a PNG image, not a text file; give the .json") says enough.
        text = str(exc)
        foreign = ("invalid JSON" in text and not _starts_like_json(p)) or \
            "not a UTF-8 text file" in text or "is a directory" in text
        if not foreign:
            raise
        _refuse_csv_named_otherwise(p, path, text)
        where = f"{exc.path}:{exc.line}: " if exc.line is not None else f"{exc.path}: "
        raise ParseError(f"{text.removeprefix(where)}; {ACCEPTED}", path=exc.path,
                         line=exc.line) from None
    try:
        check_schema_version(data, path)
    except InputError as exc:
        # the file as ParseError's path (the --json error document's), said once
        raise ParseError(str(exc).removeprefix(f"{path}: "), path=path,
                         field="schema_version") from None
    return data


def _kernel_items(data: object, path: str) -> list:
    """The kernel dicts of a document (model.document_parts.kernels_part: a kernel list, an
    analysis, `rooflab whatif -o w.json`'s predicted kernels, `rooflab demo --json`'s), or
    the error that says what the document is instead."""
    kind = document_kind(data)
    if kind in NOT_KERNELS:
        raise ParseError(NOT_KERNELS[kind].format(path=path), path=path)
    items = kernels_part(data)
    if not isinstance(items, list) and isinstance(data, dict) and (
            {"hidden_size", "n_embd", "d_model"} & data.keys() or "model_type" in data):
        # a Hugging Face config.json given where kernels go (s36 B): said what it is
        raise ParseError(f"this is a model config (config.json), not a list of kernels: "
                         f"count its kernels with `rooflab llm {path} --on HW` (a training "
                         f"step: `rooflab train {path} --on HW`)", path=path)
    if not isinstance(items, list):
        raise ParseError(f"expected a list of kernels or an object with a 'kernels' list; "
                         f"{ACCEPTED}", path=path)
    return items


# unknown precisions and levels: said once per file by _check_read, not per Kernel
@names_warned_by_reader()
def kernels_from_items(items: list, path: str,
                       threads: int | None = None) -> tuple[Kernel, ...]:
    """Kernels from a JSON document's kernel dicts, with the warnings and checks every
    reader gives (unknown fields, a given AI that disagrees, levels joined, a precision
    left to the fp32 default). threads: the document's own thread count, for the kernels
    that give none."""
    out = []
    odd: list[tuple[str, tuple[str, ...], str]] = []   # kernels with unknown fields
    given_ai: list[float | None] = []
    defaulted: list[int] = []   # the kernels whose FLOP is a bare number: fp32, assumed
    for i, item in enumerate(items):
        where = f"kernels[{i}]"
        try:
            item, count = _threads_field(item, where, threads)
            out.append(_with_threads(kernel_from_dict(item, where=where), count))
        except InputError as exc:
            # the field kernel_from_dict named ('kernels[0].flop.fp32'): the --json `field`
            raise ParseError(str(exc), path=path, field=exc.field) from None
        if _bare_flop(item) and out[-1].total_flop > 0:   # 0 FLOP: no precision to judge
            defaulted.append(i)
        words = unknown_field_words(item)
        if words:
            odd.append((f"kernels[{i}] '{out[-1].name}'", tuple(unknown_fields(item)), words))
        given_ai.append(_given_ai(item.get("ai") if isinstance(item, dict) else None))
    if not out:
        raise ParseError("the file holds no kernels", path=path)
    if odd:
        warn_file(path, unknown_fields_message(odd))
    wheres = [(None, f"kernels[{i}] '{k.name}'") for i, k in enumerate(out)]
    example = flop_example(out[defaulted[0]]) if defaulted else ""
    return finish_read(path, out, wheres, given_ai, defaulted,
                       f'key the FLOP by precision, e.g. "flop": {example}')


def _bare_flop(item: object) -> bool:
    """Whether a kernel dict gives its FLOP as a bare number, which is read as fp32."""
    flop = item.get("flop") if isinstance(item, dict) else None
    return isinstance(flop, (int, float, str)) and not isinstance(flop, bool)


def _threads_field(item: object, where: str, default: int | None
                   ) -> tuple[object, int | None]:
    """The kernel dict without its "threads" field (kernel_from_dict would call it unknown)
    and the thread count: its own, else meta's, else the document's."""
    if not isinstance(item, dict):
        return item, default
    if "threads" in item:
        item = dict(item)
        value = item.pop("threads")
        with field_named(f"{where}.threads"):
            return item, None if value is None else threads_value(value, f"{where}")
    meta = item.get("meta")
    if isinstance(meta, dict) and meta.get("threads") is not None:
        with field_named(f"{where}.meta.threads"):
            return item, threads_value(meta["threads"], f"{where}: meta")
    return item, default


def _with_threads(k: Kernel, threads: int | None) -> Kernel:
    """k with meta["threads"] = threads (an int, checked), as rooflab.measure records it."""
    if threads is None:
        return k
    from dataclasses import replace

    return replace(k, meta={**k.meta, "threads": threads})


def save_kernels(path: str | os.PathLike, kernels: Kernel | Iterable[Kernel]) -> Path:
    """Write kernels (one, or several) as a rooflab kernel file, JSON, atomically:
    load_kernels(path) reads back equal Kernels, and `rooflab report PATH --on ...` reads it.
    `~` is the home folder, as load_kernels reads it."""
    from ..files import dumps_json, write_atomic
    from ..model.schema import SCHEMA_VERSION, kernel_to_dict

    path = user_path(path, "save_kernels()", "a kernel file's path")
    if Path(path).suffix.lower() != ".json":
        raise InputError(f"kernel file '{path}' must end in .json (load_kernels reads it by "
                         f"its suffix)")
    kernels = (kernels,) if isinstance(kernels, Kernel) else tuple(kernels)
    if not kernels or not all(isinstance(k, Kernel) for k in kernels):
        raise InputError(f"save_kernels(): give one or more Kernels; got {kernels!r:.80}")
    doc = {"schema_version": SCHEMA_VERSION, "kernels": [kernel_to_dict(k) for k in kernels]}
    try:
        text = dumps_json(doc)
    except (TypeError, ValueError) as exc:   # a meta value JSON cannot hold (NaN, an object)
        raise InputError(f"save_kernels(): {exc}; keep meta to numbers, strings, lists and "
                         f"dicts") from None
    return write_atomic(path, text)


def _refuse_csv_named_otherwise(p: Path, path: str, error: str) -> None:
    """A kernel CSV saved as k.txt or k.tsv is read by its suffix as JSON ("invalid JSON:
    Expecting value ... is it the right file?", s38 G): its header said, and the name
    that reads it."""
    if "invalid JSON" not in error:
        return
    try:
        with p.open("rb") as fh:
            first = fh.read(512).decode("utf-8", "replace").lstrip("\ufeff").split("\n")[0]
    except OSError:
        return
    cells = {c.strip().strip('"').lower() for c in first.replace("\t", ",").split(",")}
    if {"flop", "bytes"} <= cells and cells & {"name", "kernel"}:
        tabs = " with commas between the columns" if "\t" in first else ""
        shown = first.strip()[:60].replace("\t", "\\t")
        raise ParseError(f"this is a kernel CSV (its header: {shown}), named "
                         f"{p.suffix or 'without a suffix'}: rooflab reads a kernel file as "
                         f"CSV by its .csv name; save it as {p.stem}.csv{tabs}", path=path,
                         line=1)


def _starts_like_json(p: Path) -> bool:
    """Whether the text begins as JSON does: a JSON file cut short keeps its own error."""
    try:
        with p.open("rb") as fh:
            return fh.read(256).lstrip(b"\xef\xbb\xbf \t\r\n")[:1] in (b"{", b"[")
    except OSError:
        return False
