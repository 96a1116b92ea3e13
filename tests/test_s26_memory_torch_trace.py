"""Session 26 fB: a torch trace's op events are dropped once their _Op holds what is read of
them (torch_trace_events.sort_events): the slimmed events and the ops were both held, the
peak of `rooflab torch` on a 100 MB trace (279 MB, 2.8x the file; 229 MB now). The ops keep
their thread, which nested them (_roots) and found a convolution's next op (following_ops)
through the dropped event; torch.compile's regions are read before the drop."""

from __future__ import annotations

import json

import pytest

from rooflab.ingest.skips import SkipLog
from rooflab.ingest.torch_trace import _roots, load_torch_trace
from rooflab.ingest.torch_trace_events import sort_events

F = "float"


def _op(name, ts, dur, ext, tid, dims=(), types=()):
    return {"ph": "X", "cat": "cpu_op", "name": name, "ts": ts, "dur": dur, "pid": 7,
            "tid": tid, "args": {"External id": ext, "Input Dims": [list(d) for d in dims],
                                 "Input type": list(types)}}


def _events():
    # thread 1: a linear (addmm inside it) then an mm; thread 2: an mm at the same time as
    # the linear, which nests in nothing (another thread); a kernel and a python span
    return [
        _op("aten::linear", 0.0, 100.0, 1, 1, [(64, 128), (32, 128), (32,)], [F, F, F]),
        _op("aten::addmm", 10.0, 80.0, 2, 1, [(32,), (64, 128), (128, 32)], [F, F, F]),
        _op("aten::mm", 200.0, 50.0, 3, 1, [(64, 128), (128, 32)], [F, F]),
        _op("aten::mm", 20.0, 50.0, 4, 2, [(64, 128), (128, 32)], [F, F]),
        {"ph": "X", "cat": "python_function", "name": "f", "ts": 0.0, "dur": 300.0,
         "pid": 7, "tid": 1},
    ]


def test_sort_events_drops_each_op_event_and_keeps_its_thread():
    events = _events()
    ev = sort_events(events, SkipLog("t.json"))
    assert events[:4] == [None] * 4          # the ops' events, dropped as read
    assert events[4]["cat"] == "python_function"
    assert [op.thread for op in ev.ops] == [(7, 1), (7, 1), (7, 1), (7, 2)]
    assert ev.ops[0].thread is ev.ops[2].thread   # one tuple per thread, not one per op
    # nested by time on each thread, from the ops alone: the addmm inside the linear
    roots = _roots(ev.ops)
    assert [(r.name, r.thread[1]) for r in roots] == [
        ("aten::linear", 1), ("aten::mm", 1), ("aten::mm", 2)]
    assert [c.name for c in roots[0].children] == ["aten::addmm"]


def test_trace_read_as_before_by_hand(tmp_path):
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"traceEvents": _events()}))
    imp = load_torch_trace(str(path))
    mm = next(k for k in imp.kernels if k.meta["op"] == "mm")
    # the two mm calls, one per thread: 2 x 64 x 128 x 32 FLOP each, fp32
    assert mm.calls == 2 and mm.flop == {"fp32": pytest.approx(2 * 2 * 64 * 128 * 32)}
    assert mm.seconds == pytest.approx(100e-6)   # 50 us each (their own CPU durations)
    # the addmm inside the linear counted once: 2mnk (its bias add is not counted:
    # torch_ops_core's 2mnk on every path); the linear keeps only its self time (20 us)
    addmm = next(k for k in imp.kernels if k.meta["op"] == "addmm")
    assert addmm.calls == 1 and addmm.total_flop == pytest.approx(2 * 64 * 128 * 32)
    assert addmm.seconds == pytest.approx(80e-6)


def test_a_thread_id_json_gave_as_a_list_nests_by_its_text():
    """A hand-edited trace's pid as a list is no dict key: its text is (not a traceback)."""
    events = _events()
    for e in events[:3]:
        e["pid"] = [7]
    ev = sort_events(events, SkipLog("t.json"))
    assert ev.ops[0].thread == ("[7]", "1")
    assert [r.name for r in _roots(ev.ops)] == ["aten::linear", "aten::mm", "aten::mm"]
