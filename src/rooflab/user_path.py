"""A file path handed to rooflab from Python (load_kernels/save_kernels, load_profile/
save_profile): checked and expanded in one place, so that a save and the load of the same
`~/x.json` mean the same file (review s18 F12: the loads expanded `~`, the saves wrote a
folder literally named '~' under the working directory)."""

from __future__ import annotations

import os

from .errors import InputError


def user_path(path: str | os.PathLike, call: str, what: str) -> str:
    """`path` as a str, `~` expanded as a shell would (a notebook has no shell to do it).
    call: the function, 'load_kernels()'; what: the file it wants, "a kernel file's path".
    Anything else than a str or a PathLike is an InputError naming the call: os.fspath's
    "expected str, bytes or os.PathLike object" named no rooflab call."""
    if not isinstance(path, str | os.PathLike):
        raise InputError(f"{call}: give {what} (str or pathlib.Path); "
                         f"got {type(path).__name__} {path!r:.60}")
    return os.path.expanduser(os.fspath(path))
