"""SIGTERM as Ctrl-C, remembered: `kill`, `timeout` and batch schedulers stop a run with
SIGTERM, whose default action ended the process on the spot, with no line, no `finally`
(temporary files left beside the output, /tmp/rooflab-stdin-*, a 135 MB trace) and no
cleanup (review s22 r2 F1). Raised as KeyboardInterrupt in the main thread, it takes the
path Ctrl-C takes; the flag tells the entry point to say "terminated" and exit 143
(128 + SIGTERM), as the shell reports a process SIGTERM ended.

No imports past the standard library: the entry point installs it before anything else."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable

EXIT_TERMINATED = 128 + signal.SIGTERM   # 143

_TERMINATED: list[bool] = [False]
# [the exit code the interrupt was answered with, whether main() installed the handler]
_ANSWERED: list = [None, False]
# the process that installed the handler (a forked child inherits the handler, not this)
_OWNER: list = [os.getpid()]


def _raise_interrupt(signum, frame) -> None:
    if os.getpid() != _OWNER[0]:
        # a forked child before _default_in_child ran: random's own at-fork reseed runs
        # first (at-fork hooks run in registration order), and a fork Pool's terminate()
        # can SIGTERM a worker just then; raising there printed "Exception ignored in
        # Random.seed" and left the worker alive, so terminate() waited on it forever (a
        # `bench --run` with a fork Pool hung past 300 s under load, 2026-12-03). The
        # child dies as SIGTERM's default action would have ended it.
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
        return
    _TERMINATED[0] = True
    raise KeyboardInterrupt


def _default_in_child() -> None:
    """A forked child starts with SIGTERM's default action, as a plain Python child does:
    multiprocessing's fork Pool ends its workers with SIGTERM, which the inherited handler
    turned into KeyboardInterrupt tracebacks from every worker under `bench --run`, and now
    and then a false "terminated" for the run (review s26 v3 F2)."""
    try:
        if signal.getsignal(signal.SIGTERM) is _raise_interrupt:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
    except (ValueError, OSError):   # not the child's main thread: nothing to undo there
        pass


if hasattr(os, "register_at_fork"):   # not on Windows, which has no fork
    os.register_at_fork(after_in_child=_default_in_child)


def terminate_as_interrupt() -> Callable[[], None]:
    """Install the handler (main thread only: signal.signal refuses elsewhere); return the
    function that puts the previous handler back. The flag starts clear."""
    outer = list(_ANSWERED)   # a launcher inside main() installs it again: kept after
    _TERMINATED[0], _ANSWERED[:], _OWNER[0] = False, [None, False], os.getpid()
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    try:
        before = {signal.SIGINT: signal.getsignal(signal.SIGINT),
                  signal.SIGTERM: signal.signal(signal.SIGTERM, _raise_interrupt)}
    except (ValueError, OSError):   # an embedding that owns its signals
        return lambda: None
    _ANSWERED[1] = True

    def restore() -> None:
        _ANSWERED[:] = outer
        for sig, handler in before.items():
            if handler is not None:
                signal.signal(sig, handler)
    return restore


def answering() -> int | None:
    """Called first by the entry point's answer to an interrupt: from here on SIGTERM and
    SIGINT are ignored (`timeout` signals the child and then its group: a second SIGTERM
    landed inside the answer and printed `error: terminated` twice, review s22 h1 H6).
    Returns the exit code of an answer already given (say nothing again), else None.
    Outside main() (a test calling the answer itself) it changes no handler."""
    if _ANSWERED[1] and threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGTERM, signal.SIGINT):
            try:
                signal.signal(sig, signal.SIG_IGN)
            except (ValueError, OSError):
                pass
    return _ANSWERED[0]


def answered(code: int) -> None:
    """Remember that the interrupt was answered (one line, one JSON document) with code."""
    if _ANSWERED[1]:
        _ANSWERED[0] = code


def terminated() -> bool:
    """Whether the interrupt being answered came from SIGTERM (not Ctrl-C)."""
    return _TERMINATED[0]
