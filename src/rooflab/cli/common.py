"""Shared CLI helpers: JSON output, atomic file output, the console."""

from __future__ import annotations

import sys
from typing import Any

from ..files import dumps_json, write_atomic


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


def warn(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr)
