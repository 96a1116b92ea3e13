"""Whether a counted call handed work to other threads or processes, which the op counter
cannot see (review s27 v2 F9, in HEAD too): torch's dispatch modes are per thread, so the
ops of a `threading.Thread` the call starts, or of a pool it submits to, are timed but not
counted. A call that counted its own `a @ a` and ran another in a thread read half its
FLOP/s, silently. While a call is counted, a profile hook on its own thread (sys.setprofile:
this thread only, a few hundred ns a Python call, on top of the counter's own tens of µs
an op) notes calls of Thread.start and of the pools' submit; the count then carries a note
(meta["counted_in_calling_thread_only"]) and a CountWarning says so. A thread that already
has a profiler (cProfile, yappi) keeps it, and nothing is noted."""

from __future__ import annotations

import sys
import threading
import weakref
from typing import Any

# the calls that hand work to another thread or process, by their code object
_HANDING = {threading.Thread.start.__code__: "threading.Thread.start"}


def _handing() -> dict:
    """_HANDING, with the pools of modules already imported (none imported here)."""
    found = dict(_HANDING)
    for module, cls, names in (("concurrent.futures.thread", "ThreadPoolExecutor", ("submit",)),
                               ("concurrent.futures.process", "ProcessPoolExecutor", ("submit",)),
                               ("multiprocessing.pool", "Pool", ("apply_async", "_map_async"))):
        owner = getattr(sys.modules.get(module), cls, None)
        for name in names:
            code = getattr(getattr(owner, name, None), "__code__", None)
            if code is not None:
                found[code] = f"{cls}.{name}"
    return found


class HandOffs:
    """Started when a count starts, in its thread; `stop()` gives the hand-offs seen."""

    def __init__(self) -> None:
        self.seen: set[str] = set()
        self._on = False
        self._codes: dict = {}

    def start(self) -> HandOffs:
        if sys.getprofile() is None:   # a profiler of the user's own stays in charge
            self._codes = _handing()
            sys.setprofile(self._hook)
            self._on = True
        return self

    def _hook(self, frame, event: str, arg: Any) -> None:
        if event == "call":
            what = self._codes.get(frame.f_code)
            if what is not None:
                self.seen.add(what)

    def stop(self) -> set[str]:
        if self._on:
            sys.setprofile(None)
            self._on = False
        return self.seen


# each count (a TorchCount) that handed work off: {id: (a weak reference to it, what)}
_HANDED: dict[int, tuple[weakref.ref, tuple[str, ...]]] = {}


def mark(count: Any, seen: set[str]) -> None:
    """Remember that `count` was made by a call that handed work off (`seen`)."""
    if not seen or count is None:
        return
    key = id(count)
    _HANDED[key] = (weakref.ref(count, lambda _: _HANDED.pop(key, None)), tuple(sorted(seen)))


def handed(count: Any) -> tuple[str, ...]:
    """The hand-offs of the call that made `count` (() when none, or never watched)."""
    got = _HANDED.get(id(count))
    return got[1] if got is not None and got[0]() is count else ()


def handed_text(label: str, seen: tuple[str, ...]) -> str:
    """What a count that missed other threads' work says (meta and CountWarning)."""
    return (f"measure(): '{label}' handed work to other threads or processes while it was "
            f"counted ({', '.join(seen)}): the op counter sees the calling thread only, so "
            f"the ops they ran are timed but not counted, and its FLOP/s and bytes read low "
            f"by their share; pass flop= and bytes= for the whole call, or measure the "
            f"function those threads run")
