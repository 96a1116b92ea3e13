"""Shared CLI helpers: JSON output, atomic file output, the console."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..files import check_writable, dumps_json, write_atomic


def emit_json(obj: Any) -> None:
    sys.stdout.write(dumps_json(obj))


def console():
    from rich.console import Console

    return Console(highlight=False, soft_wrap=False)


def err_console():
    from rich.console import Console

    return Console(stderr=True, highlight=False)


def save_text(path: str, text: str) -> None:
    write_atomic(path, text)


def refuse_directory(option: str, path: str | None, example: str) -> None:
    """`-o out/` or `-o .`: a folder has no suffix to tell the format by; name a file in it."""
    if path and Path(path).is_dir():
        raise InputError(f"{option} {path}: is a directory; give a file name such as "
                         f"{Path(path) / example}")


def check_output(path: str | None, suffixes: Sequence[str], option: str = "-o") -> None:
    """Before any work: refuse an output suffix the verb cannot write, or a path that
    cannot be written (a directory, a read-only place), instead of failing at the end."""
    if not path:
        return
    refuse_directory(option, path, "out" + suffixes[0])
    suffix = Path(path).suffix.lower()
    if suffix not in suffixes:
        raise InputError(f"{option} {path}: unknown suffix '{suffix or '(none)'}'; use "
                         f"{', '.join(suffixes)}")
    check_writable(path)


def warn(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr)
