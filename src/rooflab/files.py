"""Atomic file writing and JSON loading: no half-written output, clear errors on bad input;
and which program wrote a file, told by its content (file_kind)."""

from __future__ import annotations

import csv
import json
import os
import re
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .errors import OutputError, ParseError

# how text is read (gzip, UTF-16, a stray cp1252 byte): files_decode.py; read_text is
# imported from here as before
from .files_decode import SNIFF, decode_bytes, looks_binary, read_text, sniff_text

# csv's default cell limit (128 KiB) made every CSV reader fail with csv.Error, a traceback,
# on a long line (a pasted log, a file of another kind: review r1 F1). Lifted once, here,
# for every reader (they take their csv.reader from csv_reader below, so this module is
# loaded first): a long line is then read as a cell, and the reader's own per-row checks
# (column counts, numbers, a file ending inside a quoted cell) name the line.
csv.field_size_limit(2**31 - 1)   # the most a C long holds everywhere (Windows: 32 bits)


def csv_reader(lines: Iterable[str]) -> Any:
    """csv.reader with no cell-size limit (above): every CSV reader's one way in."""
    return csv.reader(lines)


def csv_dict_reader(lines: Iterable[str]) -> csv.DictReader:
    """csv.DictReader with no cell-size limit (above)."""
    return csv.DictReader(lines)


def write_atomic(path: str | os.PathLike, data: str | bytes) -> Path:
    """Write to a temporary file beside `path`, then rename over it (atomic on POSIX).

    Missing parent directories are made. A path that cannot be written raises OutputError
    (an OSError too) naming the path and the reason."""
    path = Path(path)
    target = link_target(path)
    tmp = write_temp(target, data, name=path)
    try:
        os.replace(tmp, target)
    except BaseException as exc:
        # Ctrl-C or a failed rename leaves nothing behind.
        tmp.unlink(missing_ok=True)
        if isinstance(exc, OSError) and not isinstance(exc, OutputError):
            raise cannot_write(path, exc) from None
        raise
    return path


def link_target(path: Path) -> Path:
    """Where a write to `path` lands: through a symlink to its target, as open(path, "w")
    writes (renaming onto the link replaced the link with a plain file and left its target
    unchanged: review 12c F)."""
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def write_temp(target: Path, data: str | bytes, name: str | os.PathLike | None = None) -> Path:
    """`data` in a new temporary file beside `target` (same directory: a rename onto it is
    atomic), with the mode a plain open() would leave: an existing file's own (a private 0600
    report stays private), else 0666 - umask (mkstemp makes 0600). Missing parent
    directories are made; a failure removes the temporary and raises OutputError naming
    `name` (default: the target)."""
    shown = Path(name) if name is not None else target
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp",
                                   dir=target.parent)
    except OSError as exc:
        raise cannot_write(shown, exc) from None
    try:
        with os.fdopen(fd, "wb" if isinstance(data, bytes) else "w") as fh:
            fh.write(data)
        os.chmod(tmp, _mode_of(target))
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise cannot_write(shown, exc) from None
        raise
    return Path(tmp)


def cannot_write(path: str | os.PathLike, exc: OSError) -> OutputError:
    """The OutputError for a failed write: the path, the system's reason, what to do."""
    path = Path(path)
    if path.is_dir():
        return OutputError(f"{path}: is a directory; give a file name such as "
                           f"{path / ('out' + (path.suffix or '.json'))}")
    reason = exc.strerror or str(exc)
    return OutputError(f"{path}: cannot write the file ({reason}); give a path in a "
                       f"directory you can write to")


def check_writable(path: str | os.PathLike) -> None:
    """Raise OutputError now if write_atomic(path) would fail later, before long work.

    Tries a temporary file in the nearest existing directory on the way to `path`
    (nothing is created but that file, which is removed at once)."""
    path = Path(path)
    if path.is_dir():
        raise cannot_write(path, IsADirectoryError(21, "Is a directory"))
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


STDIN_NAME = "<stdin>"   # what messages call a file read from standard input


def stdin_to_file(data: bytes, folder: str | os.PathLike) -> Path:
    """Standard input's bytes (`-` as a file argument) saved as a file in `folder`, named
    by what they hold, so every reader takes it as it takes a file of that kind:
    stdin.json (JSON: a kernel file, an analysis, a profile, a torch trace), stdin.csv
    (other text: a kernel CSV, an ncu or rocprof export), with .gz when gzipped (what it
    holds told inside: a gzipped CSV was named stdin.json.gz, so taken for a torch trace:
    review s21 r5 F1). Binary data (an .ncu-rep, known to ncu by its name only) raises
    ParseError: save it first."""
    text = sniff_text(data[:SNIFF])
    if text.lstrip(" \t\r\n")[:1] in ("{", "[", ""):   # empty: "the file is empty"
        name = "stdin.json"
    else:
        if looks_binary(text, text.count("\ufffd")):
            raise ParseError("standard input holds binary data (an .ncu-rep report?), which "
                             "is read from a file only: save it and pass the file's path",
                             path="-") from None
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


def _cell(v: Any) -> Any:
    if v is None:
        return ""
    if isinstance(v, (list, tuple)):
        return " ".join(str(x) for x in v)
    return v


# Who wrote the documents of this command: {"rooflab": version, "command": argv}, set by
# the CLI's entry point (cli/main.py) for the one command it runs, None otherwise (library
# use). The version and the command line only, no time or host: the same command on the
# same input still gives the same bytes.
_GENERATOR: list[dict[str, Any]] = []


def set_generator(argv: Sequence[str] | None) -> None:
    """Name the command whose documents follow (None: no command, nothing stamped)."""
    from . import __version__

    _GENERATOR[:] = [] if argv is None else [
        {"rooflab": __version__, "command": ["rooflab", *map(str, argv)]}]


def generator() -> dict[str, Any] | None:
    """The running command's generator block ({"rooflab": version, "command": argv})."""
    return dict(_GENERATOR[0]) if _GENERATOR else None


def add_generator_env(name: str, value: str) -> None:
    """Record an environment variable the running command read in place of an option
    (ROOFLAB_ON for --on) in its generator block, as {"env": {name: value}}: the command
    alone re-runs with another roof, or none, where the variable is unset (review r1_json
    F4). No command running (library use): nothing to record."""
    if _GENERATOR:
        block = _GENERATOR[0]
        _GENERATOR[0] = {**block, "env": {**block.get("env", {}), name: str(value)}}


def command_line(gen: Mapping[str, Any]) -> str:
    """The generator's command as one shell line (arguments with spaces quoted), behind
    the environment it read ('ROOFLAB_ON=H200 rooflab report k.json'), so that the line a
    .md/.html footer prints re-runs as written (review r1_json F4)."""
    import shlex

    env = [f"{k}={shlex.quote(str(v))}" for k, v in (gen.get("env") or {}).items()]
    return " ".join([*env, shlex.join(str(a) for a in gen.get("command") or ())])


def stamped(obj: Any) -> Any:
    """A JSON document (a top-level object) with the generator block added last, when a
    command runs and the document has none; other values as they are."""
    gen = generator()
    if gen is None or not isinstance(obj, dict) or "generator" in obj:
        return obj
    return {**obj, "generator": gen}


def dumps_json(obj: Any) -> str:
    """JSON text with stable key order as produced and a trailing newline; sets sorted, so
    the same document is the same bytes in every process. A document written by a command
    names it (stamped)."""
    return json.dumps(stamped(obj), indent=2, allow_nan=False, default=_default) + "\n"


def _default(obj: Any) -> Any:
    if hasattr(obj, "tolist"):
        return obj.tolist()
    if isinstance(obj, (set, frozenset)):
        # a set's order follows string hashing, which changes per process
        # (PYTHONHASHSEED): sorted, the same input gives the same bytes every run
        return sorted(obj, key=lambda x: (type(x).__name__, str(x)))
    raise TypeError(f"cannot serialise {type(obj).__name__}")


def write_json(path: str | os.PathLike, obj: Any) -> Path:
    """Write JSON atomically."""
    return write_atomic(path, dumps_json(obj))


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
        hint = f"; this {p.suffix} file is not JSON: is it the right file?" if other else ""
        raise ParseError(f"invalid JSON: {exc.msg} (column {exc.colno}){hint}", path=str(p),
                         line=exc.lineno) from None


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


# --- Which program wrote a file, told by content (file_kind) ------------------------------
# Here, below every layer, so that hardware (a file given as a roof that is a profiler's
# output: roof_file_hints) and ingest (which reader a verb's file needs) ask the same
# question without hardware importing ingest (review r1 F6).

# rocprof's kernel-name columns (ingest/rocprof.py reads kernels by them)
ROCPROF_NAME_COLUMNS = ("KernelName", "Kernel_Name", "Kernel-Name", "kernel-name")
# rocprof-compute roofline.csv's bandwidth columns (hardware/rocprof_roofline.py's MEMORY)
ROOFLINE_BANDWIDTH_COLUMNS = ("HBMBw", "MALLBw", "L2Bw", "L1Bw")
# perf stat's events rooflab reads (ingest/perf_stat.py) and its text footer: a line naming
# one of them is perf's, not a kernel CSV's (whose first row is rooflab's column names)
_PERF_WORDS = re.compile(r"seconds time elapsed|duration_time|fp_arith_inst_retired|"
                         r"uncore_imc|cas_count|fp_ret_sse_avx_ops", re.IGNORECASE)
_PERF_JSON_KEY = re.compile(r'"counter-value"\s*:')   # a key of perf stat -j's lines


def file_kind(path: str) -> str:
    """'ncu', 'rocprof', 'torch', 'likwid', 'perf', or 'rooflab' (our JSON/CSV, and anything
    unknown, whose errors then say what is accepted), told by content: a rocprof results.csv,
    an ncu out.csv and a likwid or perf CSV share the suffix of our own CSV, perf stat -j's
    lines our JSON's, a gzipped trace may have lost its name (gzip is looked inside)."""
    p = Path(path)
    if p.is_dir():   # a rocprof output folder, else read_text lists what is in it
        return "rocprof" if _rocprof_folder(p) else "rooflab"
    if path.lower().endswith(".ncu-rep"):
        return "ncu"
    try:
        with p.open("rb") as fh:
            head = fh.read(SNIFF)   # a trace's deviceProperties come first
    except OSError:
        return "rooflab"   # read_text says why it cannot be read
    if head.startswith(b"SQLite format 3"):
        return "rocprof"   # rocprofv3's rocpd database: its reader says to export CSV
    # told by what a gzip stream holds (a gzipped ncu CSV was sent to the torch reader:
    # review s21 r5 F1) and by UTF-16 text as by UTF-8 (PowerShell's `>`: F4)
    text = sniff_text(head)
    if text.lstrip()[:1] in ("{", "["):
        if text.lstrip()[:1] == "{" and _PERF_JSON_KEY.search(text):
            return "perf"   # `perf stat -j`: one JSON object a line, not one document
        return "torch" if '"traceEvents"' in text else "rooflab"
    if '"Kernel Name"' in text or "Kernel Name," in text:
        return "ncu"
    if _rocprof_header(text):
        return "rocprof"
    first = text.lstrip().split("\n", 1)[0]
    if first.startswith(("STRUCT,Info", "TABLE,Region ", "TABLE,Group ")):
        return "likwid"
    perf = _PERF_WORDS.search(text) and not first.lower().startswith("name")
    return "perf" if perf else "rooflab"


def _rocprof_folder(folder: Path) -> bool:
    """The folders `rooflab rocprof` takes: rocprof-compute's workload folder (pmc_perf.csv),
    rocprof v1's (results.csv), rocprofv3's (*_counter_collection.csv, in pass_N/ too)."""
    if (folder / "pmc_perf.csv").is_file() or (folder / "results.csv").is_file():
        return True
    # rocprofv3 writes OUT/HOST/PID_counter_collection.csv, with passes OUT/HOST/pass_N/...:
    # three levels, not a walk of whatever tree was given by mistake
    return any(next(folder.glob(f"{'*/' * depth}*_counter_collection.csv"), None) is not None
               for depth in range(4))


def _rocprof_header(text: str) -> bool:
    """A rocprof header (KernelName, Kernel_Name, ...) in the first lines, or one of the
    rocprof files its reader names and refuses (--stats summaries, roofline.csv)."""
    lines = text.splitlines()[:50]
    for i, row in enumerate(csv_reader(lines)):
        cells = {c.strip() for c in row}
        if cells & set(ROCPROF_NAME_COLUMNS):
            return True
        if i == 0 and ({"Name", "Calls", "TotalDurationNs"} <= cells
                       or is_roofline_header(cells)):
            return True
    return False


def is_roofline_header(cells) -> bool:
    """The one rule for a roofline.csv header: it names a bandwidth column (HBMBw, MALLBw,
    L2Bw, L1Bw); kernel files and profiler readers ask this same question."""
    return bool({str(c).strip() for c in cells} & set(ROOFLINE_BANDWIDTH_COLUMNS))
