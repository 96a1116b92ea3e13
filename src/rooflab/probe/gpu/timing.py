"""Device timing in the style of triton.testing.do_bench, with the clock injectable.

do_bench (triton/testing.py): estimate the time of one call from a few runs, turn the
warm-up and measuring *time budgets* into call counts, create all timing events up front,
flush the L2 before every call *outside* the timed region, synchronize once at the end and
only then read the per-call times. The same loop runs here on two kinds of marks:

- on CUDA, `torch.cuda.Event(enable_timing=True)` pairs (device time, milliseconds);
- on PyTorch's CPU device (and in tests), marks that read an injected clock when recorded.

So the CPU device and a fake clock exercise exactly the code path a GPU takes; only the
event objects differ. Raw per-call samples are kept; statistics come from probe.stats and
the plan from probe.timer, as on the CPU.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

from ..stats import summarize
from ..timer import DEFAULT, Clock, Timing, TimingPlan

# A flush buffer of 2x the L2 (at least 8 MiB) is read before each timed call (do_bench
# overwrites its 256 MB buffer): the next call then starts with a cold cache. Read, not
# written: a written buffer leaves the L2 full of dirty lines whose write-back falls inside
# the next timed call (on the first H200 run, s38, the 1 GiB copy read 4.196 TB/s with
# zero_() flushes against 4.23 TB/s for the same copy timed back to back).
MIN_FLUSH_BYTES = 8 << 20
ESTIMATE_CALLS = 5
# Device events time the device, not the host's launch cost: a kernel far shorter than its
# launch would ask for millions of warm-up calls. Cap them.
MAX_WARMUP_CALLS = 10_000


class ClockMark:
    """A timing mark that reads a host clock when recorded (stands in for a CUDA event)."""

    __slots__ = ("_clock", "t")

    def __init__(self, clock: Clock):
        self._clock = clock
        self.t: float | None = None

    def record(self) -> None:
        self.t = self._clock()

    def seconds_until(self, end: ClockMark) -> float:
        return float(end.t) - float(self.t)


class EventMark:
    """A CUDA event pair end; elapsed_time is in milliseconds, converted to seconds here."""

    __slots__ = ("event",)

    def __init__(self, torch):
        self.event = torch.cuda.Event(enable_timing=True)

    def record(self) -> None:
        self.event.record()

    def seconds_until(self, end: EventMark) -> float:
        return self.event.elapsed_time(end.event) * 1e-3


@dataclass(frozen=True)
class DeviceTimer:
    """How to time on one device: make marks, synchronize, flush the cache.

    `flush` is None when nothing needs flushing (the caller asked for warm caches).
    """

    make_mark: Callable[[], object]
    sync: Callable[[], object]
    flush: Callable[[], object] | None = None
    clock: Clock = time.perf_counter
    kind: str = "clock"          # "cuda-events" or "clock"

    def without_flush(self) -> DeviceTimer:
        return DeviceTimer(self.make_mark, self.sync, None, self.clock, self.kind)


def clock_timer(clock: Clock = time.perf_counter, flush: Callable[[], object] | None = None,
                sync: Callable[[], object] | None = None) -> DeviceTimer:
    """A timer on a host clock: PyTorch's CPU device, or a FakeClock in tests."""
    return DeviceTimer(make_mark=lambda: ClockMark(clock), sync=sync or (lambda: None),
                       flush=flush, clock=clock, kind="clock")


def cuda_timer(torch, device, flush_bytes: int) -> DeviceTimer:
    """CUDA events on `device`; the flush overwrites a buffer of `flush_bytes`."""
    return DeviceTimer(make_mark=lambda: EventMark(torch),
                       sync=lambda: torch.cuda.synchronize(device),
                       flush=torch_flush(torch, device, flush_bytes), clock=time.perf_counter,
                       kind="cuda-events")


def torch_flush(torch, device, nbytes: int) -> Callable[[], object]:
    """A cache flush on any torch device: read a buffer larger than the last cache (written
    once here, so its pages exist; read each time, so it leaves clean lines)."""
    buf = torch.zeros(max(int(nbytes), MIN_FLUSH_BYTES) // 4, dtype=torch.int32, device=device)
    return buf.sum


def _estimate(fn: Callable[[], object], timer: DeviceTimer) -> float:
    """Seconds per call from ESTIMATE_CALLS back-to-back calls (flushes included, as do_bench)."""
    start, end = timer.make_mark(), timer.make_mark()
    timer.sync()
    start.record()
    for _ in range(ESTIMATE_CALLS):
        if timer.flush is not None:
            timer.flush()
        fn()
    end.record()
    timer.sync()
    return max(start.seconds_until(end) / ESTIMATE_CALLS, 1e-9)


def plan_counts(estimate_s: float, plan: TimingPlan) -> tuple[int, int]:
    """(warm-up calls, timed calls) that fit the plan's time budgets, do_bench style."""
    warmup = min(max(1, math.ceil(plan.warmup_s / estimate_s)), MAX_WARMUP_CALLS)
    repeat = math.ceil(plan.budget_s / estimate_s)
    return warmup, int(min(max(repeat, plan.min_samples), plan.max_samples))


def time_calls(fn: Callable[[], object], timer: DeviceTimer, plan: TimingPlan = DEFAULT
               ) -> Timing:
    """Per-call times of `fn` (seconds), one mark pair per call, one synchronize at the end."""
    fn()  # first call outside everything: compilation, handle creation, allocation
    estimate = _estimate(fn, timer)
    n_warmup, n_repeat = plan_counts(estimate, plan)
    for _ in range(n_warmup):
        fn()
    starts = [timer.make_mark() for _ in range(n_repeat)]
    ends = [timer.make_mark() for _ in range(n_repeat)]
    timer.sync()
    for start, end in zip(starts, ends, strict=True):
        if timer.flush is not None:
            timer.flush()   # outside the timed region: between end[i-1] and start[i]
        start.record()
        fn()
        end.record()
    timer.sync()
    samples = tuple(s.seconds_until(e) for s, e in zip(starts, ends, strict=True))
    return Timing(samples=samples, inner=1, stats=summarize(samples))


def time_batched(fn: Callable[[], object], timer: DeviceTimer, calls: int,
                 plan: TimingPlan = DEFAULT) -> Timing:
    """Per-call time of `calls` back-to-back calls in one marked region (launch throughput).

    Used where a single call is shorter than the marks can resolve (empty kernels, graph
    replays of many tiny kernels): each sample is one region divided by `calls`.
    """
    def region() -> None:
        for _ in range(calls):
            fn()

    t = time_calls(region, timer.without_flush(), plan)
    samples = tuple(s / calls for s in t.samples)
    return Timing(samples=samples, inner=calls, stats=summarize(samples))
