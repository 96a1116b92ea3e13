"""The single-run forms of rooflab.measure: a context manager (the block runs once, timed)
and a decorator (every call of the function is one timed run; `wrapper.kernel` adds them
up). When they count torch ops, the counted run's time includes the counting overhead
(meta["timing_includes_counting"] and meta["warning"] say so; counting_finding words it
for the report); the counter's one-off first-use cost (importing torch._dynamo, ~2 s) is
paid before the clock starts (torch_count.warm_up). A decorated function counts its first
call with given argument shapes and reuses those counts for later calls with the same
shapes, timed without the counter; its kernel leaves a counted run out when uncounted runs
of the same counts exist, a call during which numba compiled (its own event, measure_jit)
and a first call (per thread) over SLOW_RUN_RATIO x the others (a JIT compile, a first
touch of memory; measure_warmup). A decorated torch.compile'd function's counted call
runs its eager original (measure_counts.eager_original), so the compiled code keeps
running later. Calls from several threads at once: each keeps its start and thread
(measure_overlap), a shape is counted once (the other threads wait for its count while
its thread computes: measure_threads), and one Measurement entered twice at once times
each block (a per-thread stack of entries; its .kernel is per thread too). A
recursive call is part of the call it is in (one run per outermost call, per thread);
keep=N keeps the last N runs. A decorated function pickles by reference; a forked child
starts with no runs (measure_fork).

With no device given (and, for a decorated function, no CUDA tensor argument) the clock
is the CPU's, read after a torch.cuda.synchronize() whenever CUDA is in use: the block's
CUDA tensors are not arguments, so they cannot choose the clock (measure_clocks)."""

from __future__ import annotations

import functools
import gc
import os
import threading
import time
import types
from collections import deque
from collections.abc import Callable
from typing import Any

from .errors import InputError
from .measure_aggregate import aggregate, kept_meta, runs_repr
from .measure_checks import (
    TimingWarning,
    add_warning,
    check_keep,
    counting_warning,
    refuse_lazy,
    refuse_unrun,
    single_run_warning,
    warn_number_precision,
)
from .measure_clocks import (
    CUDA_EVENTS,
    PERF_COUNTER,
    SYNCED,
    cpu_clock_warning,
    cuda_arg_device,
    cuda_sync,
    device_clock,
    synced,
)
from .measure_collect import record, record_run
from .measure_context import threads_meta
from .measure_counts import (
    _merge_count,
    _name_of,
    eager_original,
    is_compiled,
    normalize_bytes,
    normalize_flop,
    require_counter,
)
from .measure_fork import at_fork
from .measure_jit import CompileTime, compile_warning, numba_compiles
from .measure_shapes import shapes_key
from .measure_site import warn
from .measure_threads import CountGate, Entry, entries
from .measure_warmup import FIRST_KEY
from .model.kernel import Kernel
from .model.provenance import GIVEN, MEASURED
from .probe.timer import Clock
from .units import fmt_seconds


class Measurement:
    """What `measure()` returns without a function: a decorator and a context manager.

    As a context manager the block runs once; `kernel` is set on exit. As a decorator,
    every call of the wrapped function is one timed run; `wrapper.kernel` aggregates them.
    """

    def __init__(self, *, flop=None, bytes=None, device: str | None = None,
                 name: str | None = None, clock: Clock | None = None,
                 keep: int | None = None):
        self.keep = check_keep(keep)   # a decorated function keeps its last `keep` runs
        self.flop = normalize_flop(flop) if flop is not None else None
        self._flop_given = flop
        self.bytes = normalize_bytes(bytes) if bytes is not None else None
        self.device = device
        self.name = name
        self._last: Kernel | None = None   # the block any thread finished last (.kernel)
        self._clock = clock
        # one entry's state per open block, on a stack per thread: one object entered
        # from two threads, or nested in one, times each block (review s25 r2 F2)
        self._entries = threading.local()
        self._stacklevel = 3   # a warning points at the user's `with` line (5: a decorated call)
        self._collect = True   # False for a decorated call's block: the wrapper records it
        self._compiled = False   # a decorated torch.compile'd function (measure_counts)
        self._reuse = None   # a decorated call's earlier TorchCount: time it uncounted
        self._first = False   # a decorated call: the function's first in this thread
        self.counted = None   # the TorchCount of the last run (counted or reused)

    def _stack(self) -> list[Entry]:
        return entries(self._entries)

    @property
    def kernel(self) -> Kernel | None:
        """This thread's last block (None while one is open); in a thread that ran none,
        the block any thread finished last: one object shared by two threads gave each
        the other's (review s26, docs/python.md "Threads")."""
        return getattr(self._entries, "kernel", self._last)

    def __enter__(self) -> Measurement:
        if self.keep is not None:   # a block runs once: there is nothing to keep
            raise InputError("measure(keep=...) bounds a decorated function's .runs; a "
                             "`with` block runs once: drop keep=")
        self._entries.kernel = None
        e = Entry()
        e.counting_from = time.perf_counter()
        if (self.flop is None or self.bytes is None) and self._reuse is None:
            require_counter()
            from .bench.torch_count import warm_up

            warm_up()   # the counter's first use costs seconds: not in the timed run
            e.start_count()   # and a watch for work handed to other threads (F9)
            # a collection pending from earlier work (a torch.compile's graphs) fell in the
            # counted call's timing: 100 ms on a 0.2 ms call, left out as a warm-up. Collected
            # now, outside the clock; a counted call is a new shape's first, so this is rare
            gc.collect()
        if self.device is not None:
            clock = self._clock or device_clock(self.device)[0]
            e.how = CUDA_EVENTS if self.device.startswith("cuda") else PERF_COUNTER
        else:
            clock = self._clock or time.perf_counter
            e.how = PERF_COUNTER   # SYNCED once __exit__ synchronizes
        e.clock = clock
        sync = cuda_sync() if self.device is None else None
        # listening costs microseconds: started before the clock, stopped after it
        e.jit_block = numba_compiles()
        e.jit = e.jit_block.__enter__()
        e.t0 = synced(clock, sync)()
        # the start a decorated call's run keeps (measure_overlap): the clock's own reading
        # when it is perf_counter or a given one (a test's fake clock: read once per step)
        e.started = e.t0 if self._clock is not None or self.device is None \
            else time.perf_counter()
        self._stack().append(e)   # last: an __enter__ that raised leaves no entry behind
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        e = self._stack().pop()
        # CUDA may have been first used inside the block: ask again
        sync = cuda_sync() if self.device is None else None
        seconds = synced(e.clock, sync)() - e.t0
        e.jit_block.__exit__(None, None, None)
        if sync is not None:
            e.how = SYNCED
        counter = e.end_count(exc_type, exc, tb)
        if exc_type is not None:
            return
        count = self._reuse
        if counter is not None:
            count = (counter.result_returning(e.returned[0]) if e.returned
                     else counter.result)
            e.counted(count)
        when = {}
        if not self._collect:   # a decorated call's run: when and where it ran
            when = {"started_s": e.started, "thread_ident": threading.get_ident(),
                    FIRST_KEY: self._first}
            if counter is not None and self._clock is None:
                when.update(counting_started_s=e.counting_from,
                            counting_ended_s=time.perf_counter())
        kernel = self._single_run(seconds, count, e.how, counted=counter is not None,
                                  when=when)
        if e.jit.count:
            kernel = self._compiled_in(kernel, e.jit)
        self.counted = count
        self._entries.kernel = self._last = kernel
        if self._collect:
            record(kernel)

    def returned(self, result) -> None:
        """A decorated call's result, for its counted fused bytes (inside the block)."""
        refuse_unrun(self.name or "the function", result)   # a generator: nothing ran
        self._stack()[-1].returned = (result,)

    def __repr__(self) -> str:
        # `m` in a notebook cell: what was timed, not <... object at 0x...>
        if self.kernel is None:
            return f"<rooflab measurement '{self.name or 'block'}': not run yet>"
        k = self.kernel
        return f"<rooflab measurement '{k.name}': {fmt_seconds(k.seconds)} (.kernel)>"

    def _compiled_in(self, kernel: Kernel, jit: CompileTime) -> Kernel:
        """The run with numba's compiles in meta (numba_compiles, numba_compile_s): a
        decorated function's kernel leaves such a call out (measure_warmup); a `with` block,
        one run, keeps it and warns that its time holds the compile."""
        meta = {**dict(kernel.meta), "numba_compiles": jit.count,
                "numba_compile_s": jit.seconds}
        if self._collect:
            said = compile_warning(kernel.name, jit.seconds, kernel.seconds or 0.0)
            warn(said, TimingWarning, stacklevel=self._stacklevel)
            add_warning(meta, said)
        return kernel.with_(meta=meta)

    def _single_run(self, seconds: float, count, how: str, counted: bool = True,
                    when: dict | None = None) -> Kernel:
        """One run's Kernel; `when`: a decorated call's start and thread, into its meta."""
        name = self.name or "block"
        devices = count.devices if count is not None else ()
        if count is not None:
            flop, nbytes, prov, meta = _merge_count(
                self.flop, self.bytes, count, name, self._stacklevel, self._compiled,
                single_run=True, quiet=not counted)
            meta["timing_includes_counting"] = counted
            if not counted:
                meta["counts_reused"] = ("counted at an earlier call with the same argument "
                                         "shapes; this call timed without the counter")
        else:
            flop, nbytes = self.flop, self.bytes
            prov, meta = {"flop": GIVEN, "bytes": GIVEN}, {}
        unsynced = cpu_clock_warning(name, how, devices)
        if unsynced:
            warn(unsynced, TimingWarning, stacklevel=self._stacklevel)
        # where the ops ran: the device given, else the counted ops' CUDA device
        device = self.device or next((d for d in devices if d.startswith("cuda")), "cpu")
        seconds = max(seconds, 1e-9)   # a clock tick shorter than its resolution
        warnings_ = [w for w in (single_run_warning(name, seconds, self._stacklevel),
                                 counting_warning(name, count, self._compiled)
                                 if count is not None and counted else None) if w]
        if warnings_:
            meta["warning"] = "; ".join(warnings_)
        # the unit the counted FLOP run on (a bf16 SiLU: vector), as measure(fn) sets it
        return Kernel(name=name, flop=flop, bytes=nbytes, seconds=seconds, calls=1,
                      provenance={**prov, "seconds": MEASURED}, samples=(seconds,),
                      unit=meta.get("flop_unit"),
                      meta={**meta, "seconds_stat": "single run", "device": device,
                            "clock": how, **threads_meta(None, devices), **(when or {})})

    def __call__(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        if not callable(fn):
            raise InputError(f"@measure(...) decorates a callable; got {type(fn).__name__}")
        refuse_lazy(fn)   # a coroutine / generator function: a call only makes it
        return _Recorded(fn, self)


# the longest a call waits for another thread's count of the same argument shapes while
# that thread runs (one waiting on this call ends it sooner: measure_threads): past a cold
# count (torch's first, its dynamo warm-up: 1.5-2.5 s here, more under load)
COUNT_WAIT_S = 10.0


class _Recorded:
    """A function wrapped by @measure(...): each call is timed once and recorded (a call
    made inside its own timed call, in the same thread, is part of it)."""

    def __init__(self, fn: Callable[..., Any], spec: Measurement):
        functools.update_wrapper(self, fn)
        self._fn = fn
        self._spec = spec
        self._counts: dict = {}   # argument shapes -> the TorchCount of the call that had them
        self._fresh()
        at_fork(self)   # a forked child empties its runs at once, not at its first call

    def _fresh(self) -> None:
        # a shape's first call is counted once: other threads wait for its count (review
        # s25 r2 F3: 4-5 counted calls for 2 shapes)
        self._pid = os.getpid()
        self._lock = threading.Lock()
        self._gates: dict = {}   # argument shapes -> its CountGate (measure_threads)
        # keep=N: the last N runs (a serving loop's calls, ~1.5 kB each, review s26)
        keep = self._spec.keep
        self.runs: list[Kernel] | deque[Kernel] = [] if keep is None else deque(maxlen=keep)
        self._calls = 0   # calls recorded, the dropped ones included
        self._cached: tuple | None = None   # (runs, its length, its last run, the aggregate)
        # per thread: the function its timed call runs, while it runs; a call inside it (a
        # recursion) is part of that call, not a run of its own (review s26: nested calls
        # summed, 0.104 s read for a 40 ms call)
        self._inside = threading.local()

    def _in_this_process(self) -> None:
        """A forked child inherits the parent's runs (and locks another thread may have
        held): it starts a fresh list, so its .runs and .kernel are its own calls (review
        s25 r2 F8; emptied at the fork, s26); the counts stay valid (same work)."""
        if os.getpid() != self._pid:
            self._fresh()

    def __reduce__(self) -> str:
        # pickled by reference, as functools.lru_cache's wrapper is: the module attribute
        # of this name is this wrapper (Pool.map, ProcessPoolExecutor, joblib; review s25
        # r2 F7). update_wrapper gave it the function's __module__ and __qualname__.
        return self.__qualname__

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        inside = getattr(self._inside, "fn", None)
        if inside is not None:   # called from its own timed call: part of that call
            return inside(*args, **kwargs)
        self._in_this_process()
        spec = self._spec
        if not self.runs:     # once, at the first call: the arguments show the precision
            warn_number_precision(spec._flop_given, args, kwargs)
        block = Measurement(flop=spec.flop, bytes=spec.bytes,
                            device=spec.device or cuda_arg_device(args, kwargs),
                            name=spec.name or _name_of(self._fn), clock=spec._clock)
        block._stacklevel = 5   # the user's call line: __call__, _timed, then the block
        block._collect = False
        block._compiled = is_compiled(self._fn)
        counting = spec.flop is None or spec.bytes is None
        key = shapes_key((args, kwargs)) if counting else None   # counts only: 20 us a call
        block._reuse = self._counts.get(key) if key is not None else None
        if counting and key is not None and block._reuse is None:
            with self._lock:
                gate = self._gates.setdefault(key, CountGate())
            # another thread counting these shapes: wait for its count while it runs; once
            # it waits on this call (a pool task, a Barrier; review s25 r3 N1), or past
            # COUNT_WAIT_S, count this call too (measure_threads)
            if not gate.acquire(COUNT_WAIT_S):
                return self._timed(block, args, kwargs, key)
            try:
                block._reuse = self._counts.get(key)
                if block._reuse is None:
                    return self._timed(block, args, kwargs, key)
            finally:
                gate.release()
        return self._timed(block, args, kwargs, None)

    def _timed(self, block: Measurement, args, kwargs, count_key) -> Any:
        """One call in `block`; `count_key` set: a counted call whose count these argument
        shapes' later calls reuse."""
        counting = block._reuse is None and (block.flop is None or block.bytes is None)
        # a counted call of compiled code runs its eager original: under the counter the
        # compiled wrapper would run eagerly anyway, and for good (measure_counts)
        fn = eager_original(self._fn) if counting else self._fn
        self._inside.fn = fn   # what a nested call runs: the eager original under a count
        block._first = not getattr(self._inside, "ran", False)   # per thread: measure_warmup
        try:
            with block:
                result = fn(*args, **kwargs)
                block.returned(result)
        finally:
            self._inside.fn = None
        self._inside.ran = True   # a call that raised is no run: the next one is first
        if count_key is not None and block.kernel is not None:
            self._counts[count_key] = block.counted
        kernel = block.kernel
        threads = threads_meta(self._fn, (), args, kwargs)
        if threads and "threads" not in kernel.meta:   # numba, or given counts on torch args
            kernel = kernel.with_(meta={**kernel.meta, **threads})
        with self._lock:
            self.runs.append(kernel)
            self._calls += 1
        record_run(self, kernel)   # collect(): one kernel per function, not per call
        return result

    def __repr__(self) -> str:
        return runs_repr(self._spec.name or _name_of(self._fn), list(self.runs), self._calls)

    def __get__(self, obj, objtype=None):
        # Decorating a method: bind the instance like a function would (runs stay shared).
        return self if obj is None else types.MethodType(self, obj)

    @property
    def kernel(self) -> Kernel | None:
        """All calls so far as one Kernel: summed FLOP, bytes and time; calls = count.
        Kept until a call adds a run (a serving loop reads it often: review s25 r2 F9)."""
        self._in_this_process()
        runs = self.runs
        if not runs:
            return None
        c = self._cached
        if c is not None and c[0] is runs and c[1] == len(runs) and c[2] is runs[-1]:
            return c[3]
        # copied: other threads may append while this aggregates, and the cache must
        # describe what was aggregated (review s25 r3 N2: calls 5980 of 6342 runs)
        with self._lock:
            kept, calls = list(runs), self._calls
        n = len(kept)
        # keep=N dropped the first call: the first kept one is no warm-up
        kernel = kept_meta(aggregate(kept, False) if calls > n else aggregate(kept),
                           self._spec.keep, calls, n)
        self._cached = (runs, n, kept[-1], kernel)
        return kernel

    def bench(self, *args: Any, plan=None, samples: int | None = None, **kwargs: Any
              ) -> Kernel:
        """The full benchmark (warm-up, samples) of one call with these arguments."""
        from .measuring import measure  # measuring imports this module

        # as measure(fn) benchmarks a decorated fn: its flop/bytes/name, its runs untouched
        return measure(self, *args, plan=plan, samples=samples, **kwargs)

