"""The process's stdout while main() runs: write errors said as stdout's, and put back after.

main() wraps the real stdout's buffer in a GuardedStdout, whose write errors say they are
stdout's (an OSError raised deep in rich or print() cannot tell otherwise which file
failed: a full disk is exit 74, a closed pipe exit 0), or puts a ClosedStdout where the
process has none. It leaves sys.stdout as it found it (review s24 r3 F1): the wrapper was
left in place for good, a second TextIOWrapper over the same buffer as sys.__stdout__, and
when the user put sys.__stdout__ back (a common idiom in a notebook or `python -i`), the
wrapper's finaliser closed the shared buffer: stdout was closed for the rest of the
session, and an IPython terminal died at its next prompt. guard() returns what undoes it:
the wrapper flushed and detached from the buffer (and never closes it, should detaching
fail on a full disk), the old object back in sys.stdout.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import sys
from collections.abc import Callable


class StdoutWriteError(OSError):
    """A write to standard output failed for want of space (or a device error)."""


class GuardedStdout(io.TextIOWrapper):
    """The process's stdout, whose write errors say they are stdout's (`as_error`)."""

    def __init__(self, buffer, as_error: Callable[[OSError], OSError], **kwargs) -> None:
        super().__init__(buffer, **kwargs)
        self._as_error = as_error

    def write(self, text: str) -> int:
        try:
            return super().write(text)
        except OSError as exc:
            raise self._as_error(exc) from None

    def flush(self) -> None:
        try:
            super().flush()
        except OSError as exc:
            raise self._as_error(exc) from None

    def close(self) -> None:
        # the buffer is sys.__stdout__'s too: closing it (as the finaliser of a wrapper
        # still attached would) closes the process's stdout; flushing is all there is to do
        with contextlib.suppress(OSError, ValueError):
            self.flush()


class ClosedStdout(io.TextIOBase):
    """In place of a stdout the process was started without: a write fails as a closed
    file's would (EBADF), answered as stdout's error (exit 74); flushing, as at the
    interpreter's exit, has nothing to do."""

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if not text:
            return 0
        raise StdoutWriteError(errno.EBADF, os.strerror(errno.EBADF))

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


def guard(as_error: Callable[[OSError], OSError]) -> Callable[[], None]:
    """Put a GuardedStdout over the real stdout's buffer (not over a test's capture or a
    notebook's stream, which are no file), or a ClosedStdout where there is none; returns
    what puts the old sys.stdout back."""
    out = sys.stdout
    if out is None:
        # fd 1 closed when the process started (`>&-`; cron, daemons): Python makes
        # sys.stdout None, and the first print was an AttributeError, "a bug in rooflab",
        # exit 70 (s21 r7 F5). A write now says stdout's trouble: exit 74, one line.
        sys.stdout = ClosedStdout()
        return _restorer(sys.stdout, None)
    if out is not sys.__stdout__ or type(out) is not io.TextIOWrapper:
        return _nothing
    out.flush()
    # a character the encoding lacks (a Chinese kernel name on a cp1252 Windows stdout,
    # rooflab's own § under ASCII) was a UnicodeEncodeError, exit 70: written as \uXXXX
    # instead, as Python's stderr writes it (review s22 r3 F1); UTF-8 holds everything
    utf8 = out.encoding.lower().replace("-", "").replace("_", "") == "utf8"
    sys.stdout = GuardedStdout(out.buffer, as_error, encoding=out.encoding,
                               errors=out.errors if utf8 else "backslashreplace",
                               line_buffering=out.line_buffering,
                               write_through=out.write_through)
    return _restorer(sys.stdout, out)


def _nothing() -> None:
    pass


def _restorer(mine: io.TextIOBase, old) -> Callable[[], None]:
    """What puts `old` back where `mine` was installed: `mine` flushed (what the command
    wrote comes before what the caller writes next) and detached from the shared buffer."""

    def restore() -> None:
        if isinstance(mine, GuardedStdout):
            with contextlib.suppress(OSError, ValueError):
                mine.flush()
            with contextlib.suppress(OSError, ValueError):
                mine.detach()   # a failed flush leaves it attached: close() spares the buffer
        # put back unless the caller's own object is there already; a wrapper click made
        # around ours (PacifyFlushWrapper, after a closed pipe) goes with ours
        if sys.stdout is not old:
            sys.stdout = old

    return restore
