"""`rooflab train --dp N --link-from FILE` words its link notes for train (s31 hg): the notes
it reused from `rooflab scale` spoke of "the rows past 2 devices" and told the user to
"give --inter-bw", where train has one device count and no --inter-bw; a --hop-latency-us
that a measured link ignores said nothing; `train.dp.link` in --json gains the links'
provenance as `scale --json`'s `links` carry it; `scale --help` names --latency-us again.

The cluster profiles are test_scale_measured_link.cluster's: an all-reduce fit alpha 600 us,
beta 1 GB/s over the ranks, a send/recv 0->1 fit alpha 100 us, beta 4 GB/s, on gloo. Over
2 ranks on one host the ring link is bus 1 GB/s x 2(2-1)/2 = 1 GB/s, 600 us / 2(2-1) =
300 us per hop; over 4 ranks bus 1 GB/s x 2(4-1)/4 = 1.5 GB/s, 600 us / 6 = 100 us per hop.
Across 2 hosts the world fit is the network (1 GB/s, 300 us) and the send/recv the
intra-node link (4 GB/s, 100 us)."""

from __future__ import annotations

import json

import pytest
from test_scale_measured_link import cluster

from rooflab.cli.main import main


def _notes(capsys, *args) -> list[str]:
    assert main(["train", "llama-2-7b", "--on", "H100 SXM", *args]) == 0
    out = capsys.readouterr().out
    return [line[len("note: "):] for line in out.splitlines() if line.startswith("note: ")]


def _dp_json(capsys, *args) -> dict:
    assert main(["train", "llama-2-7b", "--on", "H100 SXM", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)["train"]


@pytest.fixture
def one_host(tmp_path):
    return cluster(tmp_path / "one.json", hosts=("a", "a"))


def test_fewer_ranks_than_dp_on_one_host_says_dp_extrapolates(capsys, one_host):
    notes = _notes(capsys, "--dp", "16", "--link-from", one_host)
    # was: "...; the rows past 2 devices extrapolate them ... (the inter-node figure above;
    # probe across hosts with torchrun --nnodes, or give --inter-bw)"
    assert ("the links were measured over 2 ranks on 1 host (gloo); --dp 16 extrapolates "
            "them with the ring model (hop latency 300 us x 2(n-1), bus bandwidth 1 GB/s "
            "whatever n); past 8 devices per node the ring crosses an inter-node link that "
            "was not measured but assumed (the network the link line names; probe across "
            "hosts with torchrun --nnodes)") in notes
    text = "\n".join(notes)
    assert "rows past" not in text and "--inter-bw" not in text
    assert "inter-node figure above" not in text


def test_four_ranks_and_two_hosts(capsys, tmp_path):
    four = cluster(tmp_path / "four.json", hosts=("a",) * 4)
    assert ("the links were measured over 4 ranks on 1 host (gloo); --dp 16 extrapolates "
            "them with the ring model (hop latency 100 us x 2(n-1), bus bandwidth 1.5 GB/s "
            "whatever n); past 8 devices per node the ring crosses an inter-node link that "
            "was not measured but assumed (the network the link line names; probe across "
            "hosts with torchrun --nnodes)") in _notes(capsys, "--dp", "16", "--link-from",
                                                      four)
    two = cluster(tmp_path / "two.json", hosts=("a", "b"))
    assert ("the links were measured over 2 ranks on 2 hosts (gloo); --dp 16 extrapolates "
            "them with the ring model (hop latency 100 us x 2(n-1), bus bandwidth 4 GB/s "
            "whatever n inside a node; between nodes 300 us and 1 GB/s)"
            ) in _notes(capsys, "--dp", "16", "--link-from", two)


def test_no_extrapolation_note_at_the_measured_ranks(capsys, one_host):
    notes = _notes(capsys, "--dp", "2", "--link-from", one_host)
    assert not any("extrapolat" in n for n in notes)
    # the gloo note stays, as scale's
    assert ("the link was measured with gloo between CPU processes (loopback), not between "
            "NVIDIA H100 SXM devices: NCCL over NVLink or InfiniBand is far faster; probe on "
            "the GPUs (torchrun ... rooflab probe --comm)") in notes


@pytest.mark.parametrize("dp, hop, says", [
    ("4", "5", "--hop-latency-us 5 changes nothing: the measured intra-node link keeps its "
               "own (300 us per hop inside a node), and a ring of 4 devices stays inside a "
               "node of 8"),
    ("16", "5", "--hop-latency-us 5 changes nothing: the measured intra-node link keeps its "
                "own (300 us per hop inside a node), and a ring across nodes pays the larger "
                "of the two hop latencies"),
    ("16", "500", "--hop-latency-us 500 reaches only the assumed inter-node link (past 8 "
                  "devices per node); the measured intra-node link keeps its own (300 us per "
                  "hop inside a node)"),
])
def test_hop_latency_a_measured_link_ignores_is_said(capsys, one_host, dp, hop, says):
    # the old train printed nothing: --hop-latency-us with --link-from was silently moot
    assert says in _notes(capsys, "--dp", dp, "--link-from", one_host,
                          "--hop-latency-us", hop)


def test_hop_latency_on_links_measured_across_hosts(capsys, tmp_path):
    two = cluster(tmp_path / "two.json", hosts=("a", "b"))
    assert ("--hop-latency-us 5 changes nothing: the measured links keep their own hop "
            "latency (100 us per hop inside a node, 300 us across nodes); it applies to "
            "given, catalog and assumed links") in _notes(capsys, "--dp", "16", "--link-from",
                                                          two, "--hop-latency-us", "5")


def test_scale_keeps_its_row_words(capsys, one_host):
    assert main(["scale", "--on", "H100 SXM", "--link-from", one_host, "--json"]) == 0
    notes = json.loads(capsys.readouterr().out)["notes"]
    assert ("the links were measured over 2 ranks on 1 host (gloo); the rows past 2 devices "
            "extrapolate them with the ring model (hop latency 300 us x 2(n-1), bus "
            "bandwidth 1 GB/s whatever n); past 8 devices per node the ring crosses an "
            "inter-node link that was not measured but assumed (the inter-node figure "
            "above; probe across hosts with torchrun --nnodes, or give --inter-bw)") in notes


def test_json_link_carries_its_provenance(capsys, one_host, tmp_path):
    d = _dp_json(capsys, "--dp", "16", "--link-from", one_host)
    link = d["dp"]["link"]
    assert link["kind"] == "measured"          # the ring runs at the measured 1 GB/s
    assert link["per_node"] == 8
    assert link["intra"]["kind"] == "measured"
    assert link["intra"]["bus_bytes_per_s"] == pytest.approx(1e9, rel=1e-9)
    assert link["intra"]["hop_latency_s"] == pytest.approx(300e-6, rel=1e-9)
    assert link["inter"]["kind"] == "assumed"
    assert link["inter"]["level"] == "network"
    assert link["inter"]["bus_bytes_per_s"] == 400e9     # 8 x one 400 Gb/s NIC per GPU
    assert link["hop_latency_s"] == pytest.approx(300e-6, rel=1e-9)
    assert d["setup"]["grad_dtype"] == "bf16" and d["dp"]["grad_bytes"] == 2
    # inside a node: no network
    d4 = _dp_json(capsys, "--dp", "4", "--link-from", one_host, "--grad-dtype", "fp32")
    assert d4["dp"]["link"]["inter"] is None and d4["dp"]["link"]["kind"] == "measured"
    assert d4["setup"]["grad_dtype"] == "fp32" and d4["dp"]["grad_bytes"] == 4
    # the catalog NVLink inside a node, the assumed network past it: the ring runs at the
    # network's 400 GB/s, below NVLink's 450, with the given 5 us per hop on both
    c = _dp_json(capsys, "--dp", "16", "--hop-latency-us", "5")["dp"]["link"]
    assert (c["kind"], c["intra"]["kind"], c["inter"]["kind"]) == ("assumed", "catalog",
                                                                   "assumed")
    assert c["hop_latency_s"] == c["intra"]["hop_latency_s"] == pytest.approx(5e-6)
    two = cluster(tmp_path / "two.json", hosts=("a", "b"))
    m = _dp_json(capsys, "--dp", "16", "--link-from", two)["dp"]["link"]
    assert (m["kind"], m["intra"]["kind"], m["inter"]["kind"]) == ("measured",) * 3
    given = _dp_json(capsys, "--dp", "2", "--link-bw", "100GB/s")["dp"]["link"]
    assert (given["kind"], given["intra"]["kind"], given["inter"]) == ("given", "given", None)


def _option_help(verb: str, name: str) -> str | None:
    import typer

    from rooflab.cli.app import build_app

    cmd = typer.main.get_command(build_app()).commands[verb]
    return next((p.help for p in cmd.params if name in getattr(p, "opts", ())), None)


def test_scale_help_names_the_older_latency_spelling():
    # before s31 scale's --hop-latency-us help ended "--latency-us is the older spelling.";
    # the shared declaration (comm_options) dropped it. train has no --latency-us.
    assert _option_help("scale", "--hop-latency-us").endswith(
        "A measured link has its own. --latency-us is the older spelling.")
    assert _option_help("train", "--hop-latency-us").endswith("A measured link has its own.")
    assert _option_help("train", "--latency-us") is None


def test_extrapolation_note_takes_the_verbs_words():
    from rooflab.cli.train_dp_words import TRAIN_WORDS
    from rooflab.model.comm_link import Link
    from rooflab.model.link_fits import MeasuredLinks, extrapolation_note

    links = MeasuredLinks(Link("NVLink", 100e9, 5e-6, "m"), None, 8, 1, "nccl")
    assert extrapolation_note(links, 64, 8, False, TRAIN_WORDS) == (
        "the links were measured over 8 ranks on 1 host (nccl); --dp 64 extrapolates them "
        "with the ring model (hop latency 5 us x 2(n-1), bus bandwidth 100 GB/s whatever n); "
        "past 8 devices per node the ring crosses an inter-node link that was not measured "
        "but assumed (the network the link line names; probe across hosts with torchrun "
        "--nnodes)")
    assert extrapolation_note(links, 64, 8, False).startswith(
        "the links were measured over 8 ranks on 1 host (nccl); the rows past 8 devices "
        "extrapolate them")
