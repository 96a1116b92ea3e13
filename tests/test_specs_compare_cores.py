"""`specs compare PROFILE CPU`: a profile probed on fewer cores than the catalog part is said
to be a slice of it (review r1_docs F1: a 2-vCPU VM read 3 % of an EPYC 9654's DRAM, 1 % of
its fp64, with no word that 2 of 96 cores were compared)."""

import json

from rooflab.cli.main import main


def _profile(tmp_path, cores, name="p.json"):
    """A probed-profile shape: host with its cores, a measured roof (DRAM 12.4 GB/s, fp64
    23.1 GFLOP/s: the docs' VM figures)."""
    roof = {"name": "vm", "kind": "measured",
            "compute": [{"precision": "fp64", "unit": "vector", "flop_per_s": 23.1e9}],
            "memory": [{"level": "DRAM", "bytes_per_s": 12.4e9}]}
    doc = {"schema_version": 1, "host": {"cores": cores, "threads_used": cores,
                                         "memory_bytes": 24e9},
           "nominal": None, "measured": roof}
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return str(path)


def test_a_two_core_profile_beside_a_96_core_part_is_called_a_slice(tmp_path, capsys):
    p = _profile(tmp_path, 2)
    assert main(["specs", "compare", p, "EPYC 9654"]) == 0
    out = capsys.readouterr().out
    assert "probed on 2 core(s)" in out and "for its 96 cores" in out
    assert "2.1 %" in out                     # 2 / 96 = 2.08 %
    assert main(["specs", "compare", p, "EPYC 9654", "--json"]) == 0
    notes = json.loads(capsys.readouterr().out)["notes"]
    assert len(notes) == 1 and "2-core slice" in notes[0]


def test_a_whole_machine_profile_or_a_gpu_gets_no_note(tmp_path, capsys):
    whole = _profile(tmp_path, 96, "whole.json")
    assert main(["specs", "compare", whole, "EPYC 9654", "--json"]) == 0
    assert "notes" not in json.loads(capsys.readouterr().out)
    slice_ = _profile(tmp_path, 2, "slice.json")
    assert main(["specs", "compare", slice_, "h100", "--json"]) == 0   # a GPU: no cores
    assert "notes" not in json.loads(capsys.readouterr().out)
