"""Review r2_seeds F1-F5: the decode sweep's bend names the activations as well as the KV
cache; the shipped t4p.json says its launch floor is the datasheet's; docs/seeds.md §2.1
types the seed's FP16 peak as fp16; the markdown kernel table keeps two figures under
10 %; an fp16 / bf16 tie at the top is named fp16 in the chart and the report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rooflab.cli.main import main
from rooflab.hardware.import_roofs import COPIED_OVERHEAD
from rooflab.hardware.profile import load_profile
from rooflab.hardware.resolve import load_roof
from rooflab.model.ceiling import Ceiling
from rooflab.report.chart import roofline_data
from rooflab.units import fmt_pct
from rooflab.workloads.llm import Settings, batch_sweep, decode_step, load_config

ROOT = Path(__file__).resolve().parents[1]
SEEDS = ROOT / "examples" / "seeds"

# TinyLlama (hidden 2048, 22 layers, 4 KV heads x 64, MLP 5632, vocab 32000), fp16, per
# sequence of a decode step. Activations per layer, bytes: q 4096 in + 4096 out, k and v
# 4096 in each (their outputs go to the cache), rope 2304 x 2 x 2 = 9216, attention q in
# + out 8192, o_proj 8192, 2 residual adds x 3 x 4096 = 24576, 2 norms x 8192 = 16384,
# gate and up 4096 + 11264 each, act_mul 3 x 11264 = 33792, down 11264 + 4096 = 15360:
# 162,816 B; x 22 = 3,581,952, + embedding 4104 + final norm 8192 + lm_head 4096 + 64,000
# (fp16 logits) = 3,662,344 B.
ACT = 22 * 162_816 + 4104 + 8192 + 4096 + 64_000
# KV: 22 layers x (K + V) x 4 heads x 64 x 2 B = 22,528 B per token; context 16 reads 16
# tokens and writes 1: 17 x 22,528 = 382,976 B; context 500: 501 x 22,528 = 11,286,528 B.
KV_TOKEN = 22 * 2 * 4 * 64 * 2
# Weights: 2,069,024,768 B read once per step, + one 2048 x 2 B embedding row per sequence.
W0, ROW = 2_069_024_768, 2048 * 2


def run(capsys, *args):
    code = main([str(SEEDS / a) if (SEEDS / a).is_file() else a for a in args])
    out, err = capsys.readouterr()
    return code, " ".join(out.split()), " ".join(err.split())


# --- F1 ------------------------------------------------------------------------------

def test_hand_counts_match_the_engine():
    assert ACT == 3_662_344 and KV_TOKEN == 22_528
    step = decode_step(load_config("tinyllama-1.1b"), Settings(), 1, 16).bytes_split
    assert step == {"weights": W0 + ROW, "activations": ACT, "kv": 17 * KV_TOKEN}


def test_short_context_sweep_names_the_activations(capsys):
    code, out, _ = run(capsys, "llm", "tinyllama-1.1b", "--on", "T4", "--context", "16",
                       "--prompt", "8", "--generate", "16", "--phase", "decode",
                       "--batch", "1,64,203,400,1000")
    assert code == 0
    # b x 3,662,344 = W0 + 4096 b -> b = W0 / 3,658,248 = 565.6; with KV's 382,976 too:
    # W0 / 4,041,224 = 512.0; KV alone W0 / 378,880 = 5460.9
    assert W0 / (ACT - ROW) == pytest.approx(565.58, abs=0.01)
    assert W0 / (ACT + 17 * KV_TOKEN - ROW) == pytest.approx(511.98, abs=0.01)
    assert ("bytes per sequence: KV 383 kB, activations 3.66 MB; KV bytes equal weight bytes "
            "at batch 5461, activations at batch 566, the two together at batch 512: past it "
            "AI stops tracking the batch (AI / batch is about half its batch-1 value there); "
            "the step reaches the ridge at batch 337") in out


def test_docs_sweep_at_context_500(capsys):
    code, out, _ = run(capsys, "llm", "tinyllama-1.1b", "--on", "T4", "--batch",
                       "1,4,16,64,128", "--context", "500", "--phase", "decode")
    assert code == 0
    # W0 / (3,662,344 + 11,286,528 - 4096) = 138.4: AI / batch 0.54 at 128 (1.04 at 1)
    assert W0 / (ACT + 501 * KV_TOKEN - ROW) == pytest.approx(138.44, abs=0.01)
    line = ("bytes per sequence: KV 11.3 MB, activations 3.66 MB; KV bytes equal weight "
            "bytes at batch 183, activations at batch 566, the two together at batch 138")
    assert line in out
    assert line in " ".join((ROOT / "docs" / "llm.md").read_text().split())


def _fixed_point(cfg, s, ctx, per_sequence):
    """The batch where the engine's own decode step has per_sequence x b weight bytes."""
    b = decode_step(cfg, s, 1, ctx).bytes_split["weights"] / per_sequence
    for _ in range(100):
        b = decode_step(cfg, s, max(1, round(b)), ctx).bytes_split["weights"] / per_sequence
    return b


@pytest.mark.parametrize("name", ["tinyllama-1.1b", "deepseek-v2-lite", "mixtral-8x7b"])
def test_crossings_from_a_sparse_sweep(name):
    # a MoE's weights grow with the experts touched: a straight line from batch 4 to the
    # KV batch put deepseek-v2-lite's crossing at 723, the engine's is 1204
    from rooflab.cli.llm_sweep_render import equals_weights_batch, per_sequence_bytes

    cfg, s = load_config(name), Settings()
    sw = batch_sweep(cfg, s, load_roof("H100"), (1, 4), 500)
    kv, act = per_sequence_bytes(sw)
    for per in (act, kv + act):
        assert equals_weights_batch(sw, per) == pytest.approx(
            _fixed_point(cfg, s, 500, per), rel=2e-3)


# --- F2 ------------------------------------------------------------------------------

def test_shipped_t4p_launch_floor_is_the_datasheets(tmp_path, capsys):
    profile = load_profile(SEEDS / "t4p.json")
    assert profile.measured.overhead_s == 5e-6
    assert profile.measured.overhead_source == COPIED_OVERHEAD
    assert "nominal" in profile.nominal.overhead_source
    md = tmp_path / "r.md"
    code, _, _ = run(capsys, "report", "pts.json", "--on", "t4p.json", "-o", str(md))
    assert code == 0
    assert "| overhead floor | 5 us | 5 us (datasheet, not measured) | - |" in md.read_text()
    code, out, _ = run(capsys, "ai", "gemv", "256", "2048", "--dtype", "fp16", "--on",
                       "t4p.json")
    assert code == 0 and "overhead: one launch (5 us, nominal)" in out
    assert "measured)" not in out.split("overhead:")[1].split(">")[0]


# --- F3 ------------------------------------------------------------------------------

def test_seeds_page_types_the_fp16_peak_as_fp16(tmp_path, monkeypatch, capsys):
    page = (ROOT / "docs" / "seeds.md").read_text()
    assert "--fp32 300TFLOP/s" not in page
    assert "$ rooflab specs import --dram 2TB/s --fp16 300TFLOP/s@tensor -o s21.json" in page
    monkeypatch.chdir(tmp_path)
    assert main(["specs", "import", "--dram", "2TB/s", "--fp16", "300TFLOP/s@tensor", "-o",
                 "s21.json"]) == 0
    capsys.readouterr()
    assert main(["ai", "elementwise", "1e8", "--flop-per-element", "8", "--dtype", "fp16",
                 "--on", "s21.json"]) == 0
    out = capsys.readouterr().out
    # 300e12 / 2e12 = 150; 8 FLOP per 4 B = AI 2; 2 x 2 TB/s = 4 TFLOP/s
    for line in ("  ridge       150 FLOP/byte", "  attainable  4 TFLOP/s",
                 "  bound       memory (AI 2 < ridge 150; binding ceiling: DRAM)"):
        assert line in out and line in page, line


# --- F4 ------------------------------------------------------------------------------

def test_kernel_table_keeps_two_figures_under_ten_percent(tmp_path, capsys):
    assert [fmt_pct(x) for x in (1.5, 6.296, 0.74, 9.96, 10.37, 27.3, 0.0, None)] == [
        # 9.96 and 10.37 keep their side of the 10 % latency line (sides.py, review s22 r4 F3)
        "1.5 %", "6.3 %", "0.74 %", "9.96 %", "10.4 %", "27 %", "0 %", "-"]
    md = tmp_path / "s0.md"
    code, _, _ = run(capsys, "report", "seed000.csv", "--on", "seed000roof.json", "-o",
                     str(md))
    assert code == 0
    text = md.read_text()
    # 4.2 / 280 TFLOP/s = 1.50 % (was "2 %"); 850 GFLOP/s / (7.5 x 1.8 TB/s) = 6.30 %
    assert "| 4.2 TFLOP/s | 280 TFLOP/s | 1.5 % | latency |" in text
    assert "| 850 GFLOP/s | 13.5 TFLOP/s | 6.3 % | latency |" in text
    assert "| 120 GFLOP/s | 450 GFLOP/s | 27 % | memory |" in text
    page = (ROOT / "docs" / "seeds.md").read_text()
    assert "seed's own percentages" not in page
    assert "| 280 TFLOP/s | 1.5 % |" in page


# --- F5 ------------------------------------------------------------------------------

def test_an_fp16_bf16_tie_is_named_fp16():
    from rooflab.model.ceiling import fastest  # the one tie rule

    bf = Ceiling(312e12, precision="bf16", unit="tensor")
    fp = Ceiling(312e12, precision="fp16", unit="tensor")
    assert fastest([bf, fp]) is fp and fastest([fp, bf]) is fp
    tf = Ceiling(400e12, precision="bf16", unit="tensor")
    assert fastest([fp, tf]) is tf                       # only an exact tie
    a100 = load_roof("A100")
    assert [c.label for c in a100.compute].index("bf16 tensor") < [
        c.label for c in a100.compute].index("fp16 tensor")   # the catalog lists bf16 first
    assert a100.top_float_compute().label == "fp16 tensor"
    ridges = roofline_data([a100], [], precisions=["bf16", "fp16"]).ridges
    assert [(r.compute, round(r.ai)) for r in ridges] == [("fp16 tensor", 153)]


def test_chart_and_report_name_fp16_on_a100(tmp_path, capsys):
    code, _, err = run(capsys, "plot", "seed000.csv", "--on", "A100", "-o",
                       str(tmp_path / "a.png"))
    assert code == 0
    left_out = err.split("left out ")[1].split(";")[0]
    assert "bf16 tensor" in left_out and "fp16 tensor" not in left_out
    mix = tmp_path / "mix.json"
    mix.write_text(json.dumps({"schema_version": 1, "kernels": [
        {"name": "mixed", "op": "matmul", "flop": {"fp16": 9e11, "fp32": 1e11},
         "bytes": {"DRAM": 1e9}, "seconds": 0.02}]}))
    code, out, _ = run(capsys, "report", str(mix), "--on", "A100")
    assert code == 0
    # 1 / (0.9 / 312 + 0.1 / 19.5) = 124.8 TFLOP/s; 312 / 124.8 = 2.5x
    assert ("the fastest float ceiling on this roof (fp16 tensor, 312 TFLOP/s) is 2.50x "
            "higher") in out
