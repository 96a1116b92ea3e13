"""Review 13: the memory footprint counts the modules a quantized checkpoint keeps
unquantized at their real width, and Gemma 3's per-head q_norm/k_norm.

Hand numbers:
- Llama-3-8B (hidden 4096, 32 layers, 32 heads / 8 KV heads x 128, MLP 14336, vocab
  128256, untied), compressed-tensors W8A8 (int8 weights per channel, int8 input
  activations) with "ignore": ["lm_head"]: llm-compressor quantizes Linear layers only
  (its recipes say "targets: [Linear]"), so the embedding table stays at 2 B too.
  Layer matrices 32 x (2 x 4096^2 + 2 x 4096 x 1024 + 3 x 4096 x 14336) = 6,979,321,856
  x (1 + 2/4096 B of fp16 scale per channel) = 6,982,729,728 B; embedding + lm_head
  2 x 525,336,576 x 2 B = 2,101,346,304 B; 65 norms x 4096 = 266,240 gammas x 1 B (the
  activation width, as before) -> 9,084,342,272 B = 9.08 GB (was 8.03 GB: every matrix at
  ~1 B). Per sequence at context 639 (512 + 128 - 1): KV 32 x 2 x 1024 x 2 B x 639 =
  83,755,008 B; one prompt's activations 17,290,240 B, reserved once; (80e9 -
  9,084,342,272 - 17,290,240) / 83,755,008 = 846.5: 846 sequences fit an H100.
- The same model, AWQ int4 group 128 (0.5 + 2/128 = 0.515625 B) with
  "modules_to_not_convert": ["lm_head"]: (6,979,321,856 + 525,336,576 embedding) x
  0.515625 + 525,336,576 x 2 + 266,240 x 2 = 4,920,795,136 B (was 4,140,998,656). The
  embedding stays at the quantized width there: only compressed-tensors is read as
  Linear-only here. (Since then: both tables stay at 2 B for AWQ, and its zero points
  make 0.5 + 2/128 + 0.5/128 = 0.51953125 B per weight, review 18d J: see the tests.)
- Mixtral-8x7B, compressed-tensors fp8 (1 B, per-tensor scale) ignoring lm_head and the
  router (re:.*block_sparse_moe.gate): router 32 x 4096 x 8 = 1,048,576 weights, embedding
  and lm_head 32000 x 4096 = 131,072,000 each, all at 2 B.
- Gemma 3 1B (gemma3_text: hidden 1152, 26 layers, 4 heads / 1 KV head x 256, MLP 6912,
  vocab 262144, tied): transformers' Gemma3Attention has q_norm and k_norm =
  Gemma3RMSNorm(head_dim): + 26 x 2 x 256 = 13,312 parameters. Per layer: attention
  1152 x (1024 + 256 + 256) + 1024 x 1152 = 2,949,120; MLP 3 x 1152 x 6912 = 23,887,872;
  4 norms x 1152 + 512 = 5,120; x 26 = 697,894,912; + embedding 262144 x 1152 =
  301,989,888 + final norm 1152 = 999,885,952 (was 999,872,640).
"""

from __future__ import annotations

import json

import pytest
from llm_config_files import bundled_with_quant as _bundled
from test_llm_quant_activations import W8A8  # the review's W8A8 checkpoint (ignore lm_head)

from rooflab.cli.main import main
from rooflab.hardware.resolve import load_roof
from rooflab.workloads.llm import Request, analyze_llm, load_config, parse_config
from rooflab.workloads.llm.config_names import bundled_names
from rooflab.workloads.llm.footprint import weight_bytes
from rooflab.workloads.llm.kernels import decode_step
from rooflab.workloads.llm.params import count_params, module_params
from rooflab.workloads.llm.settings import settings_for

LAYER_MATRICES = 32 * (2 * 4096 * 4096 + 2 * 4096 * 1024 + 3 * 4096 * 14336)  # 6,979,321,856
TABLE = 128256 * 4096                                                         # 525,336,576
NORMS = 65 * 4096                                                             # 266,240

AWQ = {"quant_method": "awq", "bits": 4, "group_size": 128, "version": "gemm",
       "zero_point": True, "modules_to_not_convert": ["lm_head"]}
FP8 = {"quant_method": "compressed-tensors",
       "ignore": ["lm_head", "re:.*block_sparse_moe.gate"],
       "config_groups": {"group_0": {"targets": ["Linear"],
                                     "weights": {"num_bits": 8, "type": "float",
                                                 "strategy": "tensor"}}}}


def _weights(path):
    cfg = load_config(path)
    return weight_bytes(cfg, settings_for(cfg))


def test_compressed_tensors_w8a8_footprint_keeps_embedding_and_lm_head_at_fp16(
        tmp_path, capsys):
    path = _bundled(tmp_path, "llama-3-8b", W8A8)
    # the norms stay 16-bit: W8A8 quantizes the GEMM inputs only (review s21 r6 F2)
    hand = LAYER_MATRICES * (1 + 2 / 4096) + 2 * TABLE * 2 + NORMS * 2
    assert hand == 9_084_608_512
    assert _weights(path) == pytest.approx(hand, rel=1e-12)        # was 8,034,182,144
    cfg = load_config(path)
    r = analyze_llm(cfg, load_roof("H100"), settings_for(cfg), Request())
    assert r.footprint.weights == pytest.approx(hand, rel=1e-12)
    # the per-step bytes were already right: lm_head at 2 B, the rest ~1 B
    assert r.decode.step.bytes_split["weights"] == pytest.approx(8.03e9, rel=2e-3)
    assert main(["llm", path, "--on", "H100", "--phase", "decode"]) == 0
    out = capsys.readouterr().out
    # (80e9 - 9,084,342,272 - 17,290,240 int8 workspace) / (639 x 131,072 = 83,755,008 B
    # KV: the cache peaks at 512 + 128 - 1; + 128,256 x 4 = 513,024 B of fp32 decode
    # logits, H1) = 70,898,367,488 / 84,268,032 = 841.3 (KV alone 846.5)
    assert "memory (context 639): weights 9.08 GB" in out
    assert "largest batch that fits: 841" in out
    assert main(["llm", path, "--on", "H100", "--phase", "decode", "--json"]) == 0
    fp = json.loads(capsys.readouterr().out)["llm"]["footprint"]
    assert fp["weights_bytes"] == pytest.approx(hand, rel=1e-12)
    assert fp["max_batch"] == 841


def test_awq_keeps_lm_head_and_embedding_at_fp16(tmp_path):
    # AutoAWQ replaces the decoder blocks' Linear layers only: embed_tokens and lm_head
    # stay fp16 whether or not modules_to_not_convert names lm_head (a real AWQ
    # Llama-3-8B checkpoint holds ~5.7 GB); zero_point true adds a 4-bit zero per group:
    # 0.5 + 2/128 + 0.5/128 = 0.51953125 B per weight (review 18d J). The norms stay at
    # 2 B: the bf16 config's AWQ runs fp16 activations
    hand = LAYER_MATRICES * 0.51953125 + 2 * TABLE * 2 + NORMS * 2
    assert hand == 5_727_854_592     # 3,625,975,808 + 2,101,346,304 + 532,480
    assert _weights(_bundled(tmp_path, "llama-3-8b", AWQ)) == pytest.approx(hand, rel=1e-12)
    bare = {k: v for k, v in AWQ.items() if k != "modules_to_not_convert"}
    assert _weights(_bundled(tmp_path, "llama-3-8b", bare)) == pytest.approx(hand, rel=1e-12)
    # GPTQ's `lm_head: true` opts in: only the table stays fp16 then
    gptq = {"quant_method": "gptq", "bits": 4, "group_size": 128, "lm_head": True}
    hand_q = (LAYER_MATRICES + TABLE) * 0.515625 + TABLE * 2 + NORMS * 2
    assert _weights(_bundled(tmp_path, "llama-3-8b", gptq)) == pytest.approx(hand_q, rel=1e-12)


def test_kept_router_counted_at_fp16(tmp_path):
    cfg = load_config(_bundled(tmp_path, "mixtral-8x7b", FP8))
    s = settings_for(cfg)
    assert s.keep == ("lm_head", "router")
    p = count_params(cfg)
    full = 32 * 4096 * 8 + 2 * 32000 * 4096
    assert full == 263_192_576
    hand = (p.matrix - full) * 1 + full * 2 + p.vector * 2
    assert weight_bytes(cfg, s) == pytest.approx(hand, rel=1e-12)


def test_tied_lm_head_kept_keeps_the_shared_table(tmp_path):
    # Gemma-2-9B ties lm_head to the embedding: keeping lm_head keeps the one table
    cfg = load_config(_bundled(tmp_path, "gemma-2-9b", AWQ))
    s = settings_for(cfg)
    p = count_params(cfg)
    table = 256000 * 3584
    hand = (p.matrix - table) * 0.51953125 + table * 2 + p.vector * 2
    assert weight_bytes(cfg, s) == pytest.approx(hand, rel=1e-12)


def test_weights_given_on_the_command_line_quantize_every_matrix(tmp_path):
    # --weights int8 replaces the config's format (and its kept modules): all at int8
    cfg = load_config(_bundled(tmp_path, "llama-3-8b", W8A8))
    s = settings_for(cfg, weights="int8", group=128)
    p = count_params(cfg)
    assert weight_bytes(cfg, s) == pytest.approx(p.matrix * (1 + 2 / 128) + NORMS * 2,
                                                 rel=1e-12)


@pytest.mark.parametrize("name", bundled_names())
def test_module_params_and_embedding_are_all_the_matrices(name):
    cfg = load_config(name)
    p = count_params(cfg)
    assert sum(module_params(cfg).values()) + p.embedding == p.matrix


GEMMA3_1B = {"model_type": "gemma3_text", "hidden_size": 1152, "num_hidden_layers": 26,
             "num_attention_heads": 4, "num_key_value_heads": 1, "head_dim": 256,
             "intermediate_size": 6912, "vocab_size": 262144, "sliding_window": 512,
             "max_position_embeddings": 32768, "query_pre_attn_scalar": 256}


@pytest.mark.parametrize("wrapped", [False, True])
def test_gemma3_counts_q_norm_and_k_norm(wrapped):
    d = {"model_type": "gemma3", "text_config": GEMMA3_1B} if wrapped else GEMMA3_1B
    cfg = parse_config(d)
    assert cfg.qk_norm
    assert count_params(cfg).total == 999_885_952                  # was 999,872,640
    names = [o.op.name for o in decode_step(cfg, settings_for(cfg), batch=1,
                                            context=128).ops]
    assert "q_norm" in names and "k_norm" in names
