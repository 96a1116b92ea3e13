"""Task H7: `whatif` and `choose` on an `llm --json` document count what `rooflab llm` now
counts (H1): the vocab-parallel embedding's all-reduce under --tp, the decode batch's fp32
logits in the footprint."""

from __future__ import annotations

import json

import pytest

from rooflab.cli.choose_fit import least_bytes
from rooflab.cli.main import main


def _run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def _tp_doc(capsys, tmp_path, on: str) -> tuple[str, dict]:
    code, out, err = _run(capsys, "llm", "llama-3-70b", "--on", on, "--tp", "8", "--batch",
                          "64", "--phase", "decode", "--json")
    assert code == 0, err
    path = tmp_path / f"tp8-{on}.json"
    path.write_text(out)
    return str(path), json.loads(out)["llm"]


def test_whatif_hardware_moves_the_embedding_allreduce_with_the_link(capsys, tmp_path):
    # llama-3-70b --tp 8 --batch 64 on H100 (NVLink 450 GB/s a direction) -> A100 (NVLink 3,
    # 300 GB/s a direction), no latency given. Payload 64 x 8192 x 2 B = 1,048,576 B; the
    # 160 per-layer all-reduces and the embedding's one each send 2 x 7/8 of it, the logits
    # gather 7/8 of 64 x 128,256 x 2 = 16,416,768 B:
    #   before: 161 x 1,835,008 / 450e9 + 14,364,672 / 450e9 = 656.53 + 31.92 = 688.45 us
    #   after:  161 x 1,835,008 / 300e9 + 14,364,672 / 300e9 = 984.79 + 47.88 = 1032.67 us
    # Without the embedding's all-reduce whatif said 684.37 us -> 1026.55 us.
    doc, h100 = _tp_doc(capsys, tmp_path, "H100")
    _, a100 = _tp_doc(capsys, tmp_path, "A100")
    before = (161 * 1_835_008 + 14_364_672) / 450e9
    after = (161 * 1_835_008 + 14_364_672) / 300e9
    assert before == pytest.approx(688.45e-6, abs=0.01e-6)
    assert after == pytest.approx(1032.67e-6, abs=0.01e-6)
    assert h100["parallel"]["embedding_allreduce_bytes"] == 1_048_576
    code, out, err = _run(capsys, "whatif", doc, "--on", "H100", "--hardware", "A100",
                          "--json")
    assert code == 0, err
    par = json.loads(out)["parallel"]
    assert par["comm_before_s"] == pytest.approx(before, rel=1e-9)
    assert par["comm_after_s"] == pytest.approx(after, rel=1e-9)
    # the same link time `rooflab llm --on A100` gives: all-reduces + embedding + gather
    a = a100["parallel"]
    assert par["comm_after_s"] == pytest.approx(
        a["comm_s"] + a["embedding_allreduce_s"] + a["logits_gather_s"], rel=1e-9)
    assert par["total_after_tpot_s"] == pytest.approx(a["tpot_s"], rel=1e-9)
    code, out, _ = _run(capsys, "whatif", doc, "--on", "H100", "--hardware", "A100")
    text = " ".join(out.split())
    assert ("with the 160 all-reduces, the embedding's all-reduce and the logits gather of "
            "--tp 8: 688 us -> 1.03 ms") in text


def test_whatif_on_a_document_without_the_embedding_fields_keeps_its_time(capsys, tmp_path):
    # a document written before H1 has no embedding_allreduce_*: since s21 (r1 F3) the
    # embedding all-reduce is counted from the file's model (hidden, vocab) as `rooflab llm`
    # counts it, one more all-reduce of the same bytes: 161 x 1,835,008 / 450e9 = 656.53 us +
    # 31.92 us = 688.45 us (it was 160 x, 684.37 us, the term silently left out)
    doc, llm = _tp_doc(capsys, tmp_path, "H100")
    d = json.loads(open(doc).read())
    par = d["llm"]["parallel"]
    for key in ("embedding_allreduce_bytes", "embedding_allreduce_s",
                "prefill_embedding_allreduce_s"):
        par.pop(key)
    old = tmp_path / "old.json"
    old.write_text(json.dumps(d))
    code, out, err = _run(capsys, "whatif", str(old), "--on", "H100", "--hardware", "A100",
                          "--json")
    assert code == 0, err
    w = json.loads(out)["parallel"]
    assert w["comm_before_s"] == pytest.approx((161 * 1_835_008 + 14_364_672) / 450e9)
    assert w["comm_after_s"] == pytest.approx((161 * 1_835_008 + 14_364_672) / 300e9)


def test_least_bytes_keeps_the_fp32_decode_logits():
    # llama-3-70b fp16 decode at context 640 (as test_llm_jetson_edge's by-hand case):
    # 70.55e9 params x 0.515625 (int4, a fp16 scale per 128) = 36,379,254,912 B + KV
    # 209,715,200 B / 2 at fp8 + 67,621,888 B of activations = 36,551,734,400 B, + the
    # sampler's fp32 logits 128,256 x 4 = 513,024 B, fp32 whatever --weights/--kv:
    # 36,552,247,424 B (least_bytes left them out: 513 kB under `rooflab llm`'s footprint)
    llm = {"footprint": {"weights_bytes": 141107412992.0, "kv_bytes": 209715200.0,
                         "activations_bytes": 67621888.0, "decode_logits_bytes": 513024.0},
           "settings": {"weight_bytes_per_param": 2.0, "kv": "fp16"}}
    assert least_bytes(llm) == pytest.approx(36_552_247_424, rel=1e-12)


def test_least_bytes_of_a_narrowest_document_is_its_footprint(capsys):
    # at --weights int4 --kv fp8 nothing narrower is left: least_bytes = total_bytes, the
    # decode logits included (llama-3-8b on an H100: 513,024 B of them at batch 1)
    code, out, err = _run(capsys, "llm", "llama-3-8b", "--on", "H100", "--phase", "decode",
                          "--weights", "int4", "--kv", "fp8", "--json")
    assert code == 0, err
    fp = json.loads(out)["llm"]["footprint"]
    assert fp["decode_logits_bytes"] == 128_256 * 4 == 513_024
    assert least_bytes({"footprint": fp, "settings": json.loads(out)["llm"]["settings"]}) \
        == pytest.approx(fp["total_bytes"], rel=1e-12)
