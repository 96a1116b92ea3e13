"""s34 H1: the summary's TPOT and TTFT floors under --tp, --pp and both read as one
sentence shape: 'FLOOR with WHAT (compute C + TERM + ...; with launches ...)'. Before,
`--tp 2 --pp 2` printed "TTFT floor 42.2 ms (compute ... + logits gather 71.1 ns) and
the prompt's stage transfers (18.6 us)" (an "and" with no "with" before it), --tp alone
gave the TTFT's terms with no "with all-reduces", and the TPOT's terms and its launches
were two parentheses side by side.

Hand check, llama-2-70b fp16 (hidden 8192, vocab 32000, 80 layers) on H100 SXM, NVLink
450 GB/s per direction, batch 1, prompt 512:
  decode stage transfer: 8192 x 2 B = 16 384 B / 450e9 = 36.4 ns
  the prompt's transfer: 512 x 16 384 B = 8.39 MB / 450e9 = 18.64 us
  --tp 2 all-reduces per step: 160 x 2 x (1/2) x 16 384 B / 450e9 = 160 x 36.4 ns = 5.83 us;
    the embedding's one: 36.4 ns; the logits gather: (1/2) x 32 000 x 2 B / 450e9 = 71.1 ns
  --tp 2 prefill all-reduces: 160 x 18.64 us = 2.98 ms, the embedding's 18.6 us
  --pp 4: 3 transfers, 3 x 36.4 = 109 ns per token, 3 x 18.64 = 55.9 us for the prompt
"""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main

BASE = ["llm", "llama-2-70b", "--on", "NVIDIA H100 SXM"]


def _summary(capsys, *args) -> str:
    assert main([*BASE, *args]) == 0
    out = capsys.readouterr().out
    return next(line for line in out.splitlines() if line.startswith("TPOT floor"))


def test_tp_and_pp_both_floors_say_with_what(capsys):
    line = _summary(capsys, "--tp", "2", "--pp", "2")
    assert line.startswith(
        "TPOT floor 20.6 ms with all-reduces and 1 stage transfer (compute 20.6 ms + "
        "all-reduces 5.83 us + embedding all-reduce 36.4 ns + logits gather 71.1 ns + stage "
        "transfer 36.4 ns; with launches 23.7 ms; all kernels in one: 20.6 ms), ")
    # old: "TTFT floor 42.2 ms (compute ...) and the prompt's stage transfers (18.6 us)"
    assert ("TTFT floor 42.2 ms with all-reduces and the prompt's stage transfer (compute "
            "39.1 ms + all-reduces 2.98 ms + embedding all-reduce 18.6 us + logits gather "
            "71.1 ns + stage transfer 18.6 us), ") in line
    assert ") and " not in line
    # each parenthesis is the floor's whole account
    assert main([*BASE, "--tp", "2", "--pp", "2", "--json"]) == 0
    llm = json.loads(capsys.readouterr().out)["llm"]
    t, par, pipe = llm["totals"], llm["parallel"], llm["pipeline"]
    assert pipe["hop_s"] == pytest.approx(16384 / 450e9)
    assert pipe["prefill_transfer_s"] == pytest.approx(512 * 16384 / 450e9)
    link = par["tpot_s"] - par["compute_s"]                # all-reduces + embedding + gather
    assert link == pytest.approx(160 * 16384 / 450e9 + 16384 / 450e9 + 32000 / 450e9)
    assert t["tpot_s"] == pytest.approx(t["compute_tpot_s"] + link + pipe["hop_s"])


def test_tp_alone_ttft_says_with_all_reduces(capsys):
    line = _summary(capsys, "--tp", "2")
    assert "TPOT floor 20.6 ms with all-reduces (compute 20.6 ms + all-reduces 5.83 us" in line
    assert "logits gather 71.1 ns; with launches 23.7 ms; all kernels in one: 20.6 ms)" in line
    # old: "TTFT floor 42.1 ms (compute 39.1 ms + ...)", no "with all-reduces"
    assert ("TTFT floor 42.1 ms with all-reduces (compute 39.1 ms + all-reduces 2.98 ms + "
            "embedding all-reduce 18.6 us + logits gather 71.1 ns), ") in line
    # one device: no link terms, the launches' parenthesis as it was
    assert _summary(capsys).startswith("TPOT floor 41.1 ms (with launches 43.8 ms; all "
                                       "kernels in one: 41.1 ms), TTFT floor 76 ms, ")


def test_pp_counts_its_transfers_in_both_floors(capsys):
    line = _summary(capsys, "--pp", "4")
    assert line.startswith("TPOT floor 41.1 ms with 3 stage transfers (compute 41.1 ms + "
                           "stage transfers 109 ns; with launches 43.8 ms; ")
    # old: "TTFT floor 76.1 ms with the prompt's stage transfers (55.9 us)"
    assert ("TTFT floor 76.1 ms with the prompt's 3 stage transfers (compute 76 ms + stage "
            "transfers 55.9 us), ") in line
    one = _summary(capsys, "--pp", "2")
    assert ("TTFT floor 76 ms with the prompt's stage transfer (compute 76 ms + stage "
            "transfer 18.6 us), ") in one


def test_measured_lines_name_the_floor_as_the_summary_does(capsys):
    args = ["--tp", "2", "--pp", "2", "--tpot-ms", "30", "--ttft-ms", "60"]
    assert main([*BASE, *args]) == 0
    out = capsys.readouterr().out
    # 60 / 42.17 ms = 1.42x; 30 / 20.56 ms = 1.46x
    assert "1.42x the floor with all-reduces and the prompt's stage transfer (42.2 ms;" in out
    assert "1.46x the floor with all-reduces and 1 stage transfer (20.6 ms)" in out
    assert main([*BASE, *args, "--json"]) == 0
    m = json.loads(capsys.readouterr().out)["llm"]["measured"]
    assert m["link"] == "all-reduces and 1 stage transfer"
    assert m["prefill"]["link"] == "all-reduces and the prompt's stage transfer"   # old: s
