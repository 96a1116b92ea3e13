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
Reading the file: ingest/torch_trace_file.py; sorting its events (ops, device time by
External id, host<->device copies, events linked to no op) and the errors for a trace
without usable ops: torch_trace_events.py; a conv's constants from its output's shape:
torch_trace_infer.py; rank labels: torch_trace_ranks.py; the groups' names, Kernels and
notes: ingest/torch_trace_groups.py.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..errors import InputError, ParseError
from ..model.kernel import Kernel
from .aggregate import sort_by_time
from .kernel_names import step_labels
from .profile_import import ProfileImport, RecordedDevice
from .skips import SkipLog
from .torch_compiled import compiled_error, compiled_note, compiled_regions
from .torch_ops import has_rule, work_or_reason
from .torch_ops_base import OpCall
from .torch_trace_events import _Op, check_ops, host_copies_note, skipped_why, sort_events
from .torch_trace_file import load_trace_json
from .torch_trace_groups import (
    PROFILER_FLOP,
    _autocast_note,
    _cat_note,
    _defaults_note,
    _Group,
    _kernel,
    _lost_note,
    _uncounted_note,
    _unique_names,
    _warmup_note,
)
from .torch_trace_infer import CONV, following_ops, infer_conv
from .torch_trace_ranks import rank_of, trace_labels
from .torch_trace_scope import marked_ranges, scope_roots
from .torch_trace_tree import (
    _ARGS_IN_KEY,
    _CONST_OPS,
    _call,
    _is_wrapper,
    _redispatch,
    _roots,
    _shape_text,
    _subtree_device_s,
    _subtree_names,
)


@dataclass(frozen=True)
class TorchImport(ProfileImport):
    """A torch trace import, with the ops that have no FLOP formula: one dict per op name
    and file, {"name", "calls", "seconds", "file"}, longest first (review r2 F4)."""

    uncounted: tuple[dict, ...] = ()


def trace_kernels(data: dict, path: str, log: SkipLog
                  ) -> tuple[list[Kernel], list[str], list[dict]]:
    events = data["traceEvents"]
    regions = compiled_regions(events)   # before sort_events drops the ops' events
    marked = marked_ranges(events)
    ev = sort_events(events, log)
    check_ops(ev, path, regions, log)
    # a record_function("rooflab") range, else no model construction (review s28 R3 F4)
    roots, scoped = scope_roots(_roots(ev.ops), marked, ev)
    on_gpu = bool(ev.kernel_s or ev.copies)
    tally = _Tally(ev.kernel_s, on_gpu, log, ev.host_s)
    tally.kernel_names = ev.kernel_names
    tally.following = following_ops(ev.ops)
    for root in roots:
        tally.visit(root)
    tally.log_zero_time()
    _unique_names(list(tally.groups.values()))
    # the host-link copies the ops launched: off the roof, but op time the shares are of
    op_exts = {op.ext for op in ev.ops if op.ext is not None}
    host_s = sum(s for ext, s in ev.host_s.items() if ext in op_exts)
    off_roof_s = sum(tally.uncounted.values()) + host_s
    kernels = [_kernel(g, path, on_gpu, off_roof_s) for g in tally.groups.values()]
    if regions and not kernels:   # the eager ops around the compiled code count nothing
        raise ParseError(compiled_error(regions), path=path)
    devices = [str(d.get("name")) for d in data.get("deviceProperties") or ()
               if isinstance(d, dict) and d.get("name")]
    notes = [note for note in (_uncounted_note(kernels, tally.uncounted, host_s,
                                               tally.unshaped),
                               host_copies_note(ev.copies, ev.host_s, devices, ev.ops,
                                                sum(k.seconds or 0.0 for k in kernels)
                                                + off_roof_s),
                               _defaults_note(tally.defaults, tally.inferred),
                               _warmup_note(tally.groups), _cat_note(tally.groups),
                               _autocast_note(tally.autocast),
                               compiled_note(regions) if regions else "", scoped) if note]
    notes.append("time: " + ("GPU kernels linked to each op by External id" if on_gpu
                             else "each op's own CPU duration"))
    # device time whose External id is no op: a record_function/ProfilerStep range's, an
    # op cut from the trace (review r7 F3)
    stray = [ext for ext in ev.kernel_s if ext not in op_exts]
    n_zero = ev.kernel_n[0] if 0 in stray else 0   # kineto's "outside any op"
    n_stray = sum(ev.kernel_n[ext] for ext in stray) - n_zero
    if ev.lost or stray:
        notes.append(_lost_note(ev.lost, n_zero, n_stray,
                                ev.lost_s + sum(ev.kernel_s[ext] for ext in stray), on_gpu))
    uncounted = [{"name": n, "calls": tally.uncounted_calls.get(n, 0), "seconds": sec,
                  "file": path} for n, sec in tally.uncounted.items()]
    return kernels, notes, uncounted


class _Tally:
    """The op tree walked from its roots: each op with a FLOP formula counted in its
    (op, shapes, dtypes) group; the time of the ops without one summed by name. An op
    none of whose descendants is counted keeps its whole time under its own name (a
    convolution without a formula, not the allocations it calls); an op above counted ops
    keeps its self time (its time less its children's)."""

    def __init__(self, kernel_s: dict[int, float], on_gpu: bool, log: SkipLog,
                 host_s: dict[int, float] | None = None):
        self.kernel_s, self.on_gpu, self.log = kernel_s, on_gpu, log
        self.kernel_names: dict[int, set[str]] = {}
        self.host_s = host_s or {}   # External id -> seconds of host-link copies
        self.defaults: dict[str, int] = {}   # counted calls without Concrete Inputs
        self.inferred: dict[str, dict[str, int]] = {}   # op -> {what was inferred: calls}
        self.following: dict[int, _Op] = {}   # a conv -> the op after it (infer_conv)
        self.unshaped: set[str] = set()   # ops with a rule left out for want of shapes
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
            if has_rule(op.name) and self._seconds(op) > 0:
                self.unshaped.add(op.name)
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

    def _without_constants(self, op: _Op, call: OpCall, work) -> tuple:
        """A call recorded without constant arguments: a convolution's stride and padding
        inferred from its output's shape where an op shows it (the count then exact),
        else the defaults, counted for the note that names them (review r7 F2)."""
        got = (infer_conv(call, op, self.following.get(op.index), self.log)
               if op.name == CONV else None)
        if got is not None:
            inferred = work_or_reason(got[0])
            if not isinstance(inferred, str):
                seen = self.inferred.setdefault(op.name, {})
                seen[got[1]] = seen.get(got[1], 0) + 1
                return got[0], inferred
        self.defaults[op.name] = self.defaults.get(op.name, 0) + 1
        return call, work

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
        if seconds <= 0 and self.host_s and _subtree_device_s(op, self.host_s) > 0:
            return   # a host<->device copy (aten::copy_ of .to("cuda")): the copies' note
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
        if op.name in _CONST_OPS and "Concrete Inputs" not in op.args:
            call, work = self._without_constants(op, call, work)
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
        g.gpu_kernels |= _subtree_names(op, self.kernel_names)


def load_torch_trace(paths: Iterable[str] | str) -> TorchImport:
    """Kernels (one per op and shape) of one or more chrome traces, longest first."""
    paths = [paths] if isinstance(paths, str) else list(paths)
    kernels: list[Kernel] = []
    skips, notes, devices, details, uncounted = [], [], [], [], []
    per_trace, ranks = [], []
    for path in paths:
        log = SkipLog(path)
        data = load_trace_json(path)
        try:
            ks, ns, un = trace_kernels(data, path, log)
        except InputError as exc:
            if exc.path is not None:
                raise
            # a Kernel's range check ("flop[fp32] 2e+36 is outside ...") knows the op, not
            # the trace it came from: say the file, as the shape errors do (s22 r1 F8)
            raise ParseError(str(exc), path=path, field=exc.field) from None
        uncounted += un
        ranks.append(rank_of(data))
        per_trace.append(ks)
        notes += ns
        skips += log.skips()
        for dev in data.get("deviceProperties") or ():
            if isinstance(dev, dict) and dev.get("name"):
                devices.append(str(dev["name"]))
                details.append(_recorded_device(dev))
        # the next trace is read with this one's events gone: two 100 MB traces held both
        # trees at once, 1201 MB against 671 MB for one (review s23 r5 F2)
        del data
    # the same op and shape in two traces (two ranks, two steps) stay two points
    for ks, rank, label in zip(per_trace, ranks, trace_labels(step_labels(paths), ranks),
                               strict=True):
        kernels += [k.with_(name=f"{k.name} [{label}]",
                            meta={**k.meta, "rank": rank} if rank is not None else k.meta)
                    if label else k for k in ks]
    if not kernels:
        rules = ("mm, addmm, bmm, conv, attention, elementwise, softmax, layer_norm, their "
                 "backward ops, embedding, index_select, gather, cat, copy_, fill_, zero_, "
                 "sum, mean, nll_loss, pooling, group_norm")
        # ops with a formula, all rejected: their reasons, or it reads as a missing rule
        raise ParseError(f"no op counted ({skipped_why(skips)}); the ops with a FLOP "
                         f"formula: {rules}" if skips else
                         f"no op with a FLOP formula in the trace ({rules})",
                         path=", ".join(paths))
    return TorchImport(kernels=tuple(sort_by_time(kernels)), skips=tuple(skips),
                         devices=tuple(dict.fromkeys(devices)), files=tuple(paths),
                         notes=tuple(dict.fromkeys(notes)),
                         device_details=tuple(dict.fromkeys(details)),
                         uncounted=tuple(sorted(uncounted, key=lambda u: -u["seconds"])))


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
