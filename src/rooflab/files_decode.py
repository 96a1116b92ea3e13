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
import io
import os
import re
import sys
import warnings
import zlib
from pathlib import Path

from .errors import InputWarning, ParseError, user_stacklevel
from .files_gzip import GZIP_MAGIC, GunzipStream, gunzipped

_UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
SNIFF = 1 << 16   # bytes of text read to tell a file's kind (files_kind.file_kind), gzipped or not

# C0 control characters no text file holds: all but tab, line feed, vertical tab, form feed,
# carriage return, Ctrl-Z (DOS's end of file) and escape (a terminal's colours in a log)
_CONTROL = re.compile("[\x00-\x08\x0e-\x19\x1c-\x1f\x7f]")

# Bytes replaced by U+FFFD so far, in every file: a file's own count is the difference over
# its reading (TextFile.replaced). One counter, not one per file: a codec error handler is
# registered by name and does not know which stream it decodes.
_REPLACED = [0]
# The input opened last (open_text, decode_bytes), for the out-of-memory line that has no
# file of its own (cli/main.py; review s22 h1 H3).
LAST_READ: list[str | None] = [None]


def _replace_counted(exc: UnicodeError) -> tuple[str, int]:
    if not isinstance(exc, UnicodeDecodeError):
        raise exc
    _REPLACED[0] += exc.end - exc.start
    return "\ufffd", exc.end


_ERRORS = "rooflab.replace"
codecs.register_error(_ERRORS, _replace_counted)


class TextFile(io.TextIOWrapper):
    """An open text file (open_text). `replaced`: the bytes read so far that were not
    UTF-8 (read as U+FFFD). Leaving its `with` block without an error warns once about
    them (note_not_utf8); a reader that finds the file binary raises inside the block."""

    def __init__(self, buffer, path: str, encoding: str, newline: str | None):
        super().__init__(buffer, encoding=encoding, errors=_ERRORS, newline=newline)
        self.path = path
        self._start = _REPLACED[0]
        self._binary = False
        self._newline, self._gb = newline, False

    def read_all(self) -> tuple[str, bool]:
        """(the rest of the text, whether it looks binary: looks_binary). A binary file's
        reader refuses it: no note about its bytes then. A whole file that is not UTF-8
        but GB18030 (gb18030_text) is read as GB18030, with one note."""
        text = self.read()
        if self.replaced:   # every caller reads the file whole, from its start
            gb = gb18030_text(_file_bytes(self.path))
            if gb is not None:
                self._gb = True
                text = gb if self._newline is not None else _universal(gb)
        self._binary = not self._gb and looks_binary(text, self.replaced)
        return text, self._binary

    @property
    def replaced(self) -> int:
        return _REPLACED[0] - self._start

    def __exit__(self, kind, value, tb):
        try:
            if kind is None and self._gb:
                note_gb18030(self.path)
            elif kind is None and self.replaced and not self._binary:
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
    LAST_READ[0] = str(path)
    try:
        buf = raw
        if raw.peek(2)[:2] == GZIP_MAGIC:
            buf = io.BufferedReader(GunzipStream(raw, str(path), what), 1 << 16)
        return TextFile(buf, str(path), encoding_of(buf.peek(514)), newline)
    except BaseException:
        raw.close()
        raise


def decode_bytes(data: bytes, path: str) -> str:
    """Bytes read already (standard input) as open_text reads a file's, with its note."""
    LAST_READ[0] = path
    if data[:2] == GZIP_MAGIC:
        data = gunzipped(data, path)
    start = _REPLACED[0]
    text = data.decode(encoding_of(data[:514]), errors=_ERRORS)
    if _REPLACED[0] > start:
        gb = gb18030_text(data)
        if gb is not None:
            note_gb18030(path)
            return gb
        if not looks_binary(text, _REPLACED[0] - start):
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
    line, pair = _first_bad(path, data)
    where = f"{path}:{line}" if line else path
    what, how = "", "`iconv -f cp1252 -t utf-8 FILE > NEW`"
    if pair:
        char = pair[:1].decode("cp1252", errors="replace")
        what = f" (the first, 0x{pair[0]:02X}, is '{char}' in cp1252/Latin-1)"
        han = pair.decode("gbk", errors="replace")
        if (len(pair) == 2 and len(han) == 1 and "\u4e00" <= han <= "\u9fff"
                and _gb2312(han)):   # 'é_' is GBK too ('開'), but not in the common plane
            # Chinese Windows' Excel writes GBK: iconv -f cp1252 made Latin mojibake of it
            # (review s22 r3 F3)
            what = (f" (the first, 0x{pair[0]:02X}, is '{char}' in cp1252/Latin-1; "
                    f"0x{pair[0]:02X} 0x{pair[1]:02X} is '{han}' in GBK)")
            how = ("`iconv -f gbk -t utf-8 FILE > NEW` for Chinese text, `-f cp1252` for "
                   "Western")
    more = "a byte that is" if replaced == 1 else f"{replaced} bytes that are"
    warnings.warn(f"{where}: holds {more} not UTF-8{what}, read as '\ufffd'; to "
                  f"keep the names, save the file as UTF-8 (Excel: 'CSV UTF-8'; or {how})",
                  InputWarning,
                  stacklevel=user_stacklevel())


def _first_bad(path: str, data: bytes | None) -> tuple[int | None, bytes]:
    """(line, the first byte that is not UTF-8 and the one after it), or (None, b'') where
    not found (a UTF-16 file, a file that cannot be read again). Only on the warning's
    path: the file is read again."""
    data = _file_bytes(path) if data is None else data
    if data is None or data[:2] in _UTF16_BOMS:
        return None, b""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return data.count(b"\n", 0, exc.start) + 1, data[exc.start:exc.start + 2]
    return None, b""


def _file_bytes(path: str) -> bytes | None:
    """A file's bytes (gunzipped), read again for a note; None when it cannot be."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
        return gunzipped(data, path) if data[:2] == GZIP_MAGIC else data
    except (OSError, EOFError, zlib.error, ParseError):
        return None


def _universal(text: str) -> str:
    """Line ends as a TextIOWrapper with newline=None reads them."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def gb18030_text(data: bytes | None) -> str | None:
    """The bytes as GB18030 text when they are Chinese text saved as GBK/GB18030 (what
    Excel on a Chinese Windows writes for "CSV"): not UTF-8, strictly GB18030, with a
    CJK ideograph, and at least half of the characters past ASCII in GB2312's common
    plane (both bytes 0xA1-0xFE). Else None. A cp1252 file's accented letter followed by an
    ASCII one ('Mü' = FC 6C) can decode as GBK too, but never in that plane (review s22 r3
    F3: every Chinese name read as U+FFFD, and 8 of 25 common op words became one name)."""
    if not data or data[:2] in _UTF16_BOMS:
        return None
    try:
        data.decode("utf-8")
        return None
    except UnicodeDecodeError:
        pass
    high = data.translate(None, _ASCII)   # the bytes past ASCII: few in a Latin-1 file
    if not re.search(rb"[\xa1-\xf7][\xa1-\xfe]", high) or not re.search(
            rb"[\xa1-\xf7][\xa1-\xfe]", data):
        return None   # no pair in the common plane: not Chinese (one stray 'é' in 100 MB)
    try:
        text = data.decode("gb18030")
    except UnicodeDecodeError:
        return None
    # counted by the regex engine, not a Python loop per character (review s22 h1 H1:
    # that loop made a 100 MB file with one stray byte read in 14 s, not 2 s)
    wide = re.sub("[\x00-\x7f]+", "", text)
    common = re.subn(_common_plane(), "", wide)[1]
    if not re.search("[\u4e00-\u9fff]", wide) or common * 2 < len(wide):
        return None
    return text.removeprefix("\ufeff")


_ASCII = bytes(range(0x80))
_PLANE: list[re.Pattern] = []


def _common_plane() -> re.Pattern:
    """A character class of the characters _gb2312 accepts (built once, when needed)."""
    if not _PLANE:
        pairs = (bytes((a, b)) for a in range(0xA1, 0xF8) for b in range(0xA1, 0xFF))
        chars = {p.decode("gb18030", "replace") for p in pairs} - {"\ufffd"}
        _PLANE.append(re.compile("[" + "".join(re.escape(c) for c in sorted(chars)) + "]"))
    return _PLANE[0]


def _gb2312(c: str) -> bool:
    b = c.encode("gb18030")
    return len(b) == 2 and 0xA1 <= b[0] <= 0xF7 and 0xA1 <= b[1] <= 0xFE


def note_gb18030(path: str) -> None:
    """Warn once that a file was read as GB18030, not UTF-8."""
    warnings.warn(f"{path}: not UTF-8 but GBK/GB18030 (Excel's plain 'CSV' on a Chinese "
                  f"Windows); read as GB18030, names intact. To skip this, save the file as "
                  f"UTF-8 (Excel: 'CSV UTF-8'; or `iconv -f gb18030 -t utf-8 FILE > NEW`)",
                  InputWarning, stacklevel=user_stacklevel())


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
                raise binary_error(p, text)
            return text
    except FileNotFoundError:
        raise ParseError("file not found", path=str(p)) from None
    except IsADirectoryError:
        raise ParseError(f"is a directory; give a file{_files_in(p)}", path=str(p)) from None
    except OSError as exc:
        raise ParseError(f"cannot read file: {exc.strerror}", path=str(p)) from None


def binary_error(path: str | os.PathLike, text: str) -> ParseError:
    """The error for a file looks_binary found binary (its text read so far): what it is
    where its first bytes say, else the line of its first NUL. read_text's, and a streamed
    reader's (rocprof) on its first chunk, so all refuse the same files alike."""
    kind = _binary_kind(Path(path))
    if kind:   # `--on roofline.png`: name what it is, not that it is not text
        fix = _UNPACK.get(kind, "give the .json (or .csv) file")
        return ParseError(f"is {kind}, not a text file; {fix}", path=str(path))
    line = text[:text.find("\x00")].count("\n") + 1 if "\x00" in text else None
    return ParseError("not a UTF-8 text file (binary data); is it the right file?",
                      path=str(path), line=line)


# Leading bytes of the binary files a user most often passes by mistake (the charts and
# reports rooflab writes, an ncu report given where its CSV export is expected).
_MAGIC = ((b"\x89PNG", "a PNG image"), (b"%PDF", "a PDF document"),
          (b"\xff\xd8\xff", "a JPEG image"), (b"PK\x03\x04", "a zip archive"),
          (b"NVR\x00", "an Nsight Compute report (.ncu-rep)"),
          (b"SQLite format 3", "an SQLite database"),
          (b"\xfd7zXZ\x00", "an xz archive"), (b"BZh", "a bzip2 archive"),
          (b"\x28\xb5\x2f\xfd", "a zstd archive"))
# an archive is unpacked first (s38 G: k.json.xz said "not a UTF-8 text file (binary
# data)"); gzip needs nothing, read_text opens it
_UNPACK = {"a zip archive": "unzip it and give the file inside (rooflab opens gzip itself, "
                            "not zip)",
           "an xz archive": "decompress it first (`xz -d FILE`; rooflab opens gzip itself)",
           "a bzip2 archive": "decompress it first (`bunzip2 FILE`; rooflab opens gzip "
                              "itself)",
           "a zstd archive": "decompress it first (`zstd -d FILE`; rooflab opens gzip "
                             "itself)"}


def unpack_hint(path: str | os.PathLike) -> str:
    """'is an xz archive, not a text file; decompress it first ...' for a compressed file
    rooflab does not open (zip, xz, bzip2, zstd), else '': for the readers that word their
    own binary error (a trace's, a counter file's)."""
    kind = _binary_kind(Path(path))
    return f"is {kind}, not a text file; {_UNPACK[kind]}" if kind in _UNPACK else ""


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


# Python 3.10's csv refuses a NUL (`_csv.Error: line contains NUL`: a traceback, exit 70);
# 3.11 reads it as a character. Past read_text's binary check (the first 4096 characters) a
# NUL is read as U+FFFD there, the mark an undecodable byte gets (review s22 r5 F5).
_NUL_OK = sys.version_info >= (3, 11)


def nul_safe(lines):
    """lines as the csv module of this Python reads them: as they are from 3.11 on."""
    if _NUL_OK:
        return lines
    return (line.replace("\x00", "\ufffd") if "\x00" in line else line for line in lines)
