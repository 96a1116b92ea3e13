"""`specs show` and `specs compare` say which entry a family name picked, as --on does: a
30-core M3 Max reads 300 GB/s, not the 40-core part's 400 GB/s the bare name resolves to."""

from __future__ import annotations

import json

from rooflab.cli.main import main


def _run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_show_says_the_other_bin_of_a_family_name(capsys):
    code, out, err = _run(capsys, "specs", "show", "M3 Max", "--json")
    assert code == 0
    assert json.loads(out)["device"]["name"] == "Apple M3 Max (40-core GPU)"
    assert "note: 'M3 Max' is Apple M3 Max (40-core GPU) (also: M3 Max (30-core GPU)" in err


def test_a_named_bin_gets_no_note(capsys):
    code, out, err = _run(capsys, "specs", "show", "M3 Max 30-core", "--json")
    assert code == 0
    dram = [m for m in json.loads(out)["roof"]["memory"] if m["level"] == "DRAM"]
    assert dram[0]["bytes_per_s"] == 300e9
    assert "note:" not in err


def test_compare_says_each_family_name_once(capsys):
    code, _, err = _run(capsys, "specs", "compare", "M3 Max", "a100", "M3 Max")
    assert code == 0
    assert err.count("note: 'M3 Max' is Apple M3 Max (40-core GPU)") == 1
    assert "note: 'a100' is NVIDIA A100 80GB SXM" in err


def test_a_failed_show_says_only_its_error(capsys):
    code, _, err = _run(capsys, "specs", "show", "nonesuch")
    assert code == 2
    assert "unknown hardware 'nonesuch'" in err and "note:" not in err
