"""main() leaves sys.stdout as it found it (review s24 r3 F1).

It put its own TextIOWrapper over sys.__stdout__'s buffer for good: when the caller put
sys.__stdout__ back (`python -i`, a script using main() as a library, an IPython terminal),
the wrapper's finaliser closed the shared buffer, and the next print was "ValueError: I/O
operation on closed file" (IPython died at its next prompt). The guard's purpose stays:
stdout's write errors are still stdout's (exit 74 on a full disk, one line)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from rooflab.cli.main import main

PUT_BACK = r'''
import gc, sys
from rooflab.cli.main import main

before = sys.stdout
rc = main(["specs", "show", "T4", "-q"])
same = sys.stdout is before
sys.stdout = sys.__stdout__   # the idiom after a redirect: dropped rooflab's wrapper
gc.collect()
print("after main:", rc, same)   # old: ValueError: I/O operation on closed file.
rc = main(["ai", "matmul", "64", "64", "64", "--on", "T4", "-q"])
sys.stdout = sys.__stdout__
gc.collect()
print("again:", rc)
'''


def test_the_caller_can_put_stdout_back_and_print(tmp_path):
    script = tmp_path / "put_back.py"
    script.write_text(PUT_BACK)
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=180)
    # old: sys.stdout was still rooflab's _GuardedStdout, and once dropped, the next print
    # failed: ValueError: I/O operation on closed file.
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    # what each main() printed comes before what the caller printed after it
    first = lines.index("after main: 0 True")
    assert any("T4" in ln for ln in lines[:first])
    assert lines[-1] == "again: 0"
    assert any("FLOP" in ln or "intensity" in ln.lower() for ln in lines[first + 1:-1])


FULL_DISK = r'''
import sys
from rooflab.cli.main import main

before = sys.stdout
rc = main(["specs", "list"])
assert sys.stdout is before, type(sys.stdout)
print("rc", rc, file=sys.stderr)
'''


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (Linux)")
def test_a_full_disk_is_still_stdouts_error_and_stdout_is_put_back(tmp_path):
    script = tmp_path / "full.py"
    script.write_text(FULL_DISK)
    with open("/dev/full", "w") as full:
        run = subprocess.run([sys.executable, str(script)], stdout=full,
                             stderr=subprocess.PIPE, text=True, timeout=180)
    err = run.stderr.splitlines()
    # the guard's purpose kept: one line, 74; and the interpreter's own flush at exit does
    # not fail again ("Exception ignored", exit 120) with what stayed in the buffer
    assert err[0] == ("error: cannot write to standard output (No space left on device); "
                      "the output is incomplete: free space or write elsewhere")
    assert err[1:] == ["rc 74"]
    assert run.returncode == 0


def test_a_process_without_stdout_gets_none_back(monkeypatch, capsys):
    # fd 1 closed at start (`>&-`): Python's sys.stdout is None; main() answers a write
    # with exit 74 (s21 r7 F5) and leaves None where it found None (old: its _ClosedStdout)
    monkeypatch.setattr(sys, "stdout", None)
    assert main(["specs", "list"]) == 74
    assert sys.stdout is None
    assert capsys.readouterr().err.startswith("error: cannot write to standard output (it "
                                              "is closed")


def test_the_wrapper_never_closes_the_shared_buffer():
    """Dropped while still attached (its flush failed, so detaching did), the wrapper spares
    the buffer the process's own stdout writes through."""
    import io

    from rooflab.cli.stdout_guard import GuardedStdout

    raw = io.BytesIO()
    shared = io.BufferedWriter(raw)
    mine = GuardedStdout(shared, lambda exc: exc, encoding="utf-8")
    mine.write("x\n")
    mine.close()
    del mine
    assert not shared.closed
    shared.flush()
    assert raw.getvalue() == b"x\n"
