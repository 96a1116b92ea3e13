"""`rooflab ARGS` run in this process, answered like subprocess.run(..., capture_output=True,
text=True): for tests about what the CLI prints and exits with, not about the process
itself (pipes, a terminal, `python -m`, interpreter start-up stay subprocesses). A
subprocess re-imports numpy, typer and rooflab, ~0.75 s CPU each (review s18 r1 F3)."""

from __future__ import annotations

import contextlib
import io
import subprocess

from rooflab.cli.main import main


def run_cli(*args: str) -> subprocess.CompletedProcess:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return subprocess.CompletedProcess(["rooflab", *args], code, out.getvalue(),
                                       err.getvalue())
