"""A function decorated with rooflab's Measurement on a fake clock, for tests of how calls
become samples (warm-up, slow runs, numba compiles) without depending on machine load."""

from __future__ import annotations

from rooflab.measure_runs import Measurement


def on_fake_clock(durations, body=lambda *args: None, **spec):
    """`body` decorated with Measurement(**spec) on a fake clock: call i lasts
    durations[i] seconds (after body ran)."""
    now = [0.0]
    calls = iter(durations)
    measurement = Measurement(**spec, clock=lambda: now[0])

    def run(*args):
        body(*args)
        now[0] += next(calls)

    return measurement(run)
