"""measure(): time a user's callable and return a Kernel ready for the roof.

Three forms:

    k = rooflab.measure(fn, x, y, flop=2e9, bytes=1.2e7)     # benchmark: warm-up, samples

    @rooflab.measure(name="step")                             # every call runs once, timed
    def step(x): ...
    step(x); step.kernel                                      # all calls so far, aggregated

    with rooflab.measure(name="block") as m:                  # the block runs once, timed
        y = model(x)
    m.kernel

FLOP and bytes are given (a number means fp32 FLOP / DRAM bytes; a dict gives them by
precision / level), or counted from the PyTorch ops the code dispatches
(rooflab.bench.torch_count). The benchmark form reports the **median** time per call (robust
to the odd slow sample from other load; pyperf and torch.utils.benchmark report medians
too) and keeps the best in `meta["best_s"]` and every sample in `Kernel.samples`.
The decorator and context-manager forms time a single run: their samples are one per run,
and when they count torch ops the time includes the counting overhead (tens of µs per op;
meta says so). On CUDA tensors the clock is a CUDA event read after a synchronize.
"""

from __future__ import annotations

import functools
import inspect
import sys
import time
import types
import warnings
from collections.abc import Callable, Mapping
from typing import Any

from .errors import DeviceError, InputError, require
from .model.kernel import Kernel, sum_counts
from .probe.stats import NOISY_SPREAD, Stats
from .probe.timer import DEFAULT, FULL, QUICK, Clock, TimingPlan
from .probe.timer import bench as _bench
from .units import canonical_dtype, flop_precision

PLANS = {"quick": QUICK, "default": DEFAULT, "full": FULL}
SECONDS_STAT = "median"
# A single run (decorator, with-block) shorter than this is mostly the ~1 µs of clock and
# Python overhead around it (an empty block reads 0.4-1.4 µs here): 1 % at 100 µs.
SINGLE_RUN_MIN_S = 1e-4


def measure(fn: Callable[..., Any] | None = None, *args: Any, flop=None, bytes=None,
            device: str | None = None, name: str | None = None, plan=None, **kwargs: Any):
    """Time fn(*args, **kwargs) and return a Kernel; with no fn, a decorator/context manager.

    flop: FLOP of one call (a multiply-add is 2 FLOP): a number counts as fp32, or
        {precision: FLOP} such as {"fp64": 2e7}; None counts the PyTorch ops fn dispatches.
    bytes: bytes one call moves: a number counts as DRAM, or {level: bytes} such as
        {"DRAM": 2.4e8, "L2": 1e9}; None counts the PyTorch ops (compulsory traffic).
    device: "cpu" or "cuda[:N]"; None infers it from the tensors among the arguments.
    plan: a TimingPlan or "quick" / "default" / "full" (rooflab.probe.timer): how long to
        warm up and sample. fn is called many times (warm-up, then samples of many calls).
    Returns a Kernel: seconds = median seconds per call, calls = 1; samples = every
    sample's seconds per call; meta: best_s, spread and iqr_rel (fractions of the median),
    samples_n, calls_per_sample, and "warning" when the samples disagree (also raised as a
    TimingWarning). rooflab.analyze(roof, [kernel]) places it on a roof.
    A coroutine or lazy iterator returned by fn is refused (nothing ran); a JAX array is
    waited for (block_until_ready) on each call; CUDA tensors are timed with CUDA events.
    Example: rooflab.measure(torch.mm, a, b) -> Kernel(name="mm", flop={"fp32": ...}, ...)
    """
    if fn is None:
        if args or kwargs:
            raise InputError("measure(): arguments without a function; call "
                             "measure(fn, *args) or use @measure(...) / with measure(...)")
        return Measurement(flop=flop, bytes=bytes, device=device, name=name)
    if not callable(fn):
        raise InputError(f"measure(): the first argument must be a callable; got "
                         f"{type(fn).__name__}. Use measure(fn, *args) or measure(name=...)")
    device = device or infer_device(args, kwargs)
    warn_number_precision(flop, args, kwargs)
    flop_d, bytes_d, prov, meta = _counts(flop, bytes, fn, args, kwargs)
    clock, sync = device_clock(device)
    name = name or _name_of(fn)
    call = settled_call(lambda: fn(*args, **kwargs), name)
    kernel = timed_kernel(call, name=name, flop=flop_d, bytes=bytes_d, provenance=prov,
                          plan=resolve_plan(plan), clock=clock, sync=sync,
                          meta={**meta, "device": device})
    if "warning" in kernel.meta:
        # a notebook shows warnings, not meta: say it where the user looks
        warnings.warn(kernel.meta["warning"], TimingWarning, stacklevel=2)
    return kernel


class TimingWarning(UserWarning):
    """measure(): the timing samples disagree (other load, clock changes); the Kernel's
    meta["warning"] says by how much."""


def settled_call(call: Callable[[], Any], label: str) -> Callable[[], Any]:
    """The call to time, such that each call finishes its work. Runs it once (one more
    warm-up call) to see what it returns: a coroutine or a lazy iterator means nothing ran,
    so it is refused; a JAX array (asynchronous dispatch) is waited for on every call."""
    result = call()
    if inspect.iscoroutine(result):
        result.close()
        raise InputError(f"measure(): '{label}' returned a coroutine (an async function), "
                         f"so timing it would time creating the coroutine, not running it; "
                         f"time a synchronous call instead, e.g. "
                         f"measure(lambda: asyncio.run(f(...))) outside a running event loop")
    if inspect.isgenerator(result) or isinstance(result, (map, filter, zip)):
        raise InputError(f"measure(): '{label}' returned a lazy iterator "
                         f"({type(result).__name__}), so nothing is computed until it is "
                         f"consumed; time measure(lambda: list(f(...))) instead")
    if callable(getattr(result, "block_until_ready", None)):
        # JAX returns before the device finishes; without the wait only dispatch is timed
        return lambda: call().block_until_ready()
    return call


# --- building blocks (also used by the reference kernel zoo) -------------------------------

def resolve_plan(plan: TimingPlan | str | None) -> TimingPlan:
    if plan is None:
        return DEFAULT
    if isinstance(plan, TimingPlan):
        return plan
    if isinstance(plan, str) and plan.lower() in PLANS:
        return PLANS[plan.lower()]
    raise InputError(f"plan must be a TimingPlan or one of {', '.join(PLANS)}; got {plan!r}")


def timed_kernel(call: Callable[[], Any], *, name: str, flop: Mapping[str, float],
                 bytes: Mapping[str, float], provenance: Mapping[str, str],
                 plan: TimingPlan = DEFAULT, clock: Clock = time.perf_counter,
                 sync: Callable[[], Any] | None = None, unit: str | None = None,
                 meta: Mapping[str, Any] | None = None) -> Kernel:
    """Benchmark a no-argument call with the probe's timer; a Kernel with raw samples."""
    timing = _bench(call, plan, clock=clock, sync=sync)
    st = timing.stats
    info = {"seconds_stat": SECONDS_STAT, "median_s": st.median, "best_s": st.minimum,
            "spread": st.spread, "iqr_rel": st.iqr_rel, "samples_n": st.n,
            "calls_per_sample": timing.inner}
    warning = times_warning(name, st)
    if warning:
        info["warning"] = warning
    return Kernel(name=name, flop=dict(flop), bytes=dict(bytes), seconds=st.median, calls=1,
                  provenance={**provenance, "seconds": "measured"}, unit=unit,
                  samples=timing.samples, meta={**dict(meta or {}), **info})


def times_warning(name: str, st: Stats, limit: float = NOISY_SPREAD) -> str | None:
    """A warning when the times disagree: interquartile range above `limit` of the median,
    or the median more than `limit` above the best (the probe's test for its ceilings).
    (max - min) / median alone is not the test: one held-up call among many makes it
    large while the median stands."""
    gap = st.median / st.minimum - 1 if st.minimum > 0 else 0.0
    if st.iqr_rel <= limit and gap <= limit:
        return None
    return (f"{name}: timing samples vary (interquartile range {st.iqr_rel:.0%} of the "
            f"median, median {gap:.0%} above the best, spread {st.spread:.0%}); other load "
            f"on the machine or clock changes; rerun on a quiet machine or measure longer "
            f"(plan='full')")


def _float_dtypes(args, kwargs) -> set[str]:
    """Canonical names of the floating dtypes of numpy arrays / torch tensors among the
    arguments (others are ignored)."""
    found = set()
    for value in list(args) + list(kwargs.values()):
        dt = getattr(value, "dtype", None)
        if dt is None or not hasattr(value, "shape"):
            continue
        name = str(dt).removeprefix("torch.")
        if name in ("float64", "float32", "float16", "bfloat16"):
            found.add(canonical_dtype(name))
    return found


def warn_number_precision(flop, args, kwargs) -> None:
    """flop= as a number counts as fp32 (the documented default); when every floating
    array argument is of another precision, say so: an fp64 kernel judged against the
    fp32 ceiling (twice the fp64 one on CPUs) shows half its real % of roof."""
    if flop is None or isinstance(flop, Mapping):
        return
    dtypes = _float_dtypes(args, kwargs)
    if len(dtypes) == 1 and dtypes != {"fp32"}:
        (dt,) = dtypes
        warnings.warn(f"measure(): flop={flop!r} is a number, so it counts as fp32 FLOP, "
                      f"but the array arguments are {dt}; pass flop={{'{dt}': {flop!r}}} "
                      f"to judge the kernel against the {dt} ceiling", stacklevel=3)


def normalize_flop(flop) -> dict[str, float]:
    """A number is fp32 FLOP; a mapping gives FLOP by precision (dtype names accepted)."""
    if isinstance(flop, Mapping):
        return {flop_precision(canonical_dtype(k)): _nonneg(v, f"flop[{k}]")
                for k, v in flop.items()}
    return {"fp32": _nonneg(flop, "flop")}


def normalize_bytes(nbytes) -> dict[str, float]:
    """A number is DRAM bytes; a mapping gives bytes by memory level."""
    if isinstance(nbytes, Mapping):
        return {str(k): _nonneg(v, f"bytes[{k}]") for k, v in nbytes.items()}
    return {"DRAM": _nonneg(nbytes, "bytes")}


def _nonneg(value, what: str) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise InputError(f"measure(): {what} must be a number; got {value!r}") from None
    if not v >= 0 or v == float("inf"):
        raise InputError(f"measure(): {what} must be a finite number >= 0; got {value!r}")
    return v


def _counts(flop, nbytes, fn, args, kwargs) -> tuple[dict, dict, dict, dict]:
    """(flop, bytes, provenance, meta): given numbers as they are, the rest counted."""
    flop_d = normalize_flop(flop) if flop is not None else None
    bytes_d = normalize_bytes(nbytes) if nbytes is not None else None
    prov = {"flop": "given", "bytes": "given"}
    meta: dict[str, Any] = {}
    if flop_d is None or bytes_d is None:
        require("torch", "torch", "counting FLOP and bytes (or pass flop= and bytes=)")
        from .bench.torch_count import count_call

        _, count = count_call(fn, args, kwargs)
        flop_d, bytes_d, prov, meta = _merge_count(flop_d, bytes_d, count, _name_of(fn))
    return flop_d, bytes_d, prov, meta


def _merge_count(flop_d, bytes_d, count, label: str) -> tuple[dict, dict, dict, dict]:
    if not count.ops:
        raise InputError(f"measure(): '{label}' dispatched no PyTorch ops, so nothing could be "
                         f"counted; pass flop= and bytes= (numbers or dicts)")
    prov = {"flop": "given" if flop_d is not None else "counted",
            "bytes": "given" if bytes_d is not None else "counted"}
    if flop_d is None:
        flop_d = count.flop
    if bytes_d is None:
        bytes_d = {"DRAM": count.bytes}
    return flop_d, bytes_d, prov, count.meta()


def _name_of(fn) -> str:
    qual = getattr(fn, "__qualname__", None) or ""
    if qual and not qual.startswith("_"):   # torch builtins: "_VariableFunctionsClass.mm"
        return qual
    return getattr(fn, "__name__", None) or type(fn).__name__


# --- devices and clocks ---------------------------------------------------------------------

def infer_device(args, kwargs) -> str:
    """cuda when any torch tensor argument lives on a CUDA device, else cpu."""
    torch = sys.modules.get("torch")   # None also when imports of torch are blocked
    if torch is None:
        return "cpu"
    for value in list(args) + list(kwargs.values()):
        if isinstance(value, torch.Tensor) and value.is_cuda:
            return str(value.device)
    return "cpu"


def device_clock(device: str) -> tuple[Clock, Callable[[], Any] | None]:
    """(clock, sync) for a device: perf_counter on the CPU; a CUDA event clock on GPUs."""
    if not str(device).startswith("cuda"):
        return time.perf_counter, None
    torch = require("torch", "gpu", "timing on CUDA devices")
    if not torch.cuda.is_available():
        raise DeviceError(f"no CUDA device is visible for '{device}'; use the CPU "
                          f"(--device cpu on the command line, device='cpu' in Python) or "
                          f"check CUDA_VISIBLE_DEVICES and the driver")
    return _cuda_event_clock(torch, device), None


def _cuda_event_clock(torch, device: str) -> Clock:
    # Seconds since a start event, read by recording an event and waiting for it: the
    # device time of all queued work (torch.cuda.Event.elapsed_time is in milliseconds).
    # Not exercised on the CPU-only CI; the GPU probe owns the full CUDA timer.
    dev = torch.device(device)
    with torch.cuda.device(dev):
        start = torch.cuda.Event(enable_timing=True)
        start.record()

    def clock() -> float:
        with torch.cuda.device(dev):
            now = torch.cuda.Event(enable_timing=True)
            now.record()
            now.synchronize()
        return start.elapsed_time(now) / 1e3

    return clock


# --- decorator and context-manager forms -----------------------------------------------------

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

    def __enter__(self) -> Measurement:
        self.kernel = None
        if self.flop is None or self.bytes is None:
            require("torch", "torch", "counting FLOP and bytes (or pass flop= and bytes=)")
            from .bench.torch_count import FlopCounter

            self._counter = FlopCounter()
            self._counter.__enter__()
        self._clock_now = self._clock or device_clock(self.device or "cpu")[0]
        self._t0 = self._clock_now()
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        seconds = self._clock_now() - self._t0
        counter, self._counter = self._counter, None
        if counter is not None:
            counter.__exit__(exc_type, exc, tb)
        if exc_type is not None:
            return
        self.kernel = self._single_run(seconds, counter.result if counter else None)

    def _single_run(self, seconds: float, count) -> Kernel:
        name = self.name or "block"
        if count is not None:
            flop, nbytes, prov, meta = _merge_count(self.flop, self.bytes, count, name)
            meta["timing_includes_counting"] = True
        else:
            flop, nbytes = self.flop, self.bytes
            prov, meta = {"flop": "given", "bytes": "given"}, {}
        seconds = max(seconds, 1e-9)   # a clock tick shorter than its resolution
        if seconds < SINGLE_RUN_MIN_S:
            meta["warning"] = (f"{name}: one run of {seconds * 1e6:.3g} µs is too short to "
                               f"time alone (about 1 µs of clock and Python overhead, a "
                               f"cold first call); benchmark it with rooflab.measure(fn, "
                               f"*args, flop=..., bytes=...)")
            # one text for every run, so a decorated function in a loop warns once
            warnings.warn("measure(): a single timed run under 100 µs is mostly overhead; "
                          "benchmark it with rooflab.measure(fn, *args) (see "
                          "kernel.meta['warning'])", TimingWarning,
                          stacklevel=self._stacklevel)
        return Kernel(name=name, flop=flop, bytes=nbytes, seconds=seconds, calls=1,
                      provenance={**prov, "seconds": "measured"}, samples=(seconds,),
                      meta={**meta, "seconds_stat": "single run",
                            "device": self.device or "cpu"})

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

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        spec = self._spec
        if not self.runs:     # once, at the first call: the arguments show the precision
            warn_number_precision(spec._flop_given, args, kwargs)
        block = Measurement(flop=spec.flop, bytes=spec.bytes,
                            device=spec.device or infer_device(args, kwargs),
                            name=spec.name or _name_of(self._fn), clock=spec._clock)
        block._stacklevel = 4
        with block:
            result = self._fn(*args, **kwargs)
        self.runs.append(block.kernel)
        return result

    def __get__(self, obj, objtype=None):
        # Decorating a method: bind the instance like a function would (runs stay shared).
        return self if obj is None else types.MethodType(self, obj)

    @property
    def kernel(self) -> Kernel | None:
        """All calls so far as one Kernel: summed FLOP, bytes and time; calls = count."""
        return aggregate(self.runs) if self.runs else None

    def bench(self, *args: Any, plan=None, **kwargs: Any) -> Kernel:
        """The full benchmark (warm-up, samples) of one call with these arguments."""
        spec = self._spec
        return measure(self._fn, *args, flop=spec.flop, bytes=spec.bytes, device=spec.device,
                       name=spec.name, plan=plan, **kwargs)


def aggregate(runs: list[Kernel]) -> Kernel:
    """Several timed runs of one kernel as one Kernel (FLOP, bytes, seconds summed)."""
    flop = sum_counts(k.flop for k in runs)
    nbytes = sum_counts(k.bytes for k in runs)
    first = runs[0]
    samples = tuple(s for k in runs for s in k.samples)
    meta: dict[str, Any] = {**dict(first.meta), "seconds_stat": "sum of single runs"}
    if any("ops" in k.meta for k in runs):
        # the per-op breakdown must add up to the summed totals, not repeat the first call's
        ops: dict[str, dict[str, float]] = {}
        for k in runs:
            for op, row in k.meta.get("ops", {}).items():
                acc = ops.setdefault(op, {key: 0 for key in row})
                for key, v in row.items():
                    acc[key] = acc.get(key, 0) + v
        meta["ops"] = ops
    uncounted = [op for k in runs for op in k.meta.get("uncounted_ops", ())]
    if uncounted:
        meta["uncounted_ops"] = list(dict.fromkeys(uncounted))
    return Kernel(name=first.name, flop=flop, bytes=nbytes,
                  seconds=sum(k.seconds or 0.0 for k in runs), calls=len(runs),
                  provenance=dict(first.provenance), unit=first.unit, samples=samples,
                  meta=meta)
