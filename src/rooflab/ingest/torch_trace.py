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
"""

from __future__ import annotations

import gzip
import json
import statistics
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ParseError
from ..model.kernel import Kernel
from .aggregate import sort_by_time, step_labels
from .profile_import import ProfileImport, RecordedDevice
from .skips import SkipLog
from .torch_compiled import compiled_error, compiled_note, compiled_regions
from .torch_ops import OpCall, dtype_of, has_rule, precision_of, work_or_reason
from .torch_ops_backward import ARGS_IN_KEY as _BACKWARD_ARGS_IN_KEY
from .torch_ops_loss import ARGS_IN_KEY as _LOSS_ARGS_IN_KEY
from .torch_ops_loss import args_text as _loss_args_text
from .torch_ops_memory import CAT_ASSUMED_DTYPE
from .torch_ops_reduce import ARGS_IN_KEY as _REDUCE_ARGS_IN_KEY
from .torch_ops_reduce import args_text as _reduce_args_text


@dataclass
class _Op:
    index: int
    name: str
    ts: float
    dur: float
    ext: int | None
    args: dict
    children: list[_Op] = field(default_factory=list)


@dataclass
class _Group:
    name: str
    op: str
    shapes: tuple
    types: tuple
    args: tuple = ()
    flop: float = 0.0
    bytes: float = 0.0
    precision: str = "fp32"
    unit: str | None = None
    samples: list[float] = field(default_factory=list)
    flop_source: str = "derived"
    assumed: str = ""   # what the count assumed (cat's dtype), for the kernel's meta


def load_trace_json(path: str) -> dict:
    p = Path(path)
    if not p.is_file():
        raise ParseError(_folder_hint(p) if p.is_dir() else "file not found", path=path)
    try:
        # gzip by content, not by name: tensorboard_trace_handler writes *.pt.trace.json.gz,
        # and renamed or downloaded traces keep their bytes but not always their suffix
        blob = p.read_bytes()
        raw = (gzip.decompress(blob) if blob[:2] == b"\x1f\x8b" else blob).decode("utf-8")
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        if raw.lstrip("\ufeff \t\r\n")[:1] not in ("{", "["):
            raise ParseError(_not_json(path), path=path) from None
        raise ParseError(f"not valid JSON ({exc.msg}, column {exc.colno}): a file cut short? "
                         f"export it with prof.export_chrome_trace(path)", path=path,
                         line=exc.lineno) from None
    except EOFError:   # gzip stream ends early: a copy or download stopped part-way
        raise ParseError("cannot read trace: the gzip stream ends early (file cut short?); "
                         "copy the trace again, or export it with "
                         "prof.export_chrome_trace(path)", path=path) from None
    except (OSError, UnicodeDecodeError, gzip.BadGzipFile) as exc:
        raise ParseError(f"cannot read trace: {exc}", path=path) from None
    if isinstance(data, list):
        data = {"traceEvents": data}
    if not isinstance(data, dict) or not isinstance(data.get("traceEvents"), list):
        ours = isinstance(data, dict) and bool(data.keys() & {"schema_version", "roof",
                                                               "kernels", "compute"})
        what = ("; it is a rooflab JSON file (a profile, roof or kernel list): a profile goes "
                "to --on FILE, a kernel list to `rooflab report FILE` or `rooflab plot FILE`"
                if ours else "")
        raise ParseError(f"not a chrome trace: no 'traceEvents' list{what}; export a trace "
                         f"with prof.export_chrome_trace(path)", path=path)
    return data


def _folder_hint(folder: Path) -> str:
    """A folder given as the trace: tensorboard_trace_handler's log folder names its traces."""
    traces = sorted(folder.glob("*.pt.trace.json*"))
    if not traces:
        return "is a directory; give the trace file"
    names = ", ".join(str(t) for t in traces[:3]) + (", ..." if len(traces) > 3 else "")
    return (f"is a directory; give one of its {len(traces)} trace file(s) "
            f"(tensorboard_trace_handler writes one per profiled step): {names}")


def _not_json(path: str) -> str:
    """A file that is not JSON at all: another profiler's CSV names its verb."""
    from .profile_files import file_kind

    verb = {"ncu": "an Nsight Compute CSV; read it with `rooflab ncu FILE`",
            "rocprof": "a rocprof CSV; read it with `rooflab rocprof FILE`"}.get(file_kind(path))
    return (f"not a chrome trace (not JSON): {verb}" if verb else
            "not a chrome trace (not JSON); export one with prof.export_chrome_trace(path) "
            "from a torch.profiler run with record_shapes=True")


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


def trace_kernels(data: dict, path: str, log: SkipLog) -> tuple[list[Kernel], list[str]]:
    events = data["traceEvents"]
    ops, kernel_s, (n_lost, lost_s) = _ops_and_kernels(events, log)
    regions = compiled_regions(events)
    _check_ops(ops, path, regions)
    on_gpu = bool(kernel_s)
    tally = _Tally(kernel_s, on_gpu, log)
    for root in _roots(ops, events):
        tally.visit(root)
    _unique_names(list(tally.groups.values()))
    kernels = [_kernel(g, path, on_gpu) for g in tally.groups.values()]
    if regions and not kernels:   # the eager ops around the compiled code count nothing
        raise ParseError(compiled_error(regions), path=path)
    notes = [note for note in (_uncounted_note(kernels, tally.uncounted),
                               _warmup_note(tally.groups), _cat_note(tally.groups),
                               compiled_note(regions) if regions else "") if note]
    notes.append("time: " + ("GPU kernels linked to each op by External id" if on_gpu
                             else "each op's own CPU duration"))
    if n_lost:
        notes.append(_lost_note(n_lost, lost_s, on_gpu))
    return kernels, notes


def _check_ops(ops: list[_Op], path: str, regions: dict) -> None:
    """ParseError unless the trace has ops with input shapes (record_shapes=True); a trace
    of torch.compile'd code has none whatever the flag was: said so."""
    if not any("Input Dims" in op.args for op in ops) and regions:
        raise ParseError(compiled_error(regions), path=path)
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
        self._work: dict[int, object] = {}
        self._holds: dict[int, bool] = {}

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
            self.log.add_grouped(None, f"{op.name} with inputs [{_shape_text(_call(op))}]: "
                                       f"{work}; not counted")
        elif deep:
            for child in op.children:
                self._why_not(child)

    def _work_of(self, op: _Op):
        """The op's OpWork, or why it has none (memoised: asked again by its ancestors)."""
        if op.index not in self._work:
            self._work[op.index] = (work_or_reason(_call(op)) if has_rule(op.name)
                                    else "no rule")
        return self._work[op.index]

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

    def _uncounted(self, name: str, seconds: float) -> None:
        if seconds > 0:
            self.uncounted[name] = self.uncounted.get(name, 0.0) + seconds

    def _count(self, op: _Op, work) -> None:
        """An op with a formula: counted in its group; the ops it calls are part of it."""
        seconds = self._seconds(op)
        if seconds <= 0:
            self.log.add(None, f"event #{op.index} ({op.name}): zero time; skipped")
            return
        call = _call(op)
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
            g.flop_source = "counted"
        else:
            g.flop += work.flop
        g.bytes += work.bytes
        g.samples.append(seconds)


# Ops whose FLOP depend on constant arguments (a conv's stride and dilation, attention's
# is_causal): calls of one shape with other constants are other groups.
_ARGS_IN_KEY = frozenset({"aten::convolution", "aten::scaled_dot_product_attention"}
                         | _BACKWARD_ARGS_IN_KEY | _REDUCE_ARGS_IN_KEY | _LOSS_ARGS_IN_KEY)


def _is_wrapper(op: _Op) -> bool:
    """An op that only wraps aten ops (autograd's 'autograd::engine::evaluate_function:
    ConvolutionBackward0' and 'ConvolutionBackward0', a record_function range): its time
    is named by the aten ops it calls, as the profiler's table names them, and only its
    own time stays under its name."""
    return bool(op.children) and not op.name.startswith("aten::")


def _cat_note(groups: dict[tuple, _Group]) -> str:
    if not any(g.op == "cat" and g.assumed for g in groups.values()):
        return ""
    return (f"aten::cat: the profiler records no dtypes for a tensor list; its bytes "
            f"assume {CAT_ASSUMED_DTYPE} elements (halve them for fp16/bf16 tensors)")


def _unique_names(groups: list[_Group]) -> None:
    """Groups that differ only in dtypes (an fp32 and an fp64 mm of one shape) or constant
    arguments would share a name, and the table, report and compare match kernels by name:
    such groups get their input dtypes ('aten::mm [256x256, 256x256] (fp64)') or their
    arguments ('(stride 1x2, padding 1x1, dilation 1x1)') appended; a clash left after that
    is numbered."""
    for text in (_dtype_text, _args_text):
        by_name: dict[str, list[_Group]] = {}
        for g in groups:
            by_name.setdefault(g.name, []).append(g)
        for clash in by_name.values():
            if len({text(g) for g in clash}) > 1:
                for g in clash:
                    g.name = f"{g.name} ({text(g)})"
    seen: dict[str, int] = {}
    for g in groups:
        seen[g.name] = seen.get(g.name, 0) + 1
        if seen[g.name] > 1:
            g.name = f"{g.name} #{seen[g.name]}"


def _dtype_text(g: _Group) -> str:
    """The tensor inputs' dtypes in order ('fp64 scalar, fp32': a 0-dim tensor, which the
    shapes leave out), one name if all agree."""
    names = [f"{dtype_of(t)}{' scalar' if d == () else ''}"
             for d, t in zip(g.shapes, g.types, strict=False)
             if d is not None and dtype_of(t) is not None]
    return ", ".join(dict.fromkeys(names)) if len(set(names)) == 1 else ", ".join(names)


def _args_text(g: _Group) -> str:
    """A conv's stride, padding and dilation ('stride 1x2, ...'), attention's mask."""
    def dims(i: int) -> str:
        text = g.args[i] if i < len(g.args) else ""
        return text.strip("[]").replace(", ", "x") or "?"

    if g.op in ("sum", "mean"):
        return _reduce_args_text(g.args)
    if g.op.startswith("nll_loss"):
        return _loss_args_text(g.op, g.args)
    if g.op.endswith("_backward") and g.args:   # output_mask, last: the gradients made
        return f"output_mask {g.args[-1]}"
    if g.op.startswith("conv"):
        extra = [f"groups {g.args[8]}"] if len(g.args) > 8 and g.args[8] not in ("", "1") else []
        return ", ".join([f"stride {dims(3)}", f"padding {dims(4)}", f"dilation {dims(5)}"]
                         + extra)
    if g.op == "attention":
        return "causal" if len(g.args) > 5 and g.args[5] == "True" else "not causal"
    return ", ".join(a for a in g.args if a)


def _uncounted_note(kernels: list[Kernel], uncounted: dict[str, float]) -> str:
    if not uncounted:
        return ""
    total = sum(k.seconds or 0.0 for k in kernels) + sum(uncounted.values())
    top = sorted(uncounted.items(), key=lambda kv: -kv[1])[:4]
    share = sum(uncounted.values()) / total if total else 0.0
    return (f"{100 * share:.1f}% of op time is in ops without a FLOP formula "
            f"(not drawn): " + ", ".join(f"{n} {s * 1e3:.3g} ms" for n, s in top))


def _warmup_note(groups: dict[tuple, _Group]) -> str:
    slow_first = [g.name for g in groups.values() if len(g.samples) >= 3
                  and g.samples[0] > 5 * statistics.median(g.samples[1:])]
    if not slow_first:
        return ""
    return (f"the first call of {', '.join(slow_first[:3])}"
            f"{' and others' if len(slow_first) > 3 else ''} took over 5x the median "
            f"of the later calls (warm-up: lazy initialisation, cold caches); the "
            f"totals include it - profile more iterations, or skip warm-up steps "
            f"with torch.profiler.schedule")


def _lost_note(n_lost: int, lost_s: float, on_gpu: bool) -> str:
    return (f"{n_lost} GPU kernel/memcpy event(s), {lost_s * 1e3:.3g} ms, are linked "
            f"to no op (no 'External id', no launch call with their 'correlation')"
            + ("" if on_gpu else "; op times are CPU durations (launch cost), not "
               "GPU time") + ": not counted")


def _kernel(g: _Group, path: str, on_gpu: bool) -> Kernel:
    meta = {"source": "torch.profiler", "op": g.op, "file": path,
            "shapes": [list(d) if d is not None else None for d in g.shapes],
            "dtypes": list(g.types), "byte_model": "compulsory traffic from shapes and dtypes",
            "time": "cuda kernels" if on_gpu else "cpu op"}
    if g.assumed:
        meta["assumed"] = g.assumed
    return Kernel(name=g.name, flop={g.precision or precision_of(g.types): g.flop},
                  bytes={"DRAM": g.bytes}, seconds=sum(g.samples), calls=len(g.samples),
                  samples=tuple(g.samples), unit=g.unit, meta=meta,
                  provenance={"flop": g.flop_source, "bytes": "derived",
                              "seconds": "measured"})


def load_torch_trace(paths: Iterable[str] | str) -> ProfileImport:
    """Kernels (one per op and shape) of one or more chrome traces, longest first."""
    paths = [paths] if isinstance(paths, str) else list(paths)
    kernels: list[Kernel] = []
    skips, notes, devices, details = [], [], [], []
    labels = step_labels(paths)
    for path, label in zip(paths, labels, strict=True):
        log = SkipLog(path)
        data = load_trace_json(path)
        ks, ns = trace_kernels(data, path, log)
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
        raise ParseError("no op with a FLOP formula in the trace (mm, addmm, bmm, conv, "
                         "attention, elementwise, softmax, layer_norm, their backward ops, "
                         "embedding, index_select, gather, cat, copy_, fill_, zero_, sum, "
                         "mean, nll_loss)", path=", ".join(paths))
    return ProfileImport(kernels=tuple(sort_by_time(kernels)), skips=tuple(skips),
                         devices=tuple(dict.fromkeys(devices)), files=tuple(paths),
                         notes=tuple(dict.fromkeys(notes)),
                         device_details=tuple(dict.fromkeys(details)))


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
