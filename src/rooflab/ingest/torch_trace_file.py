"""Reading a PyTorch profiler chrome trace file (plain or gzipped JSON, a bare event list or
{"traceEvents": [...]}), with errors that say what the file is instead (a folder of traces,
another profiler's CSV, a rooflab JSON) and how to export a trace. Split from
ingest/torch_trace.py.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import ParseError
from ..files import decode_json, json_end_hint
from ..files_decode import open_text, unpack_hint
from .torch_trace_stream import CHUNK, BadJSON, Fallback, TraceReader, read_text


def load_trace_json(path: str) -> dict:
    """The trace's top-level JSON object, its traceEvents cut down to what rooflab reads
    (torch_trace_stream), read a piece at a time; a file that reader does not mirror is
    read whole, as before (_whole_text)."""
    p = Path(path)
    if not p.is_file():
        raise ParseError(_folder_hint(p) if p.is_dir() else "file not found", path=path)
    try:
        data = _streamed(p, path)
    except Fallback:
        data = _whole_text(p, path)
    except OSError as exc:
        raise ParseError(f"cannot read trace: {exc}", path=path) from None
    return _checked(data, path)


def _streamed(p: Path, path: str):
    """The trace read by TraceReader, with the errors _whole_text gives for the same file:
    a JSON error is said once the whole text is read (the gzip stream's own errors, and a
    binary file's, come first, as there); Fallback for a text with bytes that are not
    UTF-8 (read whole: GB18030, binary data, the warning's line)."""
    # gzip by content, not by name: tensorboard_trace_handler writes *.pt.trace.json.gz,
    # and renamed or downloaded traces keep their bytes but not always their suffix.
    # open_text reads it as every text reader does: a UTF-8 byte-order mark dropped
    # (a trace saved again by a Windows editor), UTF-16, a stray non-UTF-8 byte in a
    # name read as U+FFFD with a warning (review s21 r5 F3-F5); newline="" keeps the text
    # as it is (error columns and lines).
    with open_text(p, newline="", what="trace") as fh:
        reader = TraceReader(fh, path)
        try:
            data = reader.read()
        except BadJSON as exc:
            while read_text(fh, CHUNK):   # to the end: the gzip stream's errors, bytes not UTF-8
                pass
            if fh.replaced:
                raise Fallback from None
            if exc.error is not None:   # decode_json's: a huge number, deep nesting
                raise exc.error from None
            if reader.head.lstrip("\ufeff \t\r\n")[:1] not in ("{", "["):
                raise ParseError(_not_json(path, reader.head), path=path) from None
            raise ParseError(_invalid(exc.msg, exc.colno, exc.hint), path=path,
                             line=exc.lineno) from None
        if fh.replaced:
            raise Fallback
    return data


def _whole_text(p: Path, path: str):
    """The trace read whole and parsed by json.loads (~6.5x the file; review s23 r5 F1):
    for the files TraceReader does not mirror."""
    head = b""
    try:
        with p.open("rb") as fh:
            head = fh.read(16)
        # Read as text straight away: the file's bytes are gone before json.loads builds
        # the tree (bytes and text both alive were 1x the file on top of json.load's 6x:
        # review r5 F3).
        with open_text(p, newline="", what="trace") as fh:
            raw, binary = fh.read_all()
            if binary:   # say what it is, not which byte failed
                raise ParseError(_binary(path, head), path=path)
        return decode_json(raw, path)   # deep nesting, huge numbers: a ParseError
    except json.JSONDecodeError as exc:
        if raw.lstrip("\ufeff \t\r\n")[:1] not in ("{", "["):
            raise ParseError(_not_json(path, raw), path=path) from None
        raise ParseError(_invalid(exc.msg, exc.colno, json_end_hint(exc, raw)), path=path,
                         line=exc.lineno) from None
    except OSError as exc:
        raise ParseError(f"cannot read trace: {exc}", path=path) from None


def _checked(data, path: str) -> dict:
    """{"traceEvents": [...], ...}, or the error for what the file is instead."""
    if isinstance(data, list):
        data = {"traceEvents": data}
    if not isinstance(data, dict) or not isinstance(data.get("traceEvents"), list):
        ours = isinstance(data, dict) and bool(data.keys() & {"schema_version", "roof",
                                                               "kernels", "compute"})
        what = ("; it is a rooflab JSON file (a profile, roof or kernel list): a profile goes "
                "to --on FILE, a kernel list to `rooflab report FILE` or `rooflab plot FILE`"
                if ours else "")
        raise ParseError(f"not a chrome trace: no 'traceEvents' list{what}; export a trace "
                         f"with prof.export_chrome_trace(path)", path=path)
    return data


def _folder_hint(folder: Path) -> str:
    """A folder given as the trace: tensorboard_trace_handler's log folder names its traces."""
    traces = sorted(folder.glob("*.pt.trace.json*"))
    if not traces:
        return "is a directory; give the trace file"
    names = ", ".join(str(t) for t in traces[:3]) + (", ..." if len(traces) > 3 else "")
    return (f"is a directory; give one of its {len(traces)} trace file(s) "
            f"(tensorboard_trace_handler writes one per profiled step): {names}")


# Nsight Compute's report files start with these bytes (the fixtures' .ncu-rep, ncu 2023-2025),
# whatever they are named
_NCU_REP_MAGIC = b"NVR\x00"


def _binary(path: str, blob: bytes) -> str:
    """A file that is not text: an .ncu-rep (by name or by its magic bytes) names its verb."""
    if blob.startswith(_NCU_REP_MAGIC) or path.lower().endswith(".ncu-rep"):
        return ("not a chrome trace: an Nsight Compute report (.ncu-rep); read it with "
                "`rooflab ncu FILE`")
    packed = unpack_hint(path)
    if packed:   # trace.json.xz: decompressed first (a .gz trace is read as it is)
        return f"not a chrome trace: it {packed}"
    if blob.startswith(b"SQLite format 3"):
        return ("not a chrome trace: an SQLite database (rocprofv3's rocpd?); read it with "
                "`rooflab rocprof FILE`")
    return ("not a chrome trace: a binary file, not a text trace; export one with "
            "prof.export_chrome_trace(path) from a torch.profiler run with record_shapes=True")


def _invalid(msg: str, column: int, hint: str) -> str:
    """A JSON error in a trace: "a file cut short?" only where the decoder stopped at the
    file's end (files.json_end_hint); a syntax error in the middle once got it too (s36 I)."""
    return (f"not valid JSON ({msg}, column {column}){hint}; export it with "
            f"prof.export_chrome_trace(path)")


def _not_json(path: str, head: str) -> str:
    """A file that is not JSON at all: an empty one said so (s36 B), another profiler's CSV
    names its verb."""
    from .profile_files import file_kind

    if not head.strip("\ufeff \t\r\n"):
        return ("the file is empty (was it written completely?); export a trace with "
                "prof.export_chrome_trace(path)")
    verb = {"ncu": "an Nsight Compute CSV; read it with `rooflab ncu FILE`",
            "rocprof": "a rocprof CSV; read it with `rooflab rocprof FILE`"}.get(file_kind(path))
    return (f"not a chrome trace (not JSON): {verb}" if verb else
            "not a chrome trace (not JSON); export one with prof.export_chrome_trace(path) "
            "from a torch.profiler run with record_shapes=True")
