"""Review 19d (re-check of 18d, LLM workloads): the findings fixed, with hand numbers.

N1: a catalog CPU's memory_gb is its platform's maximum RAM (Xeon 8480+: 4 TB): no fit or
    largest batch from it (was 47,566 for Llama-3-8B), and `choose` does not judge a fit
    by it (it ranked EPYC/Xeon as fitting a 141 GB model).
D:  catalog GPUs carry nvidia-smi's total (usable_memory_mib); --gpu-mem-util takes a
    share of it, as vLLM's gpu_memory_utilization; the memory line says so beside the fit.
N3: --act fp8 alone sets fp8 weights (W8A8, as vLLM's quantization="fp8"), an explicit
    16-bit --weights with it is refused, as --act int8's is.
N4, N5, N9, N10: the decode steps span 513-639 for a 512 + 128 request; the pipeline hop
    is the 16-bit residual stream; the setup line and JSON say where the dtype came from;
    the TPOT line names the all-reduce term.
"""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main
from rooflab.hardware.catalog import lookup
from rooflab.hardware.resolve import load_roof
from rooflab.workloads.llm.analysis import Request, analyze_llm
from rooflab.workloads.llm.config import load_config
from rooflab.workloads.llm.settings import settings_for

XEON = "Intel Xeon Platinum 8480+"
# Llama-3-8B bf16 at context 639 = 512 + 128 - 1: weights 8,030,261,248 x 2 B; KV
# 639 x 131,072 B (32 layers x 8 kv heads x 128 x 2 (K, V) x 2 B) per sequence;
# one prompt's prefill activations 34,067,456 B, reserved once
WEIGHTS = 8_030_261_248 * 2
KV_SEQ = 639 * 131_072
ACTS = 34_067_456
LOGITS_SEQ = 128_256 * 4       # fp32 decode logits a sequence, 513,024 B (H1)


def _run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def _json(capsys, *args):
    code, out, err = _run(capsys, "llm", *args, "--json")
    assert code == 0, err
    return json.loads(out)["llm"]


def _flat(text: str) -> str:
    return " ".join(text.split())


# --- N1: a CPU's catalog memory is a platform maximum ------------------------------------

def test_catalog_cpu_memory_is_a_platform_maximum_not_a_fit():
    xeon, h100 = lookup(XEON), lookup("H100")
    assert xeon.memory_bytes == 4e12 and xeon.memory_is_platform_max
    assert xeon.fit_memory_bytes is None
    assert h100.fit_memory_bytes == 80e9 and not h100.memory_is_platform_max


def test_llm_on_a_catalog_cpu_gives_no_largest_batch(capsys):
    fp = _json(capsys, "llama-3-8b", "--on", XEON, "--phase", "decode")["footprint"]
    # was device_bytes 4e12 and max_batch (4e12 - 16.06e9 - 34.1e6) / 83.76e6 = 47,566
    assert fp["device_bytes"] is None and fp["max_batch"] is None
    code, out, _ = _run(capsys, "llm", "llama-3-8b", "--on", XEON, "--phase", "decode")
    text = _flat(out)
    assert "(device memory unknown: give --memory)" in text
    assert "47566" not in text
    assert (f"no fit or largest batch: {XEON}'s 4 TB in the catalog is the most its "
            f"platform takes, not the RAM a server has installed") in text
    # the installed RAM, given: (512e9 - 16.0605e9 - 34.07e6) / (83.755e6 KV + 0.513e6
    # fp32 decode logits, H1) = 495,905,410,048 / 84,268,032 = 5884.9 (KV alone: 5920.9)
    fp = _json(capsys, "llama-3-8b", "--on", XEON, "--phase", "decode", "--memory",
               "512GB")["footprint"]
    assert fp["device_bytes"] == 512e9
    assert fp["max_batch"] == (512_000_000_000 - WEIGHTS - ACTS) // (KV_SEQ + LOGITS_SEQ) \
        == 5884


def test_choose_does_not_fit_a_model_into_a_cpu_platform_maximum(capsys, tmp_path):
    doc = tmp_path / "l70.json"
    code, out, _ = _run(capsys, "llm", "llama-3-70b", "--on", "H100", "--phase", "decode",
                        "--json")
    assert code == 0
    doc.write_text(out)
    code, out, _ = _run(capsys, "choose", str(doc), "--among", f"H100,{XEON}", "--json")
    assert code == 0
    rows = {r["name"]: r for r in json.loads(out)["devices"]}
    # llama-3-70b bf16, 141 GB: was fits True against the Xeon's 4e12 B
    assert rows[XEON]["fits"] is None and rows[XEON]["memory_bytes"] is None
    assert rows["NVIDIA H100 SXM"]["fits"] is False
    code, out, _ = _run(capsys, "choose", str(doc), "--among", f"H100,{XEON}")
    assert f"fit not judged: the catalog's memory of {XEON} (at most 4 TB)" in _flat(out)


# --- D: nvidia-smi's total and --gpu-mem-util ---------------------------------------------

def test_catalog_carries_nvidia_smi_totals():
    # the MiB totals the catalog notes quote (nvidia-smi, via Modal's table)
    assert lookup("H100").usable_memory_bytes == 81_559 * 2**20 == 85_520_809_984
    assert lookup("H200").usable_memory_bytes == 143_771 * 2**20
    assert lookup("T4").usable_memory_bytes == 15_360 * 2**20
    # the driver's 196,592 MiB (torch total_memory, ROCm/ROCm#4203; review s28 R4 F5)
    assert lookup("MI300X").usable_memory_bytes == 196_592 * 2**20 == 206_141_652_992


def test_gpu_mem_util_fits_against_a_share_of_the_driver_total(capsys):
    fp = _json(capsys, "llama-3-8b", "--on", "H100", "--phase", "decode",
               "--gpu-mem-util", "0.9")["footprint"]
    # 0.9 x 85,520,809,984 = 76,968,728,985.6 B; (76.969e9 - 16.0605e9 - 34.07e6) /
    # (83.755e6 KV + 0.513e6 fp32 decode logits, H1) = 60,874,139,033.6 / 84,268,032 =
    # 722.4 (KV alone 726.8; 758 against the marketing 80e9 B)
    assert fp["device_bytes"] == pytest.approx(0.9 * 85_520_809_984)
    assert fp["max_batch"] == int((0.9 * 85_520_809_984 - WEIGHTS - ACTS)
                                  // (KV_SEQ + LOGITS_SEQ)) == 722
    assert fp["device_bytes_from"] == (
        "0.9 x nvidia-smi's 85.5 GB, as vLLM's gpu_memory_utilization")
    code, out, _ = _run(capsys, "llm", "llama-3-8b", "--on", "H100", "--phase", "decode",
                        "--gpu-mem-util", "0.9")
    assert ("of 77 GB on the device (fits; 0.9 x nvidia-smi's 85.5 GB, as vLLM's "
            "gpu_memory_utilization); largest batch that fits: 722") in _flat(out)


def test_memory_line_says_the_catalog_figure_is_marketing_gb(capsys):
    # numbers unchanged without the option (80e9 B: 758 with the decode logits, see
    # test_llm_review18d), the difference said beside it
    code, out, _ = _run(capsys, "llm", "llama-3-8b", "--on", "H100", "--phase", "decode")
    assert ("of 80 GB on the device (fits; decimal GB as sold; nvidia-smi has 85.5 GB, "
            "vLLM's 0.9 of it 77 GB: --gpu-mem-util 0.9); largest batch that fits: 758"
            ) in _flat(out)
    # --memory is what the user says it is: no words beside it
    code, out, _ = _run(capsys, "llm", "llama-3-8b", "--on", "H100", "--phase", "decode",
                        "--memory", "40GB")
    assert "of 40 GB on the device (fits); largest batch that fits: " in _flat(out)


@pytest.mark.parametrize("bad", ["0", "1.5", "-0.2"])
def test_gpu_mem_util_out_of_range_is_refused(capsys, bad):
    code, _, err = _run(capsys, "llm", "llama-3-8b", "--on", "H100", "--gpu-mem-util", bad)
    assert code == 2 and "Traceback" not in err
    assert "--gpu-mem-util" in err and "(0, 1]" in err


# --- N3: --act fp8 alone is W8A8 -----------------------------------------------------------

def test_act_fp8_alone_sets_fp8_weights(capsys):
    cfg = load_config("llama-3-8b")
    assert settings_for(cfg, act="fp8").weights == "fp8"        # was bf16 (W16A8)
    alone = _json(capsys, "llama-3-8b", "--on", "H100", "--act", "fp8")
    both = _json(capsys, "llama-3-8b", "--on", "H100", "--act", "fp8", "--weights", "fp8")
    assert alone["totals"] == both["totals"]
    # decode weights at 1 B: 8.03 GB stored (was 16.06 GB with bf16 weights)
    assert alone["footprint"]["weights_bytes"] == pytest.approx(8_030_527_488)
    code, out, _ = _run(capsys, "llm", "llama-3-8b", "--on", "H100", "--act", "fp8",
                        "--phase", "decode")
    assert "setup: weights fp8, activations fp8" in out
    assert "--act fp8 sets fp8 weights too (W8A8" in _flat(out)


def test_act_fp8_with_16_bit_weights_is_refused_as_int8_is(capsys):
    code, _, err = _run(capsys, "llm", "llama-3-8b", "--on", "H100", "--act", "fp8",
                        "--weights", "bf16")
    assert code == 2 and "Traceback" not in err
    assert "--act fp8" in err and "--weights bf16 has no fp8 GEMM" in err
    assert "drop --weights" in err
    # narrower weights dequantized to fp8 stay allowed (W4A8)
    assert settings_for(load_config("llama-3-8b"), weights="int4", act="fp8").act == "fp8"


# --- N4: the request's decode steps are prompt + 1 .. prompt + generate - 1 -------------

@pytest.mark.parametrize("ctx, reached", [(512, False), (513, True), (639, True),
                                          (640, False)])
def test_steps_the_request_reaches(ctx, reached):
    r = analyze_llm(load_config("tinyllama-1.1b"), load_roof("T4"),
                    req=Request(context=ctx))
    said = any("is not a step this request reaches" in n for n in r.notes)
    assert said is not reached            # 512 and 640 passed as steps before


def test_note_gives_the_range_and_a_prompt_that_reaches_it():
    r = analyze_llm(load_config("tinyllama-1.1b"), load_roof("T4"),
                    req=Request(context=500))
    note = next(n for n in r.notes if "is not a step" in n)
    assert "its decode steps see 513-639 tokens" in note          # was 512-640
    # --prompt 436: steps 437..563, 500 = 436 + 64 its average (was --prompt 372:
    # steps 373..499, which miss 500)
    assert "(--prompt 436 makes it one of the request's steps)" in note
    again = analyze_llm(load_config("tinyllama-1.1b"), load_roof("T4"),
                        req=Request(prompt=436, context=500))
    assert not any("is not a step" in n for n in again.notes)


# --- N5, N9, N10: labels --------------------------------------------------------------------

def test_pipeline_hop_says_the_16_bit_residual_stream(capsys):
    code, out, _ = _run(capsys, "llm", "llama-3-8b", "--on", "H100", "--pp", "2",
                        "--batch", "4", "--act", "fp8", "--phase", "decode")
    # 4 x 4096 x 2 B = 32,768 B (fp8 activations: not 1 B)
    assert ("1 transfer of 32.8 kB (batch 4 x hidden x 2 B, the bf16 residual stream)"
            in _flat(out))


def test_tpot_line_names_the_all_reduce_term(capsys):
    code, out, _ = _run(capsys, "llm", "llama-3-70b", "--on", "H200", "--tp", "8",
                        "--batch", "16", "--phase", "decode")
    text = _flat(out)
    # 3.79 ms + 163.1 us + 1.02 us + 7.98 us (as tests/test_llm_moe_sweep.py derives
    # them; the embedding's all-reduce, H1: 2 x 7/8 x 16 x 8192 x 2 B / 450e9 = 1.02 us):
    # communication 163.1 + 1.02 + 7.98 = 172.1 us (171 us before the embedding's)
    assert ("with all-reduces (compute 3.79 ms + all-reduces 163 us + embedding all-reduce "
            "1.02 us + logits gather 7.98 us; with launches") in text
    assert "(batch x vocab, 7.98 us): communication 172 us -> TPOT floor 3.96 ms" in text


def test_setup_line_and_json_say_the_dtype_came_from_torch_dtype(capsys):
    d = _json(capsys, "llama-3-8b", "--on", "H100", "--phase", "decode")["settings"]
    assert d["base"] == "bf16"
    assert d["dtype_from"] == "the config's torch_dtype (bfloat16)"
    given = _json(capsys, "llama-3-8b", "--on", "H100", "--phase", "decode", "--act",
                  "bf16")["settings"]
    assert given["dtype_from"] == ""           # --act bf16 said it, not the config
    code, out, _ = _run(capsys, "llm", "llama-3-8b", "--on", "T4", "--phase", "decode")
    assert ("flash attention, fp16 from the config's torch_dtype (bfloat16, no bf16 on "
            "this roof)") in _flat(out)


# --- N2: AWQ/GPTQ on NVIDIA SM 8.0+ run vLLM's Marlin kernels, at bf16 --------------------

def _quantized_llama(tmp_path, **quant):
    from importlib import resources

    d = json.loads((resources.files("rooflab.workloads") / "configs"
                    / "llama-3-8b.json").read_text())
    assert d["torch_dtype"] == "bfloat16"
    d["quantization_config"] = {"bits": 4, "group_size": 128, **quant}
    path = tmp_path / "q.json"
    path.write_text(json.dumps(d))
    return str(path)


@pytest.mark.parametrize("quant, roof, act", [
    ({"quant_method": "awq", "zero_point": True}, "H100", "bf16"),    # awq_marlin (was fp16)
    ({"quant_method": "awq", "zero_point": True}, "A100", "bf16"),    # SM 8.0
    ({"quant_method": "gptq", "sym": True}, "H100", "bf16"),          # gptq_marlin
    ({"quant_method": "gptq", "sym": False}, "H100", "fp16"),         # Marlin: sym only
    ({"quant_method": "awq", "zero_point": True}, "MI300X", "fp16"),  # no Marlin on ROCm
])
def test_awq_gptq_run_bf16_where_vllm_uses_marlin(tmp_path, capsys, quant, roof, act):
    d = _json(capsys, _quantized_llama(tmp_path, **quant), "--on", roof, "--phase", "decode")
    assert (d["settings"]["act"], d["settings"]["base"]) == (act, act)
    assert d["settings"]["weights"] == "int4"


def test_marlin_note_names_the_legacy_kernel(tmp_path, capsys):
    path = _quantized_llama(tmp_path, quant_method="awq", zero_point=True)
    code, out, _ = _run(capsys, "llm", path, "--on", "H100", "--phase", "decode")
    text = _flat(out)
    assert "activations bf16, KV bf16" in text
    assert ("vLLM converts them to awq_marlin on this GPU by default, and Marlin takes "
            "bf16; --act fp16 times the legacy AWQ kernel (fp16 only)") in text
    # the weight bytes do not move: int4 + fp16 scales + zero points, 0.5195 B per weight
    d = _json(capsys, path, "--on", "H100", "--phase", "decode")
    assert d["settings"]["weight_bytes_per_param"] == 0.5 + 2 / 128 + 0.5 / 128


# --- N6: Gemma 2/3 on a card without bf16 run fp32 in vLLM; --act fp32 sets the weights ----

def test_gemma2_on_a_t4_runs_fp32_not_fp16(capsys):
    d = _json(capsys, "gemma-2-9b", "--on", "T4", "--phase", "decode")["settings"]
    # vLLM drops fp16 for gemma2 (_FLOAT16_NOT_SUPPORTED_MODELS); a T4 has no bf16: fp32
    assert (d["weights"], d["act"], d["kv"], d["base"]) == ("fp32",) * 4   # was fp16
    code, out, _ = _run(capsys, "llm", "gemma-2-9b", "--on", "T4", "--phase", "decode")
    assert ("runs as fp32: roof 'NVIDIA T4' has no bf16 ceiling, and vLLM refuses fp16 "
            "for gemma2") in _flat(out)
    # a Llama on the same card still falls back to fp16, as vLLM does
    assert _json(capsys, "llama-3-8b", "--on", "T4", "--phase",
                 "decode")["settings"]["act"] == "fp16"


def test_act_fp32_alone_sets_fp32_weights(capsys):
    cfg = load_config("llama-3-8b")
    assert settings_for(cfg, act="fp32").weights == "fp32"          # was bf16
    fp = _json(capsys, "llama-3-8b", "--on", "H100", "--act", "fp32", "--phase",
               "decode")["footprint"]
    assert fp["weights_bytes"] == 8_030_261_248 * 4


# --- N11: the eager HF launch estimate only where it was counted --------------------------

def test_eager_estimate_only_for_llama_layers_without_tp(capsys):
    # TinyLlama (llama): 41 x 22 layers + 311 - 14 x 22 = 905, as before
    m = _json(capsys, "tinyllama-1.1b", "--on", "T4", "--phase", "decode",
              "--tpot-ms", "15")["measured"]
    assert m["eager_launches_estimate"] == 905
    # GPT-2 (LayerNorm, learned positions, plain MLP): was 41 x 12 + ... = 495
    m = _json(capsys, "gpt2", "--on", "H100", "--phase", "decode", "--tpot-ms", "5")["measured"]
    assert m["eager_launches_estimate"] is None and m["eager_launch_s"] is None
    code, out, _ = _run(capsys, "llm", "gpt2", "--on", "H100", "--phase", "decode",
                        "--tpot-ms", "5")
    text = _flat(out)
    assert "no eager HF generate estimate here (it was counted for Llama-like layers, " \
           "not gpt2's)" in text
    assert "about 41 per layer" not in text
    # HF generate has no tensor parallelism: no estimate beside --tp 2
    code, out, _ = _run(capsys, "llm", "llama-3-8b", "--on", "H100", "--phase", "decode",
                        "--tpot-ms", "5", "--tp", "2")
    assert "(HF generate runs no --tp/--pp)" in _flat(out)
