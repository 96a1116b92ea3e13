"""Review 11b, findings 1, 3, 4, 9, 10, 12 and two of 14's bullets: what a checkpoint's
quantization_config says of activations and unquantized modules, the request floor's
off-by-one, int8 weights with fp8 activations, bare link rates, --context below --prompt,
GPTQ's per-channel group and the int4 KV cache's scales.

Hand numbers (Llama-3-8B: 32 layers x 218.1 M matrix weights = 6.979 G, lm_head 4096 x
128256 = 525.3 M, KV 131 kB per token in fp16):
- F1 fp8 checkpoint (activation_scheme dynamic), H100, 8192-token prefill: 2 x 6.98 G x
  8192 = 114 TFLOP of projections at fp8's 1979 TFLOP/s = 58 ms, + causal attention and the
  elementwise kernels: 74.2 ms (the --act fp8 path), where weight-only fp16 math gave 148.
- F4 compressed-tensors W8A8 (int8 per channel) with "ignore": ["lm_head"], H100 decode:
  6.979 G x (1 + 2/4096) B + 525.3 M x 2 B = 8.03 GB of weights per step (7.51 GB with
  lm_head at int8); + 75.6 MB KV: 8.11 GB / 3.35 TB/s = 2.42 ms (review: ~2.43; 2.27 before).
- F3 TinyLlama on a T4: TTFT 19.1 ms, TPOT 6.52 ms: --generate 1 -> 19.1 ms (was 25.6),
  --generate 2 -> 25.6 ms (was 32.2), 128 -> 19.1 + 127 x 6.52 = 847 ms (was 853).
- F9 --weights int8 --act fp8 on an A100 (no fp8): the weights are dequantized to fp8, which
  falls back to fp16 tensor math: a 4096-token Llama-3-8B prefill 204 ms, as --weights fp8
  --act fp8, not int8's 105 ms.
- F12 --prompt 4096 --context 100 on an H100: decode steps see 4096-4224 tokens; at the
  average, 4160: (15.0 GB + 4161 x 131 kB) / 3.35 TB/s = 4.64 ms; request floor 70 ms +
  127 x 4.64 ms = 660 ms (was 70 + 128 x 4.49 = 644 ms).
- --kv int4: 0.5 B + (2 + 2) B / 128 = 0.53125 B per element: 2 x 32 x 8 x 128 x 0.53125 =
  34,816 B per token (was 32,768).
"""

from __future__ import annotations

import json
from importlib import resources

import pytest

from rooflab.cli.main import main
from rooflab.errors import InputError
from rooflab.hardware.resolve import load_roof
from rooflab.units import parse_link_rate
from rooflab.workloads.llm import Request, analyze_llm, load_config
from rooflab.workloads.llm.settings import Settings, settings_for

LLAMA3_MATRICES = 32 * (2 * 4096 * 4096 + 2 * 4096 * 1024 + 3 * 4096 * 14336)   # 6.979 G
LM_HEAD = 4096 * 128256                                                            # 525.3 M

W8A8 = {"quant_method": "compressed-tensors", "ignore": ["lm_head"], "config_groups": {
    "group_0": {"targets": ["Linear"],
                "weights": {"num_bits": 8, "type": "int", "strategy": "channel",
                            "symmetric": True, "dynamic": False},
                "input_activations": {"num_bits": 8, "type": "int", "strategy": "token",
                                      "symmetric": True, "dynamic": True}}}}


def _llama3(tmp_path, quant, name="q.json"):
    root = resources.files("rooflab.workloads") / "configs"
    d = json.loads((root / "llama-3-8b.json").read_text())
    p = tmp_path / name
    p.write_text(json.dumps({**d, "quantization_config": quant}))
    return str(p)


def _run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def _analyze(path, on="H100", **req):
    cfg = load_config(path)
    return analyze_llm(cfg, load_roof(on), settings_for(cfg), Request(**req))


@pytest.mark.filterwarnings("ignore:context of")     # 8192 + 128 > Llama-3's 8192 positions
def test_fp8_activation_scheme_sets_fp8_activations(tmp_path, capsys):
    path = _llama3(tmp_path, {"quant_method": "fp8", "activation_scheme": "dynamic"})
    r = _analyze(path, prompt=8192)
    assert r.settings.act == "fp8" and r.settings.kv == "bf16"
    assert r.ttft_s == pytest.approx(90.7e-3, rel=5e-3)       # was 148 ms (74.2 before s21 r6 F2)
    q = r.prefill.step.op("q_proj").op
    assert q.precision == "fp8"
    code, out, _ = _run(capsys, "llm", path, "--on", "H100", "--prompt", "8192",
                        "--phase", "prefill")
    assert code == 0
    assert ("activations fp8 (dynamic; fp8 GEMMs, attention/norms/elementwise in bf16), from the "
            "config's quantization_config, KV bf16"
            in out)
    # --act still wins over the config, and says what it replaced
    cfg = load_config(path)
    assert settings_for(cfg, act="fp16").act == "fp16"
    code, out, _ = _run(capsys, "llm", path, "--on", "H100", "--act", "fp16",
                        "--phase", "decode")
    assert code == 0 and "--act fp16 replaces the config's quantization_config" in out


def test_compressed_tensors_w8a8_int8_runs_int8_gemms_and_keeps_lm_head(tmp_path, capsys):
    path = _llama3(tmp_path, W8A8)
    r = _analyze(path, context=576)
    s = r.settings
    assert (s.weights, s.act, s.kv, s.keep, s.per_channel) == ("int8", "int8", "bf16",
                                                               ("lm_head",), True)
    weights = r.decode.step.bytes_split["weights"]
    hand = LLAMA3_MATRICES * (1 + 2 / 4096) + LM_HEAD * 2
    assert weights == pytest.approx(hand, rel=1e-3)
    assert weights == pytest.approx(8.03e9, rel=2e-3)           # was 7.51 GB
    assert r.tpot_s == pytest.approx(2.42e-3, rel=5e-3)         # was 2.27 ms
    pre = r.prefill.step
    assert pre.op("q_proj").op.precision == "int8"              # H100 int8 tensor: 1979 T
    assert pre.op("lm_head").op.precision == "bf16"
    assert pre.op("attention").op.precision == "bf16"           # no int8 attention kernel
    code, out, _ = _run(capsys, "llm", path, "--on", "H100", "--phase", "decode")
    assert code == 0
    assert "weights int8 (per channel, fp16 scales; embedding, lm_head kept at bf16)" in out
    assert "activations int8 (dynamic; int8 GEMMs" in out
    assert "bytes per step: weights 8.03 GB" in out
    # what `rooflab whatif --quantize` reads of each kernel's stored weights
    meta = {k.name: k.meta["weight_dtype"] for k in r.decode.step.kernels()}
    assert (meta["q_proj"], meta["lm_head"]) == ("int8", "bf16")


def test_int8_prefill_runs_at_the_int8_ceiling(tmp_path):
    # A100: int8 tensor 624 TOPS vs fp16 312: the W8A8 prefill's projections halve
    path = _llama3(tmp_path, W8A8)
    w8a8 = _analyze(path, on="A100", prompt=4096)
    cfg = load_config(path)
    w8a16 = analyze_llm(cfg, load_roof("A100"), settings_for(cfg, act="fp16"),
                        Request(prompt=4096))
    q8 = next(p for p in w8a8.prefill.points if p.kernel == "q_proj")
    q16 = next(p for p in w8a16.prefill.points if p.kernel == "q_proj")
    assert q8.peak_flop_per_s == pytest.approx(624e12)
    assert q16.floor_s / q8.floor_s == pytest.approx(2.0, rel=1e-6)


def test_act_int8_needs_int8_weights(capsys):
    code, _, err = _run(capsys, "llm", "llama-3-8b", "--on", "H100", "--act", "int8")
    assert code == 2 and "Traceback" not in err
    assert "--act int8" in err and "--weights int8" in err
    code, out, _ = _run(capsys, "llm", "llama-3-8b", "--on", "H100", "--act", "int8",
                        "--weights", "int8", "--phase", "prefill")
    assert code == 0 and "activations int8" in out
    with pytest.raises(InputError):
        Settings(weights="fp8", act="int8")


def test_request_floor_counts_generate_minus_one_decode_steps(capsys):
    cfg = load_config("tinyllama-1.1b")
    roof = load_roof("T4")
    one = analyze_llm(cfg, roof, req=Request(generate=1))
    assert one.request_s == one.ttft_s                          # was TTFT + 1 TPOT
    assert one.request_s == pytest.approx(19.1e-3, rel=5e-3)
    two = analyze_llm(cfg, roof, req=Request(generate=2))
    assert two.request_s == pytest.approx(two.ttft_s + two.tpot_s)
    assert two.request_s == pytest.approx(25.6e-3, rel=5e-3)   # was 32.2 ms
    full = analyze_llm(cfg, roof, req=Request())
    assert full.request_s == pytest.approx(full.ttft_s + 127 * full.tpot_s)
    assert full.request_s == pytest.approx(847e-3, rel=2e-3)   # was 853 ms


def test_int8_weights_with_fp8_activations_are_not_int8_math(capsys):
    a100 = load_roof("A100")
    cfg = load_config("llama-3-8b")
    req = Request(prompt=4096)
    mixed = analyze_llm(cfg, a100, Settings(weights="int8", act="fp8", kv="fp8"), req)
    fp8 = analyze_llm(cfg, a100, Settings(weights="fp8", act="fp8", kv="fp8"), req)
    assert mixed.settings.precision == "fp8"
    assert mixed.ttft_s == pytest.approx(209.8e-3, rel=5e-3)     # was 105 ms at int8's rate
    assert mixed.ttft_s == pytest.approx(fp8.ttft_s, rel=1e-3)
    code, out, _ = _run(capsys, "llm", "llama-3-8b", "--on", "A100", "--prompt", "4096",
                        "--weights", "int8", "--act", "fp8")
    assert code == 0
    assert "dequantized to fp8 for the math" in out
    assert "attention math in int8" not in out
    assert "no fp8 ceiling; using fp16 tensor" in out


@pytest.mark.parametrize("args", [("--tp", "2", "--link-bw", "900"),
                                  ("--pp", "2", "--pp-link-bw", "50")])
def test_bare_link_rate_is_refused_as_scale_refuses_it(capsys, args):
    code, out, err = _run(capsys, "llm", "llama-3-8b", "--on", "H100", "--phase", "decode",
                          *args)
    assert code == 2 and "Traceback" not in err and "TPOT" not in out
    assert f"{args[2]} {args[3]} would be {args[3]} bytes/s" in err
    code, _, err = _run(capsys, "scale", "--on", "H100 SXM", "--link-bw", "900")
    assert code == 2 and "--link-bw 900 would be 900 bytes/s" in err
    assert parse_link_rate("900GB/s") == 900e9
    assert parse_link_rate("400Gb/s") == 50e9


def test_context_below_prompt_uses_the_requests_own_steps(capsys):
    cfg = load_config("llama-3-8b")
    r = analyze_llm(cfg, load_roof("H100"), req=Request(prompt=4096, context=100))
    assert r.tpot_s == pytest.approx(4.49e-3, rel=5e-3)         # the tabled step, context 100
    assert r.request_tpot_s == pytest.approx(4.64e-3, rel=5e-3)  # context 4160
    assert r.request_s == pytest.approx(r.ttft_s + 127 * r.request_tpot_s)
    assert r.request_s == pytest.approx(660e-3, rel=5e-3)      # was 644 ms
    assert any("--context 100 is not a step this request reaches" in n for n in r.notes)
    # and says how to make it one: a prompt p with p + 1 <= 100 <= p + generate - 1,
    # 100 as the average step p + generate // 2: p = 100 - 64 = 36 (review 19d N4)
    assert any("(--prompt 36 makes it one" in n for n in r.notes)
    # the default context is the average step: nothing extra
    plain = analyze_llm(cfg, load_roof("H100"), req=Request(prompt=4096))
    assert plain.request_tpot_s is None and not any("reaches" in n for n in plain.notes)


def test_gptq_group_minus_one_is_per_channel(tmp_path, capsys):
    path = _llama3(tmp_path, {"quant_method": "gptq", "bits": 4, "group_size": -1})
    code, out, _ = _run(capsys, "llm", path, "--on", "H100", "--phase", "decode")
    assert code == 0
    assert "weights int4 (per channel, fp16 scales" in out and "group 4096" not in out
    assert load_config(path).quantization.format == "weights int4, per channel"


def test_kv_int4_counts_its_scales():
    s = Settings(kv="int4")
    assert s.kv_bytes == pytest.approx(0.5 + 4 / 128)
    r = analyze_llm(load_config("llama-3-8b"), load_roof("H100"), s, Request())
    assert r.footprint.kv_per_token == pytest.approx(2 * 32 * 8 * 128 * 0.53125)  # 34,816 B
    assert "an fp16 scale and zero point per 128 elements" in s.describe()


def test_ignore_entry_for_one_layer_is_noted_not_mapped(tmp_path):
    q = {**W8A8, "ignore": ["lm_head", "re:.*mlp.gate$", "model.layers.0.mlp.down_proj"]}
    cfg = load_config(_llama3(tmp_path, q))
    assert cfg.quantization.keep == ("lm_head", "router")
    assert any("model.layers.0.mlp.down_proj" in n and "counted at the quantized width" in n
               for n in cfg.notes)
