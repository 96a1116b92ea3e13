"""collect(): gather every Kernel that rooflab.measure produces inside a block.

    with rooflab.measuring.collect() as found:
        rooflab.measure(np.add, x, y, out=z, flop=..., bytes=...)   # one kernel
        with rooflab.measure(name="block", ...):                   # one kernel
            ...
        step(x); step(x)                                           # @measure'd: one kernel
    found.kernels        # in the order each first appeared

`rooflab bench --run script.py` runs the user's script inside this block. A decorated
function is one kernel, not one per call: its calls made inside the block, aggregated as
`fn.kernel` aggregates them (the same Kernel when every call was inside). Collectors nest:
a kernel is recorded by every collector active when it is produced, so a script that
collects for itself still shows its kernels to `bench --run` around it. The active
collectors live in a ContextVar, so code running elsewhere (another thread, another
asyncio task's context) never records into a block it is not in, and after the block
nothing more is recorded. The price: a thread started inside the block begins with an
empty context (Python < 3.14), so kernels measured in it are not collected; asyncio tasks
created inside the block copy its context and are.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from .model.kernel import Kernel

_ACTIVE: ContextVar[tuple[Collection, ...]] = ContextVar("rooflab_collectors", default=())


class Collection:
    """The kernels recorded inside one `collect()` block (read `kernels` during or after)."""

    def __init__(self) -> None:
        # one slot per kernel: a Kernel, or (for a decorated function) the list of its runs
        self._slots: list[Kernel | list[Kernel]] = []
        self._runs_of: dict[int, list[Kernel]] = {}
        self._owners: list[object] = []   # keeps decorated functions alive: ids stay unique

    def add(self, kernel: Kernel) -> None:
        self._slots.append(kernel)

    def add_run(self, owner: object, kernel: Kernel) -> None:
        """One call of a decorated function `owner`: joins that function's one slot."""
        runs = self._runs_of.get(id(owner))
        if runs is None:
            runs = self._runs_of[id(owner)] = []
            self._slots.append(runs)
            self._owners.append(owner)
        runs.append(kernel)

    @property
    def kernels(self) -> tuple[Kernel, ...]:
        from .measure_runs import aggregate  # measure_runs imports this module

        return tuple(s if isinstance(s, Kernel) else aggregate(s) for s in self._slots)

    def __len__(self) -> int:
        return len(self._slots)


@contextmanager
def collect() -> Iterator[Collection]:
    """Record every Kernel rooflab.measure produces inside the block (see module doc)."""
    found = Collection()
    token = _ACTIVE.set((*_ACTIVE.get(), found))
    try:
        yield found
    finally:
        _ACTIVE.reset(token)


def record(kernel: Kernel | None) -> None:
    """Called by measure() for each Kernel it returns or sets (no-op outside collect())."""
    if kernel is not None:
        for found in _ACTIVE.get():
            found.add(kernel)


def record_run(owner: object, kernel: Kernel | None) -> None:
    """Called by a decorated function for each of its calls."""
    if kernel is not None:
        for found in _ACTIVE.get():
            found.add_run(owner, kernel)
