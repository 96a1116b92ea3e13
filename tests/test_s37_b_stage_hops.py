"""whatif --hardware on a `rooflab train --dp` file made without hop latency, onto a link
with one: each ZeRO stage of the row's by_zero pays its own launches' hops (s37 B).

Hand figures: llama-2-7b --batch 1 --seq 4096 --dp 4 on H100 SXM (catalog NVLink, no hop
latency), moved onto a cluster profile (test_scale_measured_link.cluster: an all-reduce
of alpha 600 us over 2 ranks, beta 1 GB/s bus), whose ring has 600 us / 2(2-1) = 300 us a
hop; a round of N-1 = 3 hops on the ring of 4 is 900 us.
  * ZeRO-1: 20,215,246,848 B sent / 1e9 = 20.215246848 s, plus DeepSpeed's 14 + 14
    buckets (reduce-scatter, all-gather: 5e8 elements each), 28 rounds x 900 us = 25.2
    ms: 20.240446848 s.
  * ZeRO-3: 29,929,648,128 B / 1e9 = 29.929648128 s, plus FSDP's 33 forward all-gathers
    and 65 backward launches, 98 rounds x 900 us = 88.2 ms: 30.017848128 s.
Both are what `rooflab train --on` that profile `--zero 1` / `--zero 3` writes. Old code
gave every stage the row's own (DDP's) hop total, then 506 buckets x 2 rounds x 900 us =
910.8 ms: ZeRO-1 21.126 s, ZeRO-3 30.840 s.
"""

from __future__ import annotations

import json

import pytest
from test_scale_measured_link import cluster

from rooflab.cli.main import main

STEP = ["llama-2-7b", "--batch", "1", "--seq", "4096", "--dp", "4"]


def _comm(path) -> dict:
    doc = json.loads(path.read_text())
    doc = doc.get("after", doc)
    return next(k["meta"] for k in doc["kernels"] if k["meta"].get("train_part") == "comm")


def _run(capsys, *args) -> None:
    assert main(list(args)) == 0
    capsys.readouterr()


@pytest.fixture(scope="module")
def moved(tmp_path_factory):
    import contextlib
    import io

    tmp = tmp_path_factory.mktemp("b37")
    prof = cluster(tmp / "comm.json", ar=(600e-6, 1e9), p2p=(100e-6, 4e9))
    t, w = tmp / "t.json", tmp / "w.json"
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert main(["train", *STEP, "--on", "H100 SXM", "-q", "-o", str(t)]) == 0
        assert main(["whatif", str(t), "--hardware", prof, "-o", str(w)]) == 0
    return prof, t, w


def test_each_stage_pays_its_own_hops_on_the_target_link(moved):
    _, t, w = moved
    assert _comm(t)["collectives"][0]["latency_s_each"] == 0     # the file had none
    stages = _comm(w)["by_zero"]
    assert stages["1"]["comm_s"] == pytest.approx(20_215_246_848 / 1e9 + 28 * 900e-6,
                                                  rel=1e-9)
    assert stages["1"]["comm_s"] == pytest.approx(20.240446848, rel=1e-9)
    assert stages["2"]["comm_s"] == pytest.approx(20.240446848, rel=1e-9)
    assert stages["3"]["comm_s"] == pytest.approx(29_929_648_128 / 1e9 + 98 * 900e-6,
                                                  rel=1e-9)
    # the row's own stage: its 226 buckets' 452 rounds
    assert stages["0"]["comm_s"] == pytest.approx(20_215_246_848 / 1e9 + 452 * 900e-6,
                                                  rel=1e-9)


def test_the_stages_are_what_train_writes_on_that_link(moved, capsys, tmp_path):
    prof, _, w = moved
    got = _comm(w)["by_zero"]
    for zero in ("1", "3"):
        out = tmp_path / f"z{zero}.json"
        _run(capsys, "train", *STEP, "--on", prof, "--zero", zero, "-q", "-o", str(out))
        want = _comm(out)["by_zero"]
        for stage in "0123":
            assert got[stage]["comm_s"] == pytest.approx(want[stage]["comm_s"], rel=1e-9)
            assert got[stage]["bytes"] == pytest.approx(want[stage]["bytes"], rel=1e-9)


def test_train_writes_each_stages_hop_rounds(moved):
    """An all-reduce launch two rounds of N-1 hops, a reduce-scatter or all-gather one:
    DDP 226 x 2 = 452, ZeRO-1/2 14 + 14 = 28, ZeRO-3 33 + 65 = 98."""
    _, t, _ = moved
    stages = _comm(t)["by_zero"]
    assert {k: v["hop_rounds"] for k, v in stages.items()} == {
        "0": 452, "1": 28, "2": 28, "3": 98}
