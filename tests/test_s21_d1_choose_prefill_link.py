"""choose on an `llm --tp` prefill document: the TP link term is the prefill's (its
all-reduces carry batch x prompt hidden states), and the floor with it is keyed
tp_step_floor_s, not tp_tpot_floor_s, which stays the decode step's key (s21 d1 item 2).

Hand figures, Llama-3-70B bf16 --tp 8 batch 4 prompt 2048 on the H200's NVLink (450 GB/s a
direction, catalog): one all-reduce of P bytes is a ring's 2 x 7/8 x P / 450e9.
  decode: 160 x 1.75 x 65536 / 450e9 = 40.78 us, embedding 1.75 x 65536 / 450e9 = 0.255
    us, gather 7/8 x 1026048 / 450e9 = 1.995 us: 43.03 us (`rooflab llm`: 43 us);
  prefill: every all-reduce x 2048: 160 x 1.75 x 134217728 / 450e9 = 83.52 ms, embedding
    522.0 us, gather 1.995 us: 84.04 ms (`rooflab llm`: all-reduces 83.5 ms + embedding
    522 us + gather 2 us, TTFT floor 172 + 84 = 256 ms).
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from rooflab.cli.choose_output import CSV_COLUMNS
from rooflab.cli.choose_tokens import StepScope
from rooflab.cli.choose_tp_links import tp_link_fields, tp_link_lines, tp_link_s, tp_link_times

# the `parallel` block `rooflab llm llama-3-70b --on H200 --tp 8 --batch 4 --phase prefill
# --prompt 2048 --json` writes (the decode step's per-all-reduce bytes: batch x hidden x 2)
PARALLEL = {"tp": 8, "allreduce_bytes": 65536.0, "allreduces_per_step": 160,
            "logits_gather_bytes": 1026048.0, "embedding_allreduce_bytes": 65536.0}
PREFILL = StepScope("prefill", batch=4, context=2048, tokens=8192)
DECODE = StepScope("decode", batch=4, context=2112, tokens=4)
H200 = "NVIDIA H200 SXM"
BW = 450e9

DECODE_LINK = 160 * 1.75 * 65536 / BW + 1.75 * 65536 / BW + 7 / 8 * 1026048 / BW
PREFILL_LINK = (160 * 1.75 * 65536 * 2048 / BW + 1.75 * 65536 * 2048 / BW
                + 7 / 8 * 1026048 / BW)


def test_the_hand_figures():
    assert DECODE_LINK == pytest.approx(43.03e-6, rel=1e-3)
    assert PREFILL_LINK == pytest.approx(84.04e-3, rel=1e-3)


@pytest.mark.parametrize("scope,want", [(None, DECODE_LINK), (DECODE, DECODE_LINK),
                                        (PREFILL, PREFILL_LINK)],
                         ids=["no-scope", "decode", "prefill"])
def test_the_link_term_is_the_steps(scope, want):
    seconds, words = tp_link_s(PARALLEL, H200, scope)
    assert seconds == pytest.approx(want, rel=1e-9)
    assert words == "450 GB/s"
    assert tp_link_times(PARALLEL, [H200, "EPYC 9654"], scope) == {H200: seconds}


# the H200's prefill work floor on that document (choose's `seconds`): 172.39 ms
CHOICE = SimpleNamespace(name=H200, seconds=0.17239236823055415, step_s=0.1725,
                         ranked_s=0.1725 + PREFILL_LINK)


def test_a_prefill_row_keys_its_floor_as_the_steps():
    got = tp_link_fields(PARALLEL, CHOICE, PREFILL)
    assert "tp_tpot_floor_s" not in got   # a prefill's floor is a TTFT floor
    assert got["tp_link_s"] == pytest.approx(PREFILL_LINK, rel=1e-9)
    # `rooflab llm`'s TTFT floor: 172.4 ms + 84.0 ms = 256.4 ms
    assert got["tp_step_floor_s"] == pytest.approx(0.25643, abs=5e-6)


def test_a_decode_row_keeps_its_key_and_has_the_new_one():
    got = tp_link_fields(PARALLEL, CHOICE, DECODE)
    assert got["tp_tpot_floor_s"] == got["tp_step_floor_s"]
    assert got["tp_step_floor_s"] == pytest.approx(CHOICE.seconds + DECODE_LINK, rel=1e-12)
    assert tp_link_fields(PARALLEL, CHOICE) == got   # no scope: a decode step, as before


def test_the_csv_has_both_columns():
    assert {"tp_tpot_floor_s", "tp_step_floor_s"} <= set(CSV_COLUMNS)


def test_the_footer_adds_the_prefill_link():
    (_, line) = tp_link_lines(PARALLEL, [CHOICE], "TTFT floor", PREFILL)
    assert line == ("  NVIDIA H200 SXM: + 84 ms on 450 GB/s: TTFT floor 256 ms, "
                    "257 ms with launches")
