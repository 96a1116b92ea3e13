"""A chrome trace's JSON read a piece at a time: its traceEvents array one event at a time
(json.JSONDecoder.raw_decode, the C scanner json.loads uses, over a window of the text),
each event cut down to what rooflab reads of it (slim_event). json.loads of the whole text
held the text and every event's full dict at once: ~6.5x the file (a 300 MB trace took
1948 MB, a 2 GB one would take ~13 GB: review s23 r5 F1).

Errors are json.loads's own: where this reader finds the text wrong, json.loads is run on
the text from the last value read whole (after a few characters that put its scanner in the
same place: inside the top-level object, the events array, after a value), so its message
and position are the ones json.loads of the whole file gives. A file this reader does not
mirror (a byte that is not UTF-8, a NUL or a byte-order mark in the text's head, an
error json.loads does not confirm) raises Fallback: the caller reads it whole, as before.
Split from torch_trace_file.py.
"""

from __future__ import annotations

import json
import re

from ..errors import ParseError
from ..files import decode_json, json_end_hint
from .torch_compiled import GRAPH, REGION
from .torch_trace_events import _CATEGORIES
from .torch_trace_scope import MARK

CHUNK = 1 << 22          # characters read at a time (4 Mi: a few thousand events)
_MARGIN = 64             # a value's error this far from the window's end is not the cut's
_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()

# What rooflab reads of an event (torch_trace_events.sort_events, torch_compiled,
# torch_trace._roots / following_ops) and of its args (the op's shapes, dtypes and
# constants, the flops older kineto wrote, the External id and correlation that link a
# device event to its op, a copy's bytes). The rest (Input Strides, Record function id,
# Sequence number, a kernel's grid, block, registers, stream ...) is dropped as read.
_KEYS = ("ph", "cat", "name", "ts", "dur", "pid", "tid")
_ARGS = ("External id", "external id", "correlation", "bytes", "Input Dims", "Input type",
         "Concrete Inputs", "flops")
# an X event of another category (python_function, user_annotation, ...): sort_events
# counts it among the timed events and reads nothing else of it (one dict for all)
_OTHER_X = {"ph": "X"}


class Fallback(Exception):
    """The file is one this reader does not mirror exactly: read it whole instead."""


class BadJSON(Exception):
    """json.loads's error for the whole text: its message, line and column there, and
    files.json_end_hint's words where it is at the text's end (a file cut short); or
    decode_json's ParseError (a huge number, deep nesting) as `error`."""

    def __init__(self, msg: str, lineno: int = 0, colno: int = 0,
                 error: ParseError | None = None, hint: str = ""):
        super().__init__(msg)
        self.msg, self.lineno, self.colno, self.error = msg, lineno, colno, error
        self.hint = hint


class _Bad(Exception):
    """The text is wrong at or after the resume point (found by this reader)."""


def slim_event(e, names: dict):
    """What rooflab reads of one event: None for one it never looks at (not an 'X' event,
    kineto's own Trace span), _OTHER_X for a timed event of another category, else a dict
    of the keys it reads (those present: a missing ts is still an error there), its name
    shared with the events of the same name."""
    if type(e) is not dict or e.get("ph") != "X":
        return None
    lower = str(e.get("cat", "")).lower()
    if lower in _CATEGORIES:
        out = {k: e[k] for k in _KEYS if k in e}
        for key in ("name", "cat"):   # one string per name, not one per event
            text = out.get(key)
            if type(text) is str:
                out[key] = names.setdefault(text, text)
        for key in ("pid", "tid"):
            number = out.get(key)
            if type(number) is int:
                out[key] = names.setdefault(number, number)
        if "args" in e:
            args = e["args"]
            if type(args) is dict:
                args = {k: args[k] for k in _ARGS if k in args}
                for key in ("Input Dims", "Input type", "Concrete Inputs"):
                    if key in args:
                        args[key] = _shared(args[key], names)
            out["args"] = args
        return out
    name = str(e.get("name", ""))
    if name.startswith(REGION) or GRAPH in name:   # torch_compiled.compiled_regions
        return {k: e[k] for k in ("ph", "cat", "name", "dur") if k in e}
    if name == MARK:   # torch_trace_scope.marked_ranges: the range to count (s28 R3 F4)
        return {k: e[k] for k in ("ph", "cat", "name", "ts", "dur") if k in e}
    return None if lower == "trace" else _OTHER_X


def read_text(fh, n: int) -> str:
    """Up to n characters, asked for 64 Ki at a time: a gzip stream is then gunzipped in
    the pieces read() took, and its bomb guard (files_gzip) stops at the same point, with
    the same sizes in its message."""
    parts, got = [], 0
    while got < n:
        part = fh.read(min(1 << 16, n - got))
        if not part:
            break
        parts.append(part)
        got += len(part)
    return "".join(parts)


def _shared(value, cache: dict):
    """One list for all the events with an equal list of shapes, dtypes or constants (a
    training step's ops repeat a few hundred of them): a list of ints and strings, or of
    lists of ints, else value itself. These lists were ~1 KB of every op's 1.2 KB. Never
    changed after reading (OpCall copies them into tuples)."""
    if type(value) is not list:
        return value
    key = []
    for x in value:
        kind = type(x)
        if kind is str or kind is int:
            key.append(x)
        elif kind is list and all(type(y) is int for y in x):
            key.append(tuple(x))   # a tuple, never equal to a string or an int
        else:
            return value
    return cache.setdefault(tuple(key), value)


class TraceReader:
    """One pass over an open text file (files_decode.TextFile): read() -> the trace's
    top-level value, its traceEvents array slimmed. Positions are absolute (characters
    from the text's start); the window holds the text from `keep` on."""

    def __init__(self, fh, path: str):
        self.fh, self.path = fh, path
        self.buf, self.base, self.eof = "", 0, False
        self.lines, self.last_nl = 0, -1   # '\n' before the window, and the last one's place
        self.keep, self.prefix = 0, ""     # where json.loads would resume, and its context
        self.head = ""
        self.names: dict[str, str] = {}

    # --- the window ---------------------------------------------------------------------
    def _more(self) -> bool:
        """Read on (the window's text before `keep` dropped); False at the end."""
        if self.eof:
            return False
        cut = self.keep - self.base
        if cut > 0:
            self.lines += self.buf.count("\n", 0, cut)
            k = self.buf.rfind("\n", 0, cut)
            if k >= 0:
                self.last_nl = self.base + k
            self.buf, self.base = self.buf[cut:], self.keep
        # as much again as the window holds: a long value is read in a doubling number of
        # pieces, not one per chunk
        chunk = read_text(self.fh, max(CHUNK, len(self.buf)))
        if not chunk:
            self.eof = True
            return False
        if len(self.head) < 4096:   # looks_binary's NUL is looked for this far
            self.head += chunk[:4096 - len(self.head)]
            if "\x00" in self.head or "\ufeff" in self.head:   # binary? a second mark?
                raise Fallback
        self.buf += chunk
        return True

    def _end(self) -> int:
        return self.base + len(self.buf)

    def _skip(self, p: int) -> int:
        """The first position at or after p that is not JSON whitespace."""
        while True:
            q = _WS.match(self.buf, p - self.base).end() + self.base
            if q < self._end() or not self._more():
                return q
            p = q

    def _char(self, p: int) -> str:
        i = p - self.base
        return self.buf[i] if i < len(self.buf) else ""

    def _value(self, p: int):
        """(the JSON value at p, the position after it)."""
        while True:
            try:
                value, end = _DECODER.raw_decode(self.buf, p - self.base)
            except json.JSONDecodeError as exc:
                whole = (not exc.msg.startswith("Unterminated string")
                         and exc.pos + _MARGIN < len(self.buf))
                if whole or not self._more():
                    raise _Bad from None
                continue
            except (RecursionError, ValueError):   # decode_json's errors: said by it
                raise _Bad from None
            # a number or literal that ends where the window does may go on past it
            end += self.base   # (before _more moves the window)
            if end < self._end() or not self._more():
                return value, end

    def _expect(self, p: int, chars: str) -> str:
        c = self._char(p)
        if c == "" or c not in chars:
            raise _Bad
        return c

    def _resume(self, p: int, prefix: str) -> None:
        self.keep, self.prefix = p, prefix

    # --- the grammar --------------------------------------------------------------------
    def read(self):
        self._more()
        p = self._skip(0)
        if self.head.lstrip(" \t\r\n")[:1] != self._char(p):   # (mirrors json.loads' start)
            raise Fallback
        try:
            c = self._char(p)
            if c == "{":
                value, p = self._object(p + 1)
            elif c == "[":
                value, p = self._array(p + 1, "")
            else:
                value, p = self._value(p)
            self._resume(p, "0")
            p = self._skip(p)
            if p < self._end():   # json.loads' "Extra data"
                raise _Bad
        except _Bad:
            raise self._error() from None
        return value

    def _object(self, p: int):
        out: dict = {}
        self._resume(p, "{")
        p = self._skip(p)
        if self._char(p) == "}":
            return out, p + 1
        while True:
            self._expect(p, '"')
            key, p = self._value(p)
            p = self._skip(p)
            self._expect(p, ":")
            p = self._skip(p + 1)
            if key == "traceEvents" and self._char(p) == "[":
                value, p = self._array(p + 1, '{"":')
            else:
                value, p = self._value(p)
            out[key] = value   # a key given twice: the last, as json.loads keeps
            self._resume(p, '{"":0')
            p = self._skip(p)
            if self._expect(p, ",}") == "}":
                return out, p + 1
            p = self._skip(p + 1)

    def _array(self, p: int, outer: str):
        """The array whose '[' is before p; each item slimmed (slim_event)."""
        out: list = []
        names = self.names
        self._resume(p, outer + "[")
        p = self._skip(p)
        if self._char(p) == "]":
            self._resume(p + 1, outer + "0")
            return out, p + 1
        while True:
            value, p = self._value(p)
            out.append(slim_event(value, names))
            self._resume(p, outer + "[0")
            p = self._skip(p)
            if self._expect(p, ",]") == "]":
                return out, p + 1
            p = self._skip(p + 1)

    # --- errors -------------------------------------------------------------------------
    def _error(self) -> BadJSON:
        """json.loads's error for the text from `keep` on, after `prefix`: its message,
        and its line and column in the whole text."""
        while True:
            tail = self.buf[self.keep - self.base:]
            try:
                decode_json(self.prefix + tail, self.path)
            except ParseError as exc:   # said as decode_json says it
                return BadJSON(str(exc), error=exc)
            except json.JSONDecodeError as exc:
                at = exc.pos - len(self.prefix)
                if at < 0:
                    raise Fallback from None
                # an error where the window ends may be the window's, not the file's
                near = at + _MARGIN > len(tail) or exc.msg.startswith("Unterminated string")
                if not near or self.eof:
                    # the cut hint where the file ends at the error (known at its end; an
                    # error far from the window's end has text after it: no cut)
                    hint = json_end_hint(exc, self.prefix + tail) if self.eof else ""
                    return self._where(exc.msg, self.keep + at, hint)
                self._more()
                continue
            if self.eof:
                raise Fallback   # json.loads reads it: this reader is wrong, not the file
            self._more()

    def _where(self, msg: str, pos: int, hint: str = "") -> BadJSON:
        i = pos - self.base
        line = self.lines + self.buf.count("\n", 0, i) + 1
        k = self.buf.rfind("\n", 0, i)
        return BadJSON(msg, line, pos - (self.base + k if k >= 0 else self.last_nl), hint=hint)
