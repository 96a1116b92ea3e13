"""Review 18d leftovers and review 18a F4, each against hand numbers.

1. --pp's largest batch per micro-batch reserves the prefill workspace once (as the memory
   line does since 18d B): floor((memory - weights - activations) / (M x KV per sequence)).
2. 18a F4: a measured TPOT's gap split takes the run's own kernel count (--launches); without
   it the line gives the fused share and eager HF generate's estimated share.
"""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main
from rooflab.model.parallel import Link
from rooflab.model.pipeline import PPStep, Stage
from rooflab.workloads.llm import load_config
from rooflab.workloads.llm.kernels import EAGER_HF_LAYER_KERNELS, decode_step
from rooflab.workloads.llm.settings import Settings

TINY_ARGS = ["llm", "tinyllama-1.1b", "--on", "T4", "--context", "500", "--phase", "decode"]


def _flat(text: str) -> str:
    return " ".join(text.split())


# --- 1: pipeline max_micro_batch reserves the prefill workspace once ----------------------

def test_max_micro_batch_does_not_divide_the_workspace_by_the_batch():
    # one stage: 10 GB weights, 1 GB of KV for a micro-batch of 100 (10 MB a sequence),
    # 2 GB workspace; M = 2 on 40 GB: (40 - 10 - 2) GB / (2 x 10 MB) = 1400.
    # The old rule (40 - 10) / (2 x 10 MB + 2 GB / 100) = 750.
    st = Stage(index=0, layers=range(0, 4), holds=(), compute_s=1e-3, weights_bytes=10e9,
               kv_bytes=1e9,
               activations_bytes=2e9)
    pp = PPStep((st, st), batch=100, transfer_bytes=1.0, link=Link("test", 450e9),
                micro_batches=2, device_bytes=40e9)
    assert pp.max_micro_batch == 1400


@pytest.mark.parametrize("batch", ["300", "1"])
def test_llama_3_70b_pp4_largest_micro_batch_does_not_depend_on_the_batch(capsys, batch):
    # stage 3: 36,327,538,688 B weights, 67,621,888 B workspace (see
    # test_parallel_pipeline_and_ring), KV 4 x 639 x 81,920 B = 209,387,520 B a sequence
    # (context 512 + 128 - 1) + the LM head stage's fp32 decode logits 4 x 128,256 x 4 =
    # 2,052,096 B (H1): (80e9 - 36,327,538,688 - 67,621,888) / 211,439,616 =
    # 206.23 -> 206 whatever --batch is (KV alone: / 209,387,520 = 208.25 -> 208). The
    # old rule divided the workspace by the batch: (80e9 - 36,327,538,688) /
    # (209,387,520 + 67,621,888) = 157.7 -> 157 at --batch 1.
    assert main(["llm", "llama-3-70b", "--on", "H100", "--pp", "4", "--batch", batch,
                 "--phase", "decode", "--json"]) == 0
    pipe = json.loads(capsys.readouterr().out)["llm"]["pipeline"]
    assert pipe["max_batch_per_micro_batch"] == 206


# --- 2 (18a F4): --launches, and both shares without it -----------------------------------

def test_eager_hf_estimate_counts_41_kernels_a_layer():
    # 16 (2 RMSNorms x 8) + 4 projections + 10 RoPE + 2 cache cats + SDPA + its copy
    # + 2 residual adds + 5 MLP = 41; TinyLlama: 41 x 22 + embedding, final norm, lm_head
    assert EAGER_HF_LAYER_KERNELS == 16 + 4 + 10 + 2 + 1 + 1 + 2 + 5 == 41
    step = decode_step(load_config("tinyllama-1.1b"), Settings(), 1, 500)
    assert step.launches == 14 * 22 + 3 == 311
    assert step.eager_launches() == 41 * 22 + 3 == 905


def test_gap_line_gives_the_fused_and_the_eager_share(capsys):
    # floor 6.51 ms, gap 8.49 ms (15 - 6.51); fused 311 x 5-10 us = 1.56-3.11 ms (18-37 %);
    # eager 905 x 5-10 us = 4.53-9.05 ms, capped at the gap: 53-100 %
    assert main([*TINY_ARGS, "--tpot-ms", "15"]) == 0
    out = _flat(capsys.readouterr().out)
    assert ("311 launches explain 1.56 ms-3.11 ms of it (18-37 %; CUDA graphs, fusion)"
            in out)
    assert ("That is a fused implementation's count (14 per layer); eager HF generate "
            "launches about 41 per layer (an estimate from HF's LlamaDecoderLayer), 905 per "
            "step, which would explain 4.53 ms-8.49 ms (53-100 %); give the measured run's "
            "kernels per step as --launches N") in out


def test_launches_option_splits_the_gap_by_the_measured_count(capsys):
    # 600 kernels x 5-10 us = 3.00-6.00 ms of the 8.49 ms gap (35-71 %); the rest
    # 8.49 - 6.00 = 2.49 ms to 8.49 - 3.00 = 5.49 ms
    assert main([*TINY_ARGS, "--tpot-ms", "15", "--launches", "600"]) == 0
    out = _flat(capsys.readouterr().out)
    assert ("gap above the floor 8.49 ms: 600 launches (--launches) explain 3 ms-6 ms of it "
            "(35-71 %; CUDA graphs, fusion); the rest, 2.49 ms-5.49 ms") in out
    assert "eager HF generate" not in out
    assert main([*TINY_ARGS, "--tpot-ms", "15", "--launches", "600", "--json"]) == 0
    m = json.loads(capsys.readouterr().out)["llm"]["measured"]
    assert m["launches"] == 600
    assert m["launches_s"] == pytest.approx([600 * 5e-6, 600 * 10e-6])
    assert m["eager_launches_estimate"] == 905
    assert m["eager_launch_s"] == pytest.approx([905 * 5e-6, 905 * 10e-6])


@pytest.mark.parametrize("extra, words", [
    (["--launches", "600"], "give that step's time with it (--tpot-ms)"),
    (["--tpot-ms", "15", "--launches", "0"], "--launches must be a whole number"),
])
def test_launches_mistakes_are_clear_errors(capsys, extra, words):
    assert main([*TINY_ARGS, *extra]) != 0
    out, err = capsys.readouterr()
    assert words in _flat(out + err) and "Traceback" not in out + err


# --- 4 (18d I): MLA's absorbed W_UK / W_UV stay 16-bit under quantized weights -----------

def test_mla_absorbed_weights_are_read_at_bf16_under_fp8(capsys):
    # DeepSeek-V2-Lite: 27 layers, 16 heads, kv_lora_rank 512, qk_nope = v_head = 128.
    # q_absorb reads 16 x 128 x 512 weights per layer at 2 B = 2,097,152 B (was 1,048,576
    # at fp8); so does v_absorb. vLLM keeps bf16 copies beside the fp8 kv_b_proj:
    # 27 x 16 x (128 + 128) x 512 x 2 B = 113,246,208 B more stored.
    from rooflab.workloads.llm.footprint import absorbed_copy_bytes, weight_bytes
    from rooflab.workloads.llm.params import count_params
    from rooflab.workloads.llm.settings import settings_for

    args = ["llm", "deepseek-v2-lite", "--on", "H200", "--phase", "decode", "--json"]
    assert main([*args, "--weights", "fp8"]) == 0
    llm = json.loads(capsys.readouterr().out)["llm"]
    rows = {k["name"]: k for k in llm["decode"]["kernels"]}
    for name in ("q_absorb", "v_absorb"):
        assert rows[name]["bytes_split"]["weights"] == 27 * 16 * 128 * 512 * 2
    cfg = load_config("deepseek-v2-lite")
    s = settings_for(cfg, "fp8")
    p = count_params(cfg)
    assert absorbed_copy_bytes(cfg, s) == 113_246_208
    assert weight_bytes(cfg, s) == pytest.approx(p.matrix * 1 + p.vector * 2 + 113_246_208)
    assert llm["footprint"]["weights_bytes"] == pytest.approx(weight_bytes(cfg, s))
    # DeepSeek-V3's shapes (61 layers, 128 heads): 61 x 128 x 256 x 512 x 2 B = 2.05 GB
    assert absorbed_copy_bytes(cfg.with_(layers=61, heads=128), s) == 2_046_820_352
    # unquantized weights: the absorbed kernels are kv_b_proj's own width, nothing added
    assert absorbed_copy_bytes(cfg, settings_for(cfg)) == 0


# --- 4 (18d E): the vocab-parallel lm_head's logits gather under --tp --------------------

def test_tp_gathers_the_logits_once_a_step(capsys):
    # llama-3-70b --tp 8 --batch 256 on H100 (450 GB/s per direction): 256 x 128,256 x
    # 2 B = 65,667,072 B; a ring all-gather moves 7/8 of it: 127.7 us beside 160
    # all-reduces of 256 x 8192 x 2 B (2 x 7/8 / 450 GB/s each: 2.61 ms) and the
    # vocab-parallel embedding's one of the same 4,194,304 B (H1: 16.3 us):
    # 2609.8 + 16.3 + 127.7 = 2753.8 us (2.74 ms before the embedding's)
    args = ["llm", "llama-3-70b", "--on", "H100", "--tp", "8", "--batch", "256",
            "--phase", "decode"]
    assert main([*args, "--json"]) == 0
    par = json.loads(capsys.readouterr().out)["llm"]["parallel"]
    gather = 7 / 8 * 65_667_072 / 450e9
    assert par["logits_gather_bytes"] == 256 * 128_256 * 2 == 65_667_072
    assert par["logits_gather_s"] == pytest.approx(gather, rel=1e-12)
    assert par["comm_s"] == pytest.approx(160 * 2 * 7 / 8 * 256 * 8192 * 2 / 450e9)
    embedding = 2 * 7 / 8 * 256 * 8192 * 2 / 450e9
    assert par["embedding_allreduce_s"] == pytest.approx(embedding, rel=1e-12)
    assert par["tpot_s"] == pytest.approx(par["compute_s"] + par["comm_s"] + embedding
                                          + gather)
    assert main(args) == 0
    out = _flat(capsys.readouterr().out)
    assert ("+ a logits gather of 65.7 MB (batch x vocab, 128 us): communication 2.75 ms"
            in out)


# --- 4 (18d J): AWQ's packed zero points; AWQ/GPTQ on a bf16 config run fp16 ------------

def _awq_llama(tmp_path, **quant):
    from importlib import resources

    d = json.loads((resources.files("rooflab.workloads") / "configs"
                    / "llama-3-8b.json").read_text())
    assert d["torch_dtype"] == "bfloat16"
    d["quantization_config"] = {"quant_method": "awq", "bits": 4, "group_size": 128,
                                "version": "gemm", **quant}
    path = tmp_path / "awq.json"
    path.write_text(json.dumps(d))
    return str(path)


@pytest.mark.parametrize("quant, per_weight", [
    ({"zero_point": True}, 0.5 + 2 / 128 + 0.5 / 128),      # 0.51953125: AutoAWQ default
    ({}, 0.5 + 2 / 128 + 0.5 / 128),                        # zero_point defaults to true
    ({"zero_point": False}, 0.5 + 2 / 128),                 # 0.515625: scales only
])
def test_awq_zero_points_are_counted(tmp_path, capsys, quant, per_weight):
    assert main(["llm", _awq_llama(tmp_path, **quant), "--on", "A100", "--phase", "decode",
                 "--json"]) == 0
    llm = json.loads(capsys.readouterr().out)["llm"]
    assert llm["settings"]["weight_bytes_per_param"] == pytest.approx(per_weight, rel=1e-12)
    rows = {k["name"]: k for k in llm["decode"]["kernels"]}
    # gate_proj: 4096 x 14336 = 58,720,256 weights per layer, 32 layers
    assert rows["gate_proj"]["bytes_split"]["weights"] == pytest.approx(
        32 * 58_720_256 * per_weight, rel=1e-12)


def test_gptq_zero_points_only_when_not_symmetric():
    from rooflab.workloads.llm.quant_config import quantization

    sym, _ = quantization({"quant_method": "gptq", "bits": 4, "group_size": 128}, 4096)
    asym, _ = quantization({"quant_method": "gptq", "bits": 4, "group_size": 128,
                            "sym": False}, 4096)
    assert (sym.zero_point, asym.zero_point) == (False, True)
    s = Settings(weights="int4", zero_point=True)
    assert s.weight_bytes == 0.51953125
    assert Settings(weights="int8", zero_point=True).weight_bytes == 1 + 2 / 128 + 1 / 128
    assert Settings(weights="int4").weight_bytes == 0.515625      # --weights int4: symmetric


def test_awq_on_a_bf16_config_runs_fp16_activations(tmp_path, capsys):
    # without Marlin (an AMD MI300X: awq_marlin is CUDA SM 8.0+ only) the AWQ kernel takes
    # fp16 only; on an A100 vLLM's default is awq_marlin, at bf16 (review 19d N2)
    path = _awq_llama(tmp_path, zero_point=True)
    assert main(["llm", path, "--on", "MI300X", "--phase", "decode"]) == 0
    out = _flat(capsys.readouterr().out)
    assert ("setup: weights int4 (group 128, fp16 scales and zero points; dequantized to "
            "fp16 for the math; embedding, lm_head kept at fp16)") in out
    assert "activations fp16, KV fp16" in out
    assert "its awq weights run with fp16 activations" in out
    # --act bf16 keeps the checkpoint's bf16, without the note
    assert main(["llm", path, "--on", "MI300X", "--phase", "decode", "--act", "bf16"]) == 0
    out = _flat(capsys.readouterr().out)
    assert "activations bf16" in out and "run with fp16 activations" not in out
