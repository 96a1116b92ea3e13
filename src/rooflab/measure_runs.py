"""The single-run forms of rooflab.measure: a context manager (the block runs once, timed)
and a decorator (every call of the function is one timed run; `wrapper.kernel` adds them
up). When they count torch ops, the counted run's time includes the counting overhead
(meta["timing_includes_counting"] and meta["warning"] say so; counting_finding words it
for the report); the counter's one-off first-use cost (importing torch._dynamo, ~2 s) is
paid before the clock starts (torch_count.warm_up). A decorated function counts its first
call with given argument shapes and reuses those counts for later calls with the same
shapes, timed without the counter; its kernel leaves a counted run out when uncounted runs
of the same counts exist, a call during which numba compiled (its own event, measure_jit)
and a first call over SLOW_RUN_RATIO x the later ones (a warm-up: a JIT compile, a first
touch of memory; measure_warmup). A decorated torch.compile'd
function's counted call runs its eager original (measure_counts.eager_original), so the
compiled code keeps running later.

With no device given (and, for a decorated function, no CUDA tensor argument) the clock
is the CPU's, read after a torch.cuda.synchronize() whenever CUDA is in use: the block's
CUDA tensors are not arguments, so they cannot choose the clock (measure_clocks)."""

from __future__ import annotations

import functools
import gc
import sys
import time
import types
import warnings
from collections.abc import Callable
from typing import Any

from .errors import InputError
from .measure_checks import (
    TimingWarning,
    counting_warning,
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
from .measure_jit import CompileTime, compile_warning, numba_compiles
from .measure_sums import PER_CALL, summed_count_meta
from .measure_warmup import compiled_in, left_out, left_out_meta
from .model.kernel import Kernel, sum_counts
from .model.provenance import GIVEN, MEASURED
from .model.sample_groups import bimodal_words
from .probe.timer import Clock
from .units import fmt_seconds


class Measurement:
    """What `measure()` returns without a function: a decorator and a context manager.

    As a context manager the block runs once; `kernel` is set on exit. As a decorator,
    every call of the wrapped function is one timed run; `wrapper.kernel` aggregates them.
    """

    def __init__(self, *, flop=None, bytes=None, device: str | None = None,
                 name: str | None = None, clock: Clock | None = None):
        self.flop = normalize_flop(flop) if flop is not None else None
        self._flop_given = flop
        self.bytes = normalize_bytes(bytes) if bytes is not None else None
        self.device = device
        self.name = name
        self.kernel: Kernel | None = None
        self._clock = clock
        self._counter = None
        self._t0 = 0.0
        self._stacklevel = 3   # a warning points at the user's `with` line (4: a decorated call)
        self._collect = True   # False for a decorated call's block: the wrapper records it
        self._returned: tuple | None = None   # (result,) of a decorated call: its fused bytes
        self._compiled = False   # a decorated torch.compile'd function (measure_counts)
        self._reuse = None   # a decorated call's earlier TorchCount: time it uncounted
        self.counted = None   # the TorchCount of the last run (counted or reused)
        self._how = PERF_COUNTER
        self._jit = CompileTime()   # numba's compiles in the last run (measure_jit)

    def __enter__(self) -> Measurement:
        self.kernel = None
        if (self.flop is None or self.bytes is None) and self._reuse is None:
            require_counter()
            from .bench.torch_count import FlopCounter, warm_up

            warm_up()   # the counter's first use costs seconds: not in the timed run
            self._counter = FlopCounter()
            self._counter.__enter__()
            # a collection pending from earlier work (a torch.compile's graphs) fell in the
            # counted call's timing: 100 ms on a 0.2 ms call, left out as a warm-up. Collected
            # now, outside the clock; a counted call is a new shape's first, so this is rare
            gc.collect()
        self._returned = None
        if self.device is not None:
            clock = self._clock or device_clock(self.device)[0]
            self._how = CUDA_EVENTS if self.device.startswith("cuda") else PERF_COUNTER
        else:
            clock = self._clock or time.perf_counter
            self._how = PERF_COUNTER   # SYNCED once __exit__ synchronizes
        self._clock_now = clock
        sync = cuda_sync() if self.device is None else None
        # listening costs microseconds: started before the clock, stopped after it
        self._jit_block = numba_compiles()
        self._jit = self._jit_block.__enter__()
        self._t0 = synced(clock, sync)()
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        # CUDA may have been first used inside the block: ask again
        sync = cuda_sync() if self.device is None else None
        seconds = synced(self._clock_now, sync)() - self._t0
        self._jit_block.__exit__(None, None, None)
        if sync is not None:
            self._how = SYNCED
        counter, self._counter = self._counter, None
        if counter is not None:
            counter.__exit__(exc_type, exc, tb)
        if exc_type is not None:
            return
        count = self._reuse
        if counter is not None:
            count = (counter.result_returning(self._returned[0]) if self._returned
                     else counter.result)
        self.counted = count
        self.kernel = self._single_run(seconds, count, counted=counter is not None)
        if self._jit.count:
            self.kernel = self._compiled_in(self.kernel)
        if self._collect:
            record(self.kernel)

    def __repr__(self) -> str:
        # `m` in a notebook cell: what was timed, not <... object at 0x...>
        if self.kernel is None:
            return f"<rooflab measurement '{self.name or 'block'}': not run yet>"
        k = self.kernel
        return f"<rooflab measurement '{k.name}': {fmt_seconds(k.seconds)} (.kernel)>"

    def _compiled_in(self, kernel: Kernel) -> Kernel:
        """The run with numba's compiles in meta (numba_compiles, numba_compile_s): a
        decorated function's kernel leaves such a call out (measure_warmup); a `with` block,
        one run, keeps it and warns that its time holds the compile."""
        meta = {**dict(kernel.meta), "numba_compiles": self._jit.count,
                "numba_compile_s": self._jit.seconds}
        if self._collect:
            said = compile_warning(kernel.name, self._jit.seconds, kernel.seconds or 0.0)
            warnings.warn(said, TimingWarning, stacklevel=self._stacklevel)
            meta["warning"] = f"{meta['warning']}; {said}" if "warning" in meta else said
        return kernel.with_(meta=meta)

    def _single_run(self, seconds: float, count, counted: bool = True) -> Kernel:
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
        unsynced = cpu_clock_warning(name, self._how, devices)
        if unsynced:
            warnings.warn(unsynced, TimingWarning, stacklevel=self._stacklevel)
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
                            "clock": self._how, **threads_meta(None, devices)})

    def __call__(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        if not callable(fn):
            raise InputError(f"@measure(...) decorates a callable; got {type(fn).__name__}")
        return _Recorded(fn, self)


class _Recorded:
    """A function wrapped by @measure(...): each call is timed once and recorded."""

    def __init__(self, fn: Callable[..., Any], spec: Measurement):
        functools.update_wrapper(self, fn)
        self._fn = fn
        self._spec = spec
        self.runs: list[Kernel] = []
        self._counts: dict = {}   # argument shapes -> the TorchCount of the call that had them

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        spec = self._spec
        if not self.runs:     # once, at the first call: the arguments show the precision
            warn_number_precision(spec._flop_given, args, kwargs)
        block = Measurement(flop=spec.flop, bytes=spec.bytes,
                            device=spec.device or cuda_arg_device(args, kwargs),
                            name=spec.name or _name_of(self._fn), clock=spec._clock)
        block._stacklevel = 4
        block._collect = False
        block._compiled = is_compiled(self._fn)
        key = _shapes_key((args, kwargs))
        counting = spec.flop is None or spec.bytes is None
        block._reuse = self._counts.get(key) if counting and key is not None else None
        # a counted call of compiled code runs its eager original: under the counter the
        # compiled wrapper would run eagerly anyway, and for good (measure_counts)
        fn = eager_original(self._fn) if counting and block._reuse is None else self._fn
        with block:
            result = fn(*args, **kwargs)
            block._returned = (result,)
        if counting and block._reuse is None and key is not None and block.kernel is not None:
            self._counts[key] = block.counted
        kernel = block.kernel
        threads = threads_meta(self._fn, (), args, kwargs)
        if threads and "threads" not in kernel.meta:   # numba, or given counts on torch args
            kernel = kernel.with_(meta={**kernel.meta, **threads})
        self.runs.append(kernel)
        record_run(self, kernel)   # collect(): one kernel per function, not per call
        return result

    def __repr__(self) -> str:
        name = self._spec.name or _name_of(self._fn)
        if not self.runs:
            return f"<rooflab.measure'd function '{name}': no calls timed yet>"
        total = sum(k.seconds or 0.0 for k in self.runs)
        n = len(self.runs)
        return (f"<rooflab.measure'd function '{name}': {n} call{'s' if n != 1 else ''} "
                f"timed, {fmt_seconds(total)} in all (.kernel, .runs)>")

    def __get__(self, obj, objtype=None):
        # Decorating a method: bind the instance like a function would (runs stay shared).
        return self if obj is None else types.MethodType(self, obj)

    @property
    def kernel(self) -> Kernel | None:
        """All calls so far as one Kernel: summed FLOP, bytes and time; calls = count."""
        return aggregate(self.runs) if self.runs else None

    def bench(self, *args: Any, plan=None, samples: int | None = None, **kwargs: Any
              ) -> Kernel:
        """The full benchmark (warm-up, samples) of one call with these arguments."""
        from .measuring import measure  # measuring imports this module

        spec = self._spec
        return measure(self._fn, *args, flop=spec.flop, bytes=spec.bytes, device=spec.device,
                       name=spec.name, plan=plan, samples=samples, **kwargs)


def _shapes_key(value, depth: int = 0):
    """What a decorated call's counts depend on, as a hashable key: the shape, dtype and
    device of each array argument, scalars and strings as they are, lists, tuples and dicts
    by their items, a torch module by its identity (a model or a decorated forward's
    instance: the same object, the same key; modules live long, so an id is not reused
    under it); None (count every call) for anything else, whose state may change the work
    unseen, and for containers nested too deep."""
    if depth > 4:
        return None
    shape = getattr(value, "shape", None)
    if shape is not None and hasattr(value, "dtype"):
        return (type(value).__name__, tuple(shape), str(value.dtype),
                str(getattr(value, "device", "")), bool(getattr(value, "requires_grad", False)))
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes)):
        return (type(value).__name__, value)
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            return None
        items = tuple((k, _shapes_key(v, depth + 1)) for k, v in value.items())
        known = all(v is not None for _, v in items)
    elif isinstance(value, (tuple, list)):
        items = tuple(_shapes_key(v, depth + 1) for v in value)
        known = all(v is not None for v in items)
    else:
        torch = sys.modules.get("torch")
        module = getattr(getattr(torch, "nn", None), "Module", None)
        if module is not None and isinstance(value, module):
            return ("module", type(value).__qualname__, id(value))
        return None
    return (type(value).__name__, items) if known else None


def aggregate(runs: list[Kernel], first_call: bool = True) -> Kernel:
    """Several timed runs of one kernel as one Kernel (FLOP, bytes, seconds summed).
    Left out (measure_warmup.left_out): a run timed under the counter when a run timed
    without it did the same counted work (its time is mostly counting;
    meta["counted_runs_left_out"]), a run during which numba compiled when one of its work
    did not (meta["compile_runs_left_out"], whichever call it was), and a first call over
    SLOW_RUN_RATIO x the median of the later calls of its work (a
    warm-up: a numba JIT compile, first touches; meta["first_calls_left_out"]); a later
    call that slow is flagged (meta["slow_runs"]); meta["slow_runs_note"] says which, and
    meta["raw_samples"] keeps every run's time when any was left out. `first_call` False:
    runs[0] is not the function's first call in this process (it ran before a collect()
    block), so it is no warm-up: kept, and flagged when that slow (review r3 F1)."""
    why, slow = left_out(runs, first_call)
    dropped = left_out_meta(runs, why, slow, first_call)
    runs = [k for i, k in enumerate(runs) if i not in why]
    flop = sum_counts(k.flop for k in runs)
    nbytes = sum_counts(k.bytes for k in runs)
    first = runs[0]
    samples = tuple(s for k in runs for s in k.samples)
    meta: dict[str, Any] = {**dict(first.meta), "seconds_stat": "sum of single runs"}
    # a run's own compile is the runs' summed compile still in the time (or none)
    for key in ("numba_compiles", "numba_compile_s"):
        meta.pop(key, None)
    held = sum(compiled_in(k) for k in runs)
    if held:
        meta["numba_compile_s"] = held
    if any("timing_includes_counting" in k.meta for k in runs):
        counted = [k for k in runs if k.meta.get("timing_includes_counting")]
        meta["timing_includes_counting"] = bool(counted)
        said = next((k.meta["warning"] for k in counted if "warning" in k.meta), None)
        if said and said not in meta.get("warning", ""):
            meta["warning"] = f"{meta['warning']}; {said}" if "warning" in meta else said
    meta.update(dropped)
    # calls of two shapes (or under two clocks) summed into one kernel: its samples, which
    # compare's U test reads, mix the two (review s20 d2)
    split = bimodal_words(first.name, samples)
    if split and split not in meta.get("warning", ""):
        meta["warning"] = f"{meta['warning']}; {split}" if "warning" in meta else split
    # the per-op rows, FLOP by unit, fused bytes, the unit: every kept call's, summed as
    # FLOP and bytes are, not the first call's copied (measure_sums)
    for key in PER_CALL:
        meta.pop(key, None)
    counted, unit = summed_count_meta(runs)
    meta.update(counted)
    return Kernel(name=first.name, flop=flop, bytes=nbytes,
                  seconds=sum(k.seconds or 0.0 for k in runs), calls=len(runs),
                  provenance=dict(first.provenance), unit=unit, samples=samples,
                  meta=meta)
