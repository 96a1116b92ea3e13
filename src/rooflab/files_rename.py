"""The last step of an atomic write, renaming the finished temporary file over its target,
as Windows allows it (review s23 r3 F6).

On Windows a rename onto a file that another program holds open without FILE_SHARE_DELETE
(Excel with a CSV, a PDF or image viewer) fails with PermissionError ("Access is denied"),
as it does onto a read-only file; the error said "give a path in a directory you can write
to", wrong advice for a writable folder. Antivirus scanners (Defender) also hold a freshly
written file for a moment, so the same rename failed at random: it is retried for about a
second first. POSIX renames do not care who has the target open: nothing changes there.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from .errors import OutputError

# the pauses between tries, 1.1 s in all: a scan of a fresh file is over within it, a
# program holding the target open is not (and is then named in the error)
RETRY_DELAYS = (0.05, 0.1, 0.15, 0.2, 0.25, 0.35)


def windows() -> bool:
    return os.name == "nt"


def replace(tmp: str | os.PathLike, target: str | os.PathLike) -> None:
    """os.replace(tmp, target), tried again over about a second on Windows while it is
    refused (PermissionError)."""
    if windows():
        for delay in RETRY_DELAYS:
            try:
                os.replace(tmp, target)
                return
            except PermissionError:
                time.sleep(delay)
    os.replace(tmp, target)


def open_elsewhere(path: str | os.PathLike, reason: str) -> str:
    return (f"{path}: cannot replace the file ({reason}): it is open in another program "
            f"(Excel, a viewer) or read-only; close that program (or clear read-only) and "
            f"rerun")


def held_open(path: str | os.PathLike, target: str | os.PathLike,
              exc: BaseException) -> OutputError | None:
    """The error for a rename Windows refused onto an existing `target` (another program
    has it open, or it is read-only), naming `path` as given; None for any other failure,
    which the caller words as before."""
    if not (windows() and isinstance(exc, PermissionError)):
        return None
    try:
        exists = Path(target).is_file()
    except (OSError, ValueError):
        exists = False
    return OutputError(open_elsewhere(path, exc.strerror or str(exc))) if exists else None


def check_not_held(path: str | os.PathLike, target: str | os.PathLike) -> None:
    """On Windows, raise OutputError now if an existing `target` is held by another program,
    before a long run that would fail only at its end: opening it for writing (without
    creating, truncating or writing anything) is refused as the rename would be."""
    if not windows():
        return
    try:
        fd = os.open(target, os.O_WRONLY | os.O_APPEND)
    except PermissionError as exc:
        held = held_open(path, target, exc)
        if held is not None:
            raise held from None
        return
    except (OSError, ValueError):   # missing (the usual case), a folder: said elsewhere
        return
    os.close(fd)
