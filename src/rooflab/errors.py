"""The one exception hierarchy. The CLI turns any RooflabError into `error: ...` and exit 2.

Messages say what was wrong, where (file, line, field) and how to fix it.
"""

from __future__ import annotations

import errno as _errno
import os
import platform
import re
from collections.abc import Iterator
from contextlib import contextmanager

# the start of a ParseError message for a file that does not exist ("config file not found")
_MISSING = re.compile(r"(config )?file not found\b")


class RooflabError(Exception):
    """Base of every error rooflab raises on purpose (user input, environment, data)."""

    exit_code = 2
    # the stable word a `--json` error document calls it (docs/json.md, "Errors under
    # --json"): a script branches on it, not on the message; a subclass inherits its own
    kind = "error"
    # the file and its line the error is in, where the raiser knows them: the --json
    # error document's `path` and `line` (cli/json_errors.py); ParseError sets its own
    path: str | None = None
    line: int | None = None
    # the field in that file ('compute[0].flop_per_s', 'profile.host.multiprocessors'),
    # where the raiser knows it: the --json error document's `field`. A reader names it
    # from the place it was given ('p.json.compute[0]' + 'flop_per_s', see field_named);
    # ParseError makes it the file's own (in_file)
    field: str | None = None


class InputError(RooflabError, ValueError):
    """A parameter or value given by the user is invalid (negative size, unknown dtype, ...).

    path/line/field (keyword-only): the file, line and field the value came from, for the
    --json error document; unlike ParseError's they are not put in front of the message (an
    InputError's message already names its place in its own words)."""

    kind = "input"

    def __init__(self, *args, path: str | None = None, line: int | None = None,
                 field: str | None = None):
        super().__init__(*args)
        self.path = path
        self.line = line
        self.field = field


class ParseError(RooflabError):
    """A file could not be read: names the file, the line and the reason.

    ParseError("file not found", path=...) is a MissingFileError, so also a
    FileNotFoundError: `except FileNotFoundError:` around load_roof / load_kernels /
    load_profile catches it, as it would around open()."""

    kind = "parse"

    def __new__(cls, message: str = "", *args, **kwargs):
        # every reader says "file not found" through ParseError; picking the subclass here
        # makes them all FileNotFoundErrors without changing each raise
        if cls is ParseError and isinstance(message, str) and _MISSING.match(message):
            cls = MissingFileError
        return super().__new__(cls, message)

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None,
                 field: str | None = None):
        where = ""
        if path is not None:
            where = f"{path}:{line}: " if line is not None else f"{path}: "
            if message == "file not found":
                message += _model_name_hint(str(path))
        super().__init__(where + message)
        self.args = (where + message,)   # OSError (MissingFileError) keeps __new__'s args
        self.path = path
        self.line = line
        self.field = in_file(field, path)


@contextmanager
def field_named(field: str) -> Iterator[None]:
    """A context in which a rooflab error that names no field gets `field`: the reader's
    place and the field it reads there ('p.json.compute[0].flop_per_s', from where=
    'p.json.compute[0]'; 'kernels[0].flop.fp32'), so the --json error document's `field`
    is the raiser's, not read off the message (s20 x2 F2). The error itself, and so its
    message, is the one raised, word for word."""
    try:
        yield
    except RooflabError as exc:
        if exc.field is None:
            exc.field = field
        raise


def in_file(field: str | None, path: str | None) -> str | None:
    """A field a reader named from the place it was given (field_named), as the field of
    the file `path`: 'compute[1].flop_per_s' of 'p.json.compute[1].flop_per_s', 'roof.
    memory[0]' of 'k.json: roof.memory[0]'; a field that does not start with the file's
    name is the file's own already ('kernels[0].flop.fp32'); None for the file itself."""
    if not field or not path or not field.startswith(path):
        return field or None
    rest = field[len(path):]
    if rest[:1] not in ("", ".", ":"):   # 'p.json2.x' is not a field of 'p.json'
        return field
    return rest.removeprefix(":").strip().removeprefix(".") or None


def parse_error_in(exc: InputError, path: str) -> ParseError:
    """A dict reader's InputError about the file `path` (model.schema, profile_from_dict:
    its message starts with the place the reader was given, 'p.json.compute[0]: ...',
    'p.json: profile.measured: ...') as the ParseError to raise: the message word for word
    (it names the file already), and the file and the field in it carried on the exception
    for the --json error document: the field the raiser named (field_named); for a raise
    that names none (a reader's message that still only says it in words), the field its
    message names after the file (_field_in), the one place the field is read off the
    words."""
    message = str(exc)
    err = ParseError(message)
    err.path = path
    err.line = exc.line
    err.field = in_file(exc.field, path) or _field_in(message, path)
    return err


# the fallback for raises without a field (parse_error_in): the place in the document a
# reader's message names after the file ('compute[0]', 'profile.measured'), up to its ': ',
# and the field its words then name
_PLACE = re.compile(r"[\w\[\].]+(?=: )")
_FIELD = re.compile(r"(?:missing )?field '([^']+)'")


def _field_in(message: str, path: str) -> str | None:
    """'compute[0].flop_per_s' of "p.json.compute[0]: field 'flop_per_s' must be ...",
    'profile.host.multiprocessors' of "p.json: profile: field 'host.multiprocessors' ...";
    None where the message names no place past the file."""
    if not message.startswith(path):
        return None
    rest = message[len(path):].removeprefix(": ").removeprefix(".")
    place = _PLACE.match(rest)
    text = rest[place.end() + 2:] if place else rest
    name = _FIELD.match(text)
    parts = [p for p in (place and place.group(0), name and name.group(1)) if p]
    return ".".join(parts) or None


def _model_name_hint(name: str) -> str:
    """What to do when a missing "file" is a bundled model's name (`rooflab choose
    llama-2-7b` said only "file not found"): count its kernels into a file first (review
    s33 E)."""
    from .workloads.llm.config_names import bundled_name

    model = bundled_name(name)
    if model is None:
        return ""
    called = "" if model == name else f" ({model})"
    return (f"; '{name}' is a bundled model config{called}, not a kernel file: count its "
            f"kernels into one first, `rooflab llm {name} --on HW -o decode.json` (a "
            f"training step: `rooflab train {name} --on HW -o step.json`), and give that "
            f"file")


class MissingFileError(ParseError, FileNotFoundError):
    """A file to read does not exist (a ParseError and a FileNotFoundError)."""

    kind = "missing_file"

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None,
                 field: str | None = None):
        super().__init__(message, path=path, line=line, field=field)
        self.errno = _errno.ENOENT
        self.filename = path

    def __str__(self) -> str:
        # OSError's str would be "[Errno 2] ..." once errno is set: keep rooflab's message
        return str(self.args[0]) if self.args else ""


class OutputError(RooflabError, OSError):
    """An output file cannot be written (its directory cannot be made, is read-only, ...).

    Also an OSError, so callers that catch OSError around a write keep working."""

    kind = "output"


class HardwareNotFound(RooflabError, LookupError):
    """A hardware name matched no catalog entry and no profile file."""

    kind = "unknown_hardware"


class MissingDependency(RooflabError, ImportError):
    """An optional heavy dependency is not installed; names the extra to install."""

    kind = "missing_dependency"

    def __init__(self, module: str, extra: str, purpose: str = "", *,
                 lead: str | None = None):
        """lead: the words before "install it with: COMMAND" where the default (the
        package is not installed, needed for `purpose`) is not what to say first."""
        why = f" (needed for {purpose})" if purpose else ""
        if lead is None:
            lead = f"the Python package '{module.split('.')[0]}' is not installed{why}; "
        reason = install_reason(extra)
        # the command ends its line, the reason is on the next: copying from "pip" to the
        # end of the line runs (review 19b N9: a "(...)" glued to it was a bash syntax error)
        super().__init__(
            f"{lead}install it with: {install_command(extra)}" + (f"\n{reason}" if reason else "")
        )
        self.module = module
        self.extra = extra


# The PyTorch release the project is tested with, and the index of its CPU-only wheels: a
# plain `pip install 'rooflab[torch]'` resolves torch from PyPI, which is the multi-GB CUDA
# build (review 18b A), so the CPU build goes in first, as README and docs/install.md say.
TORCH_VERSION = "2.13.0"
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"


def install_command(extra: str) -> str:
    """The one line to copy to install an extra, and nothing else on it (a shell runs it
    as pasted): every missing-extra message says this. For `torch`, the CPU build of
    PyTorch first (then the extra finds it installed); the `gpu` extra is meant to pull the
    CUDA build, so it stays a plain `pip install`. The torch line does not name [gpu]: on
    a CPU-only machine that would add triton and nvidia-ml-py
    (tests/test_missing_extras_and_platforms.py). install_reason says why. `extra` may
    name several, comma-separated ("torch,cpu": one `rooflab[torch,cpu]`)."""
    line = f"pip install 'rooflab[{extra}]'"
    if "torch" not in extra.split(","):   # "torch,cpu": several extras in one command
        return line
    return f"pip install torch=={TORCH_VERSION} --index-url {TORCH_CPU_INDEX} && {line}"


def install_reason(extra: str) -> str:
    """Why install_command is not the plain `pip install 'rooflab[extra]'`, said on a line
    of its own after the command ('' when it is)."""
    if extra == "cpu" and platform.machine().lower().startswith("riscv"):
        # numba/llvmlite publish no riscv64 wheels: pip would try an LLVM source build
        return ("(numba has no RISC-V wheels: the install builds LLVM from source and "
                "usually fails; the CPU probe needs numba, the other verbs do not)")
    if extra != "torch":
        return ""
    # said whole here, not as a pointer to `rooflab docs install`: one line is enough
    return ("(the CPU build of PyTorch first: a plain install pulls the multi-GB CUDA "
            "build; on a GPU machine install the CUDA build instead)")


class DeviceError(RooflabError):
    """A requested device is not available (no CUDA device visible, ...)."""

    kind = "device"


class ProbeError(RooflabError):
    """A measurement could not be completed (interrupted, a rank died, too little memory)."""

    kind = "probe"


def require(module: str, extra: str, purpose: str = ""):
    """Import an optional dependency lazily, or raise MissingDependency naming the extra."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingDependency(module, extra, purpose) from exc
    except ValueError:
        # numba's import refuses NUMBA_NUM_THREADS=0 (or less) with a bare ValueError
        value = os.environ.get("NUMBA_NUM_THREADS")
        if module.split(".")[0] != "numba" or value is None:
            raise
        raise InputError(f"NUMBA_NUM_THREADS={value}: numba needs at least 1 thread; unset "
                         f"it or set it to 1 or more") from None


class InputWarning(UserWarning):
    """Input rooflab read but suspects (an unknown kernel field, a time column in ms): the
    run goes on. The CLI prints it as one `warning: FILE: ...` line on stderr; Python
    callers get a normal warning they can filter or turn into an error."""


# rooflab's own source folder, as frames name their files (the separator: not rooflab_x/)
_PACKAGE = os.path.dirname(__file__) + os.sep
# stdlib frames between the user and rooflab: a reader run under a contextmanager used as a
# decorator, dataclasses.replace(kernel, ...) calling Kernel.__init__
_PASSED_THROUGH = frozenset({"contextlib", "dataclasses"})


def user_stacklevel() -> int:
    """The `stacklevel` for a warnings.warn in the caller that points at the first frame
    outside rooflab: the user's `load_kernels(...)` or `Kernel(...)` line, however many
    rooflab functions sit between (review 19b N3: a fixed stacklevel was right for one
    caller and pointed into rooflab/model/schema.py for every reader)."""
    import sys

    frame = sys._getframe(1)   # the caller: stacklevel 1
    level = 1
    while frame is not None and (frame.f_code.co_filename.startswith(_PACKAGE)
                                 or frame.f_globals.get("__name__") in _PASSED_THROUGH):
        frame = frame.f_back
        level += 1
    return level
