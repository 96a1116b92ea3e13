"""The `--json` error document's `field` is the raiser's (s20 x2 F2): the readers name it
on the exception (errors.field_named), so it survives a reworded message, and a kernel
file's bad field, the commonest input, names it too. The `error:` lines are the ones
before, word for word.
"""

from __future__ import annotations

import json

import pytest
from cli_inproc import json_error

from rooflab import errors
from rooflab.errors import InputError
from rooflab.model.roof_schema import roof_from_dict
from rooflab.model.schema import kernel_from_dict

FP32 = {"precision": "fp32", "unit": "vector", "flop_per_s": 1e12}
DRAM = {"level": "DRAM", "bytes_per_s": 1e11}
OK_KERNEL = {"name": "k", "flop": {"fp32": 1e9}, "bytes": {"DRAM": 1e8}, "seconds": 1e-3}
FILES = {
    "bk.json": {"kernels": [dict(OK_KERNEL, flop={"fp32": "x"})]},
    "bcalls.json": {"kernels": [OK_KERNEL, dict(OK_KERNEL, name="j", calls=2.5)]},
    "bthreads.json": {"kernels": [dict(OK_KERNEL, meta={"threads": "two"})]},
    "ok.json": {"kernels": [OK_KERNEL]},
    "neg.json": {"name": "x", "compute": [dict(FP32, flop_per_s=-1)], "memory": [DRAM]},
    "badroof.json": {"name": "x", "compute": [FP32, dict(FP32, flop_per_s="abc")],
                     "memory": [DRAM]},
    "kroof.json": {"kernels": [OK_KERNEL],
                   "roof": {"name": "r", "compute": [FP32], "memory": [{"level": "DRAM"}]}},
}


@pytest.fixture
def files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name, doc in FILES.items():
        (tmp_path / name).write_text(json.dumps(doc))
    (tmp_path / "k.csv").write_text("name,flop,bytes,seconds\nk,1e9,1e8,abc\n")
    return tmp_path


# (argv, path, line, field, the error: line as it was before)
CASES = [
    (["report", "bk.json", "--on", "H100"], "bk.json", None, "kernels[0].flop.fp32",
     "error: bk.json: kernels[0] 'k': flop: field 'fp32' must be a plain number of FLOP "
     "(SI base units, no unit suffix); got 'x'"),
    (["report", "bcalls.json", "--on", "H100"], "bcalls.json", None, "kernels[1].calls",
     "error: bcalls.json: kernels[1] 'j': field 'calls' must be a whole number of "
     "launches; got 2.5"),
    (["report", "bthreads.json", "--on", "H100"], "bthreads.json", None,
     "kernels[0].meta.threads",
     "error: bthreads.json: kernels[0]: meta: 'threads' must be a whole number of threads "
     ">= 1 (the threads the kernel ran on, e.g. 1 for a one-thread C loop); got 'two'"),
    (["report", "k.csv", "--on", "H100"], "k.csv", 2, "seconds",
     "error: k.csv:2: field 'seconds' is not a number: 'abc'"),
    # the Ceiling's own check: the value's field, not only the entry ('compute[0]')
    (["report", "ok.json", "--on", "neg.json"], "neg.json", None, "compute[0].flop_per_s",
     "error: neg.json.compute[0]: ceiling fp32 vector must be positive; got -1.0"),
    (["report", "ok.json", "--on", "badroof.json"], "badroof.json", None,
     "compute[1].flop_per_s",
     "error: badroof.json.compute[1]: field 'flop_per_s' must be a plain number of FLOP/s "
     "(SI base units, no unit suffix); got 'abc'"),
    (["report", "kroof.json"], "kroof.json", None, "roof.memory[0]",
     "error: kroof.json: roof.memory[0]: needs 'flop_per_s' (with 'precision') or "
     "'bytes_per_s' (with 'level')"),
]
IDS = ["kernel-flop", "kernel-calls", "kernel-meta-threads", "csv-column",
       "ceiling-positive", "roof-file", "kernel-file-roof"]


@pytest.mark.parametrize("argv,path,line,field,said", CASES, ids=IDS)
def test_the_field_is_the_raisers(files, capsys, monkeypatch, argv, path, line, field, said):
    # the message-reading fallback answers nothing: what is left is the raiser's own
    monkeypatch.setattr(errors, "_field_in", lambda message, path: None)
    error, got = json_error(capsys, argv)
    assert got == said
    assert (error["kind"], error["path"], error["line"], error.get("field")) == (
        "parse", path, line, field)


def test_the_readers_name_the_field_in_python():
    with pytest.raises(InputError) as got:
        kernel_from_dict({"name": "k", "bytes": {"DRAM": "1e8 B"}}, where="kernels[3]")
    assert got.value.field == "kernels[3].bytes.DRAM"
    with pytest.raises(InputError) as got:
        roof_from_dict({"compute": [FP32, {"precision": 16, "flop_per_s": 1e12}]},
                       where="p.json: roof")
    assert got.value.field == "p.json: roof.compute[1].precision"
    # as the file's own field once the file is known
    assert errors.in_file(got.value.field, "p.json") == "roof.compute[1].precision"
    assert errors.in_file("p.json.measured.memory[3].bytes_per_s", "p.json") == \
        "measured.memory[3].bytes_per_s"
    assert errors.in_file("p.json", "p.json") is None
    assert errors.in_file("p.json2.x", "p.json") == "p.json2.x"
