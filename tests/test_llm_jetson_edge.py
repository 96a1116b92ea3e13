"""An edge-deployment engineer moving an LLM and a vision model from an H100 to Jetson Orin
modules (seed 002: the roof drops, and capacity comes before speed). The rough edges found,
each pinned with hand-computed numbers."""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main
from rooflab.hardware.catalog import lookup
from rooflab.hardware.resolve import load_roof
from rooflab.workloads.llm import Request, Settings, analyze_llm, load_config
from rooflab.workloads.llm.pipeline import quantized_fit, smaller_settings

NANO = "jetson-orin-nano"

# Llama-3-8B by hand (its config.json: hidden 4096, 32 layers, 8 KV heads of 128,
# intermediate 14336, vocab 128256, untied): 8,029,995,008 matrix weights (two 525.3 M
# tables + 1.342 G attention + 5.637 G MLP) and 266,240 norm weights (65 x 4096).
L3_MATRIX, L3_VECTOR = 8_029_995_008, 266_240
# KV at context 640 (prompt 512 + generate 128): 2 x 32 layers x 8 x 128 x 2 B x 640
L3_KV = 2 * 32 * 8 * 128 * 2 * 640                       # 83,886,080
# prefill activations of one sequence: 512 x (4096 + 2 x 14336) x 2 B + fp32 logits
L3_ACT = 512 * (4096 + 2 * 14336) * 2 + 128_256 * 4      # 34,067,456
# the decode batch's fp32 logits, batch 1 x 128,256 x 4 B (H1: reserved beside the KV)
L3_LOGITS = 128_256 * 4                                  # 513,024
# int4: 8,029,995,008 x 0.515625 + 532,480 + 83,886,080 + 34,067,456 + 513,024
L3_INT4 = (L3_MATRIX * (0.5 + 2 / 128) + L3_VECTOR * 2 + L3_KV + L3_ACT
           + L3_LOGITS)                                  # 4,259,465,216
# int8: 8,029,995,008 x 1.015625 + 532,480 + 83,886,080 + 34,067,456 + 513,024
L3_INT8 = (L3_MATRIX * (1 + 2 / 128) + L3_VECTOR * 2 + L3_KV + L3_ACT
           + L3_LOGITS)                                  # 8,274,462,720


def run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def memory_lines(out: str) -> list[str]:
    return [ln for ln in out.splitlines() if ln.startswith("memory")]


# --- the roof drops: the decode floor is bytes / 102 GB/s -------------------------------

def test_tinyllama_decode_floor_on_orin_nano_is_bytes_over_102_gbps():
    # weights read per decode step, by hand: per layer q,o 2048^2, k,v 2048 x 256, gate,
    # up, down 2048 x 5632 = 44,040,192 x 22 layers + lm_head 2048 x 32000 = 1,034,420,224
    # matrix weights, plus 45 norms x 2048 and one 2048-wide embedding row, all at 2 B
    weights = (44_040_192 * 22 + 65_536_000) * 2 + 45 * 2048 * 2 + 2048 * 2
    r = analyze_llm(load_config("tinyllama-1.1b"), load_roof(NANO), Settings(),
                    Request(batches=(1,), context=500), device_bytes=8e9)
    step = r.decode.step
    assert step.bytes_split["weights"] == pytest.approx(weights)        # 2,069,028,864
    # memory-bound everywhere: the floor is the step's bytes over the Nano's 102 GB/s
    assert r.tpot_s == pytest.approx(step.bytes / 102e9, rel=1e-9)
    assert r.tpot_s == pytest.approx(20.44e-3, rel=2e-3)                # 2.085 GB / 102 GB/s


# --- weight-only int4 on a device with no int4 ceiling ----------------------------------

def test_int4_weights_say_the_math_dtype_and_need_no_int4_stand_in(capsys):
    code, out, _ = run(capsys, "llm", "tinyllama-1.1b", "--on", NANO, "--weights", "int4",
                       "--kv", "fp8", "--phase", "decode")
    assert code == 0
    # was: "weights int4 (group 128, fp16 scales), ..., KV fp8": silent about the math
    assert ("weights int4 (group 128, fp16 scales; dequantized to bf16 for the math)"
            in out)
    assert "KV fp8 (attention math in bf16)" in out
    # the Orin has fp16 tensor cores, so no int4/fp8 stand-in note is needed or given
    assert "no int4" not in out and "no fp8" not in out
    # q_proj moves 0.516 B per weight (2048 x 2048 x 33/64 = 2,162,688 B) at 102 GB/s
    r = analyze_llm(load_config("tinyllama-1.1b"), load_roof(NANO),
                    Settings(weights="int4", kv="fp8"), Request(batches=(1,)))
    q = next(o for o in r.decode.step.ops if o.op.name == "q_proj")
    assert q.op.bytes_split["weights"] == 2048 * 2048 * 33 / 64
    assert q.op.precision == "fp16"
    p = next(p for p in r.decode.points if p.kernel == "q_proj")
    assert p.binding == "DRAM" and p.note == ""


def test_describe_leaves_unquantized_settings_alone():
    assert Settings().describe() == ("weights fp16, activations fp16, KV fp16, flash "
                                     "attention")
    # fp8 weights with fp8 activations multiply in fp8: nothing is dequantized
    assert Settings(weights="fp8", act="fp8", kv="fp8").describe() == (
        "weights fp8, activations fp8 (fp8 GEMMs and attention, norms/elementwise in fp16), "
        "KV fp8, flash attention")


# --- does it fit in 8 GB? The remedies offered must make room, on one module ------------

def test_fp16_llama3_8b_on_orin_nano_names_int4_not_tensor_parallel(capsys):
    code, out, _ = run(capsys, "llm", "llama-3-8b", "--on", NANO, "--phase", "decode")
    assert code == 0
    line = memory_lines(out)[0]
    assert "16.2 GB of 8 GB on the device (does NOT fit)" in line
    # int8 does not fit (8.27 GB > 8 GB), int4 does: 4.26 GB by hand (each with the
    # 513,024 B of fp32 decode logits, H1; 8,273,949,696 and 4,258,952,192 without)
    assert L3_INT8 == pytest.approx(8_274_462_720) and L3_INT4 == pytest.approx(4_259_465_216)
    assert "batch 1 fits this device with --weights int4 (4.26 GB)" in line
    # was: "batch 1 fits with --pp 3 or --tp 4", which `--tp 4` then refuses on a Jetson
    assert "batch 1 fits with --pp" not in line
    assert "--pp 3 or --tp 4 would take that many devices and a network" in line


def test_quantized_fit_is_computed_by_the_footprint():
    cfg = load_config("llama-3-8b")
    opts, fp = quantized_fit(cfg, Settings(), batch=1, context=640, prompt=512,
                             device_bytes=8e9)
    assert opts == "--weights int4"
    assert fp.total == pytest.approx(L3_INT4)
    # on a 16 GB T4 int8 is enough (the least lossy first)
    opts, fp = quantized_fit(cfg, Settings(), batch=1, context=640, prompt=512,
                             device_bytes=16e9)
    assert opts == "--weights int8" and fp.total == pytest.approx(L3_INT8)


def test_smaller_settings_only_offer_narrower_dtypes():
    assert [o for o, _ in smaller_settings(Settings())] == [
        "--weights int8", "--weights int4", "--kv fp8", "--weights int8 --kv fp8",
        "--weights int4 --kv fp8"]
    assert [o for o, _ in smaller_settings(Settings(weights="int8"))] == [
        "--weights int4", "--kv fp8", "--weights int4 --kv fp8"]
    # fp8 weights are 1 B: int8 with its scales (1.016 B) is no smaller
    assert [o for o, _ in smaller_settings(Settings(weights="fp8", kv="fp8"))] == [
        "--weights int4"]
    assert smaller_settings(Settings(weights="int4", kv="fp8")) == ()


def test_int8_sweep_does_not_offer_int8_again(capsys):
    code, out, _ = run(capsys, "llm", "llama-3-8b", "--on", NANO, "--weights", "int8",
                       "--phase", "decode", "--batch", "1,4")
    assert code == 0
    sweep = [ln for ln in memory_lines(out) if ln.startswith("memory:")][0]
    # was: "(--tp, or --weights int8/int4)" at int8 already, and --tp on a Jetson
    assert sweep == ("memory: the weights alone (8.16 GB) do not fit in 8 GB: no batch of "
                     "this sweep runs (--weights int4)")


def test_int4_sweep_offers_kv_fp8_only(capsys):
    # int4: 4.14 GB of weights and one prompt's 34.1 MB of activations leave 3.825 GB;
    # each sequence needs 639 x 131,072 B = 83.8 MB of KV (512 + 128 - 1 tokens), so
    # floor(3.825 GB / 83.755 MB) = 45 sequences fit
    code, out, _ = run(capsys, "llm", "llama-3-8b", "--on", NANO, "--weights", "int4",
                       "--phase", "decode", "--batch", "1,64")
    assert code == 0
    sweep = [ln for ln in memory_lines(out) if ln.startswith("memory:")][0]
    assert sweep.startswith("memory: at most batch 45 fits in 8 GB (context 639)")
    # was: "(--tp, --kv fp8 or --weights int4 make room)" at int4 already, on a Jetson
    assert sweep.endswith("(--kv fp8 makes room)")


def test_datacenter_gpu_keeps_its_split_advice(capsys):
    # a T4 has PCIe between cards: --tp stays, and the quantized fit is added to it
    code, out, _ = run(capsys, "llm", "llama-3-8b", "--on", "T4", "--phase", "decode",
                       "--batch", "1,4")
    assert code == 0
    line, sweep = memory_lines(out)[:2]
    assert line.endswith("batch 1 fits with --pp 2 or --tp 2, or with --weights int8 "
                         "(8.27 GB)")
    assert sweep.endswith("(--tp, or --weights int8/int4)")
    code, out, _ = run(capsys, "llm", "tinyllama-1.1b", "--on", "T4", "--batch", "1,1024",
                       "--context", "500", "--phase", "decode")
    assert memory_lines(out)[1].endswith("(--tp, --kv fp8 or --weights int4 make room)")


# --- unified memory: the 8 GB are the whole module's ------------------------------------

def test_unified_memory_is_said_on_a_jetson(capsys):
    assert lookup(NANO).unified_memory and not lookup("T4").unified_memory
    code, out, _ = run(capsys, "llm", "tinyllama-1.1b", "--on", NANO, "--phase", "decode")
    assert code == 0
    assert ("note: NVIDIA Jetson Orin Nano 8GB's 8 GB is unified memory, shared with the "
            "CPU, the OS and the CUDA context: the GPU gets less") in out
    assert "--memory (MemAvailable in its /proc/meminfo)" in out
    # --memory is the answer to it: then the note is gone, and the fit uses the 6 GB
    code, out, _ = run(capsys, "llm", "tinyllama-1.1b", "--on", NANO, "--phase", "decode",
                       "--memory", "6GB")
    assert "unified memory" not in out and "of 6 GB on the device (fits)" in out
    code, out, _ = run(capsys, "llm", "tinyllama-1.1b", "--on", "T4", "--phase", "decode")
    assert "unified memory" not in out


def test_unified_memory_note_is_in_the_json(capsys):
    code, out, _ = run(capsys, "llm", "tinyllama-1.1b", "--on", NANO, "--phase", "decode",
                       "--json")
    assert code == 0
    assert any("is unified memory" in n for n in json.dumps(json.loads(out)).split('"'))


def _llm_doc(capsys, tmp_path, model):
    """`rooflab llm MODEL --on the Orin Nano --phase decode --json`, saved: choose's input."""
    code, out, _ = run(capsys, "llm", model, "--on", NANO, "--phase", "decode", "--json")
    assert code == 0
    doc = tmp_path / f"{model}.json"
    doc.write_text(out)
    return doc


# --- choose: a Jetson the model does not fit is not told to split it --------------------

def test_choose_does_not_tell_a_jetson_to_use_tp(capsys, tmp_path):
    doc = _llm_doc(capsys, tmp_path, "llama-3-8b")
    code, out, _ = run(capsys, "choose", str(doc), "--among",
                       "jetson-orin-nx,jetson-orin-nano")
    assert code == 0
    text = " ".join(out.split())
    # 16.2 GB > 16 GB (Orin NX) and > 8 GB (Orin Nano)
    assert "does not fit: the model needs 16.2 GB per device" in text
    assert ("(rooflab llm with smaller --weights or --kv fp8: one module, no link to split "
            "over)") in text
    assert "--tp N" not in text
    # it fits neither: there are no devices "it fits in" to rank after
    assert "it fits none of them, so the ranking is by time alone" in text
    assert "rank after the devices it fits in" not in text
    code, out, _ = run(capsys, "choose", str(doc), "--among", "T4,jetson-orin-nano")
    text = " ".join(out.split())
    assert ("(rooflab llm --tp N or --pp N, or smaller --weights; on NVIDIA Jetson Orin "
            "Nano 8GB only smaller --weights or --kv fp8") in text


# --- report: a stand-in ceiling is not the precision's peak -----------------------------

def test_report_does_not_call_fp32_the_fp64_peak(capsys, tmp_path):
    # 1e8 fp64 FLOP over 16 MB: AI 6.25 < the fp32 stand-in's ridge 2.08 T / 102 G = 20.4
    k = tmp_path / "k.json"
    k.write_text(json.dumps({"schema_version": 1, "kernels": [
        {"name": "postproc_fp64", "flop": {"fp64": 1e8}, "bytes": {"DRAM": 1.6e7}}]}))
    code, out, _ = run(capsys, "report", str(k), "--on", NANO)
    assert code == 0
    text = " ".join(out.split())
    # was: "roof (16.1x): fp64 peaks at 2.08 TFLOP/s": the Orin lists no fp64 at all
    assert "fp64 peaks at" not in text
    # the top float ceiling (fp16/bf16 tensor 16.71), not int8 33.42: 16.71 / 2.08 = 8.03
    assert ("roof (8.03x): its stand-in ceiling (no fp64 one on this roof) peaks at "
            "2.08 TFLOP/s") in text


def test_docs_edge_example_is_this_runs_output(capsys):
    """docs/llm.md's "Edge devices" lines are these runs' output, line for line."""
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[1] / "docs" / "llm.md").read_text()
    section = doc[doc.index("## Edge devices"):]
    section = section[:section.index("\n## ")]
    for weights, starts in (("fp16", ("memory", "note")), ("int4", ("setup", "TPOT"))):
        code, out, _ = run(capsys, "llm", "llama-3-8b", "--on", NANO, "--weights", weights,
                           "--phase", "decode")
        assert code == 0
        lines = [x for x in out.splitlines() if x.startswith(starts)]
        assert len(lines) == 2
        for line in lines:
            assert line in section, line


def test_roof_distance_does_not_offer_fp8_as_if_every_gpu_had_it():
    # an Orin lists no fp8: "(tensor cores, fp8)" read as advice to switch to it
    from rooflab.model.diagnose_distances import cures
    from rooflab.model.machine import Machine

    roof_cure = cures(Machine(kind="gpu"))[3]
    assert "fp8 or int8 where the GPU has them" in roof_cure
    assert "(tensor cores, fp8)" not in roof_cure


def test_llm_compare_does_not_tell_a_jetson_to_use_tp(capsys):
    # the --compare table's "does not fit" line offered "--tp" to every device
    code, out, _ = run(capsys, "llm", "llama-3-8b", "--on", "H100", "--phase", "decode",
                       "--compare", f"{NANO},T4")
    assert code == 0
    text = " ".join(out.split())
    assert ("the TPOT floor assumes it fit (--tp N or --pp N, or smaller --weights; on "
            "NVIDIA Jetson Orin Nano 8GB only smaller --weights or --kv fp8: one module, no "
            "link to split over)") in text


def test_least_bytes_of_an_llm_document_by_hand():
    # llama-3-70b fp16 decode: 141,107,412,992 B of weights at 2 B/param = 70.55e9 params;
    # int4 with one fp16 scale per 128: x 0.515625 = 36,379,254,912 B; KV 209,715,200 B
    # at fp8 halves; activations 67,621,888 B as they are: 36,551,734,400 B
    from rooflab.cli.choose_fit import least_bytes

    llm = {"footprint": {"weights_bytes": 141107412992.0, "kv_bytes": 209715200.0,
                         "activations_bytes": 67621888.0},
           "settings": {"weight_bytes_per_param": 2.0, "kv": "fp16"}}
    assert least_bytes(llm) == pytest.approx(141107412992 / 2 * 0.515625 + 209715200 / 2
                                             + 67621888)
    assert least_bytes(llm) == pytest.approx(36_551_734_400)
    assert least_bytes({"footprint": {}}) is None


@pytest.mark.parametrize("group", ["128", "32"])
def test_least_bytes_of_a_document_already_at_int4_and_fp8_is_its_footprint(capsys, group):
    # At --weights int4 --kv fp8 nothing narrower is left: the floor is the footprint. At
    # --group 32 (0.5625 B/param) least_bytes took int4 at group 128 (0.515625), 0.38 GB
    # under it for llama-3-8b, and could call a device fixable that `rooflab llm` (which
    # keeps the --group) says nothing fits
    from rooflab.cli.choose_fit import least_bytes

    code, out, _ = run(capsys, "llm", "llama-3-8b", "--on", NANO, "--phase", "decode",
                       "--weights", "int4", "--kv", "fp8", "--group", group, "--json")
    assert code == 0
    llm = json.loads(out)["llm"]
    assert least_bytes(llm) == pytest.approx(llm["footprint"]["total_bytes"], rel=1e-12)


def test_no_narrower_dtype_is_offered_where_none_fits(capsys, tmp_path):
    # 70B: 36.6 GB even at int4 weights and fp8 KV: fits the AGX Orin's 64 GB, never the
    # Nano's 8 GB, which was told "only smaller --weights or --kv fp8"
    doc = _llm_doc(capsys, tmp_path, "llama-3-70b")
    code, out, _ = run(capsys, "choose", str(doc), "--among",
                       "jetson-orin-nano,jetson-agx-orin,T4")
    text = " ".join(out.split())
    assert code == 0
    assert ("on NVIDIA Jetson AGX Orin 64GB only smaller --weights or --kv fp8: one module, "
            "no link to split over; on NVIDIA Jetson Orin Nano 8GB not even --weights int4 "
            "--kv fp8 fits one module: a smaller model, or a device with more memory") in text
    code, out, _ = run(capsys, "llm", "llama-3-70b", "--on", "H100", "--phase", "decode",
                       "--compare", NANO)
    text = " ".join(out.split())
    assert ("(--tp N or --pp N, or smaller --weights; on NVIDIA Jetson Orin Nano 8GB not "
            "even --weights int4 --kv fp8 fits one module") in text


def test_batch_one_that_fits_nothing_is_not_told_to_lower_the_batch():
    from rooflab.cli.llm_render import unified_hint

    one = unified_hint(1, None, ["--pp 27"], ["--weights int8/int4"])
    assert "lower --batch" not in one
    assert "a shorter --context if the KV cache is what overflows, else a smaller model" in one
    assert "lower --batch (or --context), or a smaller model" in unified_hint(
        8, None, [], ["--kv fp8"])


def test_choose_json_carries_the_least_footprint(capsys, tmp_path):
    doc = _llm_doc(capsys, tmp_path, "llama-3-70b")
    code, out, _ = run(capsys, "choose", str(doc), "--among", "jetson-orin-nano,T4", "--json")
    rows = json.loads(out)["devices"]
    # 70.55e9 params x 0.515625 + KV 639 x 327,680 B = 209,387,520 B / 2 (the cache peaks
    # at 512 + 128 - 1) + 67,621,888 B (the test above at 640: 36,551,734,400) = 36,551,570,560
    # + the fp32 decode logits 128,256 x 4 = 513,024 B, which no dtype option narrows (H1):
    # 36,552,083,584
    assert all(r["least_bytes"] == pytest.approx(36_552_083_584, rel=1e-12) for r in rows)
