"""`rooflab report` of a `rooflab llm -o` file: the notes llm closed its text with (the
file's `llm.notes`: tensor parallelism's per-device tables, the all-reduce's missing
latency, a package of dies, a table quantized by hand), which a report of the file left
out (s35 E). Each is said once: one the report already says in its own words (a fallback
ceiling, which the report says per kernel and llm once "(for embedding, rope, ...)") is
left out."""

from __future__ import annotations

from collections.abc import Iterable


def llm_notes(notes: Iterable[str], said: Iterable[str]) -> tuple[str, ...]:
    """`notes` (the inputs' llm.notes: load_inputs read them from the documents it read the
    kernels from), in order, once each, without those `said` holds already (the same
    words, or the same words a kernel's name before them)."""
    said = list(said)
    out: list[str] = []
    for note in notes:
        head = note.split(" (for ", 1)[0]    # llm's fallback note names its kernels
        if note in out or any(head in s for s in said):
            continue
        out.append(note)
    return tuple(out)


def file_notes(documents: Iterable[object]) -> tuple[str, ...]:
    """The llm.notes (strings only) of each parsed document, in order; none from a document
    that is no llm file (a kernel list, a torch trace, an analysis)."""
    out: list[str] = []
    for data in documents:
        llm = data.get("llm") if isinstance(data, dict) else None
        notes = llm.get("notes") if isinstance(llm, dict) else None
        if isinstance(notes, list):
            out += [n for n in notes if isinstance(n, str) and n.strip()]
    return tuple(out)
