"""The objects a verb keeps to the end (the kernels read from a file, their analysis)
kept out of the cyclic garbage collector's passes while it works: every full pass walked
all of them for no garbage. One rule for `rooflab report -o x.html` (report/html) and
`rooflab plot` (cli/plot).
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any


@contextmanager
def long_lived() -> Iterator[Callable[..., Any]]:
    """The objects alive as it starts (at 20 000 kernels: ~210 000 containers of kernels,
    points and diagnoses) frozen while the block runs, then handed back (gc.freeze,
    gc.unfreeze): each full pass walked all of them, 0.05-0.15 s a pass, several a verb
    (the collector's time in `report -o x.html` at 20 000 kernels: ~0.95 -> ~0.6 s CPU;
    benchmarks/RESULTS.md session 36 helper P). The block's own garbage is still collected.
    Left as it is where the caller froze its heap or paused the collector itself
    (tests/conftest.py does).

    Yields keep(fn, *args, **kwargs): fn's result, fn run with the collector paused and
    what it made frozen too, for a step that makes what the rest keeps (reading 20 000
    kernels from a file took 3-4 full passes as their heap grew; `rooflab plot`: the
    collector's 0.9 -> 0.45 s CPU, benchmarks/RESULTS.md session 37). Outside a freeze of
    its own it just calls fn."""
    if gc.get_freeze_count() or not gc.isenabled():
        yield _call
        return
    gc.freeze()
    try:
        yield _kept
    finally:
        gc.unfreeze()


def _call(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    return fn(*args, **kwargs)


def _kept(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """fn(*args, **kwargs) with the collector paused, what it made then frozen (the
    garbage it left in cycles too, until the freeze ends: a file reader's is little)."""
    gc.disable()
    try:
        return fn(*args, **kwargs)
    finally:
        gc.freeze()
        gc.enable()
