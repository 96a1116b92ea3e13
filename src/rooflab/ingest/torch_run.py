"""Run a user's script under torch.profiler (CPU, plus CUDA when available) and keep the trace.

`rooflab torch --run script.py [args]` is this: the script runs in this process as
`__main__` with `sys.argv = [script, *args]`, inside
`torch.profiler.profile(record_shapes=True, with_flops=True)`; the chrome trace is written
to `trace_path` (a temporary file unless given) and read back by ingest.torch_trace.
"""

from __future__ import annotations

import contextlib
import os
import runpy
import sys
import tempfile
import traceback
from pathlib import Path

from ..errors import InputError, ProbeError, require


def _where(exc: BaseException, script: str) -> str:
    """'script.py:12' for the deepest frame of the user's script in the traceback."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if Path(f.filename).resolve() == Path(script).resolve()]
    return f"{script}:{frames[-1].lineno}" if frames else script


@contextlib.contextmanager
def _native_stderr_muted():
    """Silence file descriptor 2 for a moment: PyTorch's profiler (Kineto) prints
    'USDT: … profiler_start/stop' lines from C++ on start and stop, which Python's
    sys.stderr cannot catch. Only the start and stop calls run inside this."""
    sys.stderr.flush()
    try:
        saved = os.dup(2)
    except OSError:   # no real fd 2 (embedded interpreters): leave it be
        yield
        return
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def run_script(script: str, args: list[str] | tuple[str, ...] = (), *,
               trace_path: str | None = None, quiet_stdout: bool = False) -> str:
    """Profile one run of `script`; return the path of the chrome trace written.

    quiet_stdout: send the script's prints to stderr (so `--json` output stays clean).
    """
    if not Path(script).is_file():
        raise InputError(f"--run {script}: no such script; give the path of a Python file")
    torch = require("torch", "torch", "rooflab torch --run")
    from torch.profiler import ProfilerActivity, profile

    activities = [ProfilerActivity.CPU]
    if torch.cuda.is_available():
        activities.append(ProfilerActivity.CUDA)
    prof = profile(activities=activities, record_shapes=True, with_flops=True)
    with _native_stderr_muted():
        prof.start()
    old_argv, old_path = sys.argv, list(sys.path)
    sys.argv = [script, *args]
    sys.path.insert(0, str(Path(script).resolve().parent))
    failure: BaseException | None = None
    redirect = (contextlib.redirect_stdout(sys.stderr) if quiet_stdout
                else contextlib.nullcontext())
    try:
        with redirect:
            try:
                runpy.run_path(script, run_name="__main__")
            except SystemExit as exc:   # a script may end with sys.exit(0)
                if exc.code not in (None, 0):
                    failure = exc
            except Exception as exc:  # the user's code failed: say where, no traceback
                failure = exc
            if torch.cuda.is_available():
                torch.cuda.synchronize()
    finally:
        with _native_stderr_muted():
            prof.stop()
        sys.argv, sys.path[:] = old_argv, old_path
    if isinstance(failure, SystemExit):
        raise ProbeError(f"{script} exited with status {failure.code}; nothing to analyse")
    if failure is not None:
        raise ProbeError(f"{_where(failure, script)}: the script raised "
                         f"{type(failure).__name__}: {failure}")
    if trace_path is None:
        # made only now, so a script that fails leaves no empty temp file behind
        fd, trace_path = tempfile.mkstemp(prefix="rooflab-trace-", suffix=".json")
        os.close(fd)
    prof.export_chrome_trace(trace_path)
    return trace_path
