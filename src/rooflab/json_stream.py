"""JSON text written as it is made: the text json.dumps(obj, indent=2, allow_nan=False)
gives, as pieces of about a megabyte (iter_json), with arrays whose items are made one at a
time as they are written (Streamed). A what-if of 100,000 kernels held its document three
times over (the dicts, the encoder's ~10 million pieces, the joined 240 MB text and its
bytes): 2.2 GB where the terminal report needs 0.6 (session 32). Pure: no I/O.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import islice
from typing import Any

INDENT = "  "            # indent=2, as every rooflab document is written
PIECE = 1 << 20          # characters per piece iter_json gives (the last one shorter)
_BATCH = 8192            # the encoder's own pieces joined at a time


@dataclass(frozen=True)
class Streamed:
    """A JSON array whose items `items()` makes anew each time it is written (a document
    both printed and written with -o is made twice): each item is encoded and let go
    before the next is made. Where iter_json does not reach it (inside a plain list) the
    encoder's default hook writes it as a list, the same text."""

    items: Callable[[], Iterable[Any]]

    def __iter__(self) -> Iterator[Any]:
        return iter(self.items())


def json_default(obj: Any) -> Any:
    """The encoder's hook for what JSON has no type for: numpy values as their lists,
    sets sorted (a set's order follows string hashing, which changes per process:
    PYTHONHASHSEED, so sorted the same input gives the same bytes every run), and a
    Streamed array as the list of its items."""
    if hasattr(obj, "tolist"):
        return obj.tolist()
    if isinstance(obj, (set, frozenset)):
        return sorted(obj, key=lambda x: (type(x).__name__, str(x)))
    if isinstance(obj, Streamed):
        return list(obj)
    raise TypeError(f"cannot serialise {type(obj).__name__}")


_ENCODER = json.JSONEncoder(indent=len(INDENT), allow_nan=False, default=json_default)


def iter_json(obj: Any) -> Iterator[str]:
    """The text of json.dumps(obj, indent=2, allow_nan=False, default=json_default), the
    same characters, as pieces of about PIECE characters: a Streamed array's items are made
    and encoded one at a time, so the document is never whole in memory, as objects or as
    text."""
    held: list[str] = []
    size = 0
    for piece in _pieces(obj, 0):
        held.append(piece)
        size += len(piece)
        if size >= PIECE:
            yield "".join(held)
            held.clear()
            size = 0
    if held:
        yield "".join(held)


def _pieces(obj: Any, level: int) -> Iterator[str]:
    """obj's text at `level` (the indent its first line follows) in pieces."""
    if isinstance(obj, Streamed):
        yield from _array(obj, level)
    elif isinstance(obj, dict) and _holds_streamed(obj):
        yield from _object(obj, level)
    else:
        yield from _encoded(obj, level)


def _holds_streamed(d: dict) -> bool:
    """Whether a dict with text keys holds a Streamed array, itself or in a dict inside:
    the objects iter_json writes itself (any other value the encoder writes whole)."""
    return all(isinstance(k, str) for k in d) and any(
        isinstance(v, Streamed) or (isinstance(v, dict) and _holds_streamed(v))
        for v in d.values())


def _object(d: dict, level: int) -> Iterator[str]:
    """A dict as the encoder writes it at `level`: '{', one 'key': value a line."""
    inner = "\n" + INDENT * (level + 1)
    sep = "{" + inner
    for key, value in d.items():
        yield sep + json.encoder.encode_basestring_ascii(key) + ": "
        yield from _pieces(value, level + 1)
        sep = "," + inner
    yield "\n" + INDENT * level + "}"


def _array(items: Streamed, level: int) -> Iterator[str]:
    """A Streamed array as the encoder writes a list at `level` ('[]' when empty)."""
    inner = "\n" + INDENT * (level + 1)
    sep = "[" + inner
    for item in items:
        yield sep
        yield from _pieces(item, level + 1)
        sep = "," + inner
    yield "[]" if sep[0] == "[" else "\n" + INDENT * level + "]"


def _encoded(obj: Any, level: int) -> Iterator[str]:
    """obj as the encoder writes it, each line after the first moved in by `level`
    indents: a JSON string holds no raw newline (the encoder escapes it), so every newline
    in the text is one the indentation put there."""
    chunks = _ENCODER.iterencode(obj)
    pad = "\n" + INDENT * level
    while batch := list(islice(chunks, _BATCH)):
        text = "".join(batch)
        yield text.replace("\n", pad) if level else text
