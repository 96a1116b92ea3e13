"""The one exception hierarchy. The CLI turns any RooflabError into `error: ...` and exit 2.

Messages say what was wrong, where (file, line, field) and how to fix it.
"""

from __future__ import annotations

import errno as _errno
import re

# the start of a ParseError message for a file that does not exist ("config file not found")
_MISSING = re.compile(r"(config )?file not found\b")


class RooflabError(Exception):
    """Base of every error rooflab raises on purpose (user input, environment, data)."""

    exit_code = 2


class InputError(RooflabError, ValueError):
    """A parameter or value given by the user is invalid (negative size, unknown dtype, ...)."""


class ParseError(RooflabError):
    """A file could not be read: names the file, the line and the reason.

    ParseError("file not found", path=...) is a MissingFileError, so also a
    FileNotFoundError: `except FileNotFoundError:` around load_roof / load_kernels /
    load_profile catches it, as it would around open()."""

    def __new__(cls, message: str = "", *args, **kwargs):
        # every reader says "file not found" through ParseError; picking the subclass here
        # makes them all FileNotFoundErrors without changing each raise
        if cls is ParseError and isinstance(message, str) and _MISSING.match(message):
            cls = MissingFileError
        return super().__new__(cls, message)

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None):
        where = ""
        if path is not None:
            where = f"{path}:{line}: " if line is not None else f"{path}: "
        super().__init__(where + message)
        self.args = (where + message,)   # OSError (MissingFileError) keeps __new__'s args
        self.path = path
        self.line = line


class MissingFileError(ParseError, FileNotFoundError):
    """A file to read does not exist (a ParseError and a FileNotFoundError)."""

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None):
        super().__init__(message, path=path, line=line)
        self.errno = _errno.ENOENT
        self.filename = path

    def __str__(self) -> str:
        # OSError's str would be "[Errno 2] ..." once errno is set: keep rooflab's message
        return str(self.args[0]) if self.args else ""


class OutputError(RooflabError, OSError):
    """An output file cannot be written (its directory cannot be made, is read-only, ...).

    Also an OSError, so callers that catch OSError around a write keep working."""


class HardwareNotFound(RooflabError, LookupError):
    """A hardware name matched no catalog entry and no profile file."""


class MissingDependency(RooflabError, ImportError):
    """An optional heavy dependency is not installed; names the extra to install."""

    def __init__(self, module: str, extra: str, purpose: str = ""):
        why = f" (needed for {purpose})" if purpose else ""
        super().__init__(
            f"the Python package '{module.split('.')[0]}' is not installed{why}; "
            f"install it with: {install_command(extra)}"
        )
        self.module = module
        self.extra = extra


# The PyTorch release the project is tested with, and the index of its CPU-only wheels: a
# plain `pip install 'rooflab[torch]'` resolves torch from PyPI, which is the multi-GB CUDA
# build (review 18b A), so the CPU build goes in first, as README and docs/install.md say.
TORCH_VERSION = "2.13.0"
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"


def install_command(extra: str) -> str:
    """The one line to copy to install an extra: every missing-extra message says this.
    For `torch`, the CPU build of PyTorch first (then the extra finds it installed); the
    `gpu` extra is meant to pull the CUDA build, so it stays a plain `pip install`. The
    torch line does not name [gpu]: on a CPU-only machine that would add triton and
    nvidia-ml-py (tests/test_missing_extras_and_platforms.py)."""
    line = f"pip install 'rooflab[{extra}]'"
    if extra != "torch":
        return line
    return (f"pip install torch=={TORCH_VERSION} --index-url {TORCH_CPU_INDEX} && {line} "
            f"(the CPU build of PyTorch first: a plain install pulls the multi-GB CUDA "
            f"build; on a GPU machine install the CUDA build instead; docs/install.md)")


class DeviceError(RooflabError):
    """A requested device is not available (no CUDA device visible, ...)."""


class ProbeError(RooflabError):
    """A measurement could not be completed (interrupted, a rank died, too little memory)."""


def require(module: str, extra: str, purpose: str = ""):
    """Import an optional dependency lazily, or raise MissingDependency naming the extra."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingDependency(module, extra, purpose) from exc


class InputWarning(UserWarning):
    """Input rooflab read but suspects (an unknown kernel field, a time column in ms): the
    run goes on. The CLI prints it as one `warning: FILE: ...` line on stderr; Python
    callers get a normal warning they can filter or turn into an error."""
