"""Atomic file writing and JSON loading: no half-written output, clear errors on bad input."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from .errors import ParseError


def write_atomic(path: str | os.PathLike, data: str | bytes) -> Path:
    """Write to a temporary file beside `path`, then rename over it (atomic on POSIX)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = "wb" if isinstance(data, bytes) else "w"
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, mode) as fh:
            fh.write(data)
        # mkstemp creates the file 0600; give it the mode a plain open() would (0666 - umask).
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        # Ctrl-C or a failed write leaves nothing behind.
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def dumps_json(obj: Any) -> str:
    """JSON text with stable key order as produced and a trailing newline."""
    return json.dumps(obj, indent=2, allow_nan=False, default=_default) + "\n"


def _default(obj: Any) -> Any:
    if hasattr(obj, "tolist"):
        return obj.tolist()
    if isinstance(obj, (set, frozenset, tuple)):
        return list(obj)
    raise TypeError(f"cannot serialise {type(obj).__name__}")


def write_json(path: str | os.PathLike, obj: Any) -> Path:
    """Write JSON atomically."""
    return write_atomic(path, dumps_json(obj))


def load_json(path: str | os.PathLike) -> Any:
    """Read a JSON file; a missing or malformed file raises ParseError with the line."""
    p = Path(path)
    try:
        text = p.read_text()
    except FileNotFoundError:
        raise ParseError("file not found", path=str(p)) from None
    except OSError as exc:
        raise ParseError(f"cannot read file: {exc.strerror}", path=str(p)) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ParseError(f"invalid JSON: {exc.msg} (column {exc.colno})", path=str(p),
                         line=exc.lineno) from None
