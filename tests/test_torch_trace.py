"""rooflab torch: chrome traces of torch.profiler and `--run script.py`, checked by hand."""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main
from rooflab.errors import ParseError
from rooflab.ingest.torch_ops import op_work
from rooflab.ingest.torch_ops_base import OpCall
from rooflab.ingest.torch_trace import load_torch_trace

SCRIPT = """
import sys
import torch
steps = int(sys.argv[1])
a = torch.randn(64, 128)
b = torch.randn(128, 32)
c = torch.randn(64, 32)
for _ in range(steps):
    y = torch.mm(a, b)
    z = y + c
print("done", steps)
"""

MM_FLOP = 2 * 64 * 128 * 32
MM_BYTES = 4 * (64 * 128 + 128 * 32 + 64 * 32)
ADD_FLOP = 64 * 32
ADD_BYTES = 4 * 3 * 64 * 32


def by_op(imp):
    return {k.meta["op"]: k for k in imp.kernels}


def test_run_script_mm_and_add_by_hand(tmp_path):
    pytest.importorskip("torch")
    from rooflab.ingest.torch_run import run_script

    script = tmp_path / "model.py"
    script.write_text(SCRIPT)
    trace = run_script(str(script), ["3"], trace_path=str(tmp_path / "t.json"))
    ops = by_op(load_torch_trace(trace))
    mm, add = ops["mm"], ops["add"]
    assert mm.calls == 3 and add.calls == 3
    assert mm.flop == {"fp32": pytest.approx(3 * MM_FLOP)}
    assert mm.bytes == {"DRAM": 3 * MM_BYTES}
    assert add.flop == {"fp32": 3 * ADD_FLOP}
    assert add.bytes == {"DRAM": 3 * ADD_BYTES}
    assert mm.seconds > 0 and len(mm.samples) == 3
    assert mm.meta["shapes"] == [[64, 128], [128, 32]]


def test_cli_run_json(tmp_path, capsys):
    pytest.importorskip("torch")
    script = tmp_path / "model.py"
    script.write_text(SCRIPT)
    assert main(["torch", "--run", str(script), "2", "--json"]) == 0
    out, err = capsys.readouterr()
    data = json.loads(out)            # the script's print went to stderr
    assert "done 2" in err
    names = [k["name"] for k in data["kernels"]]
    assert "aten::mm [64x128, 128x32]" in names and "aten::add [64x32, 64x32]" in names
    rows = [a for a in data["analysis"] if a["kernel"] == "aten::mm [64x128, 128x32]"]
    assert rows[0]["ai"] == pytest.approx(MM_FLOP / MM_BYTES)


def test_script_error_is_reported_not_raised(tmp_path, capsys):
    pytest.importorskip("torch")
    script = tmp_path / "bad.py"
    script.write_text("import torch\nx = 1\nraise ValueError('boom')\n")
    assert main(["torch", "--run", str(script)]) == 2
    err = capsys.readouterr().err
    assert f"{script}:3" in err and "ValueError: boom" in err and "Traceback" not in err


def _event(name, ts, dur, ext, dims=None, types=None, cat="cpu_op", concrete=None):
    args = {"External id": ext}
    if dims is not None:
        args.update({"Input Dims": dims, "Input type": types,
                     "Concrete Inputs": concrete or [""] * len(dims)})
    return {"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": dur,
            "args": args}


def test_cuda_trace_links_kernels_by_external_id_and_counts_nested_once(tmp_path):
    events = [
        # aten::linear (no formula) -> aten::addmm (counted) -> its kernel; t() is free
        _event("aten::linear", 0, 100, 1, [[8, 16], [4, 16], [4]], ["c10::Half"] * 3),
        _event("aten::t", 1, 5, 2, [[4, 16]], ["c10::Half"]),
        _event("aten::addmm", 10, 80, 3, [[4], [8, 16], [16, 4], [], []],
               ["c10::Half", "c10::Half", "c10::Half", "Scalar", "Scalar"]),
        _event("ampere_fp16_gemm", 200, 7.5, 3, cat="kernel"),
        _event("aten::add", 300, 20, 4, [[8, 4], [4], []], ["c10::Half", "c10::Half", "Scalar"]),
        _event("vectorized_elementwise", 400, 2.5, 4, cat="kernel"),
    ]
    path = tmp_path / "cuda.json"
    path.write_text(json.dumps({"traceEvents": events,
                                "deviceProperties": [{"id": 0, "name": "NVIDIA H200"}]}))
    imp = load_torch_trace(str(path))
    ops = by_op(imp)
    assert set(ops) == {"addmm", "add"}
    assert ops["addmm"].seconds == pytest.approx(7.5e-6)      # the kernel, not the CPU op
    assert ops["addmm"].flop == {"fp16": 2 * 8 * 4 * 16}   # 2mnk: bias add not counted
    assert ops["addmm"].bytes == {"DRAM": 2 * (8 * 16 + 16 * 4 + 8 * 4 + 4)}
    assert ops["add"].bytes == {"DRAM": 2 * (8 * 4 + 4 + 8 * 4)}   # broadcast bias read once
    assert ops["add"].seconds == pytest.approx(2.5e-6)
    assert imp.devices == ("NVIDIA H200",)
    assert any("External id" in n for n in imp.notes)


def test_op_rules():
    w = op_work(OpCall("aten::bmm", ((4, 8, 16), (4, 16, 2)), ("float", "float")))
    assert (w.flop, w.bytes) == (2 * 4 * 8 * 2 * 16, 4 * 4 * (8 * 16 + 16 * 2 + 8 * 2))
    s = op_work(OpCall("aten::_softmax", ((10, 20), None, None), ("float", "Scalar", "Scalar"),
                       ("", "-1", "False")))
    assert (s.flop, s.bytes) == (4 * 200, 4 * 2 * 200)
    conv = op_work(OpCall("aten::convolution", ((1, 3, 8, 8), (4, 3, 3, 3), None, None, None,
                                                 None, None, None, None),
                          ("float",) * 2 + ("",) * 7,
                          ("", "", "", "[1, 1]", "[1, 1]", "[1, 1]", "False", "[0, 0]", "1")))
    assert conv.flop == 2 * 1 * 4 * 8 * 8 * 3 * 3 * 3
    assert op_work(OpCall("aten::mm", ((3,), (3,)), ("float", "float"))) is None


def test_bad_traces(tmp_path, capsys):
    cut = tmp_path / "cut.json"
    cut.write_text('{"traceEvents": [{"ph": "X", "cat": "cpu_op"')
    with pytest.raises(ParseError, match="not valid JSON"):
        load_torch_trace(str(cut))
    noshape = tmp_path / "noshape.json"
    noshape.write_text(json.dumps({"traceEvents": [_event("aten::mm", 0, 1, 1)]}))
    with pytest.raises(ParseError, match="record_shapes=True"):
        load_torch_trace(str(noshape))
    assert main(["torch", str(tmp_path / "missing.json")]) == 2
    assert "file not found" in capsys.readouterr().err


def test_attention_rule_counts_causal_pairs():
    # q, k, v [B=2, H=4, L=8, D=16], causal: 8*9/2 = 36 scores per head, 4*D FLOP each
    call = OpCall("aten::scaled_dot_product_attention",
                  ((2, 4, 8, 16),) * 3 + ((),) * 5,
                  ("float",) * 3 + ("", "Scalar", "Scalar", "", "Scalar"),
                  ("", "", "", "", "0.", "True", "", "False"))
    w = op_work(call)
    assert w.flop == 4 * 2 * 4 * 36 * 16
    assert w.bytes == 4 * 4 * (2 * 4 * 8 * 16)      # q, k, v read and o written, fp32
