"""Atomic file writing and JSON loading: no half-written output, clear errors on bad input;
and which program wrote a file, told by its content (file_kind)."""

from __future__ import annotations

import csv
import errno
import io
import json
import os
import re
import stat
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from .errors import OutputError, ParseError

# how text is read (gzip, UTF-16, a stray cp1252 byte): files_decode.py; read_text is
# imported from here as before
from .files_decode import SNIFF, decode_bytes, looks_binary, nul_safe, read_text, sniff_text

# which command wrote a document (its "generator" block): files_generator.py
from .files_generator import stamped
from .files_rename import check_not_held, held_open, replace
from .json_stream import iter_json

# csv's default cell limit (128 KiB) made every CSV reader fail with csv.Error, a traceback,
# on a long line (a pasted log, a file of another kind: review r1 F1). Lifted once, here,
# for every reader (they take their csv.reader from csv_reader below, so this module is
# loaded first): a long line is then read as a cell, and the reader's own per-row checks
# (column counts, numbers, a file ending inside a quoted cell) name the line.
csv.field_size_limit(2**31 - 1)   # the most a C long holds everywhere (Windows: 32 bits)


def csv_reader(lines: Iterable[str]) -> Any:
    """csv.reader with no cell-size limit (above): every CSV reader's one way in."""
    return csv.reader(nul_safe(lines))


def csv_dict_reader(lines: Iterable[str]) -> csv.DictReader:
    """csv.DictReader with no cell-size limit (above), whose cells drop the `'` that
    csv_text puts before a text starting like a formula: a kernel named `=x` written by
    `-o k.csv` reads back as `=x` (review s22 r1 F3). A text in memory with no `'` at all
    (a scan in C) takes the plain reader: the check per cell cost 50 % more."""
    if isinstance(lines, io.StringIO) and "'" not in lines.getvalue():
        return csv.DictReader(nul_safe(lines))
    return _UnguardedDictReader(nul_safe(lines))


class _UnguardedDictReader(csv.DictReader):
    def __next__(self) -> dict:
        row = super().__next__()
        for key, value in row.items():
            if value.__class__ is str and value[:1] == "'" and value[1:2] in _FORMULA_START:
                row[key] = value[1:]
        return row


def write_atomic(path: str | os.PathLike, data: str | bytes | Iterable[str]) -> Path:
    """Write to a temporary file beside `path`, then rename over it (atomic on POSIX); data
    may be text in pieces, written as they come (json_pieces).

    Missing parent directories are made. A path that cannot be written raises OutputError
    (an OSError too) naming the path and the reason."""
    path = Path(path)
    target = link_target(path)
    tmp = write_temp(target, data, name=path)
    try:
        replace(tmp, target)   # retried on Windows while antivirus holds it (files_rename)
    except BaseException as exc:
        # Ctrl-C or a failed rename leaves nothing behind.
        tmp.unlink(missing_ok=True)
        if isinstance(exc, OSError) and not isinstance(exc, OutputError):
            raise (held_open(path, target, exc) or cannot_write(path, exc)) from None
        raise
    note_written(path)
    return path


# The files the running command has written so far (write_atomic, and writers that rename
# into place themselves: note_written), so that an interrupted command says which are
# there instead of "nothing was written" (review s22 r2 F6). Cleared per command (cli/main).
_WRITTEN: list[Path] = []


def note_written(path: str | os.PathLike) -> None:
    """Record a file the running command has put in place (complete)."""
    _WRITTEN.append(Path(path))


def written(clear: bool = False) -> list[Path]:
    """The files written so far by the running command (in order); clear: forget them."""
    done = list(dict.fromkeys(_WRITTEN))
    if clear:
        _WRITTEN.clear()
    return done


def is_directory(path: str | os.PathLike) -> bool:
    """Path.is_dir() that answers False where the system cannot look the path up: a name
    over 255 bytes (ENAMETOOLONG), which is_dir() raised as a traceback, exit 70 (review
    s22 r2 F3). The open or write that follows then says why, as one error line."""
    try:
        return Path(path).is_dir()
    except (OSError, ValueError):
        return False


def special_file(path: str | os.PathLike) -> str:
    """What a path that exists and is not a regular file or a directory is ('a named pipe
    (FIFO)', 'a device', 'a socket'), following symlinks; '' otherwise (missing too)."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return ""
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a socket" if stat.S_ISSOCK(mode) else ""


def _refuse_special(path: Path, target: Path) -> None:
    """An output onto a FIFO or a device (or a symlink to one) is refused: the atomic write
    renamed a plain file over it, so the node was gone (as root, /dev/full itself) and a
    reader on the pipe waited forever (review s22 r2 F2). Writing into it instead would
    block with no reader and cannot be atomic; a pipe is what standard output is for."""
    kind = special_file(target)
    if kind:
        shown = f"{path} (a link to {target})" if target != path else str(path)
        raise OutputError(f"{shown} is {kind}, not a regular file; rooflab writes a file and "
                          f"renames it into place, which would replace it: give a regular "
                          f"file's path (to feed a pipe, use --json on standard output)")


def link_target(path: Path) -> Path:
    """Where a write to `path` lands: through a symlink to its target, as open(path, "w")
    writes (renaming onto the link replaced the link with a plain file and left its target
    unchanged: review 12c F)."""
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def write_temp(target: Path, data: str | bytes | Iterable[str],
               name: str | os.PathLike | None = None) -> Path:
    """`data` in a new temporary file beside `target` (same directory: a rename onto it is
    atomic), with the mode a plain open() would leave: an existing file's own (a private 0600
    report stays private), else 0666 - umask (mkstemp makes 0600). Missing parent
    directories are made; a failure removes the temporary and raises OutputError naming
    `name` (default: the target)."""
    shown = Path(name) if name is not None else target
    _refuse_special(shown, target)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{_short(target.name)}.", suffix=".tmp",
                                   dir=target.parent)
    except OSError as exc:
        raise cannot_write(shown, exc) from None
    try:
        # text as UTF-8 whatever the locale (cp936/cp1252 on Windows, ASCII under LC_ALL=C
        # wrote GB18030 under <meta charset='utf-8'>, or crashed: review s22 r3 F2), and
        # '\n' as written (no '\r\n' from Windows' text mode)
        with (os.fdopen(fd, "wb") if isinstance(data, bytes) else
              os.fdopen(fd, "w", encoding="utf-8", newline="")) as fh:
            # text in pieces as it is made (json_pieces): never whole in memory
            fh.writelines([data] if isinstance(data, (str, bytes)) else data)
        os.chmod(tmp, _mode_of(target))
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise cannot_write(shown, exc) from None
        raise
    return Path(tmp)


def _short(name: str, most: int = 200) -> str:
    """A file name cut to `most` bytes (whole characters): the temporary's prefix, so that
    '.NAME.XXXXXXXX.tmp' (14 bytes more) fits where NAME fits, up to the usual 255-byte
    limit (a 242-byte name was refused: review s22 r2 F4)."""
    import sys

    raw = os.fsencode(name)
    return name if len(raw) <= most else raw[:most].decode(sys.getfilesystemencoding(),
                                                           "ignore")


def cannot_write(path: str | os.PathLike, exc: OSError) -> OutputError:
    """The OutputError for a failed write: the path, the system's reason, what to do."""
    path = Path(path)
    if is_directory(path):
        return OutputError(f"{path}: is a directory; give a file name such as "
                           f"{path / ('out' + (path.suffix or '.json'))}")
    reason = exc.strerror or str(exc)
    if exc.errno == errno.ENAMETOOLONG:
        return OutputError(f"{path}: cannot write the file ({reason}: the name is "
                           f"{len(os.fsencode(path.name))} bytes); give a shorter file name")
    return OutputError(f"{path}: cannot write the file ({reason}); give a path in a "
                       f"directory you can write to")


# Folders check_writable found writable, for matplotlib's cache where no temporary folder
# is (report/chart_rc.py: a read-only root filesystem, review s24 r2 F7).
WRITABLE_FOLDERS: list[Path] = []


def check_writable(path: str | os.PathLike) -> None:
    """Raise OutputError now if write_atomic(path) would fail later, before long work.

    Tries a temporary file in the nearest existing directory on the way to `path`
    (nothing is created but that file, which is removed at once)."""
    path = Path(path)
    if is_directory(path):
        raise cannot_write(path, IsADirectoryError(21, "Is a directory"))
    _refuse_special(path, link_target_safe(path))
    check_not_held(path, link_target_safe(path))   # Windows: open in Excel (files_rename)
    folder = path.absolute().parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        raise OutputError(f"{path}: cannot write the file ({folder} is a file, not a "
                          f"directory); give a path in a directory you can write to")
    try:
        fd, tmp = tempfile.mkstemp(prefix=".rooflab-check.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise cannot_write(path, exc) from None
    os.close(fd)
    os.unlink(tmp)
    if folder not in WRITABLE_FOLDERS:
        WRITABLE_FOLDERS.append(folder)
    try:   # bytes, against the folder's own limit
        longest, size = os.pathconf(folder, "PC_NAME_MAX"), len(os.fsencode(path.name))
    except (OSError, ValueError, AttributeError):   # Windows: 255 UTF-16 units (s22 h1 H5)
        longest, size = 255, len(path.name.encode("utf-16-le", "surrogatepass")) // 2
    if size > longest:
        raise cannot_write(path, OSError(errno.ENAMETOOLONG, os.strerror(errno.ENAMETOOLONG)))


def link_target_safe(path: Path) -> Path:
    """link_target, or the path itself where it cannot be looked up (a name too long)."""
    try:
        return link_target(path)
    except (OSError, ValueError):
        return path


STDIN_NAME = "<stdin>"   # what messages call a file read from standard input


def stdin_to_file(data: bytes, folder: str | os.PathLike, source: str = "-") -> Path:
    """Standard input's bytes (`-` as a file argument) saved as a file in `folder`, named
    by what they hold, so every reader takes it as it takes a file of that kind:
    stdin.json (JSON: a kernel file, an analysis, a profile, a torch trace), stdin.csv
    (other text: a kernel CSV, an ncu or rocprof export), with .gz when gzipped (what it
    holds told inside: a gzipped CSV was named stdin.json.gz, so taken for a torch trace:
    review s21 r5 F1). Binary data (an .ncu-rep, known to ncu by its name only) raises
    ParseError: save it first. `source`: the pipe read (a FIFO given by name, `<(...)`),
    for that message."""
    text = sniff_text(data[:SNIFF])
    if text.lstrip(" \t\r\n")[:1] in ("{", "[", ""):   # empty: "the file is empty"
        name = "stdin.json"
    else:
        if looks_binary(text, text.count("\ufffd")):
            what = "standard input" if source == "-" else f"the pipe {source}"
            raise ParseError(f"{what} holds binary data (an .ncu-rep report?), which is "
                             f"read from a file only: save it and pass the file's path",
                             path=source) from None
        name = "stdin.csv"
    path = Path(folder) / (name + ".gz" if data[:2] == b"\x1f\x8b" else name)
    path.write_bytes(data)
    return path


def with_stdin(paths: Sequence[str], stream: Any = None) -> tuple[list[str], str | None]:
    """File arguments where `-` means standard input, for a reader that takes text:
    (the paths with `-` named STDIN_NAME, standard input's text), or (paths, None) without
    `-`. Its bytes are read as a file's are (decode_bytes: gzip, UTF-16, bytes that are
    not UTF-8 as U+FFFD). Read once: `-` given twice, or a terminal, is an InputError."""
    import sys

    from .errors import InputError

    if "-" not in paths:
        return list(paths), None
    if list(paths).count("-") > 1:
        raise InputError("- given twice: standard input can be read once; save one of the "
                         "inputs to a file and pass its path")
    stream = sys.stdin if stream is None else stream
    if stream is None or stream.isatty():
        raise InputError("-: reads standard input, which is a terminal here; pipe the "
                         "profiler's output in (`... 2>&1 | rooflab perf -`) or give a file")
    try:
        data = stream.buffer.read() if hasattr(stream, "buffer") else stream.read()
    except (OSError, ValueError) as exc:   # closed, or a test's capture that refuses
        raise InputError(f"-: cannot read standard input ({exc}); give the file's path "
                         f"instead") from None
    text = decode_bytes(data, STDIN_NAME) if isinstance(data, bytes) else data
    return [STDIN_NAME if p == "-" else p for p in paths], text


def read_with_stdin(load: Callable[..., Any], files: Sequence[str], **options: Any) -> Any:
    """load(paths, stdin=text, **options) for a reader that takes standard input's text:
    the file arguments as with_stdin gives them (`-`: a pipe from the profiler, named
    <stdin> in notes and errors), one rule for every such verb (likwid, perf)."""
    paths, text = with_stdin(files)
    return load(paths, stdin=text, **options)


def _mode_of(path: Path) -> int:
    """The permission bits a rewrite of `path` keeps: the file's own, or the default."""
    try:
        return path.stat().st_mode & 0o7777
    except OSError:
        return 0o666 & ~_umask()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def csv_text(rows: Iterable[Mapping[str, Any]], columns: Sequence[str]) -> str:
    """CSV text of rows in the given columns: numbers as numbers (never formatted strings),
    None as an empty cell, lists joined by spaces, keys outside columns left out. The one
    CSV writer behind every `-o FILE.csv`."""
    import csv
    import io

    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(columns)
    for r in rows:
        writer.writerow([_cell(r.get(c)) for c in columns])
    return buf.getvalue()


# A text cell starting with one of these is a formula to Excel and LibreOffice (`=cmd|...`
# runs a program, `=HYPERLINK` leaks data): written with a leading `'`, which shows it as
# text (OWASP's CSV injection advice; review s22 r1 F3). Numbers are written as numbers,
# so -1.5 stays a number. csv_dict_reader drops the `'` again.
_FORMULA_START = frozenset("=+-@\t\r")


def _cell(v: Any) -> Any:
    if v is None:
        return ""
    if isinstance(v, (list, tuple)):
        v = " ".join(str(x) for x in v)
    if isinstance(v, str) and v[:1] in _FORMULA_START:
        return "'" + v
    return v


def dumps_json(obj: Any) -> str:
    """JSON text with stable key order as produced and a trailing newline; sets sorted, so
    the same document is the same bytes in every process. A document written by a command
    names it (stamped)."""
    return "".join(json_pieces(obj))


def json_pieces(obj: Any) -> Iterator[str]:
    """dumps_json's text in pieces of about a megabyte, made as they are written (a
    Streamed array's items one at a time: json_stream.py)."""
    yield from iter_json(stamped(obj))
    yield "\n"


def write_json(path: str | os.PathLike, obj: Any) -> Path:
    """Write JSON atomically, piece by piece (json_pieces) into the temporary file."""
    return write_atomic(path, json_pieces(obj))


def load_json(path: str | os.PathLike) -> Any:
    """Read a JSON file; a missing or malformed file raises ParseError with the line."""
    p = Path(path)
    text = read_text(p)
    if not text.strip():
        raise ParseError("invalid JSON: the file is empty (was it written completely?)",
                         path=str(p), line=1)
    try:
        return decode_json(text, p)
    except json.JSONDecodeError as exc:
        # `rooflab report rooflab-demo/report.md`: say the file is not JSON at all
        other = p.suffix and p.suffix.lower() != ".json" and exc.pos == len(text) - len(
            text.lstrip())
        hint = (f"; this {p.suffix} file is not JSON: is it the right file?" if other
                else json_end_hint(exc, text))
        raise ParseError(f"invalid JSON: {exc.msg} (column {exc.colno}){hint}", path=str(p),
                         line=exc.lineno) from None


def json_end_hint(exc: json.JSONDecodeError, text: str) -> str:
    """'; the file is empty ...' or '; the file ends inside the document ...' where the
    decoder stopped at the end of the text (a string left open to the end): a file cut
    short, which "Expecting value (column 66)" alone did not say (s36 B); else ''."""
    if not text.strip():
        return "; the file is empty (was it written completely?)"
    if exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated string"):
        return "; the file ends inside the document (was it written completely?)"
    return ""


def decode_json(text: str, path: str | os.PathLike) -> Any:
    """json.loads(text). What the decoder refuses beyond the grammar was a traceback from
    every JSON reader (review r1 F13): a number past Python's digit limit (ValueError) or
    nesting past the recursion limit (RecursionError); each is a ParseError naming `path`.
    A json.JSONDecodeError (bad grammar) is left to the caller, whose message says what
    the file should hold."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise
    except RecursionError:
        raise ParseError("invalid JSON: nested too deeply (arrays or objects inside each "
                         "other thousands of levels down); is it the right file?",
                         path=str(path)) from None
    except ValueError as exc:
        digits = re.search(r"has (\d+) digits", str(exc))
        what = f"a number of {digits[1]} digits" if digits else f"a value it cannot read ({exc})"
        raise ParseError(f"invalid JSON: {what}; write a long number with an exponent, "
                         f"such as 1.5e308", path=str(path)) from None
