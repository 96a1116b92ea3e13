"""A bad number given to an option is said in rooflab's words (session 34, helper C item 4).

`rooflab scale --blocks x` printed typer's pydantic text, "error: Invalid value for
'--blocks': Input should be a valid integer, unable to parse string as an integer", and so
did every integer and float option of every verb (`llm --tp x`, `train --step-ms x`,
`bench --samples x`, ...). main._click_error now words them (cli/usage_words.py) as the
verbs' own checks do ("M must be a whole number such as 4096 or 1e6; got 'x'", ai_args):
what was typed, what is wanted; exit 2, the usage after it, --json's error document alike.
"""

import json
import typing

import pytest
from cli_option_walk import long_options

from rooflab.cli.main import main


@pytest.mark.parametrize("args, message", [
    (["scale", "--on", "a100", "--blocks", "x"],
     "error: --blocks must be a whole number such as 4 or 32; got 'x'"),
    (["scale", "--on", "a100", "--blocks", "1.5"],
     "error: --blocks must be a whole number such as 4 or 32; got '1.5'"),
    # 1e3 = 1000 is whole: the parser reads digits only, so the line says how to write it
    (["scale", "--on", "a100", "--blocks", "1e3"],
     "error: --blocks must be a whole number such as 4 or 32; got '1e3' "
     "(write it in digits: 1000)"),
    (["scale", "--on", "a100", "--blocks", "0"], "error: --blocks must be at least 1; got 0"),
    (["scale", "--on", "a100", "--hop-latency-us", "-1"],
     "error: --hop-latency-us must be at least 0; got -1"),
    # s34 F: nan (and inf) is refused as typed by cli/finite_options.py
    (["scale", "--on", "a100", "--hop-latency-us", "nan"],
     "error: --hop-latency-us must be a finite number such as 2.5; got 'nan'"),
    (["llm", "llama-3-8b", "--on", "a100", "--tp", "x"],
     "error: --tp must be a whole number such as 4 or 32; got 'x'"),
    (["train", "gpt2", "--on", "a100", "--step-ms", "x"],
     "error: --step-ms must be a number such as 2.5 or 1e-3; got 'x'"),
    (["bench", "--samples", "many"],
     "error: --samples must be a whole number such as 4 or 32; got 'many'"),
])
def test_bad_number_in_rooflab_words(capsys, args, message):
    assert main(args) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0] == message                     # old: "Invalid value for '--blocks': ..."
    assert err[1].startswith(f"Usage: rooflab {args[0]}")
    assert not any("Input should" in line for line in err)


def test_json_error_document_says_the_same(capsys):
    assert main(["scale", "--on", "a100", "--blocks", "x", "--json"]) == 2
    got = capsys.readouterr()
    doc = json.loads(got.out)
    assert doc["error"]["message"] == "--blocks must be a whole number such as 4 or 32; got 'x'"
    assert doc["error"]["kind"] == "input"   # an option's value (s36 I; was "usage")


def _numeric(p) -> str | None:
    """'int' or 'float' where a parameter takes one (typer's type descriptor, or click's
    type name in a typer without it)."""
    ann = getattr(getattr(p, "type_descriptor", None), "annotation", None)
    kinds = {a for a in (ann, *typing.get_args(ann)) if a in (int, float)} if ann else set()
    if kinds:
        return "float" if float in kinds else "int"
    name = getattr(getattr(p, "type", None), "name", "")
    return name if name in ("integer", "float") else None


def test_no_option_leaks_the_parser_words(capsys):
    """Every integer and float option of every verb, given 'x'."""
    tried, leaks = 0, []
    for path, opt, p in long_options():
        if _numeric(p) is None:
            continue
        tried += 1
        main([*path, opt, "x"])
        err = capsys.readouterr().err
        if "Input should" in err or f"{opt} must be a" not in err:
            leaks.append(f"{' '.join(path)} {opt}: {err.splitlines()[:1]}")
    assert tried >= 40          # 58 on 2026-12-03: scale 7, llm 13, train 9, ...
    assert leaks == []
