"""Errors under `--json`: besides the `error:` line on stderr, one JSON document on stdout.

A CI script that parses `rooflab VERB ... --json` stdout gets, on a failure, a document it
can branch on (docs/json.md, "Errors under --json"):

    {"schema_version": 2, "error": {"message": ..., "kind": ..., "path": ..., "line": ...,
     "exit_code": 2}, "generator": {...}}

Only when the command asked for JSON, and only when nothing reached stdout yet: a verb
that printed its document (or anything) before failing gets no second one glued to it.
Which is why stdout is watched while the command runs (a _WatchedStdout counts the
characters written through it).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..errors import in_file

# kinds of the errors that are no RooflabError (a RooflabError says its own: errors.py)
USAGE = "usage"               # click/typer: an unknown option, a missing argument
INTERRUPTED = "interrupted"   # Ctrl-C (exit 130)
INTERNAL = "internal"         # a bug in rooflab (exit 70)


def wants_json(argv: list[str]) -> bool:
    """Whether the command line asks for JSON: `--json` among the options (before a `--`,
    after which every word is an argument)."""
    options = argv[:argv.index("--")] if "--" in argv else argv
    return "--json" in options


class _WatchedStdout:
    """sys.stdout as it was, remembering whether anything was written through it."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self.written = False

    def write(self, text: str) -> int:
        if text:
            self.written = True
        return self._stream.write(text)

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        # flush, isatty, fileno, encoding, buffer, ...: the stream's own
        return getattr(self._stream, name)


_WATCH: list[_WatchedStdout] = []   # the running command's stdout, under --json


@contextmanager
def watching(argv: list[str]) -> Iterator[None]:
    """For the command `argv`: under --json, watch what stdout receives, so an error can
    tell whether a document may still be printed."""
    if not wants_json(argv) or sys.stdout is None:   # None: started with stdout closed
        yield
        return
    watched = _WatchedStdout(sys.stdout)
    sys.stdout = watched   # type: ignore[assignment]
    _WATCH[:] = [watched]
    try:
        yield
    finally:
        _WATCH.clear()
        if sys.stdout is watched:   # click may have put its own wrapper on top (a closed pipe)
            sys.stdout = watched._stream


def document(message: str, kind: str, exit_code: int, path: str | None = None,
             line: int | None = None, field: str | None = None) -> dict[str, Any]:
    """The error document; `message` is the `error:` line's text (its first line: the
    lines printed after it, a --run script's traceback frames, an install reason, are
    `detail`, null when there are none; review s19 r2 F11). `field`, the field of the file
    `path` the error is in ('compute[0].flop_per_s'), only where the error names one: the
    documents of every other error keep their keys.

    Its `schema_version` is put first by `emit`, when the document is printed: every
    error path builds one (a usage error, Ctrl-C, without --json too), and
    model.schema imports the model and numpy (0.3-0.5 s of CPU) for one constant."""
    first, _, rest = message.partition("\n")
    return {"error": {"message": first, "kind": kind, "path": path, "line": line,
                      **({"field": field} if field else {}),
                      "exit_code": exit_code, "detail": rest or None}}


def of_exception(exc: BaseException, message: str, exit_code: int,
                 named=lambda text: text) -> dict[str, Any]:
    """The document for a RooflabError: its class's kind, and for a file error the file
    (through `named`: standard input's saved copy is `<stdin>`) and line. Where the error
    carries no file, the one its message starts with ('v2.json: ...', 'boom.py:4: ...',
    '/proc/x.json: cannot write ...') when that is a file the command line names; where it
    carries no line, the one line its message names ('(line 9: launch 0 ... skipped'). The
    field in the file ('compute[0].flop_per_s', 'kernels[0].flop.fp32') is only ever the
    exception's own, never read off the message here: its raiser names it (model.schema,
    the kernel file readers: errors.field_named); only for the profile checks that name
    none yet does errors.parse_error_in fall back to the message's words."""
    path = getattr(exc, "path", None)
    if isinstance(path, os.PathLike):   # a reader may name its file by a Path
        path = os.fspath(path)
    raw = path if isinstance(path, str) else None
    line = getattr(exc, "line", None)
    path = named(str(path)) if isinstance(path, str) else None
    line = line if isinstance(line, int) and not isinstance(line, bool) else None
    if path is None:
        path, line = _leading_place(message, line)
    if path is not None and line is None:
        named_lines = set(_LINE.findall(message.partition("\n")[0]))
        line = int(named_lines.pop()) if len(named_lines) == 1 else None
    field = getattr(exc, "field", None)
    if isinstance(field, str):
        # an InputError's field as its reader named it from its place ('p.json.compute[0].
        # flop_per_s'): the file's own, as a ParseError's already is (errors.in_file)
        field = in_file(in_file(field, raw), path)
    return document(message, getattr(exc, "kind", "error"), exit_code, path=path, line=line,
                    field=field if isinstance(field, str) and path is not None else None)


# 'FILE: ...' or 'FILE:LINE: ...' at the start of a message (FILE without spaces or ':'),
# also after the option that gave it ('--link-from comm.json: ...', the measured-link
# readers' words: its document said path null; review s35 D)
_LEADING = re.compile(r"(?:--[\w-]+ )?(?P<path>[^\s:]+?)(?::(?P<line>\d+))?: ")
# 'line 9' in a message that names its file apart from its line
_LINE = re.compile(r"\bline (\d+)\b")


def _leading_place(message: str, line: int | None) -> tuple[str | None, int | None]:
    """(path, line) of a message starting 'FILE[:LINE]: ' where FILE is a word of the
    running command line (a file the user named: an input, an -o, a --run script), so an
    option's name ('--fail-if-slower: ...') or a kernel's is never taken for a file."""
    m = _LEADING.match(message)
    if m is None or m["path"] not in _arguments() or not _a_file(m["path"]):
        return None, line
    return m["path"], int(m["line"]) if m["line"] else line


# what an output or a script not yet on disk is named by ('-o /proc/x.json')
_FILE_SUFFIXES = (".json", ".csv", ".png", ".svg", ".pdf", ".html", ".md", ".py", ".txt",
                  ".gz", ".ncu-rep")


def _a_file(word: str) -> bool:
    """Whether a command-line word names a file: one there, or a file-like name (a model
    or device name, 'tinyllama-1.1b: ...', is not one)."""
    return os.path.exists(word) or word.lower().endswith(_FILE_SUFFIXES)


def _arguments() -> set[str]:
    """The words of the running command line that may name files: its arguments and the
    values of --option=value words, not the options."""
    from ..files_generator import generator

    words = (generator() or {}).get("command") or ()
    out = set()
    for w in words[1:]:
        w = str(w)
        if w.startswith("-"):
            w = w.partition("=")[2]
        if w and w != "-":
            out.add(w)
    return out


def emit(doc: dict[str, Any]) -> None:
    """Print `doc` (from `document`), its schema_version first, on stdout when the command
    asked for JSON and stdout is still empty."""
    if not _WATCH or _WATCH[0].written:
        return
    # model.schema brings numpy: imported here, for a document that is printed
    from ..files import dumps_json
    from ..model.schema import SCHEMA_VERSION

    try:
        sys.stdout.write(dumps_json({"schema_version": SCHEMA_VERSION, **doc}))
        sys.stdout.flush()
    except (OSError, ValueError):   # stdout closed or full: the stderr line still says it
        pass
