"""A file given to the wrong verb names the verb that reads it (exit 2, one error line).

Before: `rooflab torch out.csv` (an ncu CSV) said "not valid JSON (...): a file cut short?",
`rooflab ncu trace.json` told how to collect an ncu CSV, and a rooflab profile given to
either was not recognised as one.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from tests.test_ncu_csv import BASIC, DETAILS_HEAD, details_rows

from rooflab.cli.main import main

TRACE = {"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 0, "dur": 5,
                          "args": {"Input Dims": [[2, 2], [2, 2]]}}]}
PROFILE = {"schema_version": 1, "roof": {"name": "box", "compute": [], "memory": []}}
ROCPROF = "Index,KernelName,gpu-id,BeginNs,EndNs,SQ_INSTS_VALU_FMA_F32\n0,k,0,0,10,1\n"


@pytest.fixture
def files(tmp_path):
    out = {}
    for name, text in (("trace.json", json.dumps(TRACE)), ("me.json", json.dumps(PROFILE)),
                       ("out.csv", "\n".join([DETAILS_HEAD] + details_rows(0, BASIC)) + "\n"),
                       ("results.csv", ROCPROF)):
        (tmp_path / name).write_text(text)
        out[name] = str(tmp_path / name)
    gz = tmp_path / "run.pt.trace.json.gz"
    gz.write_bytes(gzip.compress(json.dumps(TRACE).encode()))
    out["gz"] = str(gz)
    return out


def _error(capsys, argv) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err
    return err


@pytest.mark.parametrize("key", ["trace.json", "gz"])
def test_ncu_given_a_torch_trace_names_rooflab_torch(files, capsys, key):
    err = _error(capsys, ["ncu", files[key]])
    assert "PyTorch profiler trace; read it with `rooflab torch FILE`" in err
    assert "ncu --csv --metrics" not in err


def test_ncu_given_a_profile_says_where_it_goes(files, capsys):
    assert "goes to --on FILE" in _error(capsys, ["ncu", files["me.json"]])


def test_torch_given_profiler_csvs_names_their_verbs(files, capsys):
    err = _error(capsys, ["torch", files["out.csv"]])
    assert "Nsight Compute CSV; read it with `rooflab ncu FILE`" in err
    assert "cut short" not in err
    err = _error(capsys, ["torch", files["results.csv"]])
    assert "rocprof CSV; read it with `rooflab rocprof FILE`" in err


def test_torch_given_a_profile_says_it_is_rooflab_json(files, capsys):
    err = _error(capsys, ["torch", files["me.json"]])
    assert "no 'traceEvents' list; it is a rooflab JSON file" in err


def test_gzipped_trace_cut_short_says_so(tmp_path, capsys):
    # a *.pt.trace.json.gz copied part-way: was "cannot read trace: Compressed file ended
    # before the end-of-stream marker was reached"
    blob = gzip.compress(json.dumps(TRACE).encode() * 50)
    cut = tmp_path / "cut.pt.trace.json.gz"
    cut.write_bytes(blob[: len(blob) // 2])
    err = _error(capsys, ["torch", str(cut)])
    assert f"error: {cut}: cannot read trace: the gzip stream ends early (file cut short?)" in err


def test_tensorboard_log_folder_names_its_traces(tmp_path, capsys):
    # torch.profiler.tensorboard_trace_handler("log") writes log/HOST_PID.TS.pt.trace.json
    log = tmp_path / "log"
    log.mkdir()
    (log / "host_1.100.pt.trace.json").write_text(json.dumps(TRACE))
    err = _error(capsys, ["torch", str(log)])
    assert "is a directory; give one of its 1 trace file(s)" in err
    assert str(log / "host_1.100.pt.trace.json") in err


def test_csv_export_saved_as_ncu_rep_is_named(files, tmp_path, capsys):
    pytest.importorskip("ncu_report")
    fake = tmp_path / "out.ncu-rep"
    fake.write_bytes(Path(files["out.csv"]).read_bytes())
    err = _error(capsys, ["ncu", str(fake)])
    assert "it is an `ncu --csv` export, not a binary report; give it a .csv name" in err
