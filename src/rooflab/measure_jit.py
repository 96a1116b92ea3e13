"""numba's own word on a timed run: the JIT compiles that ran inside it.

A call that compiled is a warm-up whatever its ratio to the later calls: numba announces
each compile as a "numba:compile" event (numba.core.event), so a measured run listens for
them instead of guessing from its time (review r6 F1: a 222 ms compile call against 50 ms
later calls, 4.4x, was kept under the 5x rule and read as "other load on the machine").
Only when numba is already imported: rooflab never imports it, and a process without it
compiles nothing numba could announce. Disk-cache hits are no compile (numba fires no
event for them). numba announces every thread's compiles to every listener: a run holds
those of its own thread and those it waited for on numba's compiler lock (CompileTime).
"""

from __future__ import annotations

import functools
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

COMPILE_EVENT = "numba:compile"
LOCK_EVENT = "numba:compiler_lock"   # fired by the thread that waits for the lock


class CompileTime:
    """The numba compiles a timed run held: how many (outermost ones: a function's compile
    that compiles its callees counts once) and their seconds, on perf_counter.

    numba's listeners are process-wide, so every thread's compile is heard here; a
    compile counts when it ran in the thread that opened the block, or when this thread
    waited on numba's compiler lock while another thread compiled (review s25 r2 F4: a
    plain numpy call next to a thread compiling was charged with its compile; four
    threads' first calls of one njit function: three wait ~1 s on the lock while the
    first compiles, and those waits are compiles they held). Only the waited part of such
    a compile counts. The event callbacks run in the compiling (or locking) thread."""

    def __init__(self) -> None:
        self.count = 0
        self.seconds = 0.0
        self._thread = threading.get_ident()
        self._opened = time.perf_counter()
        self._open: dict[int, tuple[int, float]] = {}   # thread -> (depth, start) compiling
        self._others: list[tuple[float, float]] = []   # other threads' compiles, (t0, t1)
        self._lock_depth = 0
        self._lock_t0 = 0.0
        self._locks: list[tuple[float, float]] = []   # this thread in numba's compiler lock

    def on_start(self, event) -> None:
        ident = threading.get_ident()
        depth, t0 = self._open.get(ident, (0, 0.0))
        self._open[ident] = (depth + 1, time.perf_counter() if depth == 0 else t0)

    def on_end(self, event) -> None:
        ident = threading.get_ident()
        # an end without its start: the compile began before the block opened
        depth, t0 = self._open.pop(ident, (0, self._opened))
        if depth > 1:
            self._open[ident] = (depth - 1, t0)
            return
        t1 = time.perf_counter()
        if ident == self._thread:
            self.count += 1
            self.seconds += t1 - t0
        else:
            self._others.append((t0, t1))

    def on_lock_start(self, event) -> None:
        # numba fires this before acquiring the lock: the wait is inside the interval
        if threading.get_ident() == self._thread:
            if self._lock_depth == 0:
                self._lock_t0 = time.perf_counter()
            self._lock_depth += 1

    def on_lock_end(self, event) -> None:
        if threading.get_ident() == self._thread and self._lock_depth:
            self._lock_depth -= 1
            if self._lock_depth == 0:
                self._locks.append((self._lock_t0, time.perf_counter()))

    def finish(self) -> None:
        """Count the other threads' compiles this thread waited on (its compiler-lock
        intervals overlapping them), by the seconds waited."""
        for c0, c1 in self._others:
            waited = sum(max(0.0, min(c1, l1) - max(c0, l0)) for l0, l1 in self._locks)
            if waited > 0.0:
                self.count += 1
                self.seconds += waited
        self._others = []


@functools.cache
def _listener_class(event_mod, start: str, end: str):
    """A numba Listener feeding a CompileTime's methods (numba's Listener is an ABC).
    Made once: an ABC subclass costs ~20 µs to create, on every decorated call."""

    class _Listener(event_mod.Listener):
        def __init__(self, sink: CompileTime):
            self.sink = sink

        def on_start(self, event) -> None:
            getattr(self.sink, start)(event)

        def on_end(self, event) -> None:
            getattr(self.sink, end)(event)

    return _Listener


@contextmanager
def numba_compiles() -> Iterator[CompileTime]:
    """The numba compiles the block held (a CompileTime; count 0 without numba): its
    thread's own, and other threads' that it waited on for numba's compiler lock."""
    seen = CompileTime()
    if "numba" not in sys.modules:
        yield seen
        return
    try:
        from numba.core import event
        compiles = event.install_listener(
            COMPILE_EVENT, _listener_class(event, "on_start", "on_end")(seen))
        locks = event.install_listener(
            LOCK_EVENT, _listener_class(event, "on_lock_start", "on_lock_end")(seen))
    except (ImportError, AttributeError, TypeError):   # a numba without the event API (< 0.53)
        yield seen
        return
    with compiles, locks:
        yield seen
    seen.finish()


def compile_warning(name: str, compile_s: float, seconds: float) -> str:
    """What a single timed run that compiled says: its time holds the compile."""
    from .units import fmt_seconds

    return (f"{name}: the timed run held a numba JIT compile of {fmt_seconds(compile_s)} "
            f"(of {fmt_seconds(seconds)}): that is no part of the kernel's time; call the "
            f"numba function once before timing it, or benchmark it with "
            f"rooflab.measure(fn, *args)")
