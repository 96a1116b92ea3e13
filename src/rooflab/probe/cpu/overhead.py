"""The overhead floor: the least time any kernel call can take from Python here.

Two dispatch costs are timed with probe.timer.bench (calls in a loop, per-call time):
a compiled numba function that does nothing, and a numpy ufunc on one element. The
roof's floor is the smaller (nothing dispatched from Python is faster); both are kept.
"""

from __future__ import annotations

import time

import numpy as np

from ..timer import Timing, TimingPlan, bench


def numba_empty_call(plan: TimingPlan, clock=time.perf_counter) -> Timing:
    from . import kernels as K

    K.empty(1)
    return bench(lambda: K.empty(1), plan, clock=clock)


def numpy_ufunc_call(plan: TimingPlan, clock=time.perf_counter) -> Timing:
    a, b, out = np.ones(1), np.ones(1), np.empty(1)
    return bench(lambda: np.add(a, b, out=out), plan, clock=clock)


def overhead_floor(plan: TimingPlan, clock=time.perf_counter) -> dict[str, Timing]:
    return {"numba empty call": numba_empty_call(plan, clock),
            "numpy 1-element ufunc": numpy_ufunc_call(plan, clock)}
