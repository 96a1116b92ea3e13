"""workloads/llm/study.py: the study `rooflab llm` runs, called from Python (review 14b F14),
giving the CLI's numbers. Hand figures for Llama-2-7B (hidden 4096, intermediate 11008,
32 layers, vocab 32000, fp16) on an H100 SXM (3.35 TB/s HBM3, NVLink 4 900 GB/s both
directions = 450 GB/s per direction)."""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main
from rooflab.hardware.resolve import load_roof
from rooflab.model.parallel import Link
from rooflab.workloads.llm import (
    Compared,
    LlmRun,
    Request,
    Settings,
    Study,
    load_config,
    run_study,
)
from rooflab.workloads.llm.links import ChosenLink

CFG = load_config("llama-2-7b")
H100 = load_roof("H100")
REQ = Request(batches=(1,), context=512)

# weights read once per decode step, fp16: per layer q,k,v,o 4 x 4096^2 x 2 B, the MLP
# 3 x 4096 x 11008 x 2 B, two norms 2 x 4096 x 2 B; then lm_head 32000 x 4096 x 2 B, the
# final norm and the embedding's one row (4096 x 2 B each)
WEIGHTS = 32 * (4 * 4096**2 * 2 + 3 * 4096 * 11008 * 2 + 2 * 4096 * 2) \
    + 32000 * 4096 * 2 + 2 * 4096 * 2
# K and V of 512 tokens read and of the new one written: 2 x 32 layers x 4096 x 2 B each
KV = 2 * 32 * 4096 * 2 * (512 + 1)
HBM = 3.35e12
NVLINK = 450e9


def cli_json(capsys, *args) -> dict:
    assert main(["llm", "llama-2-7b", "--on", "H100", "--batch", "1", "--context", "512",
                 "--phase", "decode", "--json", *args]) == 0
    return json.loads(capsys.readouterr().out)["llm"]


def test_decode_step_bytes_and_floor_by_hand_and_as_the_cli_prints(capsys):
    run = run_study(Study(CFG, H100, Settings(), REQ))
    assert isinstance(run, LlmRun)
    step = run.result.decode.step
    assert WEIGHTS == 13_214_695_424
    assert step.bytes_split["weights"] == WEIGHTS
    assert step.bytes_split["kv"] == KV == 268_959_744
    # memory-bound at AI ~1: the floor is the bytes over HBM (activations add 10.9 MB)
    assert run.result.tpot_s == pytest.approx((WEIGHTS + KV) / HBM, rel=0.003)
    assert run.result.tpot_s == pytest.approx(4.028e-3, rel=1e-3)
    cli = cli_json(capsys)
    assert cli["decode"]["bytes"] == step.bytes
    assert cli["decode"]["floor_s"] == run.result.tpot_s
    assert run.tpr is None and run.ppr is None and run.tp_link is None


def test_tp2_step_has_the_all_reduces_on_the_catalog_nvlink(capsys):
    run = run_study(Study(CFG, H100, Settings(tp=2), REQ))
    tpr = run.tpr
    # one all-reduce after attention and one after the MLP per layer, of batch x hidden
    # fp16 activations; a ring of 2 moves 2(2-1)/2 = 1 x the payload per rank
    assert (tpr.tp, tpr.allreduces, tpr.allreduce_bytes) == (2, 64, 1 * 4096 * 2)
    assert tpr.link_bytes_per_s == NVLINK
    assert run.tp_link.kind == "catalog"
    assert tpr.comm_s == pytest.approx(64 * 8192 / NVLINK, rel=1e-12)   # 1.165 us
    # + the logits gather (review 18d E): 32,000 x 2 B, half of it over 450 GB/s = 71.1 ns
    assert tpr.gather_s == pytest.approx(32_000 * 2 / 2 / NVLINK, rel=1e-12)
    # + the vocab-parallel embedding's one all-reduce (H1) of the same 8192 B: 1 x 8192 /
    # 450e9 = 18.2 ns
    assert tpr.embedding_s == pytest.approx(8192 / NVLINK, rel=1e-12)
    assert tpr.tpot_s == pytest.approx(tpr.compute_s + tpr.comm_s + 8192 / NVLINK
                                       + tpr.gather_s, rel=1e-12)
    # each GPU reads half the sharded weights (norms and the embedding row stay whole)
    # (the study's tables are then one GPU's: its decode floor is that half)
    one = run_study(Study(CFG, H100, Settings(), REQ)).result.tpot_s
    assert one / 2 < tpr.compute_s < one / 2 * 1.001
    assert run.result.tpot_s == tpr.compute_s
    cli = cli_json(capsys, "--tp", "2")["parallel"]
    assert (cli["comm_s"], cli["compute_s"], cli["tpot_s"]) == (tpr.comm_s, tpr.compute_s,
                                                                tpr.tpot_s)


def test_tp2_with_a_given_hop_latency_matches_the_cli(capsys):
    link = ChosenLink(Link("NVLink", NVLINK, 5e-6, "given"), "given",
                      latency_from="--hop-latency-us")
    tpr = run_study(Study(CFG, H100, Settings(tp=2), REQ, tp_link=link)).tpr
    # each all-reduce: 2(tp-1) = 2 hops of 5 us plus 8192 B at 450 GB/s
    assert tpr.comm_s == pytest.approx(64 * (2 * 5e-6 + 8192 / NVLINK), rel=1e-12)
    cli = cli_json(capsys, "--tp", "2", "--hop-latency-us", "5")["parallel"]
    assert cli["comm_s"] == tpr.comm_s
    assert cli["link_latency_s"] == pytest.approx(2 * 5e-6)


def test_pp2_stage_link_and_compare_without_the_cli():
    run = run_study(Study(CFG, H100, Settings(pp=2), REQ,
                          compare=(Compared("H100", H100), Compared("A100", load_roof("A100"),
                                                                    80e9))))
    assert run.ppr is not None and run.pp_link.kind == "catalog"
    assert run.pp_link.link.bus_bytes_per_s == NVLINK
    # --on's roof first, the repeated H100 dropped with a note, A100 kept with its memory
    assert [h.roof.name for h in run.hardware] == ["NVIDIA H100 SXM", "NVIDIA A100 80GB SXM"]
    assert run.hardware_memory == (None, 80e9)
    assert any("H100 (NVIDIA H100 SXM) already tabled" in n for n in run.result.notes)


def test_a_bad_measured_tpot_is_refused():
    from rooflab.errors import InputError

    with pytest.raises(InputError, match="positive time in seconds"):
        run_study(Study(CFG, H100, Settings(), REQ, tpot_s=-0.01))
