"""`rooflab llm --tp/--pp` on the links `rooflab probe --comm` measured: the cluster profile
as --on or --link-from, checked by hand. The profiles are built from fake timings that
follow t = alpha + S/beta exactly (tests/test_scale_measured_link.py), so the fits return
alpha and beta and every expected number below is arithmetic.

tinyllama-1.1b: hidden 2048, 22 layers, fp16 activations: one all-reduce carries
batch x 2048 x 2 B (4096 B at batch 1), 2 per layer = 44 per decode step; one stage
transfer carries the same 4096 B."""

from __future__ import annotations

import json

import pytest
from test_scale_measured_link import cluster

from rooflab.cli.main import main
from rooflab.errors import InputError
from rooflab.hardware.profile import MachineProfile, save_profile
from rooflab.model.ceiling import Ceiling, Roof
from rooflab.workloads.llm import Settings, load_config
from rooflab.workloads.llm.parallel import tensor_parallel

AR = (600e-6, 1e9)           # all-reduce alpha (s), beta (B/s) over 2 ranks
P2P = (100e-6, 4e9)          # send/recv 0->1 alpha, beta
CFG = load_config("tinyllama-1.1b")
ACT = 2                      # fp16 activations, bytes
ALLREDUCES = 2 * 22          # 2 per layer


def payload(batch: int = 1) -> int:
    return batch * CFG.hidden * ACT


def ring_s(alpha: float, beta: float, n0: int, tp: int, nbytes: float) -> float:
    """One ring all-reduce of nbytes over tp ranks on a fit measured at n0 ranks, by hand:
    bus bandwidth beta x 2(n0-1)/n0, hop alpha / 2(n0-1), t = 2(tp-1) hop +
    2(tp-1)/tp x nbytes / bus."""
    bus, hop = beta * 2 * (n0 - 1) / n0, alpha / (2 * (n0 - 1))
    return 2 * (tp - 1) * hop + 2 * (tp - 1) / tp * nbytes / bus


def llm_json(capsys, *args) -> dict:
    code = main(["llm", "tinyllama-1.1b", *args, "--phase", "decode", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)["llm"]


def llm_err(capsys, *args) -> str:
    assert main(["llm", "tinyllama-1.1b", *args, "--phase", "decode"]) == 2
    return capsys.readouterr().err


@pytest.fixture
def comm(tmp_path) -> str:
    return cluster(tmp_path / "comm.json", ar=AR, p2p=P2P)


def test_the_config_is_what_the_hand_numbers_assume():
    assert (CFG.hidden, CFG.layers, CFG.heads) == (2048, 22, 32)
    assert payload() == 4096


# --- --tp --------------------------------------------------------------------------------
def test_tp_on_a_cluster_profile_uses_its_all_reduce_fit(comm, capsys):
    # before: "roof ... has no NVLink, PCIe or network ceiling" although it has a loopback
    d = llm_json(capsys, "--on", comm, "--tp", "2")
    par = d["parallel"]
    # at n0 = tp = 2 the ring model returns the measurement: alpha + S / beta per all-reduce
    one = 600e-6 + 4096 / 1e9                       # 604.096 us
    assert one == pytest.approx(ring_s(*AR, 2, 2, payload()), rel=1e-12)
    assert par["allreduces_per_step"] == ALLREDUCES
    assert par["allreduce_bytes"] == payload()
    assert par["link_bytes_per_s"] == pytest.approx(1e9, rel=1e-9)
    assert par["link_latency_s"] == pytest.approx(600e-6, rel=1e-9)
    assert par["comm_s"] == pytest.approx(44 * one, rel=1e-9)        # 26.58 ms
    # + the logits gather (review 18d E): 32,000 x 2 B; one hop of 600 / 2 = 300 us and
    # 1/2 x 64,000 B / 1 GB/s = 32 us: 332 us
    gather = 300e-6 + 64_000 / 2 / 1e9
    assert par["logits_gather_s"] == pytest.approx(gather, rel=1e-9)
    # + the vocab-parallel embedding's one all-reduce (H1) of the same 4096 B: 604.096 us,
    # so 45 all-reduces in the step: 45 x 604.096 + 332 = 27,516.32 us of link
    assert par["embedding_allreduce_s"] == pytest.approx(one, rel=1e-9)
    assert par["tpot_s"] == pytest.approx(par["compute_s"] + 45 * one + gather, rel=1e-9)
    assert "measured all-reduce fit over 2 ranks" in par["link"]
    prov = par["link_provenance"]
    assert prov["kind"] == "measured" and prov["option"] == "--on" and prov["file"] == comm
    assert prov["latency_from"] == "fit"
    assert prov["fit"]["collective"] == "all_reduce" and prov["fit"]["ranks"] == 2
    assert prov["fit"]["alpha_s"] == pytest.approx(600e-6, rel=1e-9)
    assert prov["fit"]["beta_bytes_per_s"] == pytest.approx(1e9, rel=1e-9)
    assert prov["fit"]["backend"] == "gloo"
    assert any("600 us of latency per all-reduce (the all-reduce alpha measured over 2 "
               "ranks" in n for n in d["notes"])
    # within the measured ranks nothing is extrapolated
    assert not any("extrapolate" in n for n in d["notes"])


def test_tp_past_the_measured_ranks_extrapolates_and_says_so(comm, capsys):
    d = llm_json(capsys, "--on", comm, "--tp", "4", "--batch", "4")
    # 4 ranks from a 2-rank fit: latency 2 x 3 x 300 us = 1.8 ms, bytes 2 x 3/4 x 16384
    one = 1.8e-3 + 1.5 * payload(4) / 1e9             # 1.8 ms + 24.576 us
    assert one == pytest.approx(ring_s(*AR, 2, 4, payload(4)), rel=1e-12)
    assert d["parallel"]["link_latency_s"] == pytest.approx(1.8e-3, rel=1e-9)
    assert d["parallel"]["comm_s"] == pytest.approx(44 * one, rel=1e-9)
    assert any(n.startswith("the links were measured over 2 ranks on 1 host (gloo)")
               for n in d["notes"])


def test_link_latency_replaces_the_measured_one(comm, capsys):
    d = llm_json(capsys, "--on", comm, "--tp", "2", "--link-latency", "10")
    assert d["parallel"]["link_bytes_per_s"] == pytest.approx(1e9, rel=1e-9)   # measured
    assert d["parallel"]["comm_s"] == pytest.approx(44 * (10e-6 + 4096 / 1e9), rel=1e-9)
    assert d["parallel"]["link_provenance"]["latency_from"] == "--link-latency"
    # an explicit 0 is given too: bandwidth only
    d0 = llm_json(capsys, "--on", comm, "--tp", "2", "--link-latency", "0")
    assert d0["parallel"]["comm_s"] == pytest.approx(44 * 4096 / 1e9, rel=1e-9)


def test_link_bw_wins_over_the_profile(comm, capsys):
    d = llm_json(capsys, "--on", comm, "--tp", "2", "--link-bw", "10GB/s")
    assert d["parallel"]["comm_s"] == pytest.approx(44 * 4096 / 10e9, rel=1e-9)
    assert d["parallel"]["link_provenance"]["kind"] == "given"
    assert d["parallel"]["link_provenance"]["fit"] is None


def test_link_from_on_a_gpu_says_the_link_was_measured_between_cpus(comm, capsys):
    d = llm_json(capsys, "--on", "H100 SXM", "--link-from", comm, "--tp", "2")
    assert d["parallel"]["comm_s"] == pytest.approx(44 * (600e-6 + 4096 / 1e9), rel=1e-9)
    assert d["parallel"]["link_provenance"]["option"] == "--link-from"
    assert any(n.startswith("the link was measured with gloo between CPU processes "
                            "(loopback), not between NVIDIA H100 SXM devices")
               for n in d["notes"])
    # without --link-from the catalog's NVLink (450 GB/s per direction, no latency) holds
    cat = llm_json(capsys, "--on", "H100 SXM", "--tp", "2")
    assert cat["parallel"]["comm_s"] == pytest.approx(44 * 4096 / 450e9, rel=1e-9)
    assert cat["parallel"]["link_provenance"]["kind"] == "catalog"


def test_across_hosts_tp_inside_a_node_uses_the_intra_node_send_recv(tmp_path, capsys):
    # 2 hosts x 2 ranks: the world all-reduce ran at the network's pace; inside a host the
    # ring's hops are the measured send/recv: bus 4 GB/s, hop 100 us
    path = cluster(tmp_path / "c.json", hosts=("a", "a", "b", "b"), ar=(1e-3, 2e9), p2p=P2P)
    d = llm_json(capsys, "--on", path, "--tp", "2")
    one = 2 * 1 * 100e-6 + 4096 / 4e9                 # 200 us + 1.024 us
    assert d["parallel"]["comm_s"] == pytest.approx(44 * one, rel=1e-9)
    assert d["parallel"]["link_provenance"]["fit"]["collective"] == "send_recv"


def test_a_compute_profile_as_link_from_says_what_it_is(tmp_path, capsys):
    path = tmp_path / "cpu.json"
    save_profile(str(path), MachineProfile(host={"name": "cpu"},
                                           measured=Roof("cpu", "measured", compute=(
                                               Ceiling(1e11, precision="fp32", unit="vector",
                                                       provenance="measured"),),
                                               memory=(Ceiling(2e10, level="DRAM",
                                                               provenance="measured"),))))
    err = llm_err(capsys, "--on", "T4", "--link-from", str(path), "--tp", "2")
    assert "not a cluster profile from `rooflab probe --comm`" in err


@pytest.mark.parametrize("args, says", [
    (["--link-bw", "10GB/s", "--tp", "2"], "give one of --link-bw and --link-from"),
    ([], "--link-from gives the links of --tp's all-reduces and --pp's sends"),
])
def test_link_from_misuse_is_refused(comm, capsys, args, says):
    assert says in llm_err(capsys, "--on", "T4", "--link-from", comm, *args)


def test_a_roof_with_only_a_loopback_link_serves_tensor_parallel():
    # the library path (workloads.llm.parallel) used to look for NVLink/PCIe/network only
    roof = Roof("box", "measured",
                compute=(Ceiling(1e11, precision="fp32", unit="vector"),),
                memory=(Ceiling(2e10, level="DRAM"), Ceiling(3e9, level="loopback")))
    r = tensor_parallel(CFG, Settings(), roof, batch=1, context=100, tp=2)
    assert r.link_bytes_per_s == 3e9 and "loopback" in r.link_source
    assert r.comm_s == pytest.approx(44 * 4096 / 3e9, rel=1e-12)
    bare = Roof("bare", "measured", compute=roof.compute, memory=roof.memory[:1])
    with pytest.raises(InputError, match="--link-from"):
        tensor_parallel(CFG, Settings(), bare, batch=1, context=100, tp=2)


# --- --pp --------------------------------------------------------------------------------
def test_pp_on_a_cluster_profile_pays_the_measured_send_latency(comm, capsys):
    d = llm_json(capsys, "--on", comm, "--pp", "2")
    pp = d["pipeline"]
    hop = 100e-6 + 4096 / 4e9                         # 101.024 us (was 1.03 us, no alpha)
    assert pp["transfer_bytes"] == payload()
    assert pp["hop_s"] == pytest.approx(hop, rel=1e-9)
    assert pp["transfer_s"] == pytest.approx(hop, rel=1e-9)
    assert pp["tpot_s"] == pytest.approx(pp["stages_s"] + hop, rel=1e-9)
    # the prompt's hop: 512 tokens x 4096 B = 2,097,152 B -> 100 us + 524.288 us
    assert pp["prefill_transfer_s"] == pytest.approx(100e-6 + 512 * 4096 / 4e9, rel=1e-9)
    link = pp["link"]
    assert link["bytes_per_s"] == pytest.approx(4e9, rel=1e-9)
    assert link["latency_s"] == pytest.approx(100e-6, rel=1e-9)
    assert "measured send/recv 0->1 fit" in link["source"] and comm in link["source"]
    prov = link["provenance"]
    assert prov["kind"] == "measured" and prov["latency_from"] == "fit"
    assert prov["fit"]["collective"] == "send_recv" and prov["fit"]["pair"] == [0, 1]
    assert prov["fit"]["alpha_s"] == pytest.approx(100e-6, rel=1e-9)


def test_pp_link_options_still_override_the_profile(comm, capsys):
    lat = llm_json(capsys, "--on", comm, "--pp", "2", "--pp-link-latency", "5")["pipeline"]
    assert lat["hop_s"] == pytest.approx(5e-6 + 4096 / 4e9, rel=1e-9)   # measured beta
    assert lat["link"]["provenance"]["latency_from"] == "--pp-link-latency"
    bw = llm_json(capsys, "--on", comm, "--pp", "2", "--pp-link-bw", "10GB/s")["pipeline"]
    assert bw["hop_s"] == pytest.approx(4096 / 10e9, rel=1e-9)
    assert bw["link"]["provenance"]["kind"] == "given"


def test_tp_and_pp_take_the_all_reduce_and_the_send_from_one_profile(comm, capsys):
    d = llm_json(capsys, "--on", comm, "--tp", "2", "--pp", "2")
    pp = d["pipeline"]
    # each stage: 11 layers x 2 all-reduces of (600 us + 4096 B / 1 GB/s)
    per_stage = 22 * (600e-6 + 4096 / 1e9)
    # the last stage also gathers the logits (review 18d E): one hop of 300 us + 1/2 x
    # 32,000 x 2 B / 1 GB/s = 332 us
    gather = 300e-6 + 64_000 / 2 / 1e9
    # the first stage also all-reduces the embedded tokens (H1): one 600 us + 4096 B /
    # 1 GB/s = 604.096 us more
    embedding = 600e-6 + 4096 / 1e9
    assert [st["comm_s"] for st in pp["stages"]] == pytest.approx(
        [per_stage + embedding, per_stage + gather], rel=1e-9)
    assert pp["hop_s"] == pytest.approx(100e-6 + 4096 / 4e9, rel=1e-9)
    assert d["parallel"]["link_provenance"]["fit"]["collective"] == "all_reduce"
    assert pp["link"]["provenance"]["fit"]["collective"] == "send_recv"


def test_text_names_the_measured_links(comm, capsys):
    assert main(["llm", "tinyllama-1.1b", "--on", comm, "--tp", "2", "--pp", "2",
                 "--phase", "decode"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    # (the bandwidth itself is printed by units.si, which shows the fit's 0.99999... GB/s
    # as "1e+03 MB/s"; the source names the fit)
    assert "44 all-reduces of 4.1 kB on " in out
    assert ("(measured all-reduce fit over 2 ranks: alpha 600 us, beta 1 GB/s, --on "
            f"{comm}; per hop 300 us from the all-reduce") in out
    # both readings of one hop (review r3 F7): 600 us / 2(2-1) = 300 us vs the send/recv's
    # alpha 100 us, 3x apart (> 1.5x): flagged
    assert ("100 us from send/recv ! they differ by more than 1.5x, so the latency past "
            "the measured ranks is uncertain by that much) + 600 us latency each") in out
    assert "on 4 GB/s + 100 us latency (measured send/recv 0->1 fit" in out
