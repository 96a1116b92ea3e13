"""Session 34 F: a float option given infinity or NaN is refused as typed, in one place
(cli/finite_options.py) for every verb: `rooflab llm llama-2-7b --on H100
--hop-latency-us 1e999` said "got inf" (the verb's own check, after float() had made
1e999 infinite), and an option without a check of its own took the infinity in."""

from __future__ import annotations

import json

import pytest
from cli_option_walk import long_options

from rooflab.cli.finite_options import OWN_RANGE, is_float_option, non_finite
from rooflab.cli.main import main


# (s35 B: an option whose verb says its range in its own words, llm's --hop-latency-us or
# train's --step-ms, says inf and nan in them: tests/test_s35_b_finite_own_words.py)
@pytest.mark.parametrize("args, message", [
    (["scale", "--on", "a100", "--hop-latency-us", "1e999"],
     "error: --hop-latency-us must be a finite number such as 2.5; got '1e999'"),
    (["scale", "--on", "a100", "--hop-latency-us=inf"],
     "error: --hop-latency-us must be a finite number such as 2.5; got 'inf'"),
    (["scale", "--on", "a100", "--hop-latency-us", "-inf"],
     "error: --hop-latency-us must be a finite number such as 2.5; got '-inf'"),
    (["train", "gpt2", "--on", "a100", "--hop-latency-us", "nan"],
     "error: --hop-latency-us must be a finite number such as 2.5; got 'nan'"),
])
def test_non_finite_float_refused_as_typed(capsys, args, message):
    assert main(args) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0] == message      # old: "... (e.g. 10); got inf" or the verb ran on
    assert err[1].startswith(f"Usage: rooflab {args[0]}")


def test_json_error_document_says_the_same(capsys):
    args = ["scale", "--on", "a100", "--hop-latency-us", "1e999", "--json"]
    assert main(args) == 2
    doc = json.loads(capsys.readouterr().out)
    assert doc["error"]["message"] == ("--hop-latency-us must be a finite number such as "
                                       "2.5; got '1e999'")
    assert doc["error"]["kind"] == "input"   # an option's value (s36 I; was "usage")


def test_finite_values_pass_the_check():
    # 1e308 is the largest order of magnitude a double holds; 1e309 is past it (infinity)
    assert [non_finite(v) for v in ("2.5", "1e308", " 0 ", "x", None, 10.0)] == [False] * 6
    assert [non_finite(v) for v in ("inf", "1e309", "-Infinity", "NaN", float("inf"))] \
        == [True] * 5


@pytest.mark.parametrize("typed", ["inf", "1e999", "nan"])
def test_every_float_option_of_every_verb_refuses(capsys, typed):
    tried, leaks = 0, []
    for path, opt, p in long_options():
        if not is_float_option(p) or opt in OWN_RANGE.get(path[-1], ()):
            continue   # the verb's own words (s35 B): test_s35_b_finite_own_words.py
        tried += 1
        code = main([*path, opt, typed])
        err = capsys.readouterr().err.splitlines()
        want = f"error: {opt} must be a finite number such as 2.5; got '{typed}'"
        if code != 2 or not err or err[0] != want:
            leaks.append(f"{' '.join(path)} {opt}: {code} {err[:1]}")
    assert tried >= 4           # 20 float options on 2026-12-03, 16 with their own words
    assert leaks == []
