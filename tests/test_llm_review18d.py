"""Review 18d (an LLM-inference engineer's check of `rooflab llm`): the fixes, each against
the review's hand numbers. Llama-3.1-8B and Llama-3-8B share every shape (32 layers,
hidden 4096, 32/8 heads of 128, MLP 14336, vocab 128,256), so the bundled llama-3-8b
stands in for the review's l31-8b.json.

B: the prefill activations are one prompt's workspace, reserved once: at context 639
   (prompt 512 + generate 128 - 1, review 18d F) KV is 639 x 131,072 B = 83,755,008 B per
   sequence; the workspace 512 x (4096 + 2 x 14336) x 2 B + 128,256 x 4 B = 34,067,456 B;
   weights 8,030,261,248 x 2 B = 16,060,522,496 B; largest batch floor((80e9 -
   16,060,522,496 - 34,067,456) / 83,755,008) = 763 (761 at context 640; was 542 with
   34 MB per sequence).
C: fp8/int8 activations are GEMM inputs only: the TP all-reduce and the PP hop carry the
   16-bit residual stream, batch x hidden x 2 B.
A: a batch-1 decode at AI ~1 FLOP/B is memory-bound, launch-sized kernels included.
"""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main
from rooflab.hardware.resolve import load_roof
from rooflab.model.parallel import Link
from rooflab.workloads.llm import load_config
from rooflab.workloads.llm.analysis import Request, analyze_llm
from rooflab.workloads.llm.kernels import decode_step
from rooflab.workloads.llm.parallel import tensor_parallel, tp_decode_step
from rooflab.workloads.llm.settings import Settings, settings_for
from rooflab.workloads.llm.timing import time_step, work_split

WEIGHTS = 8_030_261_248 * 2                          # fp16/bf16 Llama-3-8B, every tensor
WORKSPACE = 512 * (4096 + 2 * 14336) * 2 + 128_256 * 4
KV_TOKEN = 2 * 32 * 8 * 128                          # elements per token, all layers
LOGITS_SEQ = 128_256 * 4                             # fp32 decode logits a sequence (H1)


def _json(capsys, *args):
    assert main(["llm", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)["llm"]


# --- B: prefill activations reserved once, not per sequence ------------------------------

# the cache peaks at prompt + generate - 1 = 639 tokens (review 18d F, the last token is
# never cached); at 640 these were 761, 1523, 2867. Each sequence also reserves its fp32
# decode logits, 128,256 x 4 = 513,024 B (H1; KV alone gave 763, 1526, 2872):
# free 80e9 - 16,060,522,496 - 34,067,456 = 63,905,410,048 B
@pytest.mark.parametrize("kv, per_elem, hand", [
    ("fp16", 2.0, 758),            # / (83,755,008 + 513,024 = 84,268,032) = 758.36
    ("fp8", 1.0, 1507),            # / (41,877,504 + 513,024 = 42,390,528) = 1507.54
    ("int4", 0.5 + 4 / 128, 2807),  # / (22,248,192 + 513,024 = 22,761,216) = 2807.64
])
def test_largest_batch_reserves_one_prompts_activations(capsys, kv, per_elem, hand):
    kv_seq = KV_TOKEN * per_elem * 639
    assert (80e9 - WEIGHTS - WORKSPACE) // (kv_seq + LOGITS_SEQ) == hand
    fp = _json(capsys, "llama-3-8b", "--on", "H100", "--phase", "decode", "--kv", kv)[
        "footprint"]
    assert fp["weights_bytes"] == WEIGHTS
    assert fp["activations_bytes"] == WORKSPACE == 34_067_456
    assert fp["kv_bytes"] == pytest.approx(kv_seq)
    assert fp["decode_logits_bytes"] == LOGITS_SEQ
    assert fp["max_batch"] == hand


def test_footprint_activations_do_not_grow_with_the_batch(capsys):
    fp = _json(capsys, "llama-3-8b", "--on", "H100", "--phase", "decode", "--batch", "64")[
        "footprint"]
    assert fp["activations_bytes"] == WORKSPACE
    assert fp["kv_bytes"] == 64 * KV_TOKEN * 2 * 639
    # the decode logits grow with the batch, the workspace does not: 64 x 513,024 B
    assert fp["decode_logits_bytes"] == 64 * LOGITS_SEQ == 32_833_536
    assert fp["total_bytes"] == (WEIGHTS + 64 * KV_TOKEN * 2 * 639 + WORKSPACE
                                 + 64 * LOGITS_SEQ)
    assert fp["max_batch"] == 758                  # as at batch 1 (above)


def test_memory_line_says_what_is_reserved(capsys):
    assert main(["llm", "llama-3-8b", "--on", "H100", "--phase", "decode"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    # 16,060,522,496 + 83,755,008 + 34,067,456 + 513,024 = 16,178,857,984 B = 16.2 GB
    assert ("+ prefill activations 34.1 MB (one prompt in flight, reserved once) + decode "
            "logits 513 kB (fp32 batch x vocab, as vLLM's sampler reserves them) = 16.2 GB "
            "of 80 GB on the device (fits; decimal GB as sold; nvidia-smi has 85.5 GB, vLLM's "
            "0.9 of it 77 GB: --gpu-mem-util 0.9); largest batch that fits: 758") in out


# --- C: collectives carry the 16-bit residual stream under fp8/int8 activations ----------

def test_tp_allreduce_payload_is_16_bit_under_fp8_activations(capsys):
    # 32 x 4096 x 2 B = 262,144 B (was 131,072 at the fp8 width); 64 all-reduces of
    # 2 x 7/8 x 262,144 B / 450 GB/s = 1.0194 us each = 65.2 us
    par = _json(capsys, "llama-3-8b", "--on", "H100", "--tp", "8", "--batch", "32",
                "--weights", "fp8", "--act", "fp8", "--phase", "decode")["parallel"]
    assert par["allreduce_bytes"] == 32 * 4096 * 2
    assert par["allreduces_per_step"] == 64
    assert par["comm_s"] == pytest.approx(64 * 2 * 7 / 8 * 262_144 / 450e9, rel=1e-9)
    assert main(["llm", "llama-3-8b", "--on", "H100", "--tp", "8", "--batch", "32",
                 "--weights", "fp8", "--act", "fp8", "--phase", "decode"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert ("64 all-reduces of 262 kB (bf16 residual stream, not the fp8 GEMM inputs) on "
            "450 GB/s") in out


def test_tp_allreduce_payload_under_int8_activations_and_at_fp16():
    cfg, roof = load_config("llama-3-8b"), load_roof("H100")
    nvlink = Link("NVLink", 450e9, 0.0, "test link")
    w8a8 = Settings(weights="int8", act="int8")
    assert tensor_parallel(cfg, w8a8, roof, batch=16, context=640,
                           tp=4, link=nvlink).allreduce_bytes == 16 * 4096 * 2
    # fp16 and fp32 activations: the residual stream is that width
    assert tensor_parallel(cfg, Settings(), roof, batch=16, context=640,
                           tp=4, link=nvlink).allreduce_bytes == 16 * 4096 * 2
    assert tensor_parallel(cfg, Settings(weights="fp32", act="fp32"), roof, batch=16,
                           context=640, tp=4, link=nvlink).allreduce_bytes == 16 * 4096 * 4


def test_pp_hop_is_16_bit_under_fp8_activations(capsys):
    pipe = _json(capsys, "llama-3-8b", "--on", "H100", "--pp", "2", "--batch", "4",
                 "--weights", "fp8", "--act", "fp8", "--phase", "decode")["pipeline"]
    assert pipe["transfer_bytes"] == 4 * 4096 * 2          # was 16,384 at 1 B


# --- A: launch-sized kernels count on the side their work puts them ---------------------

@pytest.mark.parametrize("model, roof", [("gpt2", "H100"), ("tinyllama-1.1b", "H200")])
def test_batch_1_decode_at_ai_1_is_memory_bound(capsys, model, roof):
    d = _json(capsys, model, "--on", roof, "--phase", "decode")["decode"]
    assert d["ai"] == pytest.approx(1.0, abs=0.06)
    assert d["bound"] == "memory"              # was "compute"
    # GPT-2 on H100: the step floor is its bytes over 3.35 TB/s (review: 80.4 us)
    if model == "gpt2":
        assert d["floor_s"] == pytest.approx(d["bytes"] / 3.35e12, rel=1e-6)


def test_step_bound_and_tp_step_share_one_rule():
    cfg, roof = load_config("gpt2"), load_roof("H100")
    s = settings_for(cfg)
    points = time_step(decode_step(cfg, s, 1, 640), roof).points
    assert any(p.bound == "overhead" for p in points)
    mem, comp = work_split(points)
    assert mem + comp == pytest.approx(sum(p.floor_s for p in points))
    assert comp == 0.0                          # every kernel left of a ~295 FLOP/B ridge
    r = analyze_llm(cfg, roof, s, Request(context=640))
    assert r.decode.bound == "memory"
    link = Link("NVLink", 450e9, 0.0, "test link")
    tps = tp_decode_step(cfg, s, roof, batch=1, context=640, tp=2, link=link)
    assert tps.compute_s == 0.0 and tps.memory_s > 0


# --- H: the config's torch_dtype is the model's dtype when no --weights/--act is given ----

XEON = "Intel Xeon Platinum 8480+"
AMX_BF16 = 56 * 2e9 * 1024                  # catalog: 56 cores x 2 GHz x 1024 FLOP/cycle


def test_bf16_config_runs_in_bf16_on_amx(capsys):
    # llama-3-8b.json says "torch_dtype": "bfloat16". 2048-token prefill: 2 x 2048 x
    # 6,979,321,856 layer weights = 28.59 TFLOP + causal attention 32 x 32 x 2048 x 2049 /
    # 2 x 512 = 1.100 TFLOP + lm_head on the last position 1.05 GFLOP = 29.69 TFLOP, on
    # AMX-BF16 (114.7 TFLOP/s) >= 0.259 s; the tool said 2.11 s on the fp16 vector units.
    hand = 2 * 2048 * 6_979_321_856 + 32 * 32 * 2048 * 2049 // 2 * 512 + 2 * 4096 * 128_256
    d = _json(capsys, "llama-3-8b", "--on", XEON, "--phase", "prefill", "--prompt", "2048")
    assert (d["settings"]["weights"], d["settings"]["act"], d["settings"]["kv"]) == (
        "bf16", "bf16", "bf16")
    assert d["prefill"]["flop"] == pytest.approx(hand, rel=1e-3)
    assert hand / AMX_BF16 <= d["totals"]["ttft_s"] < 0.35          # review: 0.30 s
    assert main(["llm", "llama-3-8b", "--on", XEON, "--phase", "prefill"]) == 0
    out = capsys.readouterr().out
    assert "setup: weights bf16, activations bf16, KV bf16," in out
    assert "no fp16 tensor ceiling" not in out


def test_explicit_dtype_flags_win_over_the_config(capsys):
    # --weights fp16 alone sets the activations too (2.0 s on the 14.3 TFLOP/s fp16
    # vector units: 28.6 TFLOP / 14.3 T), and --act bf16 alone the weights
    d = _json(capsys, "llama-3-8b", "--on", XEON, "--phase", "prefill", "--prompt", "2048",
              "--weights", "fp16")
    assert (d["settings"]["weights"], d["settings"]["act"]) == ("fp16", "fp16")
    assert d["totals"]["ttft_s"] > 28.6e12 / 14.336e12
    cfg = load_config("llama-3-8b")
    # --act fp8 alone: fp8 weights too, W8A8 (review 19d N3; was bf16 weights at fp8 math)
    assert (settings_for(cfg, act="bf16").weights, settings_for(cfg, act="fp8").weights) == (
        "bf16", "fp8")
    assert settings_for(load_config("llama-2-7b")).weights == "fp16"    # float16 config
    assert settings_for(load_config("gemma-2-9b")).act == "bf16"        # float32, as vLLM


def test_bf16_config_on_a_card_without_bf16_runs_fp16_and_says_so(capsys):
    assert main(["llm", "tinyllama-1.1b", "--on", "T4", "--phase", "decode"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "setup: weights fp16, activations fp16, KV fp16," in out
    assert ("note: tinyllama-1.1b's torch_dtype (bfloat16) runs as fp16: roof 'NVIDIA T4' "
            "has no bf16 ceiling") in out


# --- F: the last generated token is never fed back: no false max_position warning --------

def test_prompt_at_max_positions_with_one_token_generated_is_not_warned(capsys):
    # gemma-2-9b: max_position_embeddings 8192; --generate 1 feeds only the 8192 prompt
    # tokens (8192 + 1 - 1); --generate 2 feeds 8193: warned
    assert main(["llm", "gemma-2-9b", "--on", "H100", "--prompt", "8192", "--generate", "1",
                 "--phase", "both"]) == 0
    out, err = capsys.readouterr()
    assert "max_position_embeddings" not in out + err
    assert main(["llm", "gemma-2-9b", "--on", "H100", "--prompt", "8192", "--generate", "2",
                 "--phase", "both"]) == 0
    out, err = capsys.readouterr()
    assert "context of 8193 tokens is longer than gemma-2-9b's max_position_embeddings" in (
        out + err)


# --- G: a CPU profile's device memory is the host RAM it records --------------------------

def _cpu_profile(tmp_path):
    from dataclasses import replace

    from rooflab.hardware.catalog import lookup_roof
    from rooflab.hardware.profile import MachineProfile, save_profile

    path = tmp_path / "cpu.json"
    roof = replace(lookup_roof(XEON), name="box measured, quick probe")
    save_profile(path, MachineProfile(
        host={"name": "box", "memory_bytes": 25_276_059_648,
              "memory_available_bytes": 23_400_000_000},
        nominal=roof, created="2026-01-02T03:04:05+00:00"))
    return str(path)


def test_cpu_profile_memory_is_its_host_ram(capsys, tmp_path):
    # review 18d's VM: 25,276,059,648 B. TinyLlama at context 639 (512 + 128 - 1):
    # (25,276,059,648 - 2,200,096,768 weights - 13,759,488 prefill activations) /
    # (639 x 22,528 = 14,395,392 B KV + 32,000 x 4 = 128,000 B fp32 decode logits, H1) =
    # 23,062,203,392 / 14,523,392 = 1587.94 -> 1587 (KV alone: 1602.05)
    on = _cpu_profile(tmp_path)
    fp = _json(capsys, "tinyllama-1.1b", "--on", on, "--phase", "decode")["footprint"]
    assert fp["device_bytes"] == 25_276_059_648
    assert fp["max_batch"] == 1587
    assert main(["llm", "tinyllama-1.1b", "--on", on, "--phase", "decode"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "of 25.3 GB on the device (fits); largest batch that fits: 1587" in out
    assert "device memory unknown" not in out
    assert "is the host's RAM as" in out and "23.4 GB was available" in out
    # --memory still wins
    fp = _json(capsys, "tinyllama-1.1b", "--on", on, "--phase", "decode", "--memory",
               "16GB")["footprint"]
    assert fp["device_bytes"] == 16e9


# --- D: the catalog's memory says GB vs GiB and what nvidia-smi reports -------------------

@pytest.mark.parametrize("name, gb, mib, total_gb", [
    ("H100", 80, 81_559, "85.52"),      # 81,559 x 2^20 B = 85,521,498,112 B
    ("H200", 141, 143_771, "150.75"),   # 143,771 x 2^20 B = 150,755,098,624 B
    ("T4", 16, 15_360, "16.11"),        # 15 GiB exactly
])
def test_catalog_memory_note_says_marketing_gb_and_nvidia_smi_mib(name, gb, mib, total_gb):
    from rooflab.hardware.catalog import lookup

    dev = lookup(name)
    assert dev.memory_bytes == gb * 1e9
    note = next(n for n in dev.notes if n.startswith("memory_gb"))
    assert f"decimal GB ({gb}e9 B)" in note
    assert f"{mib:,} MiB" in note and f"{mib * 2**20 / 1e9:.2f} GB" in note
    assert f"{total_gb} GB" in note
