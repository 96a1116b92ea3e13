"""The FLOP and bytes of a measured call: given by the user (numbers or dicts) or counted
from the PyTorch ops it dispatches (rooflab.bench.torch_count), with their provenance:
"given" for the user's, "derived" for the dispatch counter's, which computes each op's FLOP
and compulsory bytes from its shapes by formulas (FlopCounterMode's, rooflab's), with no
profiler counter behind them (model/provenance.py).

A torch.compile'd callable is counted by running its eager original (eager_original), not
the compiled wrapper: Dynamo skips a frame that starts under a (non-infra) dispatch mode
such as the counter's, and the skip sticks to the code object, so counting the wrapper
would leave every later call eager (torch/_dynamo/convert_frame.py, torch 2.13). The timed
calls then run the compiled code, which may fuse the eager ops: its counted bytes are
marked COMPILED_BYTES and a CountWarning gives the one-pass figure (meta["fused_bytes"])
beside the eager sum."""

from __future__ import annotations

import functools
import sys
import types
from collections.abc import Mapping
from typing import Any

from .errors import InputError, MissingDependency, require
from .measure_checks import unrun, unrun_refusal
from .measure_handoff import HandOffs, handed, handed_text
from .measure_handoff import mark as mark_handed
from .measure_site import warn
from .model.kernel import unknown_name
from .model.provenance import DERIVED, GIVEN
from .model.schema import level_name
from .units import canonical_dtype, flop_precision, si

COMPILED_BYTES = f"{DERIVED} (eager ops; the compiled code may fuse them)"


class CountWarning(UserWarning):
    """measure(): some PyTorch ops the call dispatched have no FLOP formula, so the counted
    FLOP miss their work; the Kernel's meta["uncounted_ops"] names them."""


def normalize_flop(flop) -> dict[str, float]:
    """A number is fp32 FLOP; a mapping gives FLOP by precision (dtype names accepted)."""
    if isinstance(flop, Mapping):
        return {flop_precision(canonical_dtype(k)): _nonneg(v, f"flop[{k}]")
                for k, v in flop.items()}
    return {"fp32": _nonneg(flop, "flop")}


def normalize_bytes(nbytes) -> dict[str, float]:
    """A number is DRAM bytes; a mapping gives bytes by memory level ('dram', 'HBM', 'l2'
    accepted). A level no roof has ('L4', 'DRAMM') is an error here: kept, it would give
    the kernel no point and the table an empty row, with no word of why."""
    if isinstance(nbytes, Mapping):
        return {_level(k): _nonneg(v, f"bytes[{k}]") for k, v in nbytes.items()}
    return {"DRAM": _nonneg(nbytes, "bytes")}


def _level(name) -> str:
    level = level_name(name)
    problem = unknown_name(level, "bytes")   # the check a Kernel warns with
    if problem:
        raise InputError(f"measure(): {problem}")
    return level


def _nonneg(value, what: str) -> float:
    # float() would take "12", b"12" and True: a count read from a file or an argument
    # left unconverted would pass silently, so text and booleans are refused, as a
    # Kernel's numbers are (model/kernel.py).
    if isinstance(value, (str, bytes, bytearray, bool)):
        raise InputError(f"measure(): {what} must be a number; got {value!r}")
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise InputError(f"measure(): {what} must be a number; got {value!r}") from None
    if not v >= 0 or v == float("inf"):
        raise InputError(f"measure(): {what} must be a finite number >= 0; got {value!r}")
    return v


def is_compiled(fn) -> bool:
    """Whether fn is torch.compile'd: a compiled function or method carries Dynamo's
    `_torchdynamo_orig_callable` (torch 2.x, 2.13 included), a compiled module is an
    OptimizedModule (which has it too). A lambda that calls one is not seen."""
    fn = getattr(fn, "__func__", fn)   # a bound method of a compiled function
    if getattr(fn, "_torchdynamo_orig_callable", None) is not None:
        return True
    module_type = _optimized_module_type()
    return module_type is not None and isinstance(fn, module_type)


def eager_original(fn):
    """The eager callable a torch.compile'd one wraps (fn itself when not compiled): an
    OptimizedModule's `_orig_mod` (the module, hooks and all), a compiled function's
    `_torchdynamo_orig_callable`, bound again to its instance for a compiled method."""
    for _ in range(8):   # torch.compile(torch.compile(f)) unwraps twice
        if not is_compiled(fn):
            return fn
        module_type = _optimized_module_type()
        if module_type is not None and isinstance(fn, module_type):
            fn = fn._orig_mod
        elif getattr(fn, "__self__", None) is not None and hasattr(fn, "__func__"):
            fn = types.MethodType(fn.__func__._torchdynamo_orig_callable, fn.__self__)
        else:
            fn = fn._torchdynamo_orig_callable
    return fn


class CountingNeedsTorch(MissingDependency):
    """measure() without flop=/bytes= and without torch: without PyTorch no code can
    dispatch the PyTorch ops the counter reads, so the fix is flop= and bytes= (numpy, a
    closure); torch is named second, for PyTorch code (review s19 r3 F4: "install torch"
    sent numpy users to a 1 GB install that then counted nothing)."""

    def __init__(self):
        # the command ends its line (copyable as is); the torch reason on the next one
        super().__init__("torch", "torch", lead=(
            "measure(): pass flop= and bytes=: rooflab counts them only from the PyTorch "
            "ops a call dispatches, and the Python package 'torch' is not installed, so "
            "numpy or other code has nothing to count; for PyTorch code, "))


def require_counter() -> None:
    """torch for the op counter, or CountingNeedsTorch."""
    try:
        require("torch", "torch", "counting FLOP and bytes")
    except MissingDependency:
        raise CountingNeedsTorch() from None


def _optimized_module_type():
    torch = sys.modules.get("torch")
    dynamo = sys.modules.get("torch._dynamo.eval_frame") if torch is not None else None
    return getattr(dynamo, "OptimizedModule", None)


def _counts(flop, nbytes, fn, args, kwargs,
            stacklevel: int) -> tuple[dict, dict, dict, dict, tuple[str, ...]]:
    """(flop, bytes, provenance, meta, devices the counted ops ran on): given numbers as
    they are, the rest counted from the dispatched ops (derived). `stacklevel`: the user's
    frame counted from _counts' caller (1: the caller itself), as _merge_count takes it."""
    flop_d = normalize_flop(flop) if flop is not None else None
    bytes_d = normalize_bytes(nbytes) if nbytes is not None else None
    prov = {"flop": GIVEN, "bytes": GIVEN}
    meta: dict[str, Any] = {}
    devices: tuple[str, ...] = ()
    if flop_d is None or bytes_d is None:
        require_counter()
        from .bench.torch_count import count_call

        # the eager original: counting the compiled wrapper would de-compile it (module doc)
        watch = HandOffs().start()   # work handed to other threads: not counted
        try:
            result, count = count_call(eager_original(fn), args, kwargs)
        finally:
            seen = watch.stop()
        mark_handed(count, seen)
        kind = unrun(result)   # before "no ops": an async function ran none (s25 r2 F6)
        if kind is not None:
            raise InputError(unrun_refusal(_name_of(fn), kind))
        devices = count.devices
        flop_d, bytes_d, prov, meta = _merge_count(flop_d, bytes_d, count, _name_of(fn),
                                                  stacklevel + 1, compiled=is_compiled(fn))
    return flop_d, bytes_d, prov, meta, devices


def _merge_count(flop_d, bytes_d, count, label: str, stacklevel: int,
                 compiled: bool = False, single_run: bool = False,
                 quiet: bool = False) -> tuple[dict, dict, dict, dict]:
    """Given counts kept, missing ones from `count`; a CountWarning for ops with no FLOP
    formula points `stacklevel` frames up from the caller (1: the caller), as
    single_run_warning's does: each form of measure() knows how deep its user's line is
    (a constant was one frame short for a decorated call). `single_run`: the counted run
    was the timed one (decorator); `quiet`: counts reused from an earlier call, said then."""
    if not count.ops and count.unrun is not None:   # a decorated call's result (torch_count)
        raise InputError(unrun_refusal(label, count.unrun))
    if not count.ops:
        # the counter (a TorchDispatchMode) is per thread: a pool's ops never reach it
        seen = handed(count)
        raise InputError(f"measure(): '{label}' dispatched no PyTorch ops in the thread that "
                         f"called it, so nothing could be counted (the counter sees that "
                         f"thread only: ops run in threads it starts or in a pool are timed "
                         f"but not counted{'; it called ' + ', '.join(seen) if seen else ''}"
                         f"); pass flop= and bytes= (numbers or dicts)")
    # the counter's numbers are shape formulas, not hardware counts: derived
    prov = {"flop": GIVEN if flop_d is not None else DERIVED,
            "bytes": GIVEN if bytes_d is not None else DERIVED}
    meta = count.meta()
    seen = handed(count)
    if seen:   # ops run in other threads: timed, not counted (measure_handoff)
        meta["counted_in_calling_thread_only"] = handed_text(label, seen)
        if not quiet:
            warn(CountWarning(meta["counted_in_calling_thread_only"]), stacklevel=stacklevel + 1)
    if flop_d is None:
        flop_d = count.flop
        if count.unit is not None:   # the unit the counted FLOP run on (Kernel.unit)
            meta["flop_unit"] = count.unit
        if count.uncounted and not quiet:
            # meta alone is not read in a notebook: say it where the user looks
            warn(CountWarning(
                f"measure(): '{label}' ran PyTorch ops with no FLOP formula "
                f"({', '.join(count.uncounted)}): their FLOP are missing from the count "
                f"({'none counted' if not flop_d else 'the rest counted'}); pass flop= "
                f"to give the total{_uncounted_hint(count.uncounted)}"),
                stacklevel=stacklevel + 1)
    if bytes_d is None:
        bytes_d = {"DRAM": count.bytes}
        if compiled:
            prov["bytes"] = COMPILED_BYTES
            if not quiet:
                warn(CountWarning(_compiled_text(label, count, single_run)),
                     stacklevel=stacklevel + 1)
    return flop_d, bytes_d, prov, meta


def _uncounted_hint(uncounted) -> str:
    """Why an op known to be uncountable in some calls was uncounted, and what to do."""
    from .bench.torch_layer_rules import FAST_PATH_HINT, FAST_PATH_OPS

    fast = any(op.removeprefix("aten.") in FAST_PATH_OPS for op in uncounted)
    return f". {FAST_PATH_HINT}" if fast else ""


def _compiled_text(label: str, count, single_run: bool = False) -> str:
    fused = (f"; done in one pass (inputs read once, outputs written once) it moves "
             f"{si(count.fused_bytes, 'B')} (meta['fused_bytes'])"
             if count.fused_bytes is not None else "")
    ran = (COUNTED_SINGLE_RUN if single_run else
           "rooflab counted its eager original in one untimed call (the compiled wrapper "
           "under rooflab's counter would run eagerly, then and for good), so the timed "
           "calls run the compiled code")
    return (f"measure(): '{label}' is torch.compile'd: {ran}. The counted "
            f"{si(count.bytes, 'B')} are those of its {len(count.ops)} eager ops, one pass "
            f"each, which the compiled code may fuse{fused}; pass bytes= for the compiled "
            f"kernel's traffic")


# What a decorated compiled function's counted run is (measure_runs times it).
COUNTED_SINGLE_RUN = (
    "a counted single run of compiled code runs eagerly (torch.compile skips a frame "
    "under a dispatch mode such as rooflab's counter), so its first call with these "
    "argument shapes ran the eager original, counted, and that time is eager code plus "
    "counting; later calls with the same shapes run the compiled code, uncounted, and the "
    "decorated kernel leaves the counted run out. To time the compiled code from its "
    "first call (and in a `with` block, which always runs eagerly when counting), pass "
    "flop= and bytes=")


def _name_of(fn) -> str:
    if isinstance(fn, functools.partial):
        return _name_of(fn.func)   # measure(functools.partial(f, device=...)): 'f'
    qual = getattr(fn, "__qualname__", None) or ""
    if qual and not qual.startswith("_"):   # torch builtins: "_VariableFunctionsClass.mm"
        return qual
    return getattr(fn, "__name__", None) or type(fn).__name__
