"""`llm --tp` on a profile measured across hosts (review r7, edit 3 of its fixer): a ring
past one node runs on the world all-reduce's fit, so its record and note name that fit
(16 ranks), not the intra-node send/recv measured over 2 ranks; inside a node the note says
the send/recv it does use."""

from __future__ import annotations

import json

import pytest
from tests.test_scale_measured_link import cluster

from rooflab.cli.main import main


def _llm(capsys, path, tp):
    assert main(["llm", "tinyllama-1.1b", "--on", "H100", "--tp", str(tp),
                 "--link-from", str(path), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _two_hosts(tmp_path):
    # 16 ranks on 2 hosts: world all-reduce alpha 800 us, beta 1 GB/s; send/recv 100 us, 4 GB/s
    return cluster(tmp_path / "two.json", hosts=("a",) * 8 + ("b",) * 8,
                   ar=(800e-6, 1e9), p2p=(100e-6, 4e9))


def _latency_note(doc):
    return next(n for n in doc["llm"]["notes"] if "of latency per all-reduce" in n)


def test_a_ring_across_hosts_names_the_world_all_reduce_fit(tmp_path, capsys):
    doc = _llm(capsys, _two_hosts(tmp_path), 16)
    note = _latency_note(doc)
    # 2(16-1)/2(16-1) x 800 us = 800 us per all-reduce, from the 16-rank all-reduce
    assert "800 us of latency per all-reduce (the all-reduce alpha measured over 16 ranks" \
        in note, note
    fit = doc["llm"]["parallel"]["link_provenance"]["fit"]
    assert fit["collective"] == "all_reduce"       # was the send/recv's 100 us, 4 GB/s
    assert fit["alpha_s"] == pytest.approx(800e-6) and fit["beta_bytes_per_s"] == \
        pytest.approx(1e9)


def test_inside_a_node_the_note_names_the_send_recv_fit(tmp_path, capsys):
    doc = _llm(capsys, _two_hosts(tmp_path), 8)
    note = _latency_note(doc)
    # 2(8-1) = 14 hops x the send's 100 us = 1.4 ms per all-reduce, from the send/recv
    assert "1.4 ms of latency per all-reduce (the send/recv alpha measured over" in note, note
