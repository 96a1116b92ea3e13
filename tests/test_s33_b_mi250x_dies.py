"""On an MI250X (a package of 2 GCDs, each a device to ROCm) `train --tp N` and `llm --tp N`
both count packages and run their collectives on one ring of the 2N dies, each a rank
(session 33, helper B item 1, MI250X).

The catalog's MI250X entry is the package (software_devices = 2: its ceilings and memory
are its 2 dies' together). A ring over the dies of 2 packages (4 GCDs) runs at its slowest
hop, the one xGMI link between dies of different packages: 100 GB/s both directions, 50
per direction. Before, both verbs timed a ring of N packages.

By hand (llama-2-7b --batch 1 --seq 4096, bf16: one activation all-reduce of
1 x 4096 x 4096 x 2 = 33 554 432 B):
  train --tp 2: ring over 4 dies: 2 x 3/4 x 33 554 432 / 50e9 = 1.0066 ms each
                (old: ring of 2, 2 x 1/2 x 33 554 432 / 50e9 = 671 us)
  llm --tp 2 (decode, batch 1: 4096 x 2 = 8192 B per all-reduce, 64 of them):
                64 x 2 x 3/4 x 8192 / 50e9 = 15.7 us  (old: 64 x 8192 / 50e9 = 10.5 us)
"""

import json

import pytest

from rooflab.cli.main import main


def test_train_tp_ring_over_dies(capsys):
    assert main(["-q", "train", "llama-2-7b", "--on", "MI250X", "--batch", "1", "--seq",
                 "4096", "--tp", "2", "--json"]) == 0
    tp = json.loads(capsys.readouterr().out)["train"]["tp"]
    layers = next(c for c in tp["collectives"] if c["name"] == "tp.allreduce.layers")
    assert tp["link"]["bus_bytes_per_s"] == pytest.approx(50e9)
    assert layers["seconds_each"] == pytest.approx(2 * 3 / 4 * 33_554_432 / 50e9)


def test_train_note_says_tp_counts_packages(capsys):
    assert main(["train", "llama-2-7b", "--on", "MI250X", "--batch", "1", "--seq", "4096",
                 "--tp", "2"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert ("--tp 2 counts packages, as `rooflab llm --tp` does: 4 dies, each a rank of its "
            "collectives' ring (all-reduce 2 x 3/4 of the bytes), while ROCm and `rooflab "
            "choose` count dies (their --tp 4)") in text


def test_llm_tp_ring_over_dies(capsys):
    assert main(["-q", "llm", "llama-2-7b", "--on", "MI250X", "--batch", "1", "--phase",
                 "decode", "--tp", "2", "--json"]) == 0
    par = json.loads(capsys.readouterr().out)["llm"]["parallel"]
    assert par["ring_ranks"] == 4
    assert par["allreduce_bytes"] == 4096 * 2
    assert par["comm_s"] == pytest.approx(64 * 2 * 3 / 4 * 8192 / 50e9)
