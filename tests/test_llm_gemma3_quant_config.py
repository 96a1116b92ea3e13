"""Review 10, findings 1, 4 and 6: Gemma 3's 5:1 local/global layers, a checkpoint's
quantization_config, and one work floor (plus one "with launches" figure) in llm, whatif
and choose.

Hand numbers:
- Gemma-3-4B-style text_config (hidden 2560, 34 layers, 8 heads / 4 KV heads x 256,
  window 1024): transformers makes layer i global when (i + 1) % 6 == 0, so layers 5, 11,
  17, 23, 29 are global and 29 are local. KV per token and layer 2 x 4 x 256 x 2 B = 4096 B;
  at context 8000: (5 x 8000 + 29 x 1024) x 4096 B = 69,696 x 4096 = 285.5 MB (the
  Gemma-2 pattern, 17 + 17 layers, gave 628 MB), and 232 sequences fit an 80 GB A100.
- Llama-3-8B with an AWQ 4-bit, group-128 quantization_config: its read matrices are
  32 x 218.1 M + 525.3 M lm_head = 7.505 G weights x (0.5 + 2/128) B = 3.870 GB, with
  75.6 MB of KV at context 576 (2 x 32 x 8 x 128 x 2 B x 577): 3.95 GB / 2.039 TB/s =
  1.94 ms on an A100 (fp16: 7.4 ms).
- Llama-3-8B decode, batch 1, on an H200 (4.8 TB/s): work floor 15.1 GB / 4.8 TB/s =
  3.15 ms; 290 of its 451 kernels are launch-bound (9 per layer x 32 + embedding +
  final norm), 290 x 5 us = 1.45 ms, plus the other 161 kernels' 3.02 ms of work: 4.47 ms
  with launches. Before the fix llm said 3.15 ms, choose 4.47 ms and whatif 5.40 ms.
- TinyLlama on an A100: 1.02 ms fp16 -> 270 us int4 (group 128) = 3.79x on the work floor
  in llm and whatif alike (whatif said 1.41x: 1.56 ms of launches added on both sides).
"""

from __future__ import annotations

import json
from importlib import resources

import pytest

from rooflab.cli.main import main
from rooflab.hardware.resolve import load_roof
from rooflab.workloads.llm import analyze_llm, load_config, parse_config
from rooflab.workloads.llm.config_names import bundled_names
from rooflab.workloads.llm.settings import Settings


def flat(text: str) -> str:
    """Terminal output with rich's line wrapping undone."""
    return " ".join(text.split())


def run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def gemma3_text(**extra):
    return {"model_type": "gemma3_text", "hidden_size": 2560, "num_hidden_layers": 34,
            "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256,
            "vocab_size": 262208, "intermediate_size": 10240, "sliding_window": 1024,
            "max_position_embeddings": 131072, **extra}


def write(tmp_path, name, d):
    p = tmp_path / name
    p.write_text(json.dumps(d))
    return str(p)


# --- finding 1: Gemma 3 has 5 local layers per global one ---------------------------------

GLOBAL = (5, 11, 17, 23, 29)


@pytest.mark.parametrize("wrapped", [True, False])
def test_gemma3_defaults_to_five_local_layers_per_global(wrapped):
    d = {"model_type": "gemma3", "text_config": gemma3_text()} if wrapped else gemma3_text()
    cfg = parse_config(d)
    assert tuple(i for i in range(34) if i not in cfg.sliding_layers) == GLOBAL
    assert len(cfg.sliding_layers) == 29


def test_gemma3_wrapper_without_inner_model_type_is_gemma3_text():
    inner = gemma3_text()
    del inner["model_type"]
    cfg = parse_config({"model_type": "gemma3", "text_config": inner})
    assert cfg.model_type == "gemma3_text"
    assert len(cfg.sliding_layers) == 29 and cfg.norms_per_layer == 4


def test_sliding_window_pattern_is_read():
    # pattern 3 on 34 layers: global at 2, 5, ..., 32 (11 of them), 23 local
    cfg = parse_config(gemma3_text(sliding_window_pattern=3))
    assert tuple(i for i in range(34) if i not in cfg.sliding_layers) == tuple(range(2, 34, 3))
    # Gemma 2 keeps its alternation (layer 0 local), pattern or not
    g2 = load_config("gemma-2-9b")
    assert g2.sliding_layers == tuple(range(0, g2.layers, 2))


def test_gemma3_kv_and_batch_fit_at_long_context(tmp_path, capsys):
    mm = write(tmp_path, "mm.json", {"model_type": "gemma3", "text_config": gemma3_text()})
    code, out, err = run(capsys, "llm", mm, "--on", "A100", "--context", "8000", "--json")
    assert code == 0, err
    fp = json.loads(out)["llm"]["footprint"]
    assert fp["context"] == 8000
    assert fp["kv_bytes"] == pytest.approx((5 * 8000 + 29 * 1024) * 4096, rel=1e-9)  # 285.5 MB
    assert fp["max_batch"] == 252
    # an explicit layer_types list (every 6th global) counts the same
    types = ["full_attention" if (i + 1) % 6 == 0 else "sliding_attention" for i in range(34)]
    lt = write(tmp_path, "lt.json", {"model_type": "gemma3",
                                     "text_config": gemma3_text(layer_types=types)})
    code, out, _ = run(capsys, "llm", lt, "--on", "A100", "--context", "8000", "--json")
    assert json.loads(out)["llm"]["footprint"]["kv_bytes"] == fp["kv_bytes"]


# --- finding 6: a quantized checkpoint's config ------------------------------------------

def llama8b(**quant):
    d = json.loads((resources.files("rooflab.workloads") / "configs"
                    / "llama-3-8b.json").read_text())
    if quant:
        d["quantization_config"] = quant
    return d


AWQ = {"quant_method": "awq", "bits": 4, "group_size": 128, "version": "gemm",
       "zero_point": True}


def test_awq_config_reads_as_int4_group_128(tmp_path, capsys):
    awq = write(tmp_path, "awq.json", llama8b(**AWQ))
    code, out, err = run(capsys, "llm", awq, "--on", "A100", "--json")
    assert code == 0, err
    llm = json.loads(out)["llm"]
    assert llm["settings"]["weights"] == "int4" and llm["settings"]["group_size"] == 128
    # AutoAWQ quantizes the decoder blocks only: lm_head stays fp16 (128256 x 4096 x 2 B =
    # 1.05 GB instead of 0.27 GB at int4 + scales: +0.78 GB / 2.039 TB/s = +0.38 ms over the
    # all-int4 1.94 ms; 7.4 ms before the config was read at all)
    assert llm["settings"]["unquantized"] == ["embedding", "lm_head"]
    # + AutoAWQ's packed zero points (review 18d J): 6,979,321,856 layer weights x 0.5 /
    # 128 B = 27.3 MB / 2.039 TB/s = +13.4 us: 2.335 ms
    assert llm["totals"]["tpot_s"] == pytest.approx(2.335e-3, rel=5e-3)
    # the same as saying --weights int4 --group 128 on the plain config, less lm_head's bytes
    plain = write(tmp_path, "plain.json", llama8b())
    code, out, _ = run(capsys, "llm", plain, "--on", "A100", "--weights", "int4",
                       "--group", "128", "--json")
    head = 128256 * 4096 * (2 - (0.5 + 2 / 128))
    zeros = 32 * (2 * 4096 * 4096 + 2 * 4096 * 1024 + 3 * 4096 * 14336) * 0.5 / 128
    assert json.loads(out)["llm"]["totals"]["tpot_s"] == pytest.approx(1.94e-3, rel=5e-3)
    assert llm["totals"]["tpot_s"] - json.loads(out)["llm"]["totals"]["tpot_s"] == (
        pytest.approx((head + zeros) / 2.039e12, rel=2e-2))
    code, out, _ = run(capsys, "llm", awq, "--on", "A100")
    text = flat(out)
    # the config is bfloat16, and on an A100 (SM 8.0) vLLM runs it with awq_marlin, which
    # takes bf16 (review 19d N2; was fp16 throughout, the legacy AWQ kernel's dtype)
    assert ("setup: weights int4 (group 128, fp16 scales and zero points; dequantized to "
            "bf16 for the math; embedding, lm_head kept at bf16), from the config's "
            "quantization_config (awq), activations bf16") in text
    assert "vLLM converts them to awq_marlin on this GPU by default" in text
    assert "TPOT floor 2.34 ms" in text


def test_explicit_weights_override_the_config_and_say_so(tmp_path, capsys):
    awq = write(tmp_path, "awq.json", llama8b(**AWQ))
    code, out, _ = run(capsys, "llm", awq, "--on", "A100", "--weights", "fp16")
    text = flat(out)
    assert code == 0 and "TPOT floor 7.4 ms" in text
    assert "setup: weights fp16, activations fp16" in text
    assert ("note: --weights fp16 replaces the config's quantization_config (awq: weights "
            "int4, group 128); the tables count --weights fp16") in text
    # --group alone keeps the config's int4 and changes its group
    code, out, _ = run(capsys, "llm", awq, "--on", "A100", "--group", "64", "--json")
    st = json.loads(out)["llm"]["settings"]
    assert st["weights"] == "int4" and st["group_size"] == 64
    # the config's zero points stay with its format: 0.5 + 2/64 + 0.5/64
    assert st["weight_bytes_per_param"] == pytest.approx(0.5 + 2 / 64 + 0.5 / 64)


@pytest.mark.parametrize("quant, weights, group, per_weight", [
    ({"quant_method": "gptq", "bits": 8, "group_size": -1}, "int8", 4096, 1 + 2 / 4096),
    ({"quant_method": "gptq", "bits": 4, "group_size": 32}, "int4", 32, 0.5 + 2 / 32),
    ({"quant_method": "fp8", "activation_scheme": "dynamic"}, "fp8", 128, 1.0),
    # bitsandbytes nf4: one fp32 absmax per 64 weights
    ({"quant_method": "bitsandbytes", "load_in_4bit": True}, "int4", 64, 0.5 + 4 / 64),
    ({"quant_method": "compressed-tensors", "config_groups": {"group_0": {
        "weights": {"num_bits": 4, "type": "int", "strategy": "group", "group_size": 128},
        "targets": ["Linear"]}}}, "int4", 128, 0.5 + 2 / 128),
    ({"quant_method": "compressed-tensors", "config_groups": {"group_0": {
        "weights": {"num_bits": 8, "type": "float", "strategy": "channel"}}}}, "fp8", 128,
     1.0),
])
def test_quantization_methods(quant, weights, group, per_weight):
    cfg = parse_config(llama8b(**quant))
    r = analyze_llm(cfg, load_roof("A100"))        # no Settings: the config's own format
    assert r.settings.weights == weights and r.settings.group_size == group
    assert r.settings.weight_bytes == pytest.approx(per_weight)
    assert "quantization_config" in r.settings.describe()


def test_unknown_quant_method_is_a_note_and_bf16_stays(tmp_path, capsys):
    hqq = write(tmp_path, "hqq.json", llama8b(quant_method="hqq", bits=4))
    code, out, _ = run(capsys, "llm", hqq, "--on", "A100")
    text = flat(out)
    assert code == 0 and "setup: weights bf16," in text and "TPOT floor 7.4 ms" in text
    assert ("note: the config's quantization_config (hqq, 4 bits) is not one rooflab reads "
            "(awq, gptq, bitsandbytes, fp8, compressed-tensors with 4/8-bit weights): the "
            "tables count the weights unquantized; give --weights int4/int8/fp8 (and "
            "--group) to match it") in text


def test_bundled_configs_carry_no_quantization():
    # every bundled config stays fp16 by default: the new default changes nothing for them
    # but gpt-oss-20b, which ships its real mxfp4 quantization_config (the experts in 4.25 bits)
    for name in set(bundled_names()) - {"gpt-oss-20b"}:
        assert load_config(name).quantization is None
    assert load_config("gpt-oss-20b").quantization.method == "mxfp4"
    assert Settings().weights_from == ""


# --- finding 4: one work floor, one "with launches", in llm, whatif and choose -------------

def llm_json(capsys, tmp_path, name, *args):
    code, out, err = run(capsys, "llm", *args, "--json")
    assert code == 0, err
    path = tmp_path / name
    path.write_text(out)
    return str(path), json.loads(out)


def test_three_verbs_one_decode_floor_llama_3_8b(tmp_path, capsys):
    h100_doc, h100 = llm_json(capsys, tmp_path, "l8.json", "llama-3-8b", "--on", "H100")
    _, h200 = llm_json(capsys, tmp_path, "l8h200.json", "llama-3-8b", "--on", "H200")
    work, launched = h200["llm"]["totals"]["tpot_s"], h200["llm"]["totals"]["tpot_with_launches_s"]
    assert work == pytest.approx(3.15e-3, rel=2e-3)
    assert launched == pytest.approx(4.47e-3, rel=2e-3)
    assert h200["llm"]["decode"]["with_launches_s"] == launched
    # choose ranks the H100 document's kernels on the H200: the same two figures
    code, out, _ = run(capsys, "choose", h100_doc, "--among", "H200,H100", "--json")
    h200_row, h100_row = json.loads(out)["devices"]
    assert h200_row["name"] == "NVIDIA H200 SXM"
    assert h200_row["seconds"] == h200_row["work_floor_s"] == pytest.approx(work, rel=1e-9)
    assert h200_row["with_launches_s"] == pytest.approx(launched, rel=1e-9)
    assert h100_row["seconds"] == pytest.approx(h100["llm"]["totals"]["tpot_s"], rel=1e-9)
    # whatif moves them H100 -> H200: the same floors on both sides
    code, out, _ = run(capsys, "whatif", h100_doc, "--on", "H100", "--hardware", "H200",
                       "--json")
    w = json.loads(out)
    assert w["total_before_work_floor_s"] == pytest.approx(h100["llm"]["totals"]["tpot_s"])
    assert w["total_after_work_floor_s"] == pytest.approx(work, rel=1e-9)
    assert w["total_after_with_launches_s"] == pytest.approx(launched, rel=1e-9)
    # the move is the bandwidth ratio on the work floor: 4.8 / 3.35 = 1.43x
    assert w["work_floor_speedup"] == pytest.approx(4.8 / 3.35, rel=1e-3)
    code, out, _ = run(capsys, "whatif", h100_doc, "--on", "H100", "--hardware", "H200")
    text = flat(out)
    assert "work floor: 4.51 ms -> 3.15 ms (1.43x)" in text
    assert "with launches: 5.77 ms -> 4.47 ms (1.29x)" in text
    code, out, _ = run(capsys, "llm", "llama-3-8b", "--on", "H200", "--phase", "decode")
    assert "TPOT floor 3.15 ms (with launches 4.47 ms;" in flat(out)


def test_int4_gain_is_one_number_in_llm_and_whatif(tmp_path, capsys):
    doc, fp16 = llm_json(capsys, tmp_path, "d.json", "tinyllama-1.1b", "--on", "A100")
    _, int4 = llm_json(capsys, tmp_path, "d4.json", "tinyllama-1.1b", "--on", "A100",
                       "--weights", "int4")
    gain = fp16["llm"]["totals"]["tpot_s"] / int4["llm"]["totals"]["tpot_s"]
    assert gain == pytest.approx(3.79, abs=0.005)
    code, out, _ = run(capsys, "whatif", doc, "--on", "A100", "--quantize", "int4",
                       "--group", "128", "--json")
    w = json.loads(out)
    assert w["work_floor_speedup"] == pytest.approx(gain, rel=1e-6)
    assert w["total_after_with_launches_s"] == pytest.approx(
        int4["llm"]["totals"]["tpot_with_launches_s"], rel=1e-6)
    # the old key is the "with launches" figure now (review 11b #7), not work + every
    # launch (1.02 ms + 311 x 5 us = 2.58 ms)
    assert w["total_before_floor_s"] == pytest.approx(
        fp16["llm"]["totals"]["tpot_with_launches_s"], rel=1e-9)
    code, out, _ = run(capsys, "whatif", doc, "--on", "A100", "--quantize", "int4",
                       "--group", "128")
    text = flat(out)
    assert "work floor: 1.02 ms -> 270 us (3.79x)" in text
    assert "with launches: 2.03 ms -> 1.57 ms (1.30x)" in text
    assert "total floor" not in text


def test_with_launches_is_max_per_kernel_not_the_sum(tmp_path, capsys):
    # T4: long is 3.2e9 B / 320 GB/s = 10 ms over 2 launches (10 us): its work hides them;
    # short is 3.2e6 B = 10 us of work over 10 launches = 50 us. Work floor 10.01 ms; with
    # launches 10 ms + 50 us = 10.05 ms (work + every launch would be 10.07 ms).
    k = write(tmp_path, "k.json", {"kernels": [
        {"name": "long", "flop": {"fp16": 1e9}, "bytes": {"DRAM": 3.2e9}, "calls": 2},
        {"name": "short", "flop": {"fp16": 1e3}, "bytes": {"DRAM": 3.2e6}, "calls": 10}]})
    code, out, _ = run(capsys, "choose", k, "--among", "T4", "--json")
    (t4,) = json.loads(out)["devices"]
    assert t4["work_floor_s"] == pytest.approx(10.01e-3)
    assert t4["with_launches_s"] == pytest.approx(10.05e-3)
    code, out, _ = run(capsys, "whatif", k, "--on", "T4", "--bytes-scale", "0.5", "--json")
    w = json.loads(out)
    assert w["total_before_with_launches_s"] == pytest.approx(10.05e-3)
    # half the bytes: long 5 ms, short max(5 us, 50 us) = 50 us
    assert w["total_after_with_launches_s"] == pytest.approx(5.05e-3)
    assert w["total_after_work_floor_s"] == pytest.approx(5.005e-3)
