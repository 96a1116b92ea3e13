"""Review s35 D: a `rooflab train --dp` output file fed back to whatif, with its
communication row's meta.grad_bytes hand-edited.

whatif --precision scales the row's bytes by max(size, 2) / grad_bytes (model/
whatif_precision.py: comm_in_precision). Before: grad_bytes "x" or [4] was a traceback
(exit 70, ValueError/TypeError in float()); 0 was read as 2 without a word (`0 or 2`);
-2 gave -4e9 B and an error about the kernel's bytes[NVLink] that named neither the file
nor grad_bytes. Now the reader refuses each (exit 2), naming the file, the kernel and the
key. The control: one communication row, 4e9 B at grad_bytes 2 (bf16); under fp8 the
all-reduce stays at max(1, 2) / 2 = 1x its bytes: 4e9 B after.
"""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main

ROW = {"name": "comm.allreduce", "flop": {}, "bytes": {"NVLink": 4e9}, "seconds": None,
       "calls": 1, "meta": {"op": "allreduce", "train_part": "comm", "devices": 2,
                            "grad_bytes": 2}}


def _file(tmp_path, grad_bytes) -> str:
    row = json.loads(json.dumps(ROW))
    row["meta"]["grad_bytes"] = grad_bytes
    path = tmp_path / "step.json"
    path.write_text(json.dumps({"schema_version": 2, "kernels": [row]}))
    return str(path)


@pytest.mark.parametrize("value,got", [("x", "got 'x'"), (0, "got 0"), (-2, "got -2"),
                                       ([4], "got a list [4]")])
def test_a_grad_bytes_that_is_no_positive_number_is_refused(tmp_path, capsys, value, got):
    path = _file(tmp_path, value)
    code = main(["whatif", path, "--on", "H100 SXM", "--precision", "fp8", "--json"])
    captured = capsys.readouterr()
    assert code == 2 and "Traceback" not in captured.err, captured.err
    assert (f"error: {path}: kernels[0] 'comm.allreduce': meta.grad_bytes must be a number "
            f"> 0, the bytes per gradient element") in captured.err
    assert got in captured.err
    doc = json.loads(captured.out)["error"]
    assert (doc["path"], doc["field"]) == (path, "kernels[0].meta.grad_bytes")


def test_the_file_as_train_writes_it_is_read(tmp_path, capsys):
    path = _file(tmp_path, 2)
    assert main(["whatif", path, "--on", "H100 SXM", "--precision", "fp8", "--json"]) == 0
    (after,) = json.loads(capsys.readouterr().out)["after"]["kernels"]
    assert after["bytes"] == {"NVLink": 4e9}
