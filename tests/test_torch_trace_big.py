"""Review r5 F3/F4/F6 (torch half): a trace of many calls of a few shapes.

F4: the FLOP formula is asked once per (op, raw inputs), not once per call (a 100 MB trace:
114 keys for 47 000 calls); the counts stay the per-call sums. F6: counted calls with no
time are one warning per op name with a count, not one line per event. F3: the trace's
bytes are gone before json.loads builds the tree (the text alone is alive then).
"""

from __future__ import annotations

import gzip
import json

from test_torch_trace import _event

from rooflab.ingest import torch_trace
from rooflab.ingest.torch_trace import load_torch_trace

MM_DIMS, MM_TYPES = [[64, 128], [128, 32]], ["float", "float"]
ADD_DIMS = [[64, 32], [64, 32], []]
ADD_TYPES = ["float", "float", "Scalar"]


def _mm_add_trace(tmp_path, calls: int, cuda: bool = False, name: str = "t.json") -> str:
    """`calls` x (mm 64x128 @ 128x32, then add 64x32), each op 10 us on the CPU; with
    cuda, each mm launches a 4 us kernel and no add launches any (CPU-side tensors)."""
    events = []
    for i in range(calls):
        ts = 100 * i
        events.append(_event("aten::mm", ts, 10, 2 * i, MM_DIMS, MM_TYPES))
        events.append(_event("aten::add", ts + 20, 10, 2 * i + 1, ADD_DIMS, ADD_TYPES,
                             concrete=["", "", "1"]))
        if cuda:
            events.append({**_event("gemm_kernel", ts + 1, 4, 2 * i, cat="kernel"),
                           "pid": 0, "tid": 7})
    path = tmp_path / name
    path.write_text(json.dumps({"traceEvents": events}))
    return str(path)


def test_formula_asked_once_per_shape_and_counts_stay_per_call_sums(tmp_path, monkeypatch):
    asked = []
    real = torch_trace.work_or_reason

    def counting(call):
        asked.append(call.name)
        return real(call)

    monkeypatch.setattr(torch_trace, "work_or_reason", counting)
    imp = load_torch_trace(_mm_add_trace(tmp_path, 50))
    assert sorted(asked) == ["aten::add", "aten::mm"]   # was 100 + 100 (visit and ancestors)
    by_op = {k.name.split(" ")[0]: k for k in imp.kernels}
    mm, add = by_op["aten::mm"], by_op["aten::add"]
    # 2mnk per call, 50 calls: 2 * 64 * 128 * 32 * 50
    assert mm.total_flop == 2 * 64 * 128 * 32 * 50 == 26_214_400
    assert mm.bytes["DRAM"] == 4 * (64 * 128 + 128 * 32 + 64 * 32) * 50 == 2_867_200
    assert mm.calls == 50 and abs(mm.seconds - 50 * 10e-6) < 1e-15
    # add: one FLOP per output element (x + 1*y: alpha 1), 50 calls
    assert add.total_flop == 64 * 32 * 50
    assert add.calls == 50


def test_zero_time_calls_are_one_warning_per_op_with_a_count(tmp_path):
    imp = load_torch_trace(_mm_add_trace(tmp_path, 30, cuda=True))
    zero = [str(s) for s in imp.skips if "zero time" in str(s)]
    # event #1 is the first aten::add (events: mm, add, kernel, mm, add, kernel, ...)
    assert zero == [f"{tmp_path / 't.json'}: event #1 (aten::add): zero time; skipped "
                    f"(and 29 more aten::add calls like it)"]   # was 30 lines
    (mm,) = imp.kernels
    assert mm.calls == 30 and abs(mm.seconds - 30 * 4e-6) < 1e-15


def test_one_zero_time_call_reads_as_before(tmp_path):
    imp = load_torch_trace(_mm_add_trace(tmp_path, 1, cuda=True))
    assert [str(s) for s in imp.skips] == [
        f"{tmp_path / 't.json'}: event #1 (aten::add): zero time; skipped"]


def test_gzip_and_crlf_traces_read_as_the_plain_one(tmp_path):
    plain = _mm_add_trace(tmp_path, 3)
    text = (tmp_path / "t.json").read_text()
    (tmp_path / "crlf.json").write_bytes(text.replace(", ", ",\r\n").encode())
    (tmp_path / "t.pt.trace.json.gz").write_bytes(gzip.compress(text.encode()))
    want = load_torch_trace(plain).kernels
    for other in ("crlf.json", "t.pt.trace.json.gz"):
        got = load_torch_trace(str(tmp_path / other)).kernels
        assert [(k.name, k.total_flop, k.calls, k.seconds) for k in got] == [
            (k.name, k.total_flop, k.calls, k.seconds) for k in want]
