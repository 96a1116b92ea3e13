"""The sustained core clock, measured: this VM (and many clouds) exposes no cpufreq, and
the TSC rate is not the running clock. A dependent chain of single-cycle integer ops
(`kernels.alu_chain`: shift then add, 2 cycles per iteration on every x86 and Arm core;
Agner Fog's instruction tables, https://www.agner.org/optimize/instruction_tables.pdf)
runs on every thread at once, so the figure is the all-core clock under load.
"""

from __future__ import annotations

import time

import numpy as np

from ..timer import TimingPlan
from .runner import Rate, Team, measure_rate

CYCLES_PER_ITERATION = 2


def measure_clock(team: Team, plan: TimingPlan, clock=time.perf_counter) -> Rate:
    """Per-core clock in Hz (samples): iterations x 2 cycles / seconds, all threads busy."""
    from . import kernels as K

    rows, out = np.zeros((team.threads, 1)), np.zeros(team.threads)

    def call(reps: int) -> None:
        K.par_run(K.ALU, rows, rows, rows, 0.0, 0, 0, reps, out, 1)

    return measure_rate(call, CYCLES_PER_ITERATION, plan, clock=clock)


METHOD = ("dependent chain of single-cycle integer shift+add (2 cycles per iteration) on "
          "every thread at once; Hz = 2 x iterations / seconds")
