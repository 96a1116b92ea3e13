"""Review s21 x1 F1, F2, F7, F9: --decode-tokens N under --tp/--pp (every all-reduce, the
logits gather, the stage transfer and the decode logits carry batch x N rows), choose's
words on a verify document, the fp4/--group setup texts, and names with a size/MIG profile."""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main
from rooflab.hardware.catalog import lookup

ARGS = ["llm", "llama-3-70b", "--on", "H100 SXM", "--tp", "8", "--batch", "64",
        "--context", "2048", "--phase", "decode"]


def _llm(capsys, *extra: str) -> dict:
    assert main([*ARGS, *extra, "--json"]) == 0
    return json.loads(capsys.readouterr().out)["llm"]


def test_tp_payloads_carry_every_query_token(capsys):
    par = _llm(capsys, "--decode-tokens", "5")["parallel"]
    # 64 sequences x 5 query tokens x hidden 8192 x 2 B; logits x vocab 128256
    payload, gather = 64 * 5 * 8192 * 2, 64 * 5 * 128256 * 2
    assert par["allreduce_bytes"] == pytest.approx(5.24288e6)
    assert par["embedding_allreduce_bytes"] == pytest.approx(payload)
    assert par["logits_gather_bytes"] == pytest.approx(gather)
    # H100 NVLink 450 GB/s a direction, ring 2 x 7/8 of each all-reduce, 7/8 of the gather
    bw = 450e9
    comm = 161 * 1.75 * payload / bw + 7 / 8 * gather / bw
    assert comm == pytest.approx(3.44e-3, rel=2e-3)
    assert par["tpot_s"] - par["compute_s"] == pytest.approx(comm, rel=1e-6)


def test_prefill_link_stays_per_prompt_token(capsys):
    one = _llm(capsys)["parallel"]
    five = _llm(capsys, "--decode-tokens", "5")["parallel"]
    assert five["prefill_comm_s"] == pytest.approx(one["prefill_comm_s"])
    assert five["prefill_embedding_allreduce_s"] == pytest.approx(
        one["prefill_embedding_allreduce_s"])


def test_stage_transfer_and_decode_logits_carry_every_query_token(capsys):
    assert main(["llm", "llama-3-70b", "--on", "H100 SXM", "--tp", "4", "--pp", "2",
                 "--batch", "64", "--context", "2048", "--decode-tokens", "5",
                 "--json"]) == 0
    llm = json.loads(capsys.readouterr().out)["llm"]
    pipe = llm["pipeline"]
    assert pipe["transfer_bytes"] == pytest.approx(64 * 5 * 8192 * 2)
    assert pipe["prefill_transfer_bytes"] == pytest.approx(64 * 512 * 8192 * 2)
    # the LM head's stage: fp32 logits of 64 x 5 rows over the whole vocabulary
    assert pipe["stages"][-1]["decode_logits_bytes"] == pytest.approx(64 * 5 * 128256 * 4)
    # the stages run the 5 query tokens too: their kernels sum to the whole TP shard's
    # decode step (kernels.decode_step), 16.6 ms, not the 1-token 14.2 ms they ran before
    stages = sum(st["compute_s"] for st in pipe["stages"])
    assert stages == pytest.approx(llm["parallel"]["compute_s"], rel=1e-9)
    assert stages == pytest.approx(16.6e-3, rel=3e-3)


def test_choose_says_the_step_is_a_verify(capsys, tmp_path):
    doc = tmp_path / "dt5.json"
    assert main(["llm", "llama-3-8b", "--on", "H100 SXM", "--decode-tokens", "5",
                 "--json"]) == 0
    doc.write_text(capsys.readouterr().out)
    assert main(["choose", str(doc), "--among", "h100,h200"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "batch 1 x 5 query tokens (a speculative verify: 1 to 5 tokens per sequence" in out
    assert "yields 1 to 5, so up to 5 x this rate" in out
    # the title no longer calls the 5-token verify "this step's one token"
    assert "each time is this whole step, not one token's" in out
    assert "each time is this step's one token" not in out


@pytest.mark.parametrize("opts, words", [
    (["--weights", "mxfp4"], "group 32, e8m0 scales"),
    (["--weights", "nvfp4", "--act", "fp8"], "fp8 scales; dequantized to fp8 for the math"),
])
def test_fp4_setup_words(capsys, opts, words):
    assert main(["llm", "llama-3-8b", "--on", "H100 SXM", *opts]) == 0
    assert words in capsys.readouterr().out


def test_group_help_names_the_defaults(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "400")
    try:
        main(["llm", "--help"])
    except SystemExit:
        pass
    out = " ".join(capsys.readouterr().out.replace("│", " ").split())
    assert "per channel for int8 with --act int8" in out


@pytest.mark.parametrize("name, card", [
    ("rtx4090 24gb", "NVIDIA GeForce RTX 4090"),
    ("rtx4090 24g", "NVIDIA GeForce RTX 4090"),
    ("A100 MIG 3g.40gb", "NVIDIA A100 80GB SXM"),     # only on the 80 GB card
    ("A100 MIG 3g.20gb", "NVIDIA A100 40GB SXM"),
    ("A100 MIG 7g.40gb", "NVIDIA A100 40GB SXM"),
    ("NVIDIA H200 MIG 3g.71gb", "NVIDIA H200 SXM"),     # 71 x 2 = 142, the 141 GB card
])
def test_sized_and_mig_names(name, card):
    assert lookup(name).name == card


def _tp_link_s(capsys, tmp_path, *extra: str) -> float:
    doc = tmp_path / "tp.json"
    assert main(["llm", "llama-3-70b", "--on", "H200", "--tp", "8", "--batch", "4",
                 "--prompt", "2048", *extra, "--json"]) == 0
    doc.write_text(capsys.readouterr().out)
    assert main(["choose", str(doc), "--among", "h200", "--json"]) == 0
    out = capsys.readouterr().out
    return float(out.split('"tp_link_s": ')[1].split(",")[0].split("}")[0])


def test_choose_decode_link_on_a_verify_document(capsys, tmp_path):
    # H200 NVLink 450 GB/s a direction: 161 all-reduces of 4 x 5 x 8192 x 2 B (ring,
    # 2 x 7/8 of each) + a gather of 4 x 5 x 128256 x 2 B (7/8 of it), bandwidth only
    payload, gather = 4 * 5 * 8192 * 2, 4 * 5 * 128256 * 2
    want = (161 * 1.75 * payload + 7 / 8 * gather) / 450e9
    got = _tp_link_s(capsys, tmp_path, "--phase", "decode", "--decode-tokens", "5")
    assert got == pytest.approx(want, rel=1e-6)


def test_choose_prefill_link_on_a_verify_document(capsys, tmp_path):
    # the prefill's link is per prompt token whatever --decode-tokens: 84.0 ms as at N=1
    one = _tp_link_s(capsys, tmp_path, "--phase", "prefill")
    five = _tp_link_s(capsys, tmp_path, "--phase", "prefill", "--decode-tokens", "5")
    assert one == pytest.approx(84.04e-3, rel=1e-3)
    assert five == pytest.approx(one)
