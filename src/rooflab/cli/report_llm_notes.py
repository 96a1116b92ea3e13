"""`rooflab report` of a `rooflab llm -o` file: the notes llm closed its text with (the
file's `llm.notes`: tensor parallelism's per-device tables, the all-reduce's missing
latency, a package of dies, a table quantized by hand), which a report of the file left
out (s35 E). Each is said once: one the report already says in its own words (a fallback
ceiling, which the report says per kernel and llm once "(for embedding, rope, ...)") is
left out."""

from __future__ import annotations

from collections.abc import Iterable, Sequence


def llm_notes(files: Sequence[str], said: Iterable[str]) -> tuple[str, ...]:
    """The `llm.notes` of the .json files among `files`, in order, without those `said`
    holds already (the same words, or the same words a kernel's name before them)."""
    said = list(said)
    out: list[str] = []
    for path in files:
        for note in _file_notes(path):
            head = note.split(" (for ", 1)[0]    # llm's fallback note names its kernels
            if note in out or any(head in s for s in said):
                continue
            out.append(note)
    return tuple(out)


def _file_notes(path: str) -> list[str]:
    """A file's llm.notes (strings only); [] for a file that is no llm document."""
    from ..files import load_json
    from ..files_kind import file_kind

    # perf stat -j's lines and a torch trace are .json too, and no llm document
    if not str(path).lower().endswith(".json") or file_kind(str(path)) != "rooflab":
        return []
    data = load_json(path)
    llm = data.get("llm") if isinstance(data, dict) else None
    notes = llm.get("notes") if isinstance(llm, dict) else None
    if not isinstance(notes, list):
        return []
    return [n for n in notes if isinstance(n, str) and n.strip()]
