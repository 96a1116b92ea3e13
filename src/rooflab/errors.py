"""The one exception hierarchy. The CLI turns any RooflabError into `error: ...` and exit 2.

Messages say what was wrong, where (file, line, field) and how to fix it.
"""

from __future__ import annotations


class RooflabError(Exception):
    """Base of every error rooflab raises on purpose (user input, environment, data)."""

    exit_code = 2


class InputError(RooflabError, ValueError):
    """A parameter or value given by the user is invalid (negative size, unknown dtype, ...)."""


class ParseError(RooflabError):
    """A file could not be read: names the file, the line and the reason."""

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None):
        where = ""
        if path is not None:
            where = f"{path}:{line}: " if line is not None else f"{path}: "
        super().__init__(where + message)
        self.path = path
        self.line = line


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
            f"install it with: pip install 'rooflab[{extra}]'"
        )
        self.module = module
        self.extra = extra


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
