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
    assert err == (f"error: -o {tmp_path}: is a directory; give a file name such as "
                   f"{tmp_path / 'roofline.png'}\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.json"]   # nothing written


def test_every_verb_names_a_folder_given_to_o(tmp_path, capsys):
    """One rule (cli/common.refuse_directory) for llm, probe and the profiler tables."""
    assert main(["llm", "tinyllama-1.1b", "--on", "T4", "-o", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: -o {tmp_path}: is a directory; give a file name such as "
                          f"{tmp_path / 'out.'}")
    assert list(tmp_path.iterdir()) == []


def test_report_names_a_folder_given_to_o(tmp_path, capsys):
    k = tmp_path / "k.json"
    k.write_text(json.dumps([{"name": "t", "flop": {"fp64": 1e6}, "bytes": {"DRAM": 1e7}}]))
    out = tmp_path / "out"
    out.mkdir()
    assert main(["report", str(k), "--on", "T4", "-o", str(out)]) == 2
    assert capsys.readouterr().err == (f"error: -o {out}: is a directory; give a file name "
                                       f"such as {out / 'report.html'}\n")
