"""Session 36 I: a bad size or percentage said as the user typed it, and a bad option value
of one kind (`input`) under --json whether it is no number, nan or out of range."""

from __future__ import annotations

import json

import pytest
from cli_inproc import run_cli

from rooflab.cli.main import main


def _error_line(capsys, argv) -> str:
    assert main(argv) == 2
    return capsys.readouterr().err.splitlines()[0]


@pytest.mark.parametrize("typed", ["inf", "Infinity"])
def test_ai_size_inf_is_no_size(capsys, typed):
    """float('inf') is infinity, which the size check called "beyond 1e308", a number the
    user never typed; `inf` is no size, as `-inf` and `nan` were already said."""
    assert _error_line(capsys, ["ai", "matmul", typed, "64", "64"]) == (
        f"error: m must be a whole number such as 4096 or 1e6; got '{typed}'")


@pytest.mark.parametrize("typed", ["1e309", "1e19", "99999999999999999999"])
def test_ai_size_too_large_is_quoted_as_typed(capsys, typed):
    """1e309 is past a double (was "beyond 1e308"), 1e19 > 2**63 - 1 = 9.22e18 (was
    "1e+19"), 20 nines (was "1e+20"): each quoted as typed."""
    line = _error_line(capsys, ["ai", "matmul", "64", typed, "64"])
    assert line.startswith(f"error: n is {typed}, larger than rooflab takes (at most 2**63 - 1")


@pytest.mark.parametrize("argv, said", [
    (["report", "K", "--on", "h100", "--fail-below", "-1"],
     "--fail-below takes a percentage of the roof above 0 and at most 100 (e.g. 50); got -1"),
    (["report", "K", "--on", "h100", "--fail-below", "101"],
     "--fail-below takes a percentage of the roof above 0 and at most 100 (e.g. 50); got 101"),
    (["compare", "K", "K", "--fail-if-slower", "-1"],
     "--fail-if-slower takes a finite percentage >= 0 (e.g. 5); got -1"),
    (["compare", "K", "K", "--fail-if-slower", "-1.50"],
     "--fail-if-slower takes a finite percentage >= 0 (e.g. 5); got -1.50"),
    (["ai", "elementwise", "100", "--flop-per-element", "-1"],
     "--flop-per-element must be a finite number >= 0 (1 for y = x + 1, 2 for an FMA); got -1"),
])
def test_gate_percentage_said_as_typed(tmp_path, capsys, argv, said):
    """The verb's own range check printed the float: -1 typed read "got -1.0", 101 "got
    101.0", -1.50 "got -1.5"; now the text as typed (finite_options.as_typed)."""
    k = tmp_path / "k.csv"
    k.write_text("name,flop,bytes,seconds\nk,1e9,1e6,1e-3\n")
    argv = [str(k) if a == "K" else a for a in argv]
    assert _error_line(capsys, argv) == f"error: {said}"


def test_valid_gate_value_prints_as_before(tmp_path, capsys):
    """A valid --fail-below keeps its `:g` formatting: 50.0 typed reads "below 50 %" in the
    gate's verdict (the kernel runs 1e12 FLOP in 1 s = 1 TFLOP/s at AI 1e6, compute-bound:
    1 / 67 TFLOP/s fp32 of an H100 SXM = 1.5 % of its roof)."""
    k = tmp_path / "k.csv"
    k.write_text("name,flop,bytes,seconds,precision\nk,1e12,1e6,1,fp32\n")
    done = run_cli("report", str(k), "--on", "h100", "--fail-below", "50.0")
    assert done.returncode == 1
    assert "below 50 % of the roof: k (1.5 %)" in done.stderr and "50.0" not in done.stderr


@pytest.mark.parametrize("typed", ["abc", "nan", "-1"])
def test_bad_fail_if_slower_is_one_kind_under_json(tmp_path, capsys, typed):
    """docs/json.md's kinds: `input` is an option's value, `usage` the command line's shape.
    `abc` (no number: click's converter) was `usage` while `nan` and `-1` (the verb's own
    check) were `input`: the same mistake, now `input` all three."""
    k = tmp_path / "k.csv"
    k.write_text("name,flop,bytes,seconds\nk,1e9,1e6,1e-3\n")
    assert main(["compare", str(k), str(k), "--fail-if-slower", typed, "--json"]) == 2
    doc = json.loads(capsys.readouterr().out)["error"]
    assert (doc["kind"], doc["exit_code"]) == ("input", 2)


def test_unknown_option_stays_usage(tmp_path, capsys):
    """An unknown option is the command line's shape: `usage`, as before."""
    assert main(["report", "k.csv", "--bogus", "--json"]) == 2
    assert json.loads(capsys.readouterr().out)["error"]["kind"] == "usage"
