"""Hand-built PyTorch profiler traces for the torch-trace tests: one cpu_op event with its
recorded shapes, and a trace file of such events."""

from __future__ import annotations

import json


def cpu_event(name, ts, dur, dims=None, types=None, concrete=None) -> dict:
    """A cpu_op 'X' event as torch.profiler records it with record_shapes=True."""
    args = {"External id": ts}
    if dims is not None:
        args.update({"Input Dims": dims, "Input type": types,
                     "Concrete Inputs": concrete or [""] * len(dims)})
    return {"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": 1, "ts": ts,
            "dur": dur, "args": args}


def write_trace(tmp_path, events, name="t.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps({"traceEvents": events}))
    return str(path)
