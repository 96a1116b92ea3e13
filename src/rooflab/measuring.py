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
and a run timed while counting torch ops includes the counter's overhead (a dispatch mode
on every op, often several times the code's time; meta["timing_includes_counting"] and
meta["warning"] say so). A decorated function reuses the counts of its first call for later
calls with the same argument shapes, timed without the counter, and leaves out a first
call (per thread) over 5x slower than the later ones (a JIT compile, a first touch; measure_runs). A
torch.compile'd callable is counted through its eager original, so the compiled code keeps
running (measure_counts). On CUDA the clock is a CUDA event read after a synchronize; with
no CUDA device given or seen, the CPU clock is read after a torch.cuda.synchronize()
whenever CUDA is in use (measure_clocks). The Kernel's meta keeps what it ran with: the clock, the
threads, the timing plan and the untimed calls made first (measure_context).

This module is the benchmark form; the others live beside it (import from them; only
collect and CountWarning, which docs/python.md shows, are importable from here too):
measure_runs (decorator, context manager, aggregate), measure_counts (given or counted
FLOP and bytes), measure_clocks (device and clock), measure_checks (what a call returns,
noisy or too-short times, TimingWarning), measure_collect (collect(): every kernel made
inside a block, for `rooflab bench --run`), measure_context (threads, timing recipe).
"""

from __future__ import annotations

import time
import types
import warnings
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, nullcontext
from dataclasses import replace
from typing import Any

from .errors import InputError
from .measure_checks import (
    TimingWarning,
    option_clash,
    settled_call,
    times_warning,
    warn_number_precision,
    whole_or_none,
)
from .measure_clocks import benchmark_clock, cpu_clock_warning, cuda_arg_device
from .measure_collect import collect, record
from .measure_context import PLANS, plan_meta, threads_meta
from .measure_counts import CountWarning, _counts, _name_of
from .measure_runs import Measurement
from .measure_trend import steady_timing
from .model.kernel import Kernel
from .model.sample_groups import bimodal_words
from .probe.timer import Clock, Timing, TimingPlan, calibrate
from .probe.timer import bench as _bench

__all__ = ["PLANS", "SECONDS_STAT", "CountWarning", "Measurement", "TimingWarning", "collect",
           "measure", "resolve_plan", "settled_call", "timed_kernel", "times_warning",
           "warn_number_precision"]

SECONDS_STAT = "median"


def measure(fn: Callable[..., Any] | None = None, *args: Any, flop=None, bytes=None,
            device: str | None = None, name: str | None = None, plan=None,
            samples: int | None = None, keep: int | None = None, **kwargs: Any):
    """Time fn(*args, **kwargs) and return a Kernel; with no fn, a decorator/context manager.

    flop=, bytes=, device=, name=, plan= and samples= are measure's own (keyword-only) and
    never go to fn; when fn has a parameter of one of these names, passing it is an
    InputError: give it to fn with functools.partial(fn, device="cpu") or a lambda
    (`rooflab docs python`, section 4).

    flop: FLOP of one call (a multiply-add is 2 FLOP): a number counts as fp32, or
        {precision: FLOP} such as {"fp64": 2e7}; None counts the PyTorch ops fn dispatches.
    bytes: bytes one call moves: a number counts as DRAM, or {level: bytes} such as
        {"DRAM": 2.4e8, "L2": 1e9}; None counts the PyTorch ops (compulsory traffic).
    device: "cpu" or "cuda[:N]"; None infers it from the tensors among the arguments or
        the counted ops' tensors, and synchronizes CUDA around the CPU clock when in use.
    plan: a TimingPlan or "quick" / "default" / "full" (PLANS: rooflab.probe.timer's
        budgets, at least 9 samples each): how long to warm up and sample. fn is called
        many times (warm-up, then samples of many calls).
    samples: at least this many timing samples (the plan's min_samples raised to it; a
        named plan takes 9, a TimingPlan its own min_samples): 9 or more a side lets
        `rooflab compare` judge a before/after pair's noise with its U test (fewer read
        'too few'); each sample costs the plan's sample time (default 20 ms) once the
        budget is spent.
    keep: as a decorator only, keep the last `keep` calls' runs (a long-running server:
        each run holds ~1.5 kB); the kernel is then theirs, its meta keep_last and
        calls_dropped say so. None keeps every call.
    Returns a Kernel: seconds = median seconds per call, calls = 1; samples = every
    sample's seconds per call; meta: best_s, spread and iqr_rel (fractions of the median),
    samples_n, calls_per_sample, plan, warmup_calls, clock, threads (where knowable),
    fused_bytes (when counted), and "warning" when the samples disagree (also raised as a
    TimingWarning). rooflab.analyze(roof, [kernel]) places it on a roof.
    A coroutine or lazy iterator returned by fn is refused (nothing ran); a JAX array is
    waited for (block_until_ready) on each call; CUDA tensors are timed with CUDA events.
    A @rooflab.measure'd function is benchmarked through the function it wraps, with the
    decorator's flop/bytes/name unless given (as its .bench(*args) does): its runs stay as
    they were.
    Example: rooflab.measure(torch.mm, a, b) -> Kernel(name="mm", flop={"fp32": ...}, ...)
    """
    if fn is None:
        if args or kwargs:
            raise InputError("measure(): arguments without a function; call "
                             "measure(fn, *args) or use @measure(...) / with measure(...)")
        if samples is not None:   # said, not dropped: each call or block is one sample
            raise InputError("measure(samples=...) applies to measure(fn, *args) and to a "
                             "decorated function's .bench(*args); as a decorator or `with` "
                             "block each call is one timed run: drop samples=")
        return Measurement(flop=flop, bytes=bytes, device=device, name=name, keep=keep)
    if keep is not None:   # said, not handed to fn: keep is measure's own keyword
        raise InputError("measure(keep=...) bounds a decorated function's .runs "
                         "(@rooflab.measure(name=..., keep=N)); measure(fn, *args) keeps "
                         "its samples in the Kernel: drop keep=, or give fn its own keep "
                         "with functools.partial(fn, keep=...)")
    if not callable(fn):
        raise InputError(f"measure(): the first argument must be a callable; got "
                         f"{type(fn).__name__}. Use measure(fn, *args) or measure(name=...)")
    spec, inner = _decorated(fn)
    whole = _runs_untouched(fn) if spec is not None else nullcontext()
    if spec is not None:
        # a @measure'd function: benchmark what it wraps, with its flop/bytes/name (what
        # its .bench does); timing the wrapper timed a Measurement per call and recorded
        # every benchmark call into its runs (review s25 r2 F10)
        fn = inner
        flop = spec.flop if flop is None else flop
        bytes = spec.bytes if bytes is None else bytes
        device, name = device or spec.device, name or spec.name
    with whole:   # its calls of itself inside the benchmark: no runs of their own
        option_clash(fn, {"flop": flop, "bytes": bytes, "device": device, "name": name,
                          "plan": plan, "samples": samples},
                     getattr(fn, "__name__", None) or _name_of(fn))
        timing_plan = resolve_plan(plan).with_min_samples(check_samples(samples))
        warn_number_precision(flop, args, kwargs)
        flop_d, bytes_d, prov, meta, op_devices = _counts(flop, bytes, fn, args, kwargs,
                                                          stacklevel=2)   # the user's line
        name = name or _name_of(fn)
        # the device given, a CUDA argument's, the counted ops' (a closure's tensors), or the
        # CPU clock, synchronized when CUDA is in use (measure_clocks' module doc)
        device, clock, sync, how = benchmark_clock(device or cuda_arg_device(args, kwargs),
                                                   op_devices)
        unsynced = cpu_clock_warning(name, how, op_devices)
        if unsynced:
            warnings.warn(unsynced, TimingWarning, stacklevel=2)
        counted = 1 if "ops" in meta else 0   # the counting pass called fn once
        call = settled_call(lambda: fn(*args, **kwargs), name)
        context = {**meta, "device": device, "clock": how,
                   **threads_meta(fn, op_devices, args, kwargs)}
        kernel = timed_kernel(call, name=name, flop=flop_d, bytes=bytes_d, provenance=prov,
                              plan=timing_plan, clock=clock, sync=sync,
                              unit=meta.get("flop_unit"), meta=context,
                              calls_before=counted + 1)   # + the settle call
        if "warning" in kernel.meta:
            # a notebook shows warnings, not meta: say it where the user looks
            warnings.warn(kernel.meta["warning"], TimingWarning, stacklevel=2)
        record(kernel)   # for an enclosing collect() (rooflab bench --run)
        return kernel


@contextmanager
def _runs_untouched(fn: Any) -> Iterator[None]:
    """While measure() benchmarks a decorated function, its calls of itself (a recursion)
    run as part of the benchmarked call, as inside its timed calls (measure_runs), not
    timed into its .runs (review s26)."""
    bound = fn.__func__ if isinstance(fn, types.MethodType) else fn
    inside = bound._inside
    before = getattr(inside, "fn", None)
    inside.fn = bound._fn
    try:
        yield
    finally:
        inside.fn = before


def _decorated(fn: Any) -> tuple[Any, Any]:
    """(its Measurement spec, the function it wraps) for a @measure'd function (measure_runs'
    _Recorded, known by its bench, _fn and _spec) or one bound as a method; (None, fn)
    for anything else."""
    bound = fn.__func__ if isinstance(fn, types.MethodType) else fn
    inner, spec = getattr(bound, "_fn", None), getattr(bound, "_spec", None)
    if not (callable(getattr(bound, "bench", None)) and callable(inner)
            and isinstance(spec, Measurement)):
        return None, fn
    return spec, types.MethodType(inner, fn.__self__) if bound is not fn else inner



# --- building blocks (also used by the reference kernel zoo) -------------------------------

def resolve_plan(plan: TimingPlan | str | None) -> TimingPlan:
    if plan is None:
        return PLANS["default"]
    if isinstance(plan, TimingPlan):
        return plan
    if isinstance(plan, str) and plan.lower() in PLANS:
        return PLANS[plan.lower()]
    raise InputError(f"plan must be a TimingPlan or one of {', '.join(PLANS)}; got {plan!r}")


def check_samples(samples: Any) -> int | None:
    """measure()'s samples=: None, or a whole number of 1 or more."""
    return whole_or_none(samples, "measure(): samples must be a whole number of 1 or more "
                         "(9 lets `rooflab compare` judge the noise)")


def timed_kernel(call: Callable[[], Any], *, name: str, flop: Mapping[str, float],
                 bytes: Mapping[str, float], provenance: Mapping[str, str],
                 plan: TimingPlan = PLANS["default"], clock: Clock = time.perf_counter,
                 sync: Callable[[], Any] | None = None, unit: str | None = None,
                 meta: Mapping[str, Any] | None = None, calls_before: int = 0) -> Kernel:
    """Benchmark a no-argument call with the probe's timer; a Kernel with raw samples and
    its recipe: meta["plan"], and meta["warmup_calls"] = `calls_before` (calls the caller
    made first) + the timer's warm-up and calibration calls."""
    # The warm-up and calibration run here on a counting wrapper, then the timer samples
    # the bare call (inner= given, no warm-up of its own): the same steps in the same
    # order as _bench alone, with no counting in the timed calls.
    made = [0]

    def counted() -> Any:
        made[0] += 1
        return call()

    start = clock()
    while clock() - start < plan.warmup_s:
        _run_once(counted, clock, sync)
    inner = calibrate(counted, plan, clock, sync)
    bare = replace(plan, warmup_s=0.0)

    def more(n: int | None) -> Timing:   # n more samples, or a fresh run of the plan's
        again = bare if n is None else replace(bare, min_samples=n, max_samples=n)
        return _bench(call, again, clock=clock, sync=sync, inner=inner)

    # samples that sped up were still the warm-up: left out, timed again (measure_trend)
    timing, steady, sped = steady_timing(name, more(None), more, plan.min_samples)
    st = timing.stats
    info = {"seconds_stat": SECONDS_STAT, "median_s": st.median, "best_s": st.minimum,
            "spread": st.spread, "iqr_rel": st.iqr_rel, "samples_n": st.n,
            "calls_per_sample": timing.inner, "plan": plan_meta(plan),
            "warmup_calls": calls_before + made[0]
            + inner * steady.get("warmup_samples_left_out", 0), **steady}
    # one call timed over and over: two groups are load or a clock, not two shapes
    split = bimodal_words(name, timing.samples, one_shape=True)
    said = [w for w in (sped, times_warning(name, st), split) if w]
    if said:
        info["warning"] = "; ".join(said)
    return Kernel(name=name, flop=dict(flop), bytes=dict(bytes), seconds=st.median, calls=1,
                  provenance={**provenance, "seconds": "measured"}, unit=unit,
                  samples=timing.samples, meta={**dict(meta or {}), **info})


def _run_once(call: Callable[[], Any], clock: Clock, sync: Callable[[], Any] | None) -> None:
    # one warm-up call as the timer makes it (sync, clock, call, sync, clock)
    if sync:
        sync()
    clock()
    call()
    if sync:
        sync()
    clock()
