"""A one-line parallel loop that starts numba's thread pool (address_space.start_pool).
Its own module: it imports numba, which only callers that already use it import.

No disk cache: numba's cache=True would write next to this file, into the install, where
`pip uninstall` leaves it behind (review s26 r1 F1); rooflab's own cache folder is the
probe's (probe/cpu/numba_cache.py), a layer above this one. The loop is compiled only
under `ulimit -v` (about 3 s), once per process."""

from __future__ import annotations

import numba


@numba.njit(parallel=True, cache=False)
def touch(n):
    s = 0
    for i in numba.prange(n):
        s += i
    return s
