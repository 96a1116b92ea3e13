"""-o given a folder (`-o out/`, `-o .`): say it is a folder, not "unknown suffix ''"."""

from __future__ import annotations

import json

from rooflab.cli.main import main

TRACE = {"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 0, "dur": 50,
                          "args": {"Input Dims": [[64, 128], [128, 32]],
                                   "Input type": ["float", "float"]}}]}


def test_output_folder_is_named_as_a_folder(tmp_path, capsys):
    trace = tmp_path / "t.json"
    trace.write_text(json.dumps(TRACE))
    assert main(["torch", str(trace), "-o", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err == (f"error: -o {tmp_path}: is a directory; give a file in it, e.g. "
                   f"{tmp_path / 'roofline.png'} (.png, .svg, .json or .csv)\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.json"]   # nothing written
