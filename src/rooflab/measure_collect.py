"""collect(): gather every Kernel that rooflab.measure produces inside a block.

    with rooflab.measuring.collect() as found:
        rooflab.measure(np.add, x, y, out=z, flop=..., bytes=...)   # one kernel
        with rooflab.measure(name="block", ...):                   # one kernel
            ...
        step(x); step(x)                                           # @measure'd: one kernel
    found.kernels        # in the order each first appeared

`rooflab bench --run script.py` runs the user's script inside this block. A decorated
function is one kernel, not one per call: its calls made inside the block, aggregated as
`fn.kernel` aggregates them (the same Kernel when every call was inside), except that
only the function's first call in a thread can be left out as a warm-up (measure_warmup):
a function that ran before the block in a thread is warm there, and its first call in the
block is an ordinary one. Collectors nest:
a kernel is recorded by every collector active when it is produced, so a script that
collects for itself still shows its kernels to `bench --run` around it. After the block
nothing more is recorded.

Which blocks a kernel is recorded in: the active collectors live in a ContextVar, so code
in the block (and asyncio tasks created in it, which copy its context) records into it
and into the blocks around it, and another context with blocks of its own records only
into those. A thread started inside a block begins with an empty context (Python < 3.14),
yet a script's worker threads (threading.Thread, concurrent.futures.ThreadPoolExecutor)
measure its kernels, so every open block is also registered process-wide, with the threads
that were running when it opened: a thread whose context holds no block records into every
open block it was started after. Threads that were already running (the main thread
outside any block, a thread pool made before the block) never record into it.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from .model.kernel import Kernel

_ACTIVE: ContextVar[tuple[Collection, ...]] = ContextVar("rooflab_collectors", default=())
# Every open block, process-wide, with the threads running when it opened (the threads
# that were not started inside it); guarded by _OPEN_LOCK, as worker threads read it.
_OPEN: list[tuple[Collection, frozenset[threading.Thread]]] = []
_OPEN_LOCK = threading.Lock()


class Collection:
    """The kernels recorded inside one `collect()` block (read `kernels` during or after)."""

    def __init__(self) -> None:
        # worker threads may record at once: add_run's look-up-then-insert must not
        # interleave (two slots for one function)
        self._lock = threading.Lock()
        # one slot per kernel: a Kernel, or (for a decorated function) the list of its runs
        self._slots: list[Kernel | list[Kernel]] = []
        self._runs_of: dict[int, list[Kernel]] = {}
        self._owners: list[object] = []   # keeps decorated functions alive: ids stay unique
        # the run lists (by id) of functions that ran before the block: their first call in
        # it is no warm-up (review r3 F1: a warm `step` lost a call to load on the machine)
        self._warm: set[int] = set()
        self._calls: dict[int, int] = {}   # per run list (by id): its calls, dropped included

    def add(self, kernel: Kernel) -> None:
        with self._lock:
            self._slots.append(kernel)

    def add_run(self, owner: object, kernel: Kernel) -> None:
        """One call of a decorated function `owner`: joins that function's one slot (the
        last N runs when it was decorated with keep=N, as its own .runs)."""
        with self._lock:
            runs = self._runs_of.get(id(owner))
            if runs is None:
                keep = _keep(owner)
                runs = self._runs_of[id(owner)] = [] if keep is None else deque(maxlen=keep)
                self._slots.append(runs)
                self._owners.append(owner)
                self._calls[id(runs)] = 0
                if not _first_call(owner, kernel):
                    self._warm.add(id(runs))
            runs.append(kernel)
            self._calls[id(runs)] += 1

    @property
    def kernels(self) -> tuple[Kernel, ...]:
        from .measure_aggregate import aggregate, kept_meta

        with self._lock:
            slots = [s if isinstance(s, Kernel) else
                     (list(s), s.maxlen if isinstance(s, deque) else None, self._calls[id(s)],
                      id(s) not in self._warm) for s in self._slots]
        out = []
        for s in slots:   # a loop, not a generator: a warning names the caller's line
            if isinstance(s, Kernel):
                out.append(s)
                continue
            runs, keep, calls, first = s
            out.append(kept_meta(aggregate(runs, first and calls == len(runs)), keep, calls,
                                 len(runs)))
        return tuple(out)

    def __len__(self) -> int:
        return len(self._slots)


def _keep(owner: object) -> int | None:
    """The N of a function decorated with keep=N (measure_runs), None for any other."""
    keep = getattr(getattr(owner, "_spec", None), "keep", None)
    return keep if isinstance(keep, int) and not isinstance(keep, bool) else None


def _first_call(owner: object, kernel: Kernel) -> bool:
    """Whether `kernel` is the decorated function's first call in this process (its
    `runs` start with it): only that call can be a warm-up (a JIT compile, first touches)."""
    runs = getattr(owner, "runs", None)
    return not runs or runs[0] is kernel


@contextmanager
def collect() -> Iterator[Collection]:
    """Record every Kernel rooflab.measure produces inside the block (see module doc)."""
    found = Collection()
    token = _ACTIVE.set((*_ACTIVE.get(), found))
    entry = (found, frozenset(threading.enumerate()))
    with _OPEN_LOCK:
        _OPEN.append(entry)
    try:
        yield found
    finally:
        with _OPEN_LOCK:
            _OPEN[:] = [e for e in _OPEN if e is not entry]
        _ACTIVE.reset(token)


def _collectors() -> tuple[Collection, ...]:
    """The blocks a kernel made here is recorded in (see the module doc)."""
    own = _ACTIVE.get()
    if own:
        return own
    me = threading.current_thread()
    with _OPEN_LOCK:
        return tuple(found for found, before in _OPEN if me not in before)


def record(kernel: Kernel | None) -> None:
    """Called by measure() for each Kernel it returns or sets (no-op outside collect())."""
    if kernel is not None:
        for found in _collectors():
            found.add(kernel)


def record_run(owner: object, kernel: Kernel | None) -> None:
    """Called by a decorated function for each of its calls."""
    if kernel is not None:
        for found in _collectors():
            found.add_run(owner, kernel)
