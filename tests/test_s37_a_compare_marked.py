"""`rooflab compare b.json w.json` pairs a kernel with the what-if of it that `whatif -o`
marked with its dtype change (s37 A, a first user's walk through docs/json.md: the
example `bench -o b.json; whatif b.json --precision fp16 -o w.json; compare b.json
w.json` ended in 'no kernel of b.json has the name of one in w.json')."""

from __future__ import annotations

import json

from cli_inproc import json_of, one_line_error


def _file(tmp_path, name: str, kernels: list[tuple[str, float]]) -> str:
    path = tmp_path / name
    path.write_text(json.dumps({"kernels": [
        {"name": n, "flop": {"fp64": 1e6}, "bytes": {"DRAM": 8e6}, "seconds": s}
        for n, s in kernels]}))
    return str(path)


def test_marked_names_are_matched(tmp_path, capsys):
    """copy 4 ms -> 1 ms = 4.00x, gemm 8 ms -> 2 ms = 4.00x: total 12 ms -> 3 ms = 4.00x;
    the note names the first pair and how many more."""
    b = _file(tmp_path, "b.json", [("copy_fp64", 4e-3), ("gemm_fp64", 8e-3)])
    w = _file(tmp_path, "w.json", [("copy_fp64 [fp64->fp16]", 1e-3),
                                   ("gemm_fp64 [fp64->fp16]", 2e-3)])
    doc = json_of(capsys, ["compare", b, w, "--json"])
    pairs = {m["before_name"]: (m["kernel"], m["speedup"]) for m in doc["matches"]}
    assert pairs == {"copy_fp64": ("copy_fp64 [fp64->fp16]", 4.0),
                     "gemm_fp64": ("gemm_fp64 [fp64->fp16]", 4.0)}
    assert doc["only_before"] == [] and doc["only_after"] == []
    assert doc["speedup"] == 4.0
    assert ("matched by name and whatif's [old->new] mark: 'copy_fp64' with "
            "'copy_fp64 [fp64->fp16]' and 1 more") in doc["notes"]


def test_an_exact_name_still_wins_and_unrelated_names_still_refuse(tmp_path, capsys):
    """'copy' is in both runs: matched as it is (2 ms -> 1 ms = 2.00x), its marked twin
    left over; 'a' and 'b [fp64->fp16]' share no name: refused as before."""
    b = _file(tmp_path, "b.json", [("copy", 2e-3), ("x", 1e-3)])
    w = _file(tmp_path, "w.json", [("copy", 1e-3), ("copy [fp64->fp16]", 5e-4),
                                   ("y", 1e-3)])
    doc = json_of(capsys, ["compare", b, w, "--json"])
    assert [(m["before_name"], m["kernel"], m["speedup"]) for m in doc["matches"]] == [
        ("copy", "copy", 2.0)]
    b2 = _file(tmp_path, "b2.json", [("a", 1e-3), ("c", 1e-3)])
    w2 = _file(tmp_path, "w2.json", [("b [fp64->fp16]", 1e-3), ("d", 1e-3)])
    assert "has the name of one in" in one_line_error(capsys, ["compare", b2, w2])
