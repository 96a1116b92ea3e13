"""`rooflab llm --tp N --link-from FILE` words its extrapolation note for llm (s31): it has
one --tp count and no --inter-bw, so scale's "the rows past 2 devices" and "give
--inter-bw" misdirected its reader."""

from __future__ import annotations

from test_scale_measured_link import cluster

from rooflab.cli.main import main


def test_llm_tp_extrapolation_note_names_the_tp_count(tmp_path, capsys):
    path = cluster(tmp_path / "one.json")
    assert main(["llm", "llama-2-7b", "--on", "H100", "--tp", "16",
                 "--link-from", str(path)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert ("note: the links were measured over 2 ranks on 1 host (gloo); --tp 16 "
            "extrapolates them with the ring model (hop latency 300 us x 2(n-1), bus "
            "bandwidth 1 GB/s whatever n); past 8 devices per node the ring crosses an "
            "inter-node link that was not measured but assumed (the network the "
            "tensor-parallel line names; probe across hosts with torchrun --nnodes)") in out
    assert "rows past" not in out and "--inter-bw" not in out
