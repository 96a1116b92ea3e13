"""--decode-tokens N (alias --parallel-decode, LLM-Viewer's n_parallel_decode; a speculative
verify step of N - 1 drafts, vLLM num_speculative_tokens): N query tokens per sequence in a
decode step, the KV cache read once, N x the projection FLOP (review s21 r6 F3; before,
`--batch N` was the only stand-in, and it reads the cache N times)."""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main

# llama-3-8b bf16: hidden 4096, 32 heads of 128, 8 KV heads, FFN 14336, vocab 128256
H, HEADS, KVD, D, INTER, VOCAB, LAYERS = 4096, 32, 1024, 128, 14336, 128256, 32
CONTEXT = 4096


def _flop_by_hand(n: int) -> float:
    """One decode step of n query tokens (batch 1) over CONTEXT cached tokens (them included)."""
    gemms = 2 * n * (2 * H * H + 2 * H * KVD + 3 * H * INTER)
    # causal, bottom-right: query i sees CONTEXT - n + i + 1 keys; 4 x head_dim FLOP a score
    scores = sum(CONTEXT - n + i + 1 for i in range(n))
    attention = 4 * D * HEADS * scores
    # RMSNorm: 4 FLOP an element and 2 a row (+ eps, the rsqrt: ops.rmsnorm_flop)
    norm = n * (4 * H + 2)
    rope, residual, act = 3 * n * (H + KVD), 2 * n * H, 3 * n * INTER
    layer = gemms + attention + rope + residual + 2 * norm + act
    return LAYERS * layer + norm + 2 * n * H * VOCAB    # final norm, lm_head on all n


def _decode(capsys, *extra: str) -> dict:
    assert main(["llm", "llama-3-8b", "--on", "H100 SXM", "--context", str(CONTEXT),
                 "--phase", "decode", "--json", *extra]) == 0
    return json.loads(capsys.readouterr().out)["llm"]


def test_five_query_tokens_read_the_cache_once(capsys):
    one = _decode(capsys)
    five = _decode(capsys, "--decode-tokens", "5")
    assert one["decode"]["flop"] == pytest.approx(_flop_by_hand(1), rel=1e-12)
    assert five["decode"]["flop"] == pytest.approx(_flop_by_hand(5), rel=1e-12)
    assert five["decode"]["q_len"] == 5 and five["request"]["decode_tokens"] == 5
    kv_read = LAYERS * CONTEXT * 2 * KVD * 2          # K and V, bf16, once per sequence
    assert five["decode"]["kv_read_bytes"] == one["decode"]["kv_read_bytes"] == kv_read
    assert five["decode"]["kv_write_bytes"] == 5 * LAYERS * 2 * KVD * 2
    # memory-bound at batch 1: the 5-token verify costs about what one token does
    assert five["totals"]["tpot_s"] / one["totals"]["tpot_s"] == pytest.approx(1.0, abs=0.02)
    assert five["totals"]["tokens_per_s_all_accepted"] == pytest.approx(
        5 * five["totals"]["tokens_per_s"])


def test_batch_is_no_substitute(capsys):
    # --batch 5 reads five caches; --decode-tokens 5 one
    b5 = _decode(capsys, "--batch", "5")
    assert b5["decode"]["kv_read_bytes"] == 5 * LAYERS * CONTEXT * 2 * KVD * 2


def test_parallel_decode_alias_and_note(capsys):
    assert main(["llm", "llama-3-8b", "--on", "H100 SXM", "--context", str(CONTEXT),
                 "--phase", "decode", "--parallel-decode", "4"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "decode step: batch 1 x 4 query tokens, context 4096" in out
    assert "4 query tokens per sequence in a decode step" in out
    assert "vLLM num_speculative_tokens 3" in out and "up to" in out


@pytest.mark.parametrize("args, words", [
    (("--decode-tokens", "0"), "--decode-tokens must be an integer >= 1"),
    (("--decode-tokens", "9", "--context", "8"), "--context 8 is shorter than --decode-tokens 9"),
])
def test_bad_decode_tokens_is_one_error_line(capsys, args, words):
    assert main(["llm", "llama-3-8b", "--on", "H100 SXM", *args]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("error: ") and words in err
    assert "Traceback" not in err
