"""`rooflab llm --context 512,8192,32768` and `--prompt 512,2048,8192`: the sequence-length
sweeps (review 14d, finding H), and the KV bytes split into read and written per step (L3).

Hand figures, llama-3-8b (32 layers, hidden 4096, 32 heads, 8 KV heads of 128, MLP 14336,
vocabulary 128256, fp16) on the catalog A100 80GB SXM (2039 GB/s, 312 TFLOP/s fp16 tensor,
5 us per launch as its overhead floor):
  KV per token = 32 layers x 2 (K, V) x 8 KV heads x 128 x 2 B = 131072 B.
  Weights read per decode step = 32 x (4096 x 4096 x 2 + 4096 x 1024 x 2 + 3 x 4096 x 14336)
  x 2 B + lm_head 4096 x 128256 x 2 B + 65 norms x 4096 x 2 B + one embedding row 4096 x 2 B.
"""

from __future__ import annotations

import csv
import io
import json

import pytest

from rooflab.cli.main import main
from rooflab.errors import InputError
from rooflab.hardware.resolve import load_roof
from rooflab.workloads.llm import Request, analyze_llm, load_config
from rooflab.workloads.llm.kernels import decode_step
from rooflab.workloads.llm.settings import settings_for
from rooflab.workloads.llm.sweep import kv_equals_weights_context

B = 2.039e12                  # A100 80GB SXM DRAM, bytes/s (NVIDIA datasheet)
KV_PER_TOKEN = 32 * 2 * 8 * 128 * 2
LAYER = 4096 * 4096 * 2 + 4096 * 1024 * 2 + 3 * 4096 * 14336
WEIGHTS = (32 * LAYER + 4096 * 128256) * 2 + 65 * 4096 * 2 + 4096 * 2
LAUNCH = 5e-6                 # the A100 roof's overhead floor per launch
CONTEXTS = (512, 8192, 32768)


def _run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def _llm(capsys, *args) -> dict:
    code, out, err = _run(capsys, "llm", "llama-3-8b", "--on", "A100", *args, "--json")
    assert code == 0, err
    return json.loads(out)["llm"]


@pytest.fixture(scope="module")
def sweep():
    # 32768 is past llama-3-8b's 8192 positions: a ContextWarning, wanted here
    with pytest.warns(UserWarning, match="max_position_embeddings"):
        r = analyze_llm(load_config("llama-3-8b"), load_roof("A100"), None,
                        Request(contexts=CONTEXTS))
    return {p["context"]: p for p in r.context_sweep.rows()}, r


def test_hand_figures():
    assert KV_PER_TOKEN == 131072
    assert WEIGHTS == 15_009_857_536      # "15 GB" in the tables


def test_cli_takes_a_context_list(capsys):
    llm = _llm(capsys, "--context", "8192,512,32768,512")
    cs = llm["context_sweep"]
    assert cs["batch"] == 1
    assert [p["context"] for p in cs["points"]] == [512, 8192, 32768]   # sorted, once
    assert llm["request"]["context"] == 8192      # the first given is the tabled step
    assert llm["decode"]["context"] == 8192


def test_kv_read_and_written_per_step(sweep):
    rows, _ = sweep
    for c in CONTEXTS:
        p = rows[c]
        assert p["kv_read_bytes"] == KV_PER_TOKEN * c      # attention reads the cache
        assert p["kv_write_bytes"] == KV_PER_TOKEN         # k_proj/v_proj: one new token
        assert p["kv_bytes"] == p["kv_read_bytes"] + p["kv_write_bytes"]
        assert p["weight_bytes"] == WEIGHTS


def test_tpot_floor_is_weights_plus_kv_over_bandwidth(sweep):
    rows, _ = sweep
    for c in CONTEXTS:
        p = rows[c]
        hand = (WEIGHTS + KV_PER_TOKEN * (c + 1)) / B
        # the rest is activations (12 MB at batch 1), under 0.1 %
        assert p["tpot_s"] == pytest.approx(hand, rel=1e-3)
        assert p["tpot_s"] == pytest.approx((p["bytes"]) / B, rel=1e-12)   # all memory-bound
        assert p["tokens_per_s"] == pytest.approx(1 / p["tpot_s"])
        assert p["bound"] == "memory"
    assert rows[512]["tpot_s"] == pytest.approx(7.40e-3, abs=0.005e-3)
    assert rows[32768]["tpot_s"] == pytest.approx(9.47e-3, abs=0.005e-3)


def test_with_launches_follows_the_launch_floor_rule(sweep):
    """Each kernel at max(its work floor, calls x 5 us). At context 512 the kernels below
    their launches are embedding, k_proj, v_proj, rope, attention, residual_add, norm,
    act_mul and final_norm (290 calls); by 8192 attention's floor (32 x 8192 x 4096 B of
    cache = 526 us) passes its 32 launches (160 us) and leaves the list."""
    rows, _ = sweep
    act = 4096 * 2                                     # one hidden vector, fp16
    attn = 32 * (2 * act + 512 * 4096) / B             # q, o and the cache (512 tokens)
    small = {                                          # calls, bytes of all calls
        "embedding": (1, 4096 * 2 + 4096 * 2 + 8),     # row + output + the token id
        "k_proj": (32, 32 * (4096 * 1024 * 2 + act + 2048)),
        "v_proj": (32, 32 * (4096 * 1024 * 2 + act + 2048)),
        "rope": (32, 32 * (4096 + 1024) * 2 * 2),
        "residual_add": (64, 64 * 3 * act),
        "norm": (64, 64 * (2 * act + act)),
        "act_mul": (32, 32 * 3 * 14336 * 2),
        "final_norm": (1, 3 * act),
    }
    lift = sum(calls * LAUNCH - nbytes / B for calls, nbytes in small.values())
    p = rows[512]
    assert p["with_launches_s"] - p["tpot_s"] == pytest.approx(
        lift + 32 * LAUNCH - attn, rel=1e-6)
    for c in (8192, 32768):
        p = rows[c]
        assert p["with_launches_s"] - p["tpot_s"] == pytest.approx(lift, rel=1e-6)


def test_kv_equals_weights_context_in_closed_form(sweep, capsys):
    _, r = sweep
    # batch x 131072 x (c + 1) = weights: c = weights / 131072 - 1
    hand = WEIGHTS / KV_PER_TOKEN - 1
    assert hand == 114515.125
    assert r.context_sweep.kv_equals_weights_context == hand
    cfg, s = load_config("llama-3-8b"), settings_for(load_config("llama-3-8b"))
    # at batch 16 the embedding reads 16 rows: 15 x 8192 B more weights than at batch 1
    assert kv_equals_weights_context(cfg, s, 16) == pytest.approx(
        (WEIGHTS + 15 * 8192) / (16 * KV_PER_TOKEN) - 1, rel=1e-12)
    code, out, _ = _run(capsys, "llm", "llama-3-8b", "--on", "A100", "--context",
                        ",".join(map(str, CONTEXTS)), "--phase", "decode")
    assert code == 0
    assert "KV bytes equal weight bytes at context 114515 (batch 1)" in out
    assert "decode context sweep at batch 1" in out


def test_sliding_windows_solve_on_the_right_piece():
    """gemma-2-9b: 21 of 42 layers windowed at 4096. Past the window only the global
    layers' cache grows, so the crossing is on the second linear piece; mistral-7b
    windows every layer, so its cache never reaches the weights."""
    cfg = load_config("gemma-2-9b")
    s = settings_for(cfg)
    c = kv_equals_weights_context(cfg, s, 1)
    assert c > 4096
    lo, hi = decode_step(cfg, s, 1, int(c)), decode_step(cfg, s, 1, int(c) + 1)
    assert lo.bytes_split["kv"] <= lo.bytes_split["weights"] <= hi.bytes_split["kv"]
    mistral = load_config("mistral-7b")
    assert kv_equals_weights_context(mistral, settings_for(mistral), 1) is None


def test_fits_at_the_batch(capsys):
    # batch 16: 16 x 131072 x 32768 = 68.7 GB of cache + 16.06 GB of weights > 80 GB
    llm = _llm(capsys, "--batch", "16", "--context", "512,32768")
    fits = {p["context"]: p["fits"] for p in llm["context_sweep"]["points"]}
    assert fits == {512: True, 32768: False}
    code, out, _ = _run(capsys, "llm", "llama-3-8b", "--on", "A100", "--batch", "16",
                        "--context", "512,32768", "--phase", "decode")
    assert "memory: at batch 16, context 32768 of this sweep does not fit in 80 GB" in out


def test_prompt_sweep(capsys):
    """TTFT floor per prompt length; attention's share: causal flash attention at prompt
    8192 is 32 layers x 2 x 32 heads x 8192 x 8193 / 2 scores x 256 FLOP-per-score-pair
    halves = 17.6 TFLOP, compute-bound at 312 TFLOP/s: 56.4 ms."""
    llm = _llm(capsys, "--prompt", "512,2048,8192")
    ps = llm["prompt_sweep"]
    rows = {p["prompt"]: p for p in ps["points"]}
    assert list(rows) == [512, 2048, 8192]
    attn_flop = 32 * 2.0 * 32 * (8192 * 8193 / 2) * (128 + 128)
    p = rows[8192]
    assert p["attention_share"] * p["ttft_s"] == pytest.approx(attn_flop / 312e12, rel=1e-9)
    assert p["bound"] == "compute"
    assert rows[512]["ttft_s"] == pytest.approx(llm["prefill"]["floor_s"])   # tabled: first
    assert rows[512]["attention_share"] < rows[2048]["attention_share"] < p["attention_share"]
    # the prefill writes each prompt token's K and V once and reads them once (flash)
    assert p["kv_write_bytes"] == p["kv_read_bytes"] == KV_PER_TOKEN * 8192


def test_per_kernel_json_splits_kv(capsys):
    llm = _llm(capsys, "--context", "1000")
    k = {row["name"]: row for row in llm["decode"]["kernels"]}
    assert k["attention"]["kv_read_bytes"] == 1000 * KV_PER_TOKEN
    assert k["attention"]["kv_write_bytes"] == 0
    assert k["k_proj"]["kv_write_bytes"] == KV_PER_TOKEN / 2     # K of one token
    assert k["k_proj"]["kv_read_bytes"] == 0
    for row in llm["decode"]["kernels"]:
        assert row["kv_read_bytes"] + row["kv_write_bytes"] == row["bytes_split"]["kv"]
    assert llm["decode"]["kv_write_bytes"] == KV_PER_TOKEN


def test_csv_carries_the_sweeps(capsys, tmp_path):
    path = tmp_path / "s.csv"
    code, _, err = _run(capsys, "llm", "llama-3-8b", "--on", "A100", "--context",
                        "512,8192", "--prompt", "512,2048", "-o", str(path))
    assert code == 0, err
    rows = list(csv.DictReader(io.StringIO(path.read_text())))
    ctx = [r for r in rows if r["phase"] == "context_sweep"]
    assert [r["kernel"] for r in ctx] == ["step c=512", "step c=8192"]
    assert float(ctx[1]["kv_bytes"]) == 8193 * KV_PER_TOKEN
    assert float(ctx[1]["floor_s"]) == float(ctx[1]["tpot_s"])     # no --tp: no all-reduces
    pr = [r for r in rows if r["phase"] == "prompt_sweep"]
    assert [r["kernel"] for r in pr] == ["prefill p=512", "prefill p=2048"]
    assert float(pr[1]["kv_bytes"]) == 2 * 2048 * KV_PER_TOKEN      # written, read once


@pytest.mark.parametrize("args, words", [
    (("--batch", "1,4", "--context", "512,8192"), "--batch 1,4 and --context 512,8192 are "
                                                 "both lists"),
    (("--batch", "1,4", "--prompt", "512,8192"), "--batch 1,4 and --prompt 512,8192 are "
                                                "both lists"),
    (("--context", "512,x"), "--context takes integers separated by commas"),
    (("--prompt", "0,512"), "--prompt values must be integers >= 1; got 0"),
])
def test_refusals(capsys, args, words):
    code, out, err = _run(capsys, "llm", "llama-3-8b", "--on", "A100", *args)
    assert code == 2
    assert words in err
    assert "Traceback" not in err + out


def test_python_request():
    r = Request(contexts=(2048, 512))
    assert r.context == 2048 and r.decode_context == 2048
    with pytest.raises(InputError, match="both lists"):
        Request(batches=(1, 2), contexts=(512, 1024))
    with pytest.raises(InputError, match="--context values must be integers >= 1"):
        Request(contexts=(0,))
