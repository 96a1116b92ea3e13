"""One ring all-reduce formula (model.parallel.Link.allreduce_s) and one meaning of link
latency (per ring hop, Link.hop_latency_s), for `rooflab scale` and `rooflab llm` alike.

Before: workloads.llm.parallel.allreduce_seconds added one flat latency per all-reduce
beside Link.allreduce_s's 2(n-1) hops, and `scale --latency-us 10` at 8 GPUs cost 140 us
per all-reduce where `llm --link-latency 10` cost 10 us. Now both verbs take
--hop-latency-us (per hop); --latency-us (scale, per hop already) and --link-latency (llm,
per all-reduce, converted to US / 2(tp-1) per hop) keep working."""

from __future__ import annotations

import json

import pytest

import rooflab.workloads.llm.parallel as llm_parallel
from rooflab.cli.main import main
from rooflab.errors import InputError
from rooflab.model.ceiling import Ceiling, Roof
from rooflab.model.comm_link import NDR_BUS, hop_latency_of_allreduce, ring_hops
from rooflab.model.parallel import Link, allreduce_latency_words
from rooflab.units import parse_memory
from rooflab.workloads.llm import Settings, load_config, tensor_parallel, tp_decode_step

US = 1e-6
MIB32 = 32 * 2**20                       # 33_554_432 B


# --- the formula -----------------------------------------------------------------------------
def test_one_all_reduce_by_hand():
    # 8 ranks, 32 MiB, 400 GB/s bus bandwidth, 10 us per hop (nccl-tests' ring):
    # 2 x 7 x 10 us = 140 us of latency + 2 x 7/8 x 33_554_432 B / 400e9 B/s = 146.80064 us
    link = Link("NVLink", 400e9, 10 * US)
    assert link.allreduce_latency_s(8) == pytest.approx(140 * US, rel=1e-15)
    assert link.allreduce_s(MIB32, 8) == pytest.approx(286.80064 * US, rel=1e-12)
    assert link.allreduce_s(MIB32, 1) == 0.0
    assert ring_hops(8) == 14 and ring_hops(2) == 2 and ring_hops(1) == 0
    assert allreduce_latency_words(link, 8) == "all-reduce latency 140 us = 14 hops x 10 us"


@pytest.mark.parametrize("n", [2, 3, 4, 8, 16, 1024])
@pytest.mark.parametrize("nbytes", [0.0, 4096.0, 3.3e7])
def test_the_per_all_reduce_latency_of_llm_tools_is_2_n_minus_1_hops(n, nbytes):
    # the formula llm used to apply (2(n-1)/n x S / B + one latency L per all-reduce) is
    # Link.allreduce_s with hop latency L / 2(n-1)
    bw, per_allreduce = 1e11, 20 * US
    hop = hop_latency_of_allreduce(per_allreduce, n)
    assert hop == pytest.approx(per_allreduce / (2 * (n - 1)), rel=1e-15)
    flat = 2 * (n - 1) / n * nbytes / bw + per_allreduce
    assert Link("PCIe", bw, hop).allreduce_s(nbytes, n) == pytest.approx(flat, rel=1e-12)


def test_a_link_refuses_a_negative_or_nan_latency():
    with pytest.raises(InputError, match="hop latency must be >= 0"):
        Link("PCIe", 1e9, -1 * US)
    with pytest.raises(InputError, match="hop latency must be >= 0"):
        Link("PCIe", 1e9, float("nan"))


# --- tensor parallel on a Link ---------------------------------------------------------------
CFG = load_config("tinyllama-1.1b")      # 22 layers, hidden 2048: 44 all-reduces per step
ROOF = Roof("box", compute=(Ceiling(1e14, precision="fp16", unit="tensor"),),
            memory=(Ceiling(1e12, level="DRAM"),))


def test_tensor_parallel_takes_a_link_and_uses_its_all_reduce():
    link = Link("PCIe", 10e9, 5 * US)
    r = tensor_parallel(CFG, Settings(), ROOF, batch=1, context=512, tp=2, link=link,
                        prompt=100)
    # payload 1 x 2048 x 2 B = 4096; each: 2 x 1 x 5 us + 2 x 1/2 x 4096 / 1e10 = 10.4096 us
    assert (r.allreduces, r.allreduce_bytes, r.link) == (44, 4096, link)
    assert r.comm_s == pytest.approx(44 * 10.4096 * US, rel=1e-12)      # 458.0224 us
    assert r.latency_s == pytest.approx(10 * US)                         # per all-reduce
    # the prefill: 100 tokens each, 409_600 B: 10 us + 40.96 us
    assert r.prefill_comm_s == pytest.approx(44 * 50.96 * US, rel=1e-12)
    # the sweep's batch 4: 16_384 B: 10 us + 1.6384 us
    assert r.comm_s_at(4, 1) == pytest.approx(44 * 11.6384 * US, rel=1e-12)
    # + the vocab-parallel logits gather (review 18d E): 1 x 32,000 x 2 B = 64,000 B, one
    # hop of 5 us + 1/2 x 64,000 / 1e10 = 3.2 us: 8.2 us
    assert r.gather_bytes == 64_000
    assert r.gather_s == pytest.approx(8.2 * US, rel=1e-12)
    # + the vocab-parallel embedding's all-reduce, once a step (vLLM VocabParallelEmbedding):
    # 1 x 2048 x 2 B = 4096 B, like a layer's: 10.4096 us
    assert r.embedding_s == pytest.approx(10.4096 * US, rel=1e-12)
    assert r.tpot_s == pytest.approx(r.compute_s + r.comm_s + 10.4096 * US + 8.2 * US,
                                     rel=1e-12)
    # tp_decode_step is the same path: the same result inside its TPStep
    step = tp_decode_step(CFG, Settings(), ROOF, batch=1, context=512, tp=2, link=link)
    assert step.result.comm_s == tensor_parallel(CFG, Settings(), ROOF, batch=1, context=512,
                                                 tp=2, link=link).comm_s


def test_one_device_has_no_all_reduces():
    r = tensor_parallel(CFG, Settings(), ROOF, batch=1, context=512, tp=1)
    assert (r.comm_s, r.latency_s, r.link, r.link_bytes_per_s) == (0.0, 0.0, None, None)


def test_the_second_formula_is_gone():
    assert not hasattr(llm_parallel, "allreduce_seconds")


# --- the CLI: one meaning, old spellings converted -----------------------------------------------
def _llm(capsys, *args) -> dict:
    assert main(["llm", "llama-3-70b", "--on", "H200", "--batch", "16", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)["llm"]


def test_llm_hop_latency_and_the_old_per_all_reduce_spelling_agree(capsys):
    # --tp 8: 14 hops; 10 us per all-reduce (--link-latency) = 10/14 us per hop
    old = _llm(capsys, "--tp", "8", "--link-latency", "10")["parallel"]
    new = _llm(capsys, "--tp", "8", "--hop-latency-us", str(10 / 14))["parallel"]
    base = _llm(capsys, "--tp", "8")["parallel"]
    assert old["link_latency_s"] == pytest.approx(10 * US, rel=1e-12)
    assert new["link_latency_s"] == pytest.approx(10 * US, rel=1e-12)
    assert new["comm_s"] == pytest.approx(old["comm_s"], rel=1e-12)
    assert old["comm_s"] == pytest.approx(base["comm_s"] + 160 * 10 * US, rel=1e-12)
    assert new["link_provenance"]["latency_from"] == "--hop-latency-us"


def test_llm_prints_both_readings_of_the_latency(capsys):
    assert main(["llm", "llama-3-70b", "--on", "H200", "--tp", "8", "--batch", "16",
                 "--hop-latency-us", "10"]) == 0
    out = capsys.readouterr().out
    assert "all-reduce latency 140 us = 14 hops x 10 us" in out
    assert "+ 140 us latency each" in out
    assert "140 us of latency per all-reduce (--hop-latency-us: 14 hops x 10 us)" in out


def test_llm_hop_latency_is_one_send_of_a_pipeline_without_tp(capsys):
    # one stage send at batch 1: 8192 x 2 B = 16_384 B on 450 GB/s, + 5 us (one hop)
    d = json.loads(_run_json(capsys, ["llm", "llama-3-70b", "--on", "H200", "--pp", "2",
                                      "--hop-latency-us", "5"]))["llm"]
    assert d["pipeline"]["transfer_s"] == pytest.approx(16384 / 450e9 + 5 * US)


def _run_json(capsys, argv) -> str:
    assert main([*argv, "--json"]) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("args, says", [
    (["--tp", "8", "--hop-latency-us", "1", "--link-latency", "14"], "give one of"),
    (["--hop-latency-us", "10"], "add --tp N"),
    (["--tp", "8", "--hop-latency-us", "-1"], ">= 0 and finite, in microseconds per ring hop"),
])
def test_llm_latency_mistakes_are_one_error_line(capsys, args, says):
    assert main(["llm", "llama-3-70b", "--on", "H200", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and says in err and "Traceback" not in err


def test_scale_takes_both_spellings_per_hop(capsys):
    argv = ["scale", "--on", "H100 SXM", "--hidden", "1024", "--blocks", "2", "--tokens",
            "512"]
    new = json.loads(_run_json(capsys, [*argv, "--hop-latency-us", "10"]))
    old = json.loads(_run_json(capsys, [*argv, "--latency-us", "10"]))
    # the one difference: the generator block names each command line (review 14d J)
    assert new.pop("generator")["command"][-3:-1] == ["--hop-latency-us", "10"]
    assert old.pop("generator")["command"][-3:-1] == ["--latency-us", "10"]
    assert new == old
    assert new["links"]["intra"]["hop_latency_s"] == pytest.approx(10 * US)
    assert main([*argv, "--hop-latency-us", "10"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "at 8 GPUs all-reduce latency 140 us = 14 hops x 10 us" in text
    assert main(argv) == 0
    assert "link latency per hop" not in capsys.readouterr().out     # none given: no line
    assert main([*argv, "--hop-latency-us", "1", "--latency-us", "2"]) == 2
    assert "give one of --hop-latency-us and --latency-us" in capsys.readouterr().err


def test_the_assumed_nic_lives_in_the_model():
    import rooflab.cli.scale as scale

    assert NDR_BUS == 50e9                 # one 400 Gb/s NDR NIC, per direction
    assert not hasattr(scale, "NDR_BUS") and not hasattr(scale, "intra_link")


def test_memory_without_a_unit_is_refused_by_units():
    assert parse_memory("16GiB") == 16 * 2**30
    with pytest.raises(InputError, match=r"--memory 16 is 16 bytes.*--memory 16GB"):
        parse_memory("16")
