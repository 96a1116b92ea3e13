"""`whatif --quantize fp8` on gpt-oss's llm document: its experts are mxfp4 (fp4 in
groups of 32), narrower than fp8. --quantize sets the weights' format both ways (int4 ->
int8 is a fair what-if), so they widen to 1 byte a weight (expert_gate_proj 127 us -> 253 us
at batch 1 on an H100), but the assumption now says so in capitals rather than leaving a
0.99x step unexplained, while the fp16 lm_head halves; the embedding table the
quantization_config keeps at bf16 (an mxfp4 checkpoint's other tensors: s19 r6 F6) says bf16
in its meta (it said int4)."""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main


@pytest.fixture(scope="module")
def doc(tmp_path_factory):
    path = tmp_path_factory.mktemp("goss") / "gpt-oss-20b.json"
    assert main(["llm", "gpt-oss-20b", "--on", "h100", "--phase", "decode", "-o",
                 str(path)]) == 0
    return path


def _moves(capsys, doc, dtype):
    capsys.readouterr()
    assert main(["whatif", str(doc), "--quantize", dtype, "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    return {m["kernel"]: m for m in d["moves"]}, d["assumption"]


def test_mxfp4_experts_widened_by_fp8_are_said(capsys, doc):
    moves, assumption = _moves(capsys, doc, "fp8")
    # 4 x 2880 x 2880 weights: 0.53125 B (mxfp4: e2m1 + an e8m0 scale per 32, the meta's
    # weight_bytes_per_param; s26 r3 F3 read a bare 0.5) -> 1 B, 99.7 % of the bytes
    for name in ("expert_gate_proj", "expert_up_proj", "expert_down_proj"):
        m = moves[name]
        assert m["after_work_floor_s"] / m["before_work_floor_s"] == pytest.approx(
            1.88, abs=0.01)
    # lm_head: 201088 x 2880 fp16 weights, 99.96 % of its bytes -> 1 B each: ~2x
    lm = moves["lm_head"]
    assert lm["before_work_floor_s"] / lm["after_work_floor_s"] == pytest.approx(2.0, rel=2e-3)
    assert "WIDER, not narrower" in assumption and "expert_gate_proj (fp4)" in assumption
    assert "lm_head (" not in assumption.split("WIDER")[1]


def test_embedding_meta_says_its_kept_dtype(doc):
    kernels = {k["name"]: k for k in json.loads(doc.read_text())["kernels"]}
    assert kernels["embedding"]["meta"]["weight_dtype"] == "bf16"
    # mxfp4 is fp4 (e2m1), labelled int4 before s26 r3 F7
    assert kernels["expert_down_proj"]["meta"]["weight_dtype"] == "fp4"


def test_int4_still_quantizes_fp16_weights(capsys, doc):
    moves, assumption = _moves(capsys, doc, "int4")
    q = moves["q_proj"]   # fp16 -> 0.5 B: weights 99.9 % of the bytes, ~4x
    assert q["before_work_floor_s"] / q["after_work_floor_s"] == pytest.approx(4.0, rel=5e-3)
    assert "WIDER" not in assumption   # int4 -> int4 widens nothing
