"""Windows reports a write to a pipe whose reader left (`rooflab specs list | more`, `| head`
in Git Bash) as OSError EINVAL, not BrokenPipeError (CPython issue #79935): it was "internal
error ... this is a bug", a traceback and exit 70, where Linux ends quietly with 0 (review
s23 r3 F3). The child below is Windows' behaviour on this OS: a real pipe with its reader
closed, whose EPIPE the stdout's raw writer turns into EINVAL as Windows' C runtime does,
and rooflab told it runs on Windows."""

from __future__ import annotations

import subprocess
import sys

import pytest

CHILD = r'''
import errno, io, os, sys

import rooflab.cli.main as cli_main

cli_main._windows = lambda: True
r, w = os.pipe()
os.close(r)            # the reader has left before the first write
os.dup2(w, 1)
os.close(w)


class WindowsPipe(io.RawIOBase):
    def writable(self):
        return True

    def fileno(self):
        return 1

    def isatty(self):
        return False

    def write(self, data):
        try:
            return os.write(1, data)
        except BrokenPipeError:   # what Windows raises instead
            raise OSError(errno.EINVAL, "Invalid argument") from None


sys.stdout = sys.__stdout__ = io.TextIOWrapper(io.BufferedWriter(WindowsPipe()),
                                               encoding="cp1252")
sys.exit(cli_main.main(sys.argv[1:]))
'''


@pytest.mark.parametrize("args", [["specs", "list"], ["specs", "list", "--json"],
                                  ["ai", "matmul", "4096", "4096", "4096", "--on", "h100"]],
                         ids=["rich-table", "json-print", "ai-table"])
def test_closed_pipe_on_windows_ends_quietly_with_0(tmp_path, args):
    script = tmp_path / "windows_pipe.py"
    script.write_text(CHILD)
    done = subprocess.run([sys.executable, str(script), *args], stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True, timeout=120)
    assert "internal error" not in done.stderr
    assert "Traceback" not in done.stderr
    # nothing on stderr but what the verb says before its output (`ai`'s note on the name
    # h100); 0, not 70 (a bug), nor 120 (the interpreter's own flush failing at exit)
    assert done.returncode == 0
    assert [ln for ln in done.stderr.splitlines() if not ln.startswith("note: ")] == []


def test_einval_elsewhere_is_not_taken_for_a_closed_pipe(monkeypatch):
    """Only Windows gives EINVAL for a closed pipe: on Linux it stays what it was."""
    import errno

    from rooflab.cli import main as cli_main

    monkeypatch.setattr(cli_main, "_windows", lambda: False)
    exc = OSError(errno.EINVAL, "Invalid argument")
    assert cli_main._as_stdout_error(exc) is exc
    monkeypatch.setattr(cli_main, "_windows", lambda: True)
    closed = cli_main._as_stdout_error(exc)
    assert isinstance(closed, BrokenPipeError) and closed.errno == errno.EPIPE
