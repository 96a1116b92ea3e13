"""A chrome trace's events sorted out for the op walk: the ops (cpu_op), the GPU time of each
op's External id, the host<->device copies (which cross the host link, not the GPU's DRAM)
and the device events linked to no op. Split from ingest/torch_trace.py.

Linking: a device event's own 'External id' (lowercase 'external id' in torch 1.8) is the op
that launched it; one without is linked through the launch call (cuda_runtime/cuda_driver)
with the same 'correlation', whose External id is the op's. An id that names no op is found
after the walk (trace_kernels) and joins the "linked to no op" count: kineto's External id
0 for a launch outside any op (pytorch/kineto tb_plugin's test_top_level_runtime), a
record_function or ProfilerStep range's, an op cut from the trace.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..errors import ParseError
from ..sides import share_text
from ..units import fmt_pct, fmt_seconds, si
from .skips import SkipLog


@dataclass(slots=True)   # one per op of the trace: no __dict__ each (review s23 r5 F1)
class _Op:
    index: int
    name: str
    ts: float
    dur: float
    ext: int | None
    args: dict
    children: list[_Op] = field(default_factory=list)
    thread: tuple = ()   # (pid, tid), one tuple per thread: the event itself is dropped


# Event categories by torch version. torch >= 1.9 (kineto): cpu_op, kernel, gpu_memcpy,
# gpu_memset. torch 1.8's first kineto traces: Operator, Kernel, Memcpy, Memset (the categories
# pytorch/kineto's tb_plugin tests read: tb_plugin/test/test_profiler.py). Compared lowercased.
OP_CATEGORIES = ("cpu_op", "operator")
DEVICE_CATEGORIES = ("kernel", "gpu_memcpy", "gpu_memset", "memcpy", "memset")
_COPY_CATEGORIES = ("gpu_memcpy", "memcpy")
# The launch calls: their 'correlation' is the device event's, their 'External id' the op's
# (kineto draws the "ac2g" flow arrows between the two by that correlation id).
_RUNTIME_CATEGORIES = ("cuda_runtime", "cuda_driver", "runtime")
_CATEGORIES = OP_CATEGORIES + DEVICE_CATEGORIES + _RUNTIME_CATEGORIES

# kineto names a copy by its direction and the host memory's kind: "Memcpy HtoD (Pageable ->
# Device)", "Memcpy DtoH (Device -> Pinned)", "Memcpy HtoH ..."; roctracer's "CopyHostToDevice".
# A DtoD (or PtoP) copy stays on the GPU and is judged on DRAM like any kernel.
_DIRECTIONS = (("HtoD", re.compile(r"HtoD|HostToDevice", re.I)),
               ("DtoH", re.compile(r"DtoH|DeviceToHost", re.I)),
               ("HtoH", re.compile(r"HtoH|HostToHost", re.I)),
               ("host", re.compile(r"Pageable|Pinned", re.I)))


def copy_direction(name: str) -> str | None:
    """'HtoD', 'DtoH', 'HtoH' (or 'host': pageable/pinned memory, no direction named) for a
    copy event that crosses the host link; None for one that stays on the device."""
    for direction, pattern in _DIRECTIONS:
        if pattern.search(name):
            return direction
    return None


@dataclass
class HostCopies:
    """The host<->device copies of one event name: count, seconds, bytes (the events'
    'bytes', None when some event has none)."""

    name: str
    direction: str
    count: int = 0
    seconds: float = 0.0
    bytes: float | None = 0.0
    exts: dict = field(default_factory=dict)   # External id of the op that launched -> s


@dataclass
class TraceEvents:
    """The events sorted out: ops; device seconds (and event counts) per External id; the
    host-link copies' seconds per External id and by event name; the device events linked
    to no op, and how many X events and device events the trace holds (for the errors)."""

    ops: list[_Op]
    kernel_s: dict[int, float]
    kernel_n: dict[int, int]
    host_s: dict[int, float]
    copies: dict[str, HostCopies]
    lost: int                     # device events with no External id, own or launch's
    lost_s: float
    n_x: int                      # 'X' events of any category but kineto's Trace span
    n_device: int                 # kernel/memcpy/memset events
    kernel_names: dict = field(default_factory=dict)   # External id -> set of kernel names


def sort_events(events: list, log: SkipLog) -> TraceEvents:
    """The ops, the device seconds of each External id (host-link copies apart), and the
    device events linked to no op (neither an External id of their own nor a launch call's).
    Each op's event is dropped from `events` (None) once its _Op holds what is read of it:
    both at once were the peak, ~2.8x a 100 MB trace (s26)."""
    out = TraceEvents([], {}, {}, {}, {}, 0, 0.0, 0, 0)
    threads: dict[tuple, tuple] = {}
    launch_ext: dict[int, int] = {}       # correlation -> External id, from launch calls
    unlinked: list[tuple] = []   # (correlation, seconds, direction, ext 0?) of device events
    for i, e in enumerate(events):
        if not isinstance(e, dict) or e.get("ph") != "X":
            continue
        cat = str(e.get("cat", "")).lower()
        out.n_x += cat != "trace"   # kineto's own "PyTorch Profiler (0)" span is no activity
        if cat not in _CATEGORIES:
            continue
        read = _event_fields(e, i, cat, log)
        if read is None:
            continue
        args, ts, dur, ext = read
        if cat in OP_CATEGORIES:
            thread = _thread(e)
            out.ops.append(_Op(i, str(e.get("name", "?")), ts, dur,
                               int(ext) if ext is not None else None, args,
                               thread=threads.setdefault(thread, thread)))
            events[i] = None
            continue
        if cat in _RUNTIME_CATEGORIES:
            if ext is not None and args.get("correlation") is not None:
                launch_ext[args["correlation"]] = int(ext)
            continue
        out.n_device += 1
        seconds = dur * 1e-6
        direction = copy_direction(str(e.get("name", ""))) if cat in _COPY_CATEGORIES else None
        copy = None
        if direction is not None:
            copy = _add_copy(out, str(e.get("name", "?")), direction, seconds,
                             args.get("bytes"))
        name = str(e.get("name", "")) if copy is None else ""
        if ext is not None:
            _add_time(out, int(ext), seconds, copy, name)
        else:
            unlinked.append((args.get("correlation"), seconds, copy, name))
    for corr, seconds, copy, name in unlinked:   # through the launch call's External id
        ext = launch_ext.get(corr) if corr is not None else None
        if ext is not None:
            _add_time(out, ext, seconds, copy, name)
        else:   # (a host copy among them is in the copies' note too, "linked to no op")
            out.lost += 1
            out.lost_s += seconds
    return out


def _event_fields(e: dict, i: int, cat: str, log: SkipLog
                  ) -> tuple[dict, float, float, int | None] | None:
    """An event's args, ts, dur (us) and External id; None (the event skipped, said in
    `log`) where a hand-edited trace has them of the wrong kind: args not an object, an
    id or correlation not a whole number, no numeric ts/dur, a negative dur. An args list
    or an id "abc" was a traceback (review s34 E)."""
    name = e.get("name", "?")
    args = e.get("args") or {}
    try:
        ts, dur = float(e["ts"]), float(e["dur"])
    except (KeyError, TypeError, ValueError):
        log.add(None, f"event #{i} ({name}): no numeric ts/dur; skipped")
        return None
    if dur < 0:   # kineto never writes one: a trace edited or merged by hand
        log.add(None, f"event #{i} ({name}, {cat}): negative duration "
                      f"(dur {dur:g} us); skipped - is the trace edited or corrupt?")
        return None
    if type(args) is not dict:
        log.add(None, f"event #{i} ({name}): 'args' is {type(args).__name__}, not an object; "
                      f"skipped - is the trace edited or corrupt?")
        return None
    ext = args.get("External id", args.get("external id"))
    corr = args.get("correlation")
    if (ext is None or type(ext) is int) and (corr is None or type(corr) is int):
        return args, ts, dur, ext          # (type() is int: a bool is not an id)
    key, v = ("External id", ext) if ext is not None and type(ext) is not int else (
        "correlation", corr)
    log.add(None, f"event #{i} ({name}): '{key}' {v!r:.40} is not a whole number; "
                  f"skipped - is the trace edited or corrupt?")
    return None


def _thread(e: dict) -> tuple:
    """(pid, tid): the key ops are nested under; a pid or tid JSON gave as a list or an
    object (a hand-edited trace) by its text, which a dict key can hold."""
    key = (e.get("pid"), e.get("tid"))
    try:
        hash(key)
    except TypeError:
        return tuple(repr(x) for x in key)
    return key


def _add_time(out: TraceEvents, ext: int, seconds: float, copy: HostCopies | None,
              name: str = "") -> None:
    if name:
        out.kernel_names.setdefault(ext, set()).add(name)
    if copy is not None:
        out.host_s[ext] = out.host_s.get(ext, 0.0) + seconds
        copy.exts[ext] = copy.exts.get(ext, 0.0) + seconds
    else:
        out.kernel_s[ext] = out.kernel_s.get(ext, 0.0) + seconds
        out.kernel_n[ext] = out.kernel_n.get(ext, 0) + 1


def _add_copy(out: TraceEvents, name: str, direction: str, seconds: float,
              nbytes) -> HostCopies:
    c = out.copies.setdefault(name, HostCopies(name, direction))
    c.count += 1
    c.seconds += seconds
    ok = isinstance(nbytes, (int, float)) and not isinstance(nbytes, bool) and nbytes >= 0
    c.bytes = c.bytes + float(nbytes) if ok and c.bytes is not None else None
    return c


def host_copies_note(copies: dict[str, HostCopies], host_s: dict[int, float],
                     devices: list[str], ops: list[_Op], total_s: float) -> str:
    """The host<->device copies, kept off the DRAM roof (review r7 F1): each kind's count,
    the ops that launched it, time, bytes and GB/s, judged against the recorded GPU's host
    link (the catalog's PCIe rate per direction) where the catalog has one. No kernel
    change speeds them up. `host_s`: their seconds by External id; `total_s`: the op time
    the shares are of."""
    if not copies:
        return ""
    link = _host_link(devices)
    names = {op.ext: op.name for op in ops if op.ext is not None}
    parts = []
    for c in sorted(copies.values(), key=lambda c: -c.seconds):
        by: dict[str, float] = {}
        for x, op_s in c.exts.items():
            if x in names:
                by[names[x]] = by.get(names[x], 0.0) + op_s
        # fmt_seconds and si: a 16 GB weight upload is '1.3 s', '16 GB', not '1.3e+03 ms',
        # '1.6e+04 MB' (review s28 R2 F12)
        ops_text = ", ".join(f"{n} {fmt_seconds(t)}" for n, t in
                             sorted(by.items(), key=lambda kv: -kv[1])[:3])
        text = (f"{c.count} x {c.name}, {fmt_seconds(c.seconds)}"
                + (f" (launched by {ops_text})" if by else " (linked to no op)"))
        if c.bytes and c.seconds > 0:
            rate = c.bytes / c.seconds
            text += f", {si(c.bytes, 'B')} at {si(rate, 'B/s')}"
            if link is not None and c.direction in ("HtoD", "DtoH"):
                text += f" = {fmt_pct(100 * rate / link[1])} of the link"
        parts.append(text)
    pageable = any("pageable" in c.name.lower() for c in copies.values())
    advice = ("pinned host memory (pin_memory=True) with non_blocking=True, fewer and larger "
              "copies, or keeping the data on the GPU" if pageable else
              "fewer and larger copies, overlapping them with compute (non_blocking=True), or "
              "keeping the data on the GPU")
    where = (f"the host link, {link[0]}" if link is not None else
             "the host link (PCIe, or NVLink-C2C on a Grace superchip)")
    linked_s = sum(op_s for ext, op_s in host_s.items() if ext in names)
    share = (f"{share_text(100 * linked_s / total_s)} of op time, "    # 99.99 %, not 100.0 %
             if total_s > 0 and linked_s else "")
    return (f"host<->device copies ({share}not drawn: they cross {where}, not the GPU's "
            f"DRAM): " + "; ".join(parts)
            + f"; no kernel change speeds them up: {advice} does")


def _host_link(devices: list[str]) -> tuple[str, float] | None:
    """('the NVIDIA H100 SXM's PCIe Gen5 x16, 63 GB/s per direction', bytes/s) of the first
    recorded device whose catalog entry has a host link; None when none has."""
    try:
        from ..hardware.catalog import match_device_name
    except ImportError:
        return None
    for name in devices:
        try:
            dev = match_device_name(name)
        except Exception:  # noqa: BLE001 - a catalog fault must not lose the trace's numbers
            continue
        link = dev.host_link_ceiling if dev is not None else None
        if link is not None:
            return (f"the {dev.name}'s {dev.host_link} at {si(link.value, 'B/s')} per "
                    f"direction ({link.provenance})", link.value)
    return None


def check_ops(ev: TraceEvents, path: str, regions: dict, log: SkipLog) -> None:
    """ParseError unless the trace has ops with input shapes (record_shapes=True), naming
    what the trace lacks: CPU activity (GPU events only), any event at all (a schedule's
    window closed before the export), shapes; a trace of torch.compile'd code has none
    whatever the flag was: said so."""
    ops = ev.ops
    if not any("Input Dims" in op.args for op in ops) and regions:
        from .torch_compiled import compiled_error

        raise ParseError(compiled_error(regions), path=path)
    if not ops and len(log):   # there were ops, all rejected: why, not how to profile
        raise ParseError(f"no usable cpu_op event ({skipped_why(log.skips())})", path=path)
    if not ops and ev.n_device:
        raise ParseError(f"the trace holds no cpu_op events, only {ev.n_device} GPU "
                         f"kernel/memcpy/memset event(s): profile with activities="
                         f"[ProfilerActivity.CPU, ProfilerActivity.CUDA] and "
                         f"record_shapes=True", path=path)
    if not ops and not ev.n_x:
        raise ParseError("the trace holds no cpu_op events, nor any other timed ('X') "
                         "event: it is empty. With a torch.profiler schedule, the trace of "
                         "an active window is handed to on_trace_ready (e.g. "
                         "torch.profiler.tensorboard_trace_handler): export it there, or "
                         "call export_chrome_trace while a window is recording", path=path)
    if not ops:
        raise ParseError(f"the trace holds no cpu_op events (its {ev.n_x} timed event(s) "
                         f"are of other kinds); profile with torch.profiler.profile("
                         f"activities=[ProfilerActivity.CPU, ...], record_shapes=True)",
                         path=path)
    if not any("Input Dims" in op.args for op in ops):
        raise ParseError("the trace has no input shapes; profile with record_shapes=True",
                         path=path)


def skipped_why(skips) -> str:
    """The first reasons events were rejected, for an error that has nothing left to show:
    with every aten::mm skipped, 'no op with a FLOP formula' alone reads as a missing rule.
    Up to two kinds of reason (the same reason on many events is said once)."""
    kinds: dict[str, str] = {}
    for s in skips:
        kinds.setdefault(re.sub(r"^event #\d+ ", "event ", s.reason), s.reason)
    shown = "; then ".join(list(kinds.values())[:2])
    return f"{len(skips)} event(s) skipped, first: {shown}"
