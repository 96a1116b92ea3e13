"""On an MI250X (the catalog's package of 2 GCDs, each a rank to ROCm) `train --dp N`
without --tp runs its data-parallel ring over the 2N dies, as B's `--tp N` rings count
dies (session 33, helper J item 4).

rooflab's step on the MI250X is the package's (its 2 dies' ceilings and memory together),
which is the package running as --dp 2 over its dies (cli/train_ranks.die_words): N packages
are 2N ranks, each holding the whole gradient. Before, the ring was timed over N.

By hand, llama-2-7b, bf16 gradients: 6 738 415 616 parameters x 2 B = 13 476 831 232 B;
the ring's slowest hop is the one xGMI link between dies of different packages, 100 GB/s
both directions = 50 GB/s per direction (catalog):
  --dp 8: 16 ranks, 2 x 15/16 x 13 476 831 232 = 25 269 058 560 B per rank,
          / 50e9 = 505.4 ms     (old: 8 ranks, 2 x 7/8 x ... = 23.58 GB, 471.7 ms)
  --dp 2: 4 ranks, 2 x 3/4 x 13 476 831 232 / 50e9 = 404.3 ms   (old: 2 x 1/2: 269.5 ms)
"""

import json

import pytest

from rooflab.cli.main import main

GRADS = 6_738_415_616 * 2


def _dp(capsys, dp: int) -> dict:
    assert main(["-q", "train", "llama-2-7b", "--on", "MI250X", "--dp", str(dp),
                 "--json"]) == 0
    return json.loads(capsys.readouterr().out)["train"]["dp"]


@pytest.mark.parametrize("dp", [2, 8])
def test_dp_ring_runs_over_the_dies(capsys, dp):
    d = _dp(capsys, dp)
    ranks = 2 * dp
    assert d["n"] == dp and d["ring_ranks"] == ranks
    assert d["link"]["bus_bytes_per_s"] == pytest.approx(50e9)
    ar = d["collectives"][0]
    assert ar["bytes"] == GRADS
    sent = 2 * (ranks - 1) / ranks * GRADS
    assert ar["sent_bytes_each"] == pytest.approx(sent)
    assert d["comm_s"] == pytest.approx(sent / 50e9)
    assert d["comm_s"] == pytest.approx({2: 0.40430, 8: 0.50538}[dp], rel=1e-4)


def test_other_devices_keep_a_ring_of_dp(capsys):
    # an H100 is one device to software: --dp 8 is a ring of 8, 2 x 7/8 of the gradients
    assert main(["-q", "train", "llama-2-7b", "--on", "H100", "--dp", "8", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)["train"]["dp"]
    assert d["ring_ranks"] == 8
    assert d["collectives"][0]["sent_bytes_each"] == pytest.approx(2 * 7 / 8 * GRADS)


def test_words_say_the_ring_of_dies(capsys):
    assert main(["train", "llama-2-7b", "--on", "MI250X", "--dp", "8"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "ring over 16 ranks (--dp 8 packages x 2 dies, each a rank: N = 16)" in text
    assert "communication 505 ms per step" in text
    assert ("--dp 8 counts packages here, 16 dies, each a rank of the data-parallel ring "
            "(all-reduce 2 x 15/16 of the gradients)") in text
