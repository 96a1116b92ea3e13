"""Run a user's script under torch.profiler (CPU, plus CUDA when available) and keep the trace.

`rooflab torch --run script.py [args]` is this: the script runs in this process as
`__main__` with `sys.argv = [script, *args]` (bench.script_run), inside
`torch.profiler.profile(record_shapes=True, with_flops=True)`; the chrome trace is written
to `trace_path` (a temporary file unless given) and read back by ingest.torch_trace.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile

from ..bench.script_run import check_script, run_as_main
from ..errors import require


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
    check_script(script)
    torch = require("torch", "torch", "rooflab torch --run")
    from torch.profiler import ProfilerActivity, profile

    activities = [ProfilerActivity.CPU]
    if torch.cuda.is_available():
        activities.append(ProfilerActivity.CUDA)
    prof = profile(activities=activities, record_shapes=True, with_flops=True)
    with _native_stderr_muted():
        prof.start()
    try:   # a failure is reported with where it happened, not the script's traceback
        run_as_main(script, args, quiet_stdout=quiet_stdout, frames=False)
        if torch.cuda.is_available():
            torch.cuda.synchronize()
    finally:
        with _native_stderr_muted():
            prof.stop()
    if trace_path is None:
        # made only now, so a script that fails leaves no empty temp file behind
        fd, trace_path = tempfile.mkstemp(prefix="rooflab-trace-", suffix=".json")
        os.close(fd)
    prof.export_chrome_trace(trace_path)
    return trace_path
