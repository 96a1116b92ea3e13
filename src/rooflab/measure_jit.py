"""numba's own word on a timed run: the JIT compiles that ran inside it.

A call that compiled is a warm-up whatever its ratio to the later calls: numba announces
each compile as a "numba:compile" event (numba.core.event), so a measured run listens for
them instead of guessing from its time (review r6 F1: a 222 ms compile call against 50 ms
later calls, 4.4x, was kept under the 5x rule and read as "other load on the machine").
Only when numba is already imported: rooflab never imports it, and a process without it
compiles nothing numba could announce. Disk-cache hits are no compile (numba fires no
event for them).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

COMPILE_EVENT = "numba:compile"


class CompileTime:
    """The numba compiles seen while listening: how many (outermost ones: a function's
    compile that compiles its callees counts once) and their seconds, on perf_counter."""

    def __init__(self) -> None:
        self.count = 0
        self.seconds = 0.0
        self._depth = 0
        self._t0 = 0.0

    def on_start(self, event) -> None:
        if self._depth == 0:
            self._t0 = time.perf_counter()
        self._depth += 1

    def on_end(self, event) -> None:
        self._depth = max(self._depth - 1, 0)
        if self._depth == 0:
            self.count += 1
            self.seconds += time.perf_counter() - self._t0


def _listener_class(event_mod):
    """A numba Listener feeding a CompileTime (numba's Listener is an ABC: subclass it)."""

    class _Listener(event_mod.Listener):
        def __init__(self, sink: CompileTime):
            self.sink = sink

        def on_start(self, event) -> None:
            self.sink.on_start(event)

        def on_end(self, event) -> None:
            self.sink.on_end(event)

    return _Listener


@contextmanager
def numba_compiles() -> Iterator[CompileTime]:
    """The numba compiles inside the block (a CompileTime; count 0 without numba)."""
    seen = CompileTime()
    if "numba" not in sys.modules:
        yield seen
        return
    try:
        from numba.core import event
        listening = event.install_listener(COMPILE_EVENT, _listener_class(event)(seen))
    except (ImportError, AttributeError, TypeError):   # a numba without the event API (< 0.53)
        yield seen
        return
    with listening:
        yield seen


def compile_warning(name: str, compile_s: float, seconds: float) -> str:
    """What a single timed run that compiled says: its time holds the compile."""
    from .units import fmt_seconds

    return (f"{name}: the timed run held a numba JIT compile of {fmt_seconds(compile_s)} "
            f"(of {fmt_seconds(seconds)}): that is no part of the kernel's time; call the "
            f"numba function once before timing it, or benchmark it with "
            f"rooflab.measure(fn, *args)")
