"""PyTorch profiler chrome traces (`prof.export_chrome_trace`, record_shapes=True) -> Kernels.

One Kernel per (op, input shapes, dtypes), calls summed, longest first. Time:
- on CUDA (the trace has `kernel` events): the device time of the GPU kernels linked to the
  op through their `External id` (the id of the op that launched them), summed over the op
  and every op it calls;
- on the CPU: the op's own duration (its `dur`, which includes the ops it calls).
FLOP: the shape formulas of ingest.torch_ops (forward, backward and 0-FLOP memory ops).
torch 2.x chrome traces carry no `flops` even with with_flops=True (only the profiler's
own table has them); a trace that does (older kineto) is counted with its `args.flops`.
Bytes: compulsory traffic from shapes and dtypes (level DRAM).
An op nested inside a counted op (mm inside addmm's caller chain) is part of that op and is
not counted again.
Reading the file: ingest/torch_trace_file.py; the groups' names, Kernels and notes:
ingest/torch_trace_groups.py.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from ..errors import ParseError
from ..model.kernel import Kernel
from .aggregate import sort_by_time
from .kernel_names import step_labels
from .profile_import import ProfileImport, RecordedDevice
from .skips import SkipLog
from .torch_compiled import compiled_error, compiled_note, compiled_regions
from .torch_ops import has_rule, work_or_reason
from .torch_ops_backward import ARGS_IN_KEY as _BACKWARD_ARGS_IN_KEY
from .torch_ops_base import OpCall
from .torch_ops_loss import ARGS_IN_KEY as _LOSS_ARGS_IN_KEY
from .torch_ops_pool import ARGS_IN_KEY as _POOL_ARGS_IN_KEY
from .torch_ops_reduce import ARGS_IN_KEY as _REDUCE_ARGS_IN_KEY
from .torch_ops_rmsnorm import ARGS_IN_KEY as _RMSNORM_ARGS_IN_KEY
from .torch_trace_file import load_trace_json
from .torch_trace_groups import (
    PROFILER_FLOP,
    _autocast_note,
    _cat_note,
    _Group,
    _kernel,
    _lost_note,
    _uncounted_note,
    _unique_names,
    _warmup_note,
)


@dataclass
class _Op:
    index: int
    name: str
    ts: float
    dur: float
    ext: int | None
    args: dict
    children: list[_Op] = field(default_factory=list)


# Event categories by torch version. torch >= 1.9 (kineto): cpu_op, kernel, gpu_memcpy,
# gpu_memset. torch 1.8's first kineto traces: Operator, Kernel, Memcpy, Memset (the categories
# pytorch/kineto's tb_plugin tests read: tb_plugin/test/test_profiler.py). Compared lowercased.
_OP_CATEGORIES = ("cpu_op", "operator")
_DEVICE_CATEGORIES = ("kernel", "gpu_memcpy", "gpu_memset", "memcpy", "memset")
# The launch calls: their 'correlation' is the device event's, their 'External id' the op's
# (kineto draws the "ac2g" flow arrows between the two by that correlation id).
_RUNTIME_CATEGORIES = ("cuda_runtime", "cuda_driver", "runtime")
_CATEGORIES = _OP_CATEGORIES + _DEVICE_CATEGORIES + _RUNTIME_CATEGORIES


def _ops_and_kernels(events: list, log: SkipLog
                     ) -> tuple[list[_Op], dict[int, float], tuple[int, float]]:
    """The ops, the device seconds of each External id, and (count, seconds) of the device
    events linked to no op (neither an External id of their own nor a launch call's)."""
    ops: list[_Op] = []
    kernel_s: dict[int, float] = {}
    launch_ext: dict[int, int] = {}       # correlation -> External id, from launch calls
    unlinked: list[tuple[object, float]] = []   # (correlation, seconds) of device events
    for i, e in enumerate(events):
        if not isinstance(e, dict) or e.get("ph") != "X":
            continue
        cat = str(e.get("cat", "")).lower()
        if cat not in _CATEGORIES:
            continue
        args = e.get("args") or {}
        try:
            ts, dur = float(e["ts"]), float(e["dur"])
        except (KeyError, TypeError, ValueError):
            log.add(None, f"event #{i} ({e.get('name', '?')}): no numeric ts/dur; skipped")
            continue
        if dur < 0:   # kineto never writes one: a trace edited or merged by hand
            log.add(None, f"event #{i} ({e.get('name', '?')}, {cat}): negative duration "
                          f"(dur {dur:g} us); skipped - is the trace edited or corrupt?")
            continue
        ext = args.get("External id", args.get("external id"))
        if cat in _OP_CATEGORIES:
            ops.append(_Op(i, str(e.get("name", "?")), ts, dur,
                           int(ext) if ext is not None else None, args))
        elif cat in _RUNTIME_CATEGORIES:
            if ext is not None and args.get("correlation") is not None:
                launch_ext[args["correlation"]] = int(ext)
        elif ext is not None:
            kernel_s[int(ext)] = kernel_s.get(int(ext), 0.0) + dur * 1e-6
        else:
            unlinked.append((args.get("correlation"), dur * 1e-6))
    lost = [0, 0.0]
    for corr, seconds in unlinked:   # linked through the launch call's External id
        ext = launch_ext.get(corr) if corr is not None else None
        if ext is None:
            lost[0] += 1
            lost[1] += seconds
        else:
            kernel_s[ext] = kernel_s.get(ext, 0.0) + seconds
    return ops, kernel_s, (lost[0], lost[1])


def _roots(ops: list[_Op], events: list) -> list[_Op]:
    """Nest ops by time on each thread: an op inside another's interval is its child."""
    by_thread: dict[tuple, list[_Op]] = {}
    for op in ops:
        e = events[op.index]
        by_thread.setdefault((e.get("pid"), e.get("tid")), []).append(op)
    roots: list[_Op] = []
    for thread_ops in by_thread.values():
        thread_ops.sort(key=lambda o: (o.ts, -o.dur))
        stack: list[_Op] = []
        for op in thread_ops:
            while stack and op.ts >= stack[-1].ts + stack[-1].dur:
                stack.pop()
            (stack[-1].children if stack else roots).append(op)
            stack.append(op)
    return roots


def _subtree_device_s(op: _Op, kernel_s: dict[int, float]) -> float:
    own = kernel_s.get(op.ext, 0.0) if op.ext is not None else 0.0
    return own + sum(_subtree_device_s(c, kernel_s) for c in op.children)


def _shape(d) -> tuple[int, ...] | None:
    return tuple(d) if isinstance(d, list) and all(isinstance(x, int) for x in d) else None


def _call(op: _Op) -> OpCall:
    raw = op.args.get("Input Dims", ())
    dims = tuple(_shape(d) for d in raw)
    # a tensor list (aten::cat's) is a list of shapes: [[240], [576], [48]]
    lists = tuple(tuple(_shape(x) for x in d) for d in raw if isinstance(d, list) and d
                  and all(_shape(x) is not None for x in d))
    return OpCall(op.name, dims, tuple(str(t) for t in op.args.get("Input type", ())),
                  tuple(str(c) for c in op.args.get("Concrete Inputs", ())), lists)


def _shape_text(call: OpCall) -> str:
    parts = ["x".join(map(str, d)) if d else "scalar" for d in call.dims
             if d is not None and d != ()]
    parts += [", ".join("x".join(map(str, d)) for d in shapes) for shapes in call.lists]
    return ", ".join(parts)


@dataclass(frozen=True)
class TorchImport(ProfileImport):
    """A torch trace import, with the ops that have no FLOP formula: one dict per op name
    and file, {"name", "calls", "seconds", "file"}, longest first (review r2 F4)."""

    uncounted: tuple[dict, ...] = ()


def trace_kernels(data: dict, path: str, log: SkipLog
                  ) -> tuple[list[Kernel], list[str], list[dict]]:
    events = data["traceEvents"]
    ops, kernel_s, (n_lost, lost_s) = _ops_and_kernels(events, log)
    regions = compiled_regions(events)
    _check_ops(ops, path, regions, log)
    on_gpu = bool(kernel_s)
    tally = _Tally(kernel_s, on_gpu, log)
    for root in _roots(ops, events):
        tally.visit(root)
    tally.log_zero_time()
    _unique_names(list(tally.groups.values()))
    uncounted_s = sum(tally.uncounted.values())
    kernels = [_kernel(g, path, on_gpu, uncounted_s) for g in tally.groups.values()]
    if regions and not kernels:   # the eager ops around the compiled code count nothing
        raise ParseError(compiled_error(regions), path=path)
    notes = [note for note in (_uncounted_note(kernels, tally.uncounted),
                               _warmup_note(tally.groups), _cat_note(tally.groups),
                               _autocast_note(tally.autocast),
                               compiled_note(regions) if regions else "") if note]
    notes.append("time: " + ("GPU kernels linked to each op by External id" if on_gpu
                             else "each op's own CPU duration"))
    if n_lost:
        notes.append(_lost_note(n_lost, lost_s, on_gpu))
    uncounted = [{"name": n, "calls": tally.uncounted_calls.get(n, 0), "seconds": sec,
                  "file": path} for n, sec in tally.uncounted.items()]
    return kernels, notes, uncounted


def _check_ops(ops: list[_Op], path: str, regions: dict, log: SkipLog) -> None:
    """ParseError unless the trace has ops with input shapes (record_shapes=True); a trace
    of torch.compile'd code has none whatever the flag was: said so."""
    if not any("Input Dims" in op.args for op in ops) and regions:
        raise ParseError(compiled_error(regions), path=path)
    if not ops and len(log):   # there were ops, all rejected: why, not how to profile
        raise ParseError(f"no usable cpu_op event ({_skipped_why(log.skips())})", path=path)
    if not ops:
        raise ParseError("the trace holds no cpu_op events; profile with "
                         "torch.profiler.profile(record_shapes=True)", path=path)
    if not any("Input Dims" in op.args for op in ops):
        raise ParseError("the trace has no input shapes; profile with record_shapes=True",
                         path=path)


class _Tally:
    """The op tree walked from its roots: each op with a FLOP formula counted in its
    (op, shapes, dtypes) group; the time of the ops without one summed by name. An op
    none of whose descendants is counted keeps its whole time under its own name (a
    convolution without a formula, not the allocations it calls); an op above counted ops
    keeps its self time (its time less its children's)."""

    def __init__(self, kernel_s: dict[int, float], on_gpu: bool, log: SkipLog):
        self.kernel_s, self.on_gpu, self.log = kernel_s, on_gpu, log
        self.groups: dict[tuple, _Group] = {}
        self.uncounted: dict[str, float] = {}
        self.uncounted_calls: dict[str, int] = {}
        self.autocast: dict[str, int] = {}   # calls counted with their re-dispatch's dtypes
        # each op's (OpCall, work or why none), shared by the calls of one name and raw
        # inputs: a 100 MB trace has 114 such keys for 47 000 counted calls, and building
        # the call and its formula per call was half of rooflab's own time (review r5 F4)
        self._entry: dict[int, tuple] = {}
        self._by_inputs: dict[tuple, tuple] = {}
        self._holds: dict[int, bool] = {}
        self._zero: dict[str, list[int]] = {}   # op name -> [first event, calls] of 0 s

    def visit(self, op: _Op) -> None:
        work = self._work_of(op)
        if not isinstance(work, str):
            self._count(op, work)
            return
        if not self._holds_count(op) and not _is_wrapper(op):
            self._uncounted(op.name, self._seconds(op))
            self._why_not(op)
            return
        self._why_not(op, deep=False)   # the ops it calls have formulas
        self._uncounted(op.name, self._self_seconds(op))
        for child in op.children:
            self.visit(child)

    def _why_not(self, op: _Op, deep: bool = True) -> None:
        """Warn of the ops with a rule but no formula for their shapes, in op's subtree."""
        work = self._work_of(op)
        if has_rule(op.name) and isinstance(work, str):
            self.log.add_grouped(None, f"{op.name} with inputs "
                                       f"[{_shape_text(self._call_of(op))}]: {work}; not counted")
        elif deep:
            for child in op.children:
                self._why_not(child)

    def _work_of(self, op: _Op):
        """The op's OpWork, or why it has none (memoised: asked again by its ancestors)."""
        return self._entry_of(op)[1]

    def _call_of(self, op: _Op) -> OpCall:
        call = self._entry_of(op)[0]
        return call if call is not None else _call(op)   # an op without a rule

    def _entry_of(self, op: _Op) -> tuple:
        """(OpCall, OpWork or why none) of op; (None, "no rule") for an op without a rule."""
        entry = self._entry.get(op.index)
        if entry is None:
            entry = (None, "no rule")
            if has_rule(op.name):
                # the raw inputs' repr as the key: equal reprs of JSON values are equal
                # values, and repr costs a fraction of building the OpCall
                a = op.args
                key = (op.name, repr(a.get("Input Dims", ())), repr(a.get("Input type", ())),
                       repr(a.get("Concrete Inputs", ())))
                entry = self._by_inputs.get(key)
                if entry is None:
                    call = _call(op)
                    entry = self._by_inputs[key] = (call, work_or_reason(call))
            self._entry[op.index] = entry
        return entry

    def _holds_count(self, op: _Op) -> bool:
        if op.index not in self._holds:
            self._holds[op.index] = (not isinstance(self._work_of(op), str)
                                     or any(self._holds_count(c) for c in op.children))
        return self._holds[op.index]

    def _seconds(self, op: _Op) -> float:
        return _subtree_device_s(op, self.kernel_s) if self.on_gpu else op.dur * 1e-6

    def _self_seconds(self, op: _Op) -> float:
        if self.on_gpu:
            return self.kernel_s.get(op.ext, 0.0) if op.ext is not None else 0.0
        return max(0.0, op.dur - sum(c.dur for c in op.children)) * 1e-6

    def log_zero_time(self) -> None:
        """The counted calls with no time, one line per op name: its first event and how
        many more."""
        for name, (first, calls) in self._zero.items():
            more = f" (and {calls - 1} more {name} calls like it)" if calls > 1 else ""
            self.log.add(None, f"event #{first} ({name}): zero time; skipped{more}")

    def _uncounted(self, name: str, seconds: float) -> None:
        if seconds > 0:
            self.uncounted[name] = self.uncounted.get(name, 0.0) + seconds
            self.uncounted_calls[name] = self.uncounted_calls.get(name, 0) + 1

    def _count(self, op: _Op, work) -> None:
        """An op with a formula: counted in its group; the ops it calls are part of it.
        Its work (dtypes, so precision and bytes) is the innermost re-dispatch's, its time
        the outer op's (_redispatch)."""
        seconds = self._seconds(op)
        if seconds <= 0:
            # one warning per op name, not per call: a CUDA trace's CPU-side ops are
            # thousands of calls (review r5 F6)
            self._zero.setdefault(op.name, [op.index, 0])[1] += 1
            return
        inner = _redispatch(op)
        if inner is not op:
            inner_work = self._work_of(inner)
            if not isinstance(inner_work, str):
                if self._call_of(inner).types != self._call_of(op).types:
                    self.autocast[op.name] = self.autocast.get(op.name, 0) + 1
                op, work = inner, inner_work   # seconds stay the outer call's
        call = self._call_of(op)
        args = call.concrete if op.name in _ARGS_IN_KEY else ()
        key = (op.name, call.dims, call.types, args, call.lists)
        g = self.groups.get(key)
        if g is None:
            g = self.groups[key] = _Group(f"{op.name} [{_shape_text(call)}]", work.op,
                                          call.dims, call.types, args,
                                          precision=work.precision, unit=work.unit,
                                          assumed=work.assumed)
        flops = op.args.get("flops")
        # the profiler's count is real-valued (2mnk for any mm): not for complex values
        if isinstance(flops, (int, float)) and flops > 0 and not work.complex:
            g.flop += float(flops)
            g.flop_source = PROFILER_FLOP
        else:
            g.flop += work.flop
        g.bytes += work.bytes
        g.samples.append(seconds)


# Ops whose FLOP depend on constant arguments (a conv's stride and dilation, attention's
# is_causal): calls of one shape with other constants are other groups.
_ARGS_IN_KEY = frozenset({"aten::convolution", "aten::scaled_dot_product_attention"}
                         | _BACKWARD_ARGS_IN_KEY | _REDUCE_ARGS_IN_KEY | _LOSS_ARGS_IN_KEY
                         | _RMSNORM_ARGS_IN_KEY | _POOL_ARGS_IN_KEY)


def _redispatch(op: _Op) -> _Op:
    """The innermost op of op's name and input shapes inside it, else op itself. Under
    torch.autocast the profiler records an op twice (review r2 F2): the outer call at the
    Autocast dispatch key with the caller's fp32 inputs, whose children cast them
    (aten::to, _to_copy, copy_) and then call the same op on the bf16/fp16 copies. The
    inner call is what ran, so its dtypes give the precision and bytes; the outer's time
    (the casts included) is the op's time, as a call of it costs the caller."""
    dims = op.args.get("Input Dims")
    found = op
    while True:
        nxt = _first_same(found, op.name, dims)
        if nxt is None:
            return found
        found = nxt


def _first_same(op: _Op, name: str, dims) -> _Op | None:
    """The first descendant of op (depth first, in time order) named `name` with input
    shapes `dims`."""
    for child in op.children:
        if child.name == name and child.args.get("Input Dims") == dims:
            return child
        deeper = _first_same(child, name, dims)
        if deeper is not None:
            return deeper
    return None


def _is_wrapper(op: _Op) -> bool:
    """An op that only wraps aten ops (autograd's 'autograd::engine::evaluate_function:
    ConvolutionBackward0' and 'ConvolutionBackward0', a record_function range): its time
    is named by the aten ops it calls, as the profiler's table names them, and only its
    own time stays under its name."""
    return bool(op.children) and not op.name.startswith("aten::")


def load_torch_trace(paths: Iterable[str] | str) -> TorchImport:
    """Kernels (one per op and shape) of one or more chrome traces, longest first."""
    paths = [paths] if isinstance(paths, str) else list(paths)
    kernels: list[Kernel] = []
    skips, notes, devices, details, uncounted = [], [], [], [], []
    labels = step_labels(paths)
    for path, label in zip(paths, labels, strict=True):
        log = SkipLog(path)
        data = load_trace_json(path)
        ks, ns, un = trace_kernels(data, path, log)
        uncounted += un
        if len(paths) > 1:   # the same op and shape in two traces stay two points
            ks = [k.with_(name=f"{k.name} [{label}]") for k in ks]
        kernels += ks
        notes += ns
        skips += log.skips()
        for dev in data.get("deviceProperties") or ():
            if isinstance(dev, dict) and dev.get("name"):
                devices.append(str(dev["name"]))
                details.append(_recorded_device(dev))
    if not kernels:
        rules = ("mm, addmm, bmm, conv, attention, elementwise, softmax, layer_norm, their "
                 "backward ops, embedding, index_select, gather, cat, copy_, fill_, zero_, "
                 "sum, mean, nll_loss, pooling, group_norm")
        # ops with a formula, all rejected: their reasons, or it reads as a missing rule
        raise ParseError(f"no op counted ({_skipped_why(skips)}); the ops with a FLOP "
                         f"formula: {rules}" if skips else
                         f"no op with a FLOP formula in the trace ({rules})",
                         path=", ".join(paths))
    return TorchImport(kernels=tuple(sort_by_time(kernels)), skips=tuple(skips),
                         devices=tuple(dict.fromkeys(devices)), files=tuple(paths),
                         notes=tuple(dict.fromkeys(notes)),
                         device_details=tuple(dict.fromkeys(details)),
                         uncounted=tuple(sorted(uncounted, key=lambda u: -u["seconds"])))


def _skipped_why(skips) -> str:
    """The first reasons events were rejected, for an error that has nothing left to show:
    with every aten::mm skipped, 'no op with a FLOP formula' alone reads as a missing rule.
    Up to two kinds of reason (the same reason on many events is said once)."""
    kinds: dict[str, str] = {}
    for s in skips:
        kinds.setdefault(re.sub(r"^event #\d+ ", "event ", s.reason), s.reason)
    shown = "; then ".join(list(kinds.values())[:2])
    return f"{len(skips)} event(s) skipped, first: {shown}"


def _recorded_device(dev: dict) -> RecordedDevice:
    """Name, memory and version of one `deviceProperties` entry (kineto writes id, name,
    totalGlobalMem in bytes, computeMajor, computeMinor, ... for CUDA and ROCm alike): the
    memory tells one MI250X die (64 GiB) from the package its catalog entry describes."""
    mem = dev.get("totalGlobalMem")
    major, minor = dev.get("computeMajor"), dev.get("computeMinor")
    cc = f"{major}.{minor}" if isinstance(major, int) and isinstance(minor, int) else None
    return RecordedDevice(str(dev["name"]),
                          float(mem) if isinstance(mem, (int, float)) and mem > 0 else None,
                          cc)
