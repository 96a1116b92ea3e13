"""A text file's bytes as text, whatever wrote them: gzip-compressed or not (by content,
not by name), UTF-8 with or without a byte-order mark, or UTF-16 with its mark (Windows
PowerShell's `ncu --csv ... > out.csv`). A stray byte that is not UTF-8 in an otherwise
UTF-8 file (a kernel name saved as cp1252 by Excel's plain CSV) reads as U+FFFD, with one
warning that names its line and the fix. Every text reader opens its file through
open_text here (files.read_text, the ncu, rocprof, likwid and perf readers, the torch trace
reader), so all of them take the same files (review s21 r5 F1, F3, F4, F5). Also the one
check for a profiler's file whose last line has no line break (last_line_cut, F2).
Split from files.py."""

from __future__ import annotations

import codecs
import gzip
import io
import os
import re
import warnings
import zlib
from pathlib import Path

from .errors import InputWarning, ParseError, user_stacklevel

GZIP_MAGIC = b"\x1f\x8b"
_UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
SNIFF = 1 << 16   # bytes of text read to tell a file's kind (files.file_kind), gzipped or not
# C0 control characters no text file holds: all but tab, line feed, vertical tab, form feed,
# carriage return, Ctrl-Z (DOS's end of file) and escape (a terminal's colours in a log)
_CONTROL = re.compile("[\x00-\x08\x0e-\x19\x1c-\x1f\x7f]")

# Bytes replaced by U+FFFD so far, in every file: a file's own count is the difference over
# its reading (TextFile.replaced). One counter, not one per file: a codec error handler is
# registered by name and does not know which stream it decodes.
_REPLACED = [0]


def _replace_counted(exc: UnicodeError) -> tuple[str, int]:
    if not isinstance(exc, UnicodeDecodeError):
        raise exc
    _REPLACED[0] += exc.end - exc.start
    return "\ufffd", exc.end


_ERRORS = "rooflab.replace"
codecs.register_error(_ERRORS, _replace_counted)


class _Gunzip(io.RawIOBase):
    """A gzip stream read as raw bytes, whose failures are ParseErrors naming the file (a
    gzip stream cut short was "Compressed file ended before the end-of-stream marker")."""

    def __init__(self, raw, path: str, what: str):
        super().__init__()
        self._gz = gzip.GzipFile(fileobj=raw, mode="rb")
        self._raw, self._path, self._what = raw, path, what

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        try:
            return self._gz.readinto(b)
        except EOFError:   # a copy or download stopped part-way
            raise ParseError(f"cannot read {self._what}: the gzip stream ends early (file cut "
                             f"short?); copy the file again", path=self._path) from None
        except (gzip.BadGzipFile, zlib.error) as exc:
            raise ParseError(f"cannot read {self._what}: a gzip file that does not "
                             f"decompress ({exc}); copy the file again", path=self._path
                             ) from None

    def close(self) -> None:
        self._gz.close()
        self._raw.close()
        super().close()


class TextFile(io.TextIOWrapper):
    """An open text file (open_text). `replaced`: the bytes read so far that were not
    UTF-8 (read as U+FFFD). Leaving its `with` block without an error warns once about
    them (note_not_utf8); a reader that finds the file binary raises inside the block."""

    def __init__(self, buffer, path: str, encoding: str, newline: str | None):
        super().__init__(buffer, encoding=encoding, errors=_ERRORS, newline=newline)
        self.path = path
        self._start = _REPLACED[0]
        self._binary = False

    def read_all(self) -> tuple[str, bool]:
        """(the rest of the text, whether it looks binary: looks_binary). A binary file's
        reader refuses it: no note about its bytes then."""
        text = self.read()
        self._binary = looks_binary(text, self.replaced)
        return text, self._binary

    @property
    def replaced(self) -> int:
        return _REPLACED[0] - self._start

    def __exit__(self, kind, value, tb):
        try:
            if kind is None and self.replaced and not self._binary:
                note_not_utf8(self.path, self.replaced)
        finally:
            super().__exit__(kind, value, tb)


def open_text(path: str | os.PathLike, newline: str | None = None,
              what: str = "file") -> TextFile:
    """The file opened as text: gunzipped when its bytes are gzip's, UTF-16 when it starts
    with UTF-16's byte-order mark, else UTF-8 (a UTF-8 mark dropped). Opening raises
    OSError as open() does (the caller says it in its words); a broken gzip stream is a
    ParseError ("cannot read {what}: ...")."""
    raw = open(path, "rb")   # noqa: SIM115 - closed by the TextFile
    try:
        buf = raw
        if raw.peek(2)[:2] == GZIP_MAGIC:
            buf = io.BufferedReader(_Gunzip(raw, str(path), what), 1 << 16)
        return TextFile(buf, str(path), encoding_of(buf.peek(514)), newline)
    except BaseException:
        raw.close()
        raise


def decode_bytes(data: bytes, path: str) -> str:
    """Bytes read already (standard input) as open_text reads a file's, with its note."""
    if data[:2] == GZIP_MAGIC:
        try:
            data = gzip.decompress(data)
        except EOFError:
            raise ParseError("cannot read: the gzip stream ends early (cut short?)",
                             path=path) from None
        except (gzip.BadGzipFile, zlib.error) as exc:
            raise ParseError(f"cannot read: a gzip stream that does not decompress ({exc})",
                             path=path) from None
    start = _REPLACED[0]
    text = data.decode(encoding_of(data[:514]), errors=_ERRORS)
    if _REPLACED[0] > start and not looks_binary(text, _REPLACED[0] - start):
        note_not_utf8(path, _REPLACED[0] - start, data)
    return text


def encoding_of(head: bytes) -> str:
    """'utf-16' for a file that starts with UTF-16's byte-order mark and whose first 256
    characters then decode as UTF-16 text; else 'utf-8-sig'. The mark decides, whatever
    the text: ASCII (a zero byte in every character) or a kernel name in Chinese (none: it
    was read as UTF-8 and refused as binary data, review s21 x2 F8). FF FE alone is no
    proof, a binary file may start so: its bytes then fail to decode (a lone surrogate),
    decode to control characters (small integers) or to text without ASCII punctuation."""
    if head[:2] not in _UTF16_BOMS:
        return "utf-8-sig"
    try:   # not final: the head may end inside a surrogate pair
        text = codecs.getincrementaldecoder("utf-16")().decode(head[:514], final=False)
    except UnicodeDecodeError:
        return "utf-8-sig"
    if _CONTROL.search(text) or (not text and len(head) > 2):   # FF FE and one odd byte
        return "utf-8-sig"
    # every format rooflab reads has ASCII punctuation and digits (commas, braces, numbers)
    # however its names are spelt: a head without one ASCII character in five is bytes that
    # happen to decode (FF FE 00 ' not text' gives U+2000 U+6F6E ...), not a UTF-16 file
    body = text.lstrip("\ufeff")
    if body and sum(c < "\x80" for c in body) < 0.2 * len(body):
        return "utf-8-sig"
    return "utf-16"   # a mark alone (PowerShell's empty file) too: "the file is empty"


def sniff_text(head: bytes, limit: int = SNIFF) -> str:
    """The start of a file as text, for telling its kind: a gzip stream's first bytes
    decompressed (as far as they go, up to `limit` bytes, as many as a plain file's head
    gives: a head cut mid-stream is no error), a UTF-16 head decoded, anything not UTF-8 as
    U+FFFD. Not as many as the compressed head holds: a trace of 2.6 KB gzipped, whose
    "traceEvents" follow 53 KB of deviceProperties, was not told a trace (review s21 x2
    F6)."""
    if head[:2] == GZIP_MAGIC:
        try:
            head = zlib.decompressobj(wbits=31).decompress(head, limit)
        except zlib.error:
            return ""
    return head.decode(encoding_of(head), errors="replace").lstrip("\ufeff")


def looks_binary(text: str, replaced: int) -> bool:
    """Whether decoded text is a binary file's: a NUL near the start; or many bytes that
    are not UTF-8 (`replaced`, more than one in fifty) that are what binary data holds:
    control characters beside them, or most of the file. Not by their number alone: a
    cp1252 CSV (Excel's plain CSV) with an accented letter in every name has one in thirty,
    each amid printable text, and is read with note_not_utf8's warning (review s21 x2
    F8)."""
    if "\x00" in text[:4096]:
        return True
    if replaced <= max(len(text) // 50, 8):
        return False
    return replaced * 2 > len(text) or _CONTROL.search(text) is not None


def note_not_utf8(path: str, replaced: int, data: bytes | None = None) -> None:
    """Warn once that a file held bytes that are not UTF-8, read as U+FFFD: the first one's
    line and what it is in cp1252, and how to save the file as UTF-8."""
    line, byte = _first_bad(path, data)
    where = f"{path}:{line}" if line else path
    what = ""
    if byte is not None:
        char = bytes([byte]).decode("cp1252", errors="replace")
        what = f" (the first, 0x{byte:02X}, is '{char}' in cp1252/Latin-1)"
    more = "a byte that is" if replaced == 1 else f"{replaced} bytes that are"
    warnings.warn(f"{where}: holds {more} not UTF-8{what}, read as '\ufffd'; to "
                  f"keep the names, save the file as UTF-8 (Excel: 'CSV UTF-8'; or `iconv "
                  f"-f cp1252 -t utf-8 FILE > NEW`)", InputWarning,
                  stacklevel=user_stacklevel())


def _first_bad(path: str, data: bytes | None) -> tuple[int | None, int | None]:
    """(line, byte) of the first byte that is not UTF-8 (None, None where not found: a
    UTF-16 file, a file that cannot be read again). Only on the warning's path: the file is
    read again."""
    if data is None:
        try:
            with open(path, "rb") as fh:
                data = fh.read()
            if data[:2] == GZIP_MAGIC:
                data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error):
            return None, None
    if data[:2] in _UTF16_BOMS:
        return None, None
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return data.count(b"\n", 0, exc.start) + 1, data[exc.start]
    return None, None


def last_line_cut(text: str) -> tuple[int, str] | None:
    """(its number, the line) when the text's last line has no line break after it and
    holds more than blanks; else None. The profilers rooflab reads (likwid-perfctr, perf
    stat, rocprof) end every line they write with one, so such a line is most likely a
    file cut short, whose last number may be cut too ('62500' of '6250000': review s21 r5
    F2); ncu's reader has its own check (a quoted field left open)."""
    if not text or text[-1] in "\r\n":
        return None
    start = max(text.rfind("\n"), text.rfind("\r")) + 1
    if not text[start:].strip():
        return None
    return len(text[:start].splitlines()) + 1, text[start:]


def cut_note(line: str) -> str:
    """What a reader logs for the line last_line_cut found. The line is read as it stands
    (a file written by hand, or pasted, may lack its last line break), so the warning
    quotes its end, where a number cut short would be."""
    tail = line.strip()
    tail = tail if len(tail) <= 40 else "..." + tail[-37:]
    return (f"the file ends inside this line, at '{tail}' (no line break after it: file cut "
            f"short?); read as it stands, so its last number may be cut short too: copy or "
            f"write the file again")


def read_text(path: str | os.PathLike) -> str:
    """A text file's contents (open_text: gzip, UTF-16, a byte-order mark), or ParseError
    saying why it cannot be read (missing, a directory, unreadable, binary)."""
    p = Path(path)
    try:
        with open_text(p) as fh:
            text, binary = fh.read_all()
            if binary:
                kind = _binary_kind(p)
                if kind:   # `--on roofline.png`: name what it is, not that it is not text
                    raise ParseError(f"is {kind}, not a text file; give the .json (or .csv) "
                                     f"file", path=str(p))
                line = text[:text.find("\x00")].count("\n") + 1 if "\x00" in text else None
                raise ParseError("not a UTF-8 text file (binary data); is it the right file?",
                                 path=str(p), line=line)
            return text
    except FileNotFoundError:
        raise ParseError("file not found", path=str(p)) from None
    except IsADirectoryError:
        raise ParseError(f"is a directory; give a file{_files_in(p)}", path=str(p)) from None
    except OSError as exc:
        raise ParseError(f"cannot read file: {exc.strerror}", path=str(p)) from None


# Leading bytes of the binary files a user most often passes by mistake (the charts and
# reports rooflab writes, an ncu report given where its CSV export is expected).
_MAGIC = ((b"\x89PNG", "a PNG image"), (b"%PDF", "a PDF document"),
          (b"\xff\xd8\xff", "a JPEG image"), (b"PK\x03\x04", "a zip archive"),
          (b"NVR\x00", "an Nsight Compute report (.ncu-rep)"),
          (b"SQLite format 3", "an SQLite database"))


def _binary_kind(p: Path) -> str:
    try:
        with p.open("rb") as fh:
            head = fh.read(16)
    except OSError:
        return ""
    return next((kind for magic, kind in _MAGIC if head.startswith(magic)), "")


def _files_in(p: Path) -> str:
    """' in it: a.json, b.csv' (the data files a directory holds, as a hint), or ''."""
    try:
        names = sorted(c.name for c in p.iterdir()
                       if c.is_file() and c.suffix.lower() in (".json", ".csv"))
    except OSError:
        return ""
    return f" in it: {', '.join(str(p / n) for n in names[:4])}" if names else ""
