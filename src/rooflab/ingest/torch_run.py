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

from .. import files_rename
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
    if trace_path is not None:   # before the run: a FIFO, a device, a directory (s22 h1 H7)
        from ..files import check_writable

        check_writable(trace_path)
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
    return _export(prof, trace_path)


def _export(prof, trace_path: str | None) -> str:
    """The chrome trace written: to a temporary file (trace_path None), or to trace_path
    through a temporary beside it, renamed into place. A Ctrl-C or SIGTERM during the
    export (seconds for a large run) removes the temporary: it left a 135 MB
    /tmp/rooflab-trace-*.json, or half a --save-trace file (review s22 r2 F7). A trace
    kept by --save-trace is recorded (files.note_written), so a later interruption names
    it rather than saying nothing was written (F6b)."""
    from pathlib import Path

    from ..files import _mode_of, _refuse_special, link_target_safe, note_written

    # the same checks as every -o: through a symlink to its target (renaming onto the link
    # replaced it and left the target empty), never over a FIFO or a device (review s22
    # h1 H7); made only now, so a script that fails leaves no empty temp file behind
    target = None
    if trace_path is not None:
        target = link_target_safe(Path(trace_path))
        _refuse_special(Path(trace_path), target)
    folder = None if target is None else os.path.dirname(os.path.abspath(target))
    fd, tmp = tempfile.mkstemp(prefix="rooflab-trace-" if folder is None else ".rooflab-trace-",
                               suffix=".json", dir=folder)
    try:
        os.close(fd)
        prof.export_chrome_trace(tmp)
        if trace_path is None:
            return tmp
        os.chmod(tmp, _mode_of(target))   # as open() would leave it, not 0600
        try:   # retried, and a held file named, where Windows refuses (review s23 r3 F6)
            files_rename.replace(tmp, target)
        except PermissionError as exc:
            held = files_rename.held_open(trace_path, target, exc)
            if held is None:
                raise
            raise held from exc
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    note_written(trace_path)
    return trace_path
