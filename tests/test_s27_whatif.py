"""s27 whatif leftovers (fixer fB).

1. `whatif --fuse` split its members' times at calls x the launch floor (efficiency_of's
   switch) while every other what-if reads retime_launch's band; now the members' times are
   split by the band too. On the nominal H200 (4.8 TB/s, 5 us a launch) a member of 100
   calls, 1e8 fp16 FLOP and 1e8 B has a work floor of 1e8 / 4.8e12 = 20.83 us and a launch
   floor L = 500 us; the band runs from L/2 = 250 us to 3L/2 = 750 us.
2. `whatif --precision fp4|nvfp4|mxfp4` on a kernel file counted a bare 0.5 B an element;
   now 0.5 + 1/16 (nvfp4, bare fp4's reading) or 0.5 + 1/32 (mxfp4), the bytes `rooflab
   llm --act/--weights` counts, from one table (model/fp4_formats.py).
3. `whatif --quantize` on a `rooflab llm --tpot-ms` step scaled the step's weights from its
   weight_dtype (int4: 0.5 B) where its kernels counted 0.5625 (q4_k); now the step moves
   as its own kernels do.
"""

from __future__ import annotations

import json

import pytest
from tests.cli_inproc import run_cli

from rooflab.hardware.resolve import load_roof
from rooflab.model import Kernel
from rooflab.model.whatif import change_precision, fuse, scale_bytes

H200 = load_roof("h200")
FLOOR, L = 1e8 / 4.8e12, 100 * 5e-6     # 20.83 us of work, 500 us of launches


def member(name: str, seconds: float, op: str, calls: int = 100) -> Kernel:
    return Kernel(name, {"fp16": 1e8}, {"DRAM": 1e8}, seconds=seconds, calls=calls,
                  meta={"op": op})


def fused(a_s: float, b_s: float = 1e-3) -> Kernel:
    w = fuse(H200, [member("a", a_s, "add"), member("b", b_s, "relu")], ["a", "b"])
    return w.moves[0][1]


# --- 1. --fuse reads the launch band ---------------------------------------------------------

def test_fused_time_by_hand_with_the_band_split():
    # a at 490 us: in the band, 490 - 250 = 240 us of launches held, 250 us of work;
    # b at 1 ms: past it, all 500 us held, 500 us of work. Combined efficiency 2 x 20.83 us
    # over 750 us; the fused chain reads 1e8 + 1e8 - 1e8 = 1e8 B (one intermediate kept on
    # chip), a 20.83 us floor, so 20.83 us x 750 / 41.67 = 375 us of work; it launches 100
    # times, holding the most a member holds: b's 500 us (s27 v2-F1; fB's rule took the
    # least, a's 240 us: 615 us, under the fused kernel's own 500 us of launches that b's
    # time shows the file's times hold). 875 us.
    # The old split: a under L held none (490 us of work), b 500 us: 495 + 500 = 995 us
    new = fused(490e-6)
    assert new.bytes["DRAM"] == pytest.approx(1e8)
    assert new.seconds == pytest.approx(L + FLOOR * 750e-6 / (2 * FLOOR), rel=1e-9)
    assert new.seconds == pytest.approx(875e-6, rel=1e-9)
    # two a's: 240 us held each, 500 us of work: 250 + 240 = 490 us
    assert fused(490e-6, 490e-6).seconds == pytest.approx(490e-6, rel=1e-9)


def test_fused_launches_are_the_share_retime_reads_of_the_same_kernel():
    # --bytes-scale 1 on a alone keeps its 490 us and carries the 0.48 share of its 500 us
    # launch floor the band reads it to hold; the fused kernel carries the same share where
    # a holds the most (fused with itself), b's 1.0 beside b at 1 ms
    alone = scale_bytes(H200, [member("a", 490e-6, "add")], 1.0).moves[0][1]
    assert alone.seconds == pytest.approx(490e-6, rel=1e-12)
    assert alone.meta["launch_share_held"] == pytest.approx(0.48, rel=1e-12)
    assert fused(490e-6, 490e-6).meta["launch_share_held"] == pytest.approx(0.48, rel=1e-12)
    assert fused(490e-6).meta["launch_share_held"] == pytest.approx(1.0, rel=1e-12)


def test_no_jump_as_a_member_crosses_calls_x_the_launch_floor():
    # 510 us: 260 us held, 250 us of work: 375 + b's 500 = 875 us, as at 490 us (the old
    # split: a held 489 us of launches and 20.8 us of work, 750 us; 995 us at 490 us)
    assert fused(510e-6).seconds == pytest.approx(875e-6, rel=1e-9)
    # both members in the band: a's and b's launches rise together, 510 us fuses to 510
    assert fused(510e-6, 510e-6).seconds == pytest.approx(510e-6, rel=1e-9)
    times = [200e-6 + 5e-6 * i for i in range(141)]        # 200 us to 900 us
    for b in (None, "same"):
        pred = [fused(t, t if b else 1e-3).seconds for t in times]
        for t0, p0, p1 in zip(times[:-1], pred[:-1], pred[1:], strict=True):
            # never faster for a slower member, and no 5 us step moves it more than 5 us
            assert p0 * (1 - 1e-12) <= p1 <= p0 + 5e-6 * (1 + 1e-9), t0


# --- 2. --precision fp4 counts the block scales ----------------------------------------------

def relu16() -> Kernel:
    return Kernel("relu", {"fp16": 1e8}, {"DRAM": 4e8}, seconds=250e-6, meta={"op": "relu"})


@pytest.mark.parametrize(("precision", "fmt", "per"), [
    ("nvfp4", "nvfp4", 0.5 + 1 / 16), ("mxfp4", "mxfp4", 0.5 + 1 / 32),
    ("fp4", "nvfp4", 0.5 + 1 / 16)])
def test_fp4_precision_counts_block_scales_on_a_kernel_file(precision, fmt, per):
    # 4e8 B of fp16 is 2e8 elements: nvfp4 2e8 x 0.5625 = 112.5 MB (was 100 MB, bare 0.5 B)
    w = change_precision(load_roof("b200"), [relu16()], precision)
    new = w.moves[0][1]
    assert new.bytes["DRAM"] == pytest.approx(2e8 * per, rel=1e-12)
    assert new.meta["fp4_format"] == fmt
    assert w.label == f"precision -> fp4 ({fmt})"
    assert f"now {per:g} byte(s) per element ({fmt}: 0.5 B + " in w.assumption
    assert ("bare fp4 is read as nvfp4" in w.assumption) == (precision == "fp4")


def test_fp4_bytes_have_one_source_with_llm():
    from rooflab.model import fp4_formats, whatif_precision, whatif_weights
    from rooflab.workloads.llm import load_config
    from rooflab.workloads.llm.settings import settings_for
    from rooflab.workloads.llm.settings_dtype import FP4_FORMATS

    assert whatif_precision.FP4_BLOCK is fp4_formats.FP4_BLOCK is whatif_weights.FP4_BLOCK
    # llm's settings import the table (s27 fG), not a copy that could drift
    assert FP4_FORMATS is fp4_formats.FP4_FORMATS
    cfg = load_config("llama-3-8b")
    for fmt in ("nvfp4", "mxfp4"):
        s = settings_for(cfg, act=fmt)
        assert s.act_bytes == s.weight_bytes == fp4_formats.block_bytes(fmt)


def test_fp4_kernel_read_back_moves_from_its_block_bytes():
    # the nvfp4 prediction (112.5 MB) to fp8 is 2e8 x 1 B, not 112.5 MB x 1 / 0.5 = 225 MB;
    # a profiler's fp4 kernel (no format said) keeps its bytes under --precision nvfp4
    b200 = load_roof("b200")
    nv = change_precision(b200, [relu16()], "nvfp4").moves[0][1]
    fp8 = change_precision(b200, [nv], "fp8").moves[0][1]
    assert fp8.bytes["DRAM"] == pytest.approx(2e8, rel=1e-12) and "fp4_format" not in fp8.meta
    mx = change_precision(b200, [nv], "mxfp4").moves[0][1]
    assert mx.bytes["DRAM"] == pytest.approx(2e8 * 0.53125, rel=1e-12)
    raw = Kernel("x", {"fp4": 1e8}, {"DRAM": 4e8}, seconds=1e-4)
    assert change_precision(b200, [raw], "nvfp4").moves[0][1].bytes["DRAM"] == 4e8


def test_cli_json_says_the_format(tmp_path):
    path = tmp_path / "k.json"
    path.write_text(json.dumps({"kernels": [
        {"name": "relu", "flop": {"fp16": 1e8}, "bytes": {"DRAM": 4e8}, "seconds": 2.5e-4,
         "meta": {"op": "relu"}}]}))
    r = run_cli("whatif", str(path), "--on", "b200", "--precision", "mxfp4", "--json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["label"] == "precision -> fp4 (mxfp4)"
    assert "mxfp4: 0.5 B + an e8m0 scale per 32 elements = 0.53125 B" in d["assumption"]
    (after,) = d["after"]["kernels"]
    assert after["bytes"]["DRAM"] == pytest.approx(2e8 * 0.53125)
    assert after["meta"]["fp4_format"] == "mxfp4"


# --- 3. --quantize on a --tpot-ms step starts from the bytes counted -------------------------

def test_tpot_step_quantizes_as_its_kernels(tmp_path):
    # TinyLlama at --weights q4_k: 0.5625 B a weight. Weights in the split: 22 layers x
    # 44,040,192 linear params + lm_head 65,536,000 at 0.5625 B, the embedding's row
    # 2048 x 0.5625, the norms' 92,160 fp16 weights: 582,046,848 B. To int8 (1 B): the
    # 1,034,422,272 params at 1 B, the norms' 184,320 B kept: 1,034,606,592 B, the sum of
    # the kernels' own. The step's int4 weight_dtype said 0.5 B: 2 x = 1,164,093,696 B
    doc = tmp_path / "step.json"
    r = run_cli("llm", "tinyllama-1.1b", "--weights", "q4_k", "--on", "a100", "--tpot-ms",
                "8", "-q", "-o", str(doc))
    assert r.returncode == 0, r.stderr
    r = run_cli("whatif", str(doc), "--on", "a100", "--quantize", "int8", "--json", "-q")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    *kernels, step = d["after"]["kernels"]
    assert step["meta"]["op"] == "decode_step"
    weights = step["meta"]["bytes_split"]["weights"]
    assert weights == pytest.approx(1_034_606_592, rel=1e-12)
    assert weights == pytest.approx(sum(k["meta"].get("bytes_split", {}).get("weights", 0)
                                        for k in kernels), rel=1e-12)
    assert step["bytes"]["DRAM"] == pytest.approx(sum(k["bytes"]["DRAM"] for k in kernels),
                                                  rel=1e-12)
    before = json.loads(doc.read_text())["kernels"][-1]
    assert before["meta"]["bytes_split"]["weights"] == 582_046_848


def test_a_step_alone_still_scales_from_its_weight_dtype():
    # no kernels of its own in the file: int4 (0.5 B) -> int8 doubles its weights
    from rooflab.model.whatif_weights import quantize_weights

    step = Kernel("decode step b=1 (measured)", {"fp16": 2e9}, {"DRAM": 1.1e9},
                  seconds=8e-3, calls=311,
                  meta={"op": "decode_step", "weight_dtype": "int4",
                        "bytes_split": {"weights": 1e9, "kv": 1e8}})
    new = quantize_weights(H200, [step], "int8").moves[0][1]
    assert new.meta["bytes_split"]["weights"] == pytest.approx(2e9)
