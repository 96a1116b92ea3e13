"""Checks on what a timed call returns and on the times it gave, for rooflab.measure.

A call that returns a coroutine or a lazy iterator did no work; a JAX array is still being
computed; samples that disagree, that split into two groups, or a single run too short
to time say so as a TimingWarning (and in the Kernel's meta["warning"]).
"""

from __future__ import annotations

import functools
import inspect
import warnings
from collections.abc import Callable, Mapping
from typing import Any

from .errors import InputError
from .measure_site import warn
from .model.sample_spread import spread_name
from .probe.stats import NOISY_SPREAD, Stats
from .units import canonical_dtype, fmt_fraction, fmt_seconds

# A single run (decorator, with-block) shorter than this is mostly the ~1 µs of clock and
# Python overhead around it (an empty block reads 0.4-1.4 µs here): 1 % at 100 µs.
SINGLE_RUN_MIN_S = 1e-4


class TimingWarning(UserWarning):
    """measure(): the timing samples disagree (other load, clock changes); the Kernel's
    meta["warning"] says by how much."""


class OverlapWarning(TimingWarning):
    """A decorated function's calls ran at once in several threads: its time is the span
    they were busy (measure_overlap). Its own class so that `rooflab bench --run` says it
    in a `warning:` line of its own, once per kernel, rather than as Python's warning."""


# measure()'s own keywords: a keyword of these names is measure's, never the function's
OPTIONS = ("flop", "bytes", "device", "name", "plan", "samples")
_BY_KEYWORD = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


def option_clash(fn: Callable[..., Any], given: Mapping[str, Any], label: str) -> None:
    """Refuse measure(fn, ..., device=...) when fn has a `device` parameter of its own (or
    name, flop, bytes, plan, samples): the keyword goes to measure, so fn would silently not get it
    (review 18b E: torch.full(..., device=) built a CPU tensor timed as CUDA; f(x, device)
    failed for a missing argument). An nn.Module is read by its forward (its __call__ is
    `*args, **kwargs`); a Python function taking **kwargs may want the keyword too, so it
    gets a warning (review 19b N5). A function whose signature cannot be read (some
    builtins), or a keyword already bound by functools.partial, is not checked."""
    passed = [key for key, value in given.items() if value is not None]
    if not passed:
        return
    target = _signature_target(fn)
    try:
        params = inspect.signature(target).parameters
    except (TypeError, ValueError):
        return
    bound = fn.keywords if isinstance(fn, functools.partial) else {}
    passed = [key for key in passed if key not in bound]
    clash = [key for key in passed if key in params and params[key].kind in _BY_KEYWORD]
    if clash:
        key = clash[0]
        raise InputError(
            f"measure(): '{label}' has a parameter '{key}' too, but measure(fn, *args, "
            f"**kwargs) keeps {', '.join(k + '=' for k in OPTIONS)} for itself, so "
            f"{key}={given[key]!r} would not reach '{label}'. Give it to the function with "
            f"functools.partial: measure(functools.partial({label}, {key}=...), *args) (or "
            f"a lambda), and measure's own {key}= beside it if you mean that too; if you "
            f"meant only measure's {key}=, call the function in a lambda: "
            f"measure(lambda: {label}(...), {key}=...)")
    # device= and name= only: a wrapper may well want those; flop=, bytes=, plan= given
    # with it are measure's counts and settings (a warning on each would be noise)
    wanted = [key for key in passed if key in ("device", "name")]
    if wanted and _python_code(target) and any(
            p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        from .errors import InputWarning, user_stacklevel

        shown = " and ".join(f"{key}={given[key]!r}" for key in wanted)
        warnings.warn(
            f"measure(): '{label}' takes **kwargs, but {shown} stays with measure (its "
            f"{', '.join(k + '=' for k in OPTIONS)} are its own), so '{label}' does not "
            f"get it; to pass it on too: measure(functools.partial({label}, "
            f"{wanted[0]}=...), *args)", InputWarning, stacklevel=user_stacklevel())


def _signature_target(fn: Callable[..., Any]) -> Callable[..., Any]:
    """What to read the parameters of: an nn.Module's forward (its __call__ takes
    *args, **kwargs and passes them on), also inside a partial; else fn. torch is not
    imported for this: a Module's class has torch's Module among its bases."""
    inner = fn.func if isinstance(fn, functools.partial) else fn
    if not any(c.__name__ == "Module" and c.__module__ == "torch.nn.modules.module"
               for c in type(inner).__mro__):
        return fn
    if inner is fn:
        return inner.forward
    return functools.partial(inner.forward, *fn.args, **fn.keywords)


def _python_code(fn: Callable[..., Any]) -> bool:
    """fn (or what a partial wraps) is a Python function or method: a **kwargs there is a
    wrapper passing keywords on, not a builtin's or ufunc's catch-all."""
    inner = fn.func if isinstance(fn, functools.partial) else fn
    return inspect.isfunction(inner) or inspect.ismethod(inner)


def settled_call(call: Callable[[], Any], label: str) -> Callable[[], Any]:
    """The call to time, such that each call finishes its work. Runs it once (one more
    warm-up call) to see what it returns: a coroutine or a lazy iterator means nothing ran,
    so it is refused; a JAX array (asynchronous dispatch) is waited for on every call."""
    result = call()
    refuse_unrun(label, result)
    if callable(getattr(result, "block_until_ready", None)):
        # JAX returns before the device finishes; without the wait only dispatch is timed
        return lambda: call().block_until_ready()
    return call


def add_warning(meta: dict, said: str) -> None:
    """Append `said` to meta["warning"] ("; "-joined: one line per kernel)."""
    meta["warning"] = f"{meta['warning']}; {said}" if "warning" in meta else said


def unrun(result: Any) -> str | None:
    """What a call returned when it ran none of its work yet: "coroutine", "async
    generator" or "lazy iterator (<type>)"; None for anything else. A coroutine is closed
    here: the caller refuses it, and a dropped unclosed one warns "never awaited" later
    (an async generator never started warns nothing)."""
    if inspect.iscoroutine(result):
        result.close()
        return "coroutine"
    if inspect.isasyncgen(result):
        return "async generator"
    if inspect.isgenerator(result) or isinstance(result, (map, filter, zip)):
        return f"lazy iterator ({type(result).__name__})"
    return None


def refuse_unrun(label: str, result: Any) -> None:
    """InputError where a call returned work not run yet (unrun): a decorated function with
    flop= and bytes= given that returned a generator read 8.73 us at 401 % of its roof
    (review s26 v3 F1); measure(fn) refused it already."""
    kind = unrun(result)
    if kind is not None:
        raise InputError(unrun_refusal(label, kind))


def unrun_refusal(label: str, kind: str) -> str:
    """The InputError text for a call that returned `kind` (unrun's word): counted or
    timed, such a call did no work (review s25 r2 F6: a counted async function read
    "dispatched no PyTorch ops ... pass flop= and bytes=")."""
    if kind == "coroutine":
        return (f"measure(): '{label}' returned a coroutine (an async function), so timing "
                f"it would time creating the coroutine, not running it; time a synchronous "
                f"call instead, e.g. measure(lambda: asyncio.run(f(...))) outside a running "
                f"event loop, or put `with rooflab.measure(...)` around the await")
    if kind == "async generator":
        return (f"measure(): '{label}' returned an async generator, so nothing is computed "
                f"until it is iterated; time a synchronous call that consumes it instead, "
                f"e.g. measure(lambda: asyncio.run(drain(f(...)))) with "
                f"`async def drain(g): return [x async for x in g]`")
    return (f"measure(): '{label}' returned a {kind}, so nothing is computed until it is "
            f"consumed; time measure(lambda: list(f(...))) instead")


def times_warning(name: str, st: Stats, limit: float = NOISY_SPREAD) -> str | None:
    """A warning when the times disagree: interquartile range above `limit` of the median,
    or the median more than `limit` above the best (the probe's test for its ceilings).
    (max - min) / median alone is not the test: one held-up call among many makes it
    large while the median stands."""
    gap = st.median / st.minimum - 1 if st.minimum > 0 else 0.0
    if st.iqr_rel <= limit and gap <= limit:
        return None
    # under 4 samples iqr_rel is the range: named so, not called an IQR (review s20 r2 F1)
    return (f"{name}: timing samples vary ({spread_name(st.n)} {fmt_fraction(st.iqr_rel)} of the "
            f"median, median {fmt_fraction(gap)} above the best, spread "
            f"{fmt_fraction(st.spread)}); other load on the machine or clock changes; rerun on a "
            f"quiet machine or measure longer (plan='full')")



def single_run_warning(name: str, seconds: float, stacklevel: int) -> str | None:
    """The meta["warning"] of a single timed run too short to time alone (None when long
    enough); also raised as a TimingWarning pointing `stacklevel` frames up."""
    if seconds >= SINGLE_RUN_MIN_S:
        return None
    # one text for every run, so a decorated function in a loop warns once; run as a
    # thread's target, it names the function's definition, not threading.py (measure_site)
    # 'us', as every CLI text and fmt_seconds write it (review s28 R2 F16)
    warn("measure(): a single timed run under 100 us is mostly overhead; benchmark it "
         "with rooflab.measure(fn, *args) (see kernel.meta['warning'])", TimingWarning,
         stacklevel=stacklevel + 1)
    return (f"{name}: one run of {fmt_seconds(seconds)} is too short to "
            f"time alone (about 1 us of clock and Python overhead, a "
            f"cold first call); benchmark it with rooflab.measure(fn, "
            f"*args, flop=..., bytes=...)")


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


def warn_number_precision(flop, args, kwargs, stacklevel: int = 3) -> None:
    """flop= as a number counts as fp32 (the documented default); when every floating
    array argument is of another precision, say so: an fp64 kernel judged against the
    fp32 ceiling (twice the fp64 one on CPUs) shows half its real % of roof."""
    if flop is None or isinstance(flop, Mapping):
        return
    dtypes = _float_dtypes(args, kwargs)
    if len(dtypes) == 1 and dtypes != {"fp32"}:
        (dt,) = dtypes
        warn(f"measure(): flop={flop!r} is a number, so it counts as fp32 FLOP, but the "
             f"array arguments are {dt}; pass flop={{'{dt}': {flop!r}}} to judge the "
             f"kernel against the {dt} ceiling", stacklevel=stacklevel)


def counting_warning(name: str, count, compiled: bool = False) -> str:
    """The meta["warning"] of a single run timed under rooflab's counter: the time is the
    code plus a dispatch mode on every op it ran (review 17b: a training step 76 ms counted,
    9.3 ms eager), not the code alone."""
    ops = len(count.ops)
    ran = ("; a counted run of a torch.compile'd function runs its eager original, not the "
           "compiled code" if compiled else "")
    return (f"{name}: the time includes rooflab's counting of the {ops} PyTorch op"
            f"{'s' if ops != 1 else ''} it ran (a dispatch mode on every op: often several "
            f"times the code's own time){ran}; pass flop= and bytes= to time it without the "
            f"counter, or benchmark it with rooflab.measure(fn, *args) (counted in an "
            f"untimed call); a decorated function times later calls with the same argument "
            f"shapes without it")


def refuse_lazy(fn: Callable[..., Any]) -> None:
    """@measure(...) on an async def, an async generator or a generator function: a call
    only creates the coroutine or generator, so the decorator would time that (3.5 us for
    a 0.2 s await, review s25 r2 F5; 12 us read for 50 ms of work, s25 r3 N6)."""
    name = getattr(fn, "__name__", fn)
    if inspect.iscoroutinefunction(fn) or inspect.isasyncgenfunction(fn):
        gen = inspect.isasyncgenfunction(fn)
        what, made = ("an async generator", "async generator") if gen else \
            ("an async", "coroutine")
        raise InputError(
            f"@measure(...) cannot time {what} function ('{name}'): calling it only "
            f"creates the {made}, which runs later when awaited; time the await "
            f"inside it instead: `with rooflab.measure(name=..., flop=..., bytes=...): "
            f"await ...` (wall time, other tasks' turns included)")
    if inspect.isgeneratorfunction(fn):
        raise InputError(
            f"@measure(...) cannot time a generator function ('{name}'): calling it only "
            f"creates the generator, whose work runs later as it is iterated; time the "
            f"loop that consumes it instead: `with rooflab.measure(name=..., flop=..., "
            f"bytes=...): items = list({name}(...))`")


def whole_or_none(value: Any, error: str) -> int | None:
    """A count measure() takes: None, or a whole number of 1 or more (an int: True is no
    count); else InputError(error, then what was given)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InputError(f"{error}; got {value!r}")
    return value


def check_keep(keep: Any) -> int | None:
    """@measure(keep=N)'s N: None (every call kept) or a whole number of 1 or more."""
    return whole_or_none(keep, "measure(keep=...): the number of a decorated function's "
                         "latest calls to keep must be a whole number of 1 or more")
