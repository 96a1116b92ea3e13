"""Task H1: three gaps in `rooflab llm`'s arithmetic, each against a hand count.

1. The decode batch's fp32 logits (batch x vocab x 4 B) are reserved in the largest-batch
   arithmetic, as vLLM's profile run reserves them for the sampler of a max_num_seqs batch.
2. With --tp, the vocab-parallel embedding all-reduces the embedded tokens (batch x tokens
   x hidden x 2 B) once per forward pass (vLLM VocabParallelEmbedding.forward ends in
   tensor_model_parallel_all_reduce), prefill and decode.
3. TPStep.link_bytes (and the link AI derived from it) counts what the step time counts:
   the all-reduces and the logits gather.
"""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main
from rooflab.model.ceiling import Ceiling, Roof
from rooflab.model.parallel import Link
from rooflab.workloads.llm import load_config
from rooflab.workloads.llm.parallel import tensor_parallel, tp_decode_step
from rooflab.workloads.llm.settings import Settings

US = 1e-6
ROOF = Roof("toy", "nominal",
            compute=(Ceiling(1e14, precision="bf16", unit="tensor"),
                     Ceiling(6.5e13, precision="fp16", unit="tensor")),
            memory=(Ceiling(1e12, level="DRAM"), Ceiling(5e10, level="NVLink")))
PCIE = Link("PCIe", 10e9, 5 * US)

# Llama-3-8B (the bundled llama-3-8b has Llama-3.1-8B's shapes): fp16 weights
# 8,030,261,248 x 2 B; prefill workspace 512 x (4096 + 2 x 14336) x 2 + 128,256 x 4 B;
# KV per sequence at context 639 (prompt 512 + generate 128 - 1): 2 x 32 x 8 x 128 x 2 B x
# 639 = 83,755,008 B
WEIGHTS = 16_060_522_496
WORKSPACE = 34_067_456
KV_SEQ = 83_755_008
LOGITS_SEQ = 128_256 * 4                 # 513,024 B of fp32 logits per sequence


def _llm(capsys, *args):
    assert main(["llm", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)["llm"]


# --- 1: the decode batch's fp32 logits ----------------------------------------------------

def test_largest_batch_reserves_the_decode_logits(capsys):
    # free = 80e9 - 16,060,522,496 - 34,067,456 = 63,905,410,048 B
    # per sequence 83,755,008 KV + 513,024 logits = 84,268,032 B
    # 63,905,410,048 / 84,268,032 = 758.35 -> 758 (KV alone: / 83,755,008 = 763.004 -> 763)
    free = 80e9 - WEIGHTS - WORKSPACE
    assert free // (KV_SEQ + LOGITS_SEQ) == 758 and free // KV_SEQ == 763
    fp = _llm(capsys, "llama-3-8b", "--on", "H100", "--phase", "decode")["footprint"]
    assert fp["decode_logits_bytes"] == LOGITS_SEQ
    assert fp["total_bytes"] == WEIGHTS + KV_SEQ + WORKSPACE + LOGITS_SEQ
    assert fp["max_batch"] == 758


def test_decode_logits_grow_with_the_batch(capsys):
    # batch 64: 64 x 513,024 = 32,833,536 B, beside 64 x 83,755,008 B of KV
    fp = _llm(capsys, "llama-3-8b", "--on", "H100", "--phase", "decode", "--batch",
              "64")["footprint"]
    assert fp["decode_logits_bytes"] == 32_833_536
    assert fp["total_bytes"] == WEIGHTS + 64 * KV_SEQ + WORKSPACE + 32_833_536
    assert fp["max_batch"] == 758


def test_decode_logits_under_tp_are_the_gathered_vocabulary(capsys):
    # --tp 2: each rank holds ceil(128,256 / 2) = 64,128 rows of lm_head; the sampler
    # sees the gathered 2 x 64,128 = 128,256 logits, 513,024 B per sequence
    fp = _llm(capsys, "llama-3-8b", "--on", "H100", "--phase", "decode", "--tp",
              "2")["footprint"]
    assert fp["decode_logits_bytes"] == LOGITS_SEQ


def test_memory_line_says_the_logits_are_reserved(capsys):
    assert main(["llm", "llama-3-8b", "--on", "H100", "--phase", "decode"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert ("+ prefill activations 34.1 MB (one prompt in flight, reserved once) + decode "
            "logits 513 kB (fp32 batch x vocab, as vLLM's sampler reserves them) = 16.2 GB"
            ) in out
    assert "largest batch that fits: 758" in out


def test_pipeline_reserves_the_logits_on_the_lm_head_stage_only(capsys):
    pp = _llm(capsys, "llama-3-8b", "--on", "H100", "--phase", "decode", "--pp", "2",
              "--link-bw", "50GB/s")["pipeline"]
    first, last = pp["stages"]
    assert first["decode_logits_bytes"] == 0 and last["decode_logits_bytes"] == LOGITS_SEQ


# --- 2: the vocab-parallel embedding's all-reduce -----------------------------------------

def test_embedding_allreduce_is_counted_once_per_forward():
    cfg = load_config("tinyllama-1.1b")      # 22 layers, hidden 2048, vocab 32,000
    r = tensor_parallel(cfg, Settings(), ROOF, batch=1, context=512, tp=2, link=PCIE,
                        prompt=512)
    # payload 1 x 2048 x 2 B = 4096 B; one ring all-reduce on 2 ranks:
    # 2 x 1 x 5 us + 2 x 1/2 x 4096 / 1e10 = 10 us + 0.4096 us = 10.4096 us
    assert r.embedding_bytes == 4096
    assert r.embedding_s == pytest.approx(10.4096 * US)
    # the per-layer all-reduces stay 44 x 10.4096 = 458.0224 us; the gather of
    # 1 x 32,000 x 2 = 64,000 B: 1 x 5 us + 1/2 x 64,000 / 1e10 = 8.2 us
    assert r.comm_s == pytest.approx(458.0224 * US)
    assert r.gather_s == pytest.approx(8.2 * US)
    assert r.tpot_s == pytest.approx(r.compute_s + (458.0224 + 10.4096 + 8.2) * US)
    # prefill: 512 tokens embedded, 512 x 4096 = 2,097,152 B:
    # 10 us + 2,097,152 / 1e10 = 10 us + 209.7152 us = 219.7152 us
    assert r.prefill_embedding_s == pytest.approx(219.7152 * US)
    assert r.prefill_link_s == pytest.approx(
        r.prefill_comm_s + 219.7152 * US + 8.2 * US)


def test_embedding_allreduce_in_the_json_totals_and_sweep(capsys):
    # llama-3-70b --tp 8 on H200's NVLink (450 GB/s a direction), tabled batch 1:
    # payload 1 x 8192 x 2 = 16,384 B; 2 x 7/8 x 16,384 / 450e9 = 63.7 ns
    llm = _llm(capsys, "llama-3-70b", "--on", "H200", "--tp", "8", "--batch", "1,16")
    par, one = llm["parallel"], 2 * 7 / 8 * 16_384 / 450e9
    assert par["embedding_allreduce_bytes"] == 16_384
    assert par["embedding_allreduce_s"] == pytest.approx(one)
    # prefill: 512 prompt tokens embedded -> 512 x the payload
    assert par["prefill_embedding_allreduce_s"] == pytest.approx(512 * one)
    assert par["tpot_s"] == pytest.approx(
        par["compute_s"] + par["comm_s"] + one + par["logits_gather_s"])
    assert llm["totals"]["tpot_s"] == pytest.approx(par["tpot_s"])
    # the sweep's batch 16 carries 16 x the payload: 2 x 7/8 x 262,144 / 450e9 = 1.02 us
    rows = {row["batch"]: row for row in par["sweep"]}
    assert rows[16]["embedding_allreduce_s"] == pytest.approx(2 * 7 / 8 * 262_144 / 450e9)
    assert rows[1]["tpot_s"] == pytest.approx(par["tpot_s"])


def test_embedding_allreduce_in_the_text(capsys):
    assert main(["llm", "llama-3-70b", "--on", "H200", "--tp", "8", "--batch", "16",
                 "--link-latency", "10"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    # 10 us latency + 1.02 us bandwidth = 11 us
    assert "+ the embedding's all-reduce of 262 kB (vocab-parallel, 11 us)" in out
    assert "all-reduces 1.76 ms + embedding all-reduce 11 us + logits gather 13 us" in out


def test_pipeline_puts_the_embedding_allreduce_on_the_first_stage(capsys):
    llm = _llm(capsys, "llama-3-8b", "--on", "H100", "--tp", "2", "--pp", "2",
               "--link-bw", "50GB/s", "--phase", "decode")
    par, stages = llm["parallel"], llm["pipeline"]["stages"]
    per_layer = par["comm_s"] / 32                   # 64 all-reduces over 32 layers
    first, last = stages
    assert first["comm_s"] == pytest.approx(16 * per_layer + par["embedding_allreduce_s"])
    assert last["comm_s"] == pytest.approx(16 * per_layer + par["logits_gather_s"])


# --- 3: one account for the link's time and bytes ------------------------------------------

def test_tp_step_link_bytes_include_the_gather_and_the_embedding():
    cfg = load_config("tinyllama-1.1b")
    step = tp_decode_step(cfg, Settings(), ROOF, batch=1, context=512, tp=2, link=PCIE)
    # per rank: 44 per-layer all-reduces x 2 x 1/2 x 4096 = 180,224 B
    #         + the embedding's 2 x 1/2 x 4096            =   4,096 B
    #         + the logits gather 1/2 x 32,000 x 2        =  32,000 B
    #                                                      = 216,320 B (was 180,224)
    assert step.link_bytes == 216_320
    assert step.link_ai == pytest.approx(step.flop / 216_320)
    assert step.point().bytes["PCIe"] == 216_320
    # the time the same bytes take is the step's link time
    assert step.step_s == pytest.approx(step.result.compute_s + step.result.link_s)
    assert step.result.link_s == pytest.approx((458.0224 + 10.4096 + 8.2) * US)
