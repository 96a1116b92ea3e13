"""Session 38 R (review of G's empty-value refusal, cli/file_args.refuse_empty_arguments).

G refused `--kernel ''` and `--exclude ''` with the other options whose '' read as not
given. But an empty regex filter is no filter by design (options.patterns drops empty
expressions), so `--exclude "$SKIP"` with SKIP empty, a script's way to say "leave out
none", was refused with exit 2. And the scan read every word of argv, so a script's own
arguments (`bench --run s.py -- --memory ''`, `torch --run s.py --memory ''`) were
refused as if they were rooflab's.
"""

from __future__ import annotations

import json

import pytest
from cli_inproc import json_of, one_line_error

from rooflab.cli.file_args import refuse_empty_arguments
from rooflab.cli.main import _command
from rooflab.errors import InputError

KERNELS = [{"name": "gemm", "flop": {"fp16": 1.9e11}, "bytes": {"DRAM": 1e9}},
           {"name": "copy", "flop": {"fp16": 1e6}, "bytes": {"DRAM": 4e9}}]


def test_an_empty_kernel_filter_keeps_every_kernel(tmp_path, capsys):
    """Two kernels, `--exclude ''` and `--kernel ''`: patterns('') is (), no filter, so
    both rows stay (2 = 2 kernels given; G's code: exit 2). `--memory ''` stays refused
    (the device's memory was taken without a word; HEAD read it as not given)."""
    k = tmp_path / "k.json"
    k.write_text(json.dumps({"kernels": KERNELS}))
    for option in ("--exclude", "--kernel"):
        doc = json_of(capsys, ["report", str(k), "--on", "H100 SXM", option, "", "--json"])
        assert [x["name"] for x in doc["kernels"]] == ["gemm", "copy"]
        doc = json_of(capsys, ["report", str(k), "--on", "H100 SXM", f"{option}=", "--json"])
        assert len(doc["kernels"]) == 2
    assert one_line_error(capsys, ["llm", "tinyllama-1.1b", "--on", "H100 SXM", "--memory",
                                   ""]) == ("error: --memory '': the value is empty (an "
                                            "unset variable?); give one, or leave --memory "
                                            "out")


@pytest.mark.parametrize("argv", [
    ["bench", "--run", "s.py", "--", "--memory", ""],
    ["bench", "--run", "s.py", "--", "--kind="],
    ["torch", "--run", "s.py", "--memory", ""],
    ["bench", "--run", "s.py", "--link-bw", ""],   # bench passes unknown options on too
])
def test_a_scripts_own_arguments_are_not_checked(argv):
    """Past `--` (and after a `torch --run` or `bench --run` script, whose verbs pass
    unknown options on) the words are the script's: an empty `--memory` there is its own
    business, not rooflab's --memory."""
    refuse_empty_arguments(_command(), argv)   # no InputError


def test_rooflabs_own_empty_option_before_the_script_is_refused():
    """`choose --kind '' -- x`: before `--` it is rooflab's option (the scan stops at
    `--`, it does not skip the words before it)."""
    with pytest.raises(InputError, match=r"^--kind '': the value is empty"):
        refuse_empty_arguments(_command(), ["choose", "--kind", "", "--", "x"])
