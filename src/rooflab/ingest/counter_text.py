"""The text of a CPU counter tool's saved output (likwid-perfctr -O, perf stat), checked
before either reader parses it, and the names and notes both readers give a run."""

from __future__ import annotations

from pathlib import Path

from ..errors import ParseError
from ..files import STDIN_NAME
from ..files_decode import cut_note, last_line_cut, unpack_hint
from .ncu_csv import read_text
from .skips import SkipLog


def counter_text(path: str, text: str | None = None, log: SkipLog | None = None) -> str:
    """A counter tool's saved output (`text`: standard input's, read already) without a
    byte-order mark, or ParseError when it holds nothing to read: an empty file, or binary
    data (read as U+FFFD), which would otherwise be quoted back as garbage in a 'not a ...
    line' error. A last line without its line break (a file cut short, its last count
    maybe cut too) is said in `log` (files_decode.last_line_cut)."""
    # a byte-order mark (a file saved by a Windows editor) is no part of the first line
    text = (read_text(path) if text is None else text).removeprefix("\ufeff")
    if not text.strip() and path == STDIN_NAME:
        raise ParseError("is empty: nothing came through the pipe (perf stat writes its "
                         "counts to stderr: `perf stat ... 2>&1 | rooflab perf -`)", path=path)
    if not text.strip():
        raise ParseError("is empty: nothing to read (did the run write its output here? "
                         "likwid-perfctr -o and perf stat -o name the file)", path=path)
    head = text[:4096]
    odd = [i for i, ch in enumerate(head) if ch in "\x00\ufffd"]
    if odd and ("\x00" in head or len(odd) > len(head) // 50):
        packed = unpack_hint(path) if path != STDIN_NAME else ""
        if packed:   # run.csv.xz: what to do with it, not only that it is binary
            raise ParseError(packed, path=path)
        raise ParseError("holds binary data, not the text likwid-perfctr or perf stat "
                         "writes: is it the right file?", path=path,
                         line=head[:odd[0]].count("\n") + 1)
    cut = last_line_cut(text) if log is not None else None
    # a file of this one line is a hand-written or pasted one far more often than output
    # cut inside its first line; it parses or its error says what is wrong (s36 O)
    if cut is not None and text[:-len(cut[1])].strip():
        log.add(cut[0], cut_note(cut[1]))
    return text


def stem(path: str) -> str:
    """A file's name without its suffix, 'stdin' for standard input: a kernel's name."""
    return "stdin" if path == STDIN_NAME else Path(path).stem


def sockets_note(n: int, ids: str = "") -> str:
    """Counts from several sockets against a catalog CPU, whose ceilings are one socket's:
    the % of roof would read up to n x high, so say it."""
    which = f" ({ids})" if ids else ""
    every = "both" if n == 2 else f"all {n}"
    return (f"counted on {n} sockets{which}: a catalog CPU's ceilings are per socket, so "
            f"against one the % of roof reads up to {n}x high; use a roof of {every} sockets "
            f"(a profile from `rooflab probe -o me.json` on this machine) or count one "
            f"socket")


def repeat_note(what: str, first: int, kind: str, given: str, place: str = "") -> str:
    """The warning for a count given twice (an event named twice in a likwid group or in
    perf's -e): the tool counts and prints it twice, so adding both would double it."""
    return (f"{what} appears twice{place} (also line {first}): counted once, this {kind} "
            f"left out (an event given twice {given}?)")
