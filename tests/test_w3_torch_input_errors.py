"""rooflab torch on rejected events and on files that are not a text trace: the error says
why (the skip reasons) or what the file is (an .ncu-rep goes to `rooflab ncu`)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from rooflab.cli.main import main
from rooflab.errors import ParseError
from rooflab.ingest.torch_trace import load_torch_trace

NCU_REP = Path("/work/shared/fixtures/ncu/nersc-gpp/output1.ncu-rep")


def _mm(i, dur, b_rows=16):
    return {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1,
            "ts": 10 * i, "dur": dur,
            "args": {"External id": i, "Input Dims": [[8, 16], [b_rows, 4]],
                     "Input type": ["float", "float"], "Concrete Inputs": ["", ""]}}


def _write(tmp_path, name, events):
    path = tmp_path / name
    path.write_text(json.dumps({"traceEvents": events}))
    return str(path)


def test_every_mm_with_a_negative_duration_names_the_reason(tmp_path):
    empty = {"ph": "X", "cat": "cpu_op", "name": "aten::empty", "pid": 1, "tid": 1, "ts": 0,
             "dur": 1, "args": {"Input Dims": [[]], "Input type": ["float"]}}
    path = _write(tmp_path, "negdur.json", [empty] + [_mm(i, -3) for i in range(1, 4)])
    with pytest.raises(ParseError) as exc:
        load_torch_trace(path)
    msg = str(exc.value)
    assert "no op counted (3 event(s) skipped, first: event #1 (aten::mm, cpu_op): " \
           "negative duration (dur -3 us)" in msg
    assert "no op with a FLOP formula in the trace" not in msg   # the trace is full of mm


def test_every_op_rejected_before_the_tree_names_the_reason(tmp_path):
    path = _write(tmp_path, "alldur.json", [_mm(i, -3) for i in range(3)])
    with pytest.raises(ParseError, match=r"no usable cpu_op event \(3 event\(s\) skipped, "
                                         r"first: event #0 \(aten::mm"):
        load_torch_trace(path)


def test_every_mm_with_a_negative_dim_names_the_reason(tmp_path, capsys):
    path = _write(tmp_path, "negdim.json", [_mm(i, 3, b_rows=-16) for i in range(3)])
    assert main(["torch", path]) == 2
    err = capsys.readouterr().err
    assert "inner dimensions disagree (8x16 @ -16x4: 16 != -16" in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_a_trace_with_no_rule_keeps_the_rule_list(tmp_path):
    relu = {"ph": "X", "cat": "cpu_op", "name": "aten::nothing_known", "pid": 1, "tid": 1,
            "ts": 0, "dur": 5, "args": {"Input Dims": [[4, 4]], "Input type": ["float"]}}
    with pytest.raises(ParseError, match=r"no op with a FLOP formula in the trace \(mm, "):
        load_torch_trace(_write(tmp_path, "none.json", [relu]))


@pytest.mark.skipif(not NCU_REP.is_file(), reason="ncu fixture not present")
def test_an_ncu_rep_points_to_rooflab_ncu_by_name_and_by_content(tmp_path, capsys):
    renamed = tmp_path / "report.bin"       # the magic bytes, not the suffix
    shutil.copyfile(NCU_REP, renamed)
    for path in (str(NCU_REP), str(renamed)):
        assert main(["torch", path]) == 2
        err = capsys.readouterr().err
        assert "an Nsight Compute report (.ncu-rep); read it with `rooflab ncu FILE`" in err
        assert "utf-8" not in err and "codec" not in err


def test_any_other_binary_file_is_not_a_text_trace(tmp_path, capsys):
    blob = tmp_path / "a.out"
    blob.write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(range(128, 256)) * 4)
    assert main(["torch", str(blob)]) == 2
    err = capsys.readouterr().err
    assert "a binary file, not a text trace" in err and "codec" not in err
