"""A forked child (os.fork, multiprocessing's 'fork' start method) of a process with
decorated functions: their runs are the parent's calls, and a lock another thread held at
the fork stays held. Each registers here; the child empties them at once
(os.register_at_fork), so `fn.runs` in the child is its own calls from the start, not the
parent's until its first call or `.kernel` read (review s26)."""

from __future__ import annotations

import os
import weakref
from typing import Any

# every decorated function, weakly: one dropped by its module is not kept alive
_ALL: weakref.WeakSet[Any] = weakref.WeakSet()


def at_fork(obj: Any) -> None:
    """Call obj._in_this_process() in a forked child, right after the fork."""
    _ALL.add(obj)


def _child() -> None:
    for obj in list(_ALL):
        obj._in_this_process()


if hasattr(os, "register_at_fork"):   # POSIX only; elsewhere there is no fork
    os.register_at_fork(after_in_child=_child)
