"""Session 35 B: a float option whose verb says its range in words of its own
(cli/finite_options.OWN_RANGE) says inf, 1e999 and nan in those words too, as typed, with
rooflab's "error:" and exit 2: `rooflab whatif t.json --on H100 --bytes-scale inf` read
"--bytes-scale must be a finite number such as 2.5; got 'inf'" while `--bytes-scale -1`
read whatif's own "bytes scale must be > 0 and finite (0.25 = a quarter of the bytes, AI x
4); got -1". No numbers to work out: the words before "got" are the same for -1 and 1e999,
and what follows "got" is what was typed (1e999 is past the largest double, 1.8e308).
"""

from __future__ import annotations

import json
import re

import pytest

from rooflab.cli.main import main

GENERIC = "must be a finite number such as 2.5"


@pytest.fixture(scope="module")
def kfile(tmp_path_factory):
    d = tmp_path_factory.mktemp("k")
    k = d / "k.json"
    k.write_text(json.dumps({"kernels": [{"name": "k", "flop": {"fp32": 1e9},
                                          "bytes": {"DRAM": 1e8}, "seconds": 1e-3}]}))
    return str(k)


# (verb path and the arguments it needs, option): every OWN_RANGE entry
def _cases(k):
    llm = ["llm", "tinyllama-1.1b", "--on", "T4"]
    train = ["train", "gpt2", "--on", "a100"]
    return [(["plot", k, "--on", "T4", "-o", k + ".png"], "--dpi"),
            (["report", k, "--on", "T4"], "--fail-below"),
            (["compare", k, k], "--fail-if-slower"),
            (["whatif", k, "--on", "H100"], "--bytes-scale"),
            ([*llm, "--tp", "2"], "--hop-latency-us"),
            ([*llm, "--tp", "2"], "--link-latency"),
            ([*llm, "--pp", "2"], "--pp-link-latency"),
            (llm, "--gpu-mem-util"), (llm, "--tpot-ms"), (llm, "--ttft-ms"),
            (["choose", k, "--among", "T4,A100"], "--gpu-mem-util"),
            (train, "--step-ms"), ([*train, "--tp", "2"], "--link-latency"),
            (["ai", "elementwise", "1000"], "--flop-per-element"),
            (["ai", "stencil", "64x64", "--points", "5"], "--flop-per-point"),
            (["ai", "upsample", "--n", "1", "--c", "3", "--h", "8", "--w", "8"], "--scale")]


def _error(capsys, argv):
    code = main(argv)
    err = capsys.readouterr().err.splitlines()
    return code, next((ln for ln in err if ln.startswith(("error", "Error"))), "")


def test_every_own_range_option_is_tried():
    from rooflab.cli.finite_options import OWN_RANGE

    tried = {(argv[1] if argv[0] == "ai" else argv[0], opt) for argv, opt in _cases("k")}
    assert tried == {(cmd, opt) for cmd, opts in OWN_RANGE.items() for opt in opts}


def test_inf_and_nan_read_in_the_verbs_own_words(kfile, capsys):
    wrong = []
    for argv, opt in _cases(kfile):
        code, below = _error(capsys, [*argv, opt, "-1"])
        # the value stands where -1 stood ('got -1', 'got -1.0', '--dpi -1: give ...')
        words = re.sub(r"-1(\.0)?(?![\d.])", "VALUE", below)
        for typed in ("1e999", "nan"):
            code, line = _error(capsys, [*argv, opt, typed])
            if (code != 2 or not line.startswith("error: ") or GENERIC in line
                    or line.replace(typed, "VALUE") != words):
                wrong.append(f"{opt} {typed}: {code} {line!r} (-1: {below!r})")
    assert wrong == []


def test_bytes_scale_inf_says_whatifs_words(kfile, capsys):
    assert _error(capsys, ["whatif", kfile, "--on", "H100", "--bytes-scale", "inf"]) == (
        2, "error: bytes scale must be > 0 and finite (0.25 = a quarter of the bytes, "
           "AI x 4); got inf")


def test_typed_prints_as_typed_in_any_format():
    from rooflab.cli.finite_options import Typed

    x = Typed(float("inf"), "1e999")
    assert (f"{x}", f"{x:g}", f"{x!r}", f"{x:.3f}", str(x)) == ("1e999",) * 5
    assert x == float("inf") and not x < 0
